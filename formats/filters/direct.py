"""Whole-chunk decoding straight into the output for the pipelines `batch.plan` leaves to
the general path but that need no Stage objects either:

- encrypted pipelines (TileDB's AES-256-GCM last): each chunk decrypted, then the filters
  below reversed by `batch.reverse_into` when it has a plan for them (a lone AES stage is
  decrypted straight into the output);
- var-string tiles whose first filter is RLE or DICTIONARY in its string form: the later
  filters reversed, then a compiled kernel (`strkernels`) writes the cells into the output
  and gives the rebuilt cell offsets.

As in `batch`, a chunk is only decoded here when the result is necessarily the general
path's; anything else is left to the caller (`reverse_chunk`), which reports it."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..accel import native
from ..accel.strkernels import dict_strings, rle_strings
from ..core import compiled
from . import _run_for, fused, reverse_chunk
from .base import DataInfo, FilterError, FilterSpec, RunContext, Stage
from .batch import Plan, plan, reverse_into
from .enums import FilterType
from .strings import applies, read_header
from .util import u8


class DirectPlan:
    def __init__(self, specs: List[FilterSpec], info: DataInfo, kind: str,
                 below: Optional[Plan] = None):
        self.specs, self.info, self.kind, self.below = specs, info, kind, below


def direct_plan(specs: List[FilterSpec], info: DataInfo) -> Optional[DirectPlan]:
    if not specs:
        return None
    if specs[-1].type == FilterType.INTERNAL_FILTER_AES_256_GCM:
        rest = specs[:-1]
        if any(s.type == FilterType.INTERNAL_FILTER_AES_256_GCM for s in rest):
            return None
        if not rest:
            return DirectPlan(specs, info, "aes")
        below = plan(rest, info)
        return DirectPlan(specs, info, "aes", below) if below is not None else None
    if string_filter(specs, info, _run_for(info, RunContext())):
        return DirectPlan(specs, info, "strings")
    return None


# ---- var-string tiles: the compiled reversal of filter 0 (accel/strkernels.py) ----------
STRING_FILTERS = (FilterType.RLE, FilterType.DICTIONARY)


def string_filter(specs, info: DataInfo, run: RunContext) -> bool:
    """The pipeline starts with RLE or DICTIONARY in its var-string form (the filter whose
    reversal gives the cells and rebuilds the offsets)."""
    if not specs or specs[0].type not in STRING_FILTERS:
        return False
    return applies("rle" if specs[0].type == FilterType.RLE else "dictionary", info, run)


def reverse_strings_into(spec: FilterSpec, stage: Stage, run: RunContext,
                         out: np.ndarray) -> Optional[np.ndarray]:
    """Reverse the RLE / DICTIONARY string stage `stage` (what filter 0 gets) into `out`
    (a uint8 array exactly the chunk's decoded size): the u64 cell offsets, relative to
    the chunk. None — nothing decided, `out` may hold anything — when no kernel is
    compiled or the bytes are not a clean tile: the caller runs the general path."""
    rle = spec.type == FilterType.RLE
    k = (rle_strings if rle else dict_strings).get(len(out))
    if k is None:
        return None
    try:
        r, usize, csize, osize = read_header(stage, spec.name, run)
        a, b = r.u8("byte size"), r.u8("byte size")
        dbuf: Optional[np.ndarray] = None
        if not rle:
            dbuf = u8(r.take(r.u32("Dictionary size"), "dictionary"))
    except FilterError:
        return None
    data = stage.data[0] if len(stage.data) == 1 else stage.data_bytes
    if a not in (1, 2, 4, 8) or b not in (1, 2, 4, 8) or usize != len(out) or \
            csize != len(data):
        return None
    offs = np.empty(osize // 8, np.uint64)
    enc = u8(data)
    if rle:
        got = k(enc, a, b, out, offs)
    else:
        entries = len(dbuf) // b + 1   # type: ignore[arg-type]
        got = k(dbuf, b, enc, a, out, offs, np.empty(entries, np.int64),
                np.empty(entries, np.int64))
    return offs if got == len(offs) else None


def strings_stage(specs, md, data, info: DataInfo, run: RunContext
                  ) -> Tuple[Optional[Stage], RunContext]:
    """What filter 0 of a string pipeline gets (every later filter reversed), with the run
    context the filters see; (None, run) when a later filter fails (the general path
    reports it)."""
    run = _run_for(info, run)
    if len(specs) == 1:
        return Stage([md] if len(md) else [], [data]), run
    res = reverse_chunk(specs, md, data, info, run, stop_at=1)
    return (None if res.error is not None else res.stages[1]), run


Chunk = Tuple[object, object, int, int]   # (metadata, data, original length, output position)


def decode_into(p: DirectPlan, key: Optional[bytes], chunks: Sequence[Chunk], out: np.ndarray
                ) -> Tuple[List[int], Dict[int, np.ndarray]]:
    """Decode `chunks` into the uint8 array `out`: (indices left for the general path,
    {index: u64 cell offsets rebuilt, relative to the chunk} for string tiles)."""
    if p.kind == "strings":
        return _strings(p, chunks, out)
    if not key:
        return list(range(len(chunks))), {}
    return _aes(p, key, chunks, out), {}


def _strings(p: DirectPlan, chunks: Sequence[Chunk], out: np.ndarray
             ) -> Tuple[List[int], Dict[int, np.ndarray]]:
    left: List[int] = []
    offs: Dict[int, np.ndarray] = {}
    for i, (md, data, orig, pos) in enumerate(chunks):
        stage, run = strings_stage(p.specs, md, data, p.info, RunContext(None, orig))
        o = None if stage is None else \
            reverse_strings_into(p.specs[0], stage, run, out[pos:pos + orig])
        if o is None:
            left.append(i)
        else:
            offs[i] = o
    return left, offs


def _aes(p: DirectPlan, key: bytes, chunks: Sequence[Chunk], out: np.ndarray) -> List[int]:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from .encryption import decrypt_chunk

    try:
        aes = AESGCM(key)
    except ValueError:   # a key of the wrong size: the general path says so
        return list(range(len(chunks)))
    left: List[int] = []
    below = p.specs[:-1]
    fplan = fused.fused_plan(below, p.info) if below else None
    kernel = fused.decoder(sum(c[2] for c in chunks), p.specs)
    if kernel is not None and (fplan is not None or not below) and len(key) == 32 \
            and native.aes_gcm() is not None:
        return _aes_native(p, key, chunks, out, fplan, kernel)
    if fplan is None:
        kernel = None
    group = compiled.TUNING.aes_group   # decrypted before their lower filters run
    for g in range(0, len(chunks), group):
        plain: List[Chunk] = []
        where: List[int] = []
        for i in range(g, min(g + group, len(chunks))):
            md, data, orig, pos = chunks[i]
            into = out[pos:pos + orig] if not below else None
            got = decrypt_chunk(aes, md, data, into)
            if got is None:
                left.append(i)
                continue
            mds, datas = got
            if not below:   # decrypted in place: right when it is exactly the one part
                if mds or len(datas) != 1 or datas[0] is not into:
                    left.append(i)
                continue
            plain.append((b"".join(mds), datas[0] if len(datas) == 1 else b"".join(datas),
                          orig, pos))
            where.append(i)
        if plain and fplan is not None and kernel is not None:
            rest = fused.decode_packed(kernel, fplan, plain, out)   # the codec without the GIL
            plain, where = [plain[k] for k in rest], [where[k] for k in rest]
        if plain:
            left += [where[k] for k in reverse_into(below, p.info, plain, out, p.below)]
    return sorted(left)


def _aes_native(p: DirectPlan, key: bytes, chunks: Sequence[Chunk], out: np.ndarray,
                fplan: Optional[fused.FusedPlan], kernel) -> List[int]:
    """`_aes` without the GIL: the chunks laid end to end (a copy of the stored bytes),
    decrypted by one compiled call through OpenSSL (`nativekernels.decrypt_chunks`) — a
    lone AES stage straight into the output — then the filters below by the fused kernel
    (`fplan`), what it leaves by `reverse_into`. Returns the chunks left to the general path."""
    from ..accel.nativekernels import decrypt_chunks
    blob = bytearray()
    rows = []
    for md_obj, data_obj, _orig, _pos in chunks:
        md, data = memoryview(md_obj), memoryview(data_obj)   # type: ignore[arg-type]
        at = len(blob)
        blob += md
        blob += data
        rows.append((at, md.nbytes, at + md.nbytes, data.nbytes))
    t = np.array(rows, np.int64).reshape(-1, 4)
    orig = np.array([c[2] for c in chunks], np.int64)
    positions = np.array([c[3] for c in chunks], np.int64)
    lone = fplan is None
    if lone:   # straight into the output, each chunk within its own cells
        plain, plain_pos, cap = out, positions, orig
    else:
        cap = np.ascontiguousarray(t[:, 3])
        plain_pos = np.cumsum(cap) - cap
        plain = np.empty(int(cap.sum()), np.uint8)
    n = len(chunks)
    status, plain_md, plain_len = np.ones(n, np.int8), np.zeros(n, np.int64), np.zeros(n, np.int64)
    decrypt_chunks(np.array(native.aes_gcm(), np.uint64), native.aes_context(),
                   np.frombuffer(key, np.uint8), np.frombuffer(blob, np.uint8),
                   np.ascontiguousarray(t[:, 0]), np.ascontiguousarray(t[:, 1]),
                   np.ascontiguousarray(t[:, 2]), np.ascontiguousarray(t[:, 3]), plain, plain_pos,
                   cap, plain_md, plain_len, status)
    left = [i for i in range(n) if status[i]]
    done = [i for i in range(n) if not status[i]]
    if lone:   # right when it was exactly one data part of the chunk's size
        left += [i for i in done if plain_md[i] or plain_len[i] != orig[i]
                 or int.from_bytes(blob[t[i, 0] + 4:t[i, 0] + 8], "little") != 1]
        return sorted(left)
    table = [(int(orig[i]), int(plain_len[i] - plain_md[i]), int(plain_pos[i]), int(plain_md[i]),
              int(plain_pos[i] + plain_md[i])) for i in done]
    assert fplan is not None
    rest = fused.decode_chunks(kernel, fplan, plain, table, [int(positions[i]) for i in done], out)
    if rest:
        view = plain.data
        again = [(view[r[2]:r[2] + r[3]], view[r[4]:r[4] + r[1]], r[0], int(positions[done[k]]))
                 for k in rest for r in [table[k]]]
        left += [done[rest[k]] for k in reverse_into(p.specs[:-1], p.info, again, out, p.below)]
    return sorted(left)

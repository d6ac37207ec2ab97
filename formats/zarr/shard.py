"""The v3 `sharding_indexed` codec: a chunk file (a shard) holds a grid of inner chunks.

```
shard = inner chunk bytes ... | index            (index_location "end", the default)
      = index | inner chunk bytes ...            (index_location "start")
index = n × (u64 offset, u64 nbytes) in C order over the shard's inner grid, encoded with
        index_codecs (bytes, then optionally crc32c: 4 more bytes, CRC32C of the entries)
```
offset/nbytes both 2^64-1: that inner chunk is missing (every record the fill value).
Each inner chunk is encoded with the configuration's own `codecs` (bytes, zstd, ...): it is
read as a chunk of `ShardSpec.inner`, an ArrayMeta of the same array whose chunks are the
inner chunks, so everything that decodes and shows a chunk serves an inner chunk unchanged.
Here: the index and the inner chunks' places (no nodes); the codec's declaration is read in
`meta.py` (`ShardSpec`), a shard's nodes are built in `chunk.py` (a shard is a chunk's content,
and each inner chunk is a chunk again).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

import numpy as np

from ..core.fielddoc import doc
from .decode import decode_chunk
from .meta import ENTRY, SHARD_SPEC, ArrayMeta, ShardSpec

MISSING = (1 << 64) - 1
D_INDEX = doc("Shard index: one (offset, nbytes) pair of u64 per inner chunk, C order over "
              "the shard's inner grid; 2^64-1 twice: the inner chunk is missing", spec=SHARD_SPEC)
D_ENTRY = doc("Index entry: u64 offset and u64 nbytes of one inner chunk in the shard",
              spec=SHARD_SPEC)
D_INDEX_CRC = doc("CRC32C of the index entries, little-endian (the index's crc32c codec)",
                  spec="zarr v3 crc32c codec")
D_INNER = doc("An inner chunk: its bytes, encoded with the sharding codec's `codecs`",
              spec=SHARD_SPEC)
D_UNREFERENCED = doc("Bytes of the shard that no index entry points to", spec=SHARD_SPEC)


# ---- the index ---------------------------------------------------------------------------
@dataclass
class Index:
    """A shard's index read from its bytes: where it is, its entries, what is wrong."""

    at: int                                   # offset of the index in the shard
    entries: np.ndarray                       # (count, 2) uint64: offset, nbytes
    problems: List[Tuple[Optional[int], int, str]]   # (entry or None, offset, message)
    stored_crc: Optional[int] = None

    def present(self, i: int) -> bool:
        return int(self.entries[i, 0]) != MISSING or int(self.entries[i, 1]) != MISSING


def read_index(sp: ShardSpec, data) -> Tuple[Optional[Index], str]:
    """The index of shard bytes `data` checked against the shard (entries inside the
    data region, not overlapping each other, crc32c); (None, why) when there is none."""
    size = len(data)
    if size < sp.index_size:
        return None, (f"the shard has {size} bytes; its index of {sp.count} entries needs "
                      f"{sp.index_size}")
    at = size - sp.index_size if sp.index_at_end else 0
    raw = bytes(data[at:at + ENTRY * sp.count])
    entries = np.frombuffer(raw, dtype=np.dtype(sp.index_endian + "u8")).reshape(-1, 2)
    idx = Index(at, entries, [])
    if sp.index_crc:
        from .codecs.simple import crc32c
        end = at + ENTRY * sp.count
        idx.stored_crc = int.from_bytes(bytes(data[end:end + 4]), "little")
        want = crc32c(raw)
        if idx.stored_crc != want:
            idx.problems.append((None, end, f"shard index CRC32C: stored 0x{idx.stored_crc:08X}, "
                                            f"computed 0x{want:08X}"))
    lo, hi = (0, at) if sp.index_at_end else (sp.index_size, size)
    spans = []
    for i in range(sp.count):
        off, nb = int(entries[i, 0]), int(entries[i, 1])
        where = at + ENTRY * i
        if off == MISSING and nb == MISSING:
            continue
        if off == MISSING or nb == MISSING:
            idx.problems.append((i, where, f"index entry {i}: offset {off} and nbytes {nb}: "
                                           f"only one of them says 'missing' (2^64-1)"))
        elif off < lo or off + nb > hi:
            idx.problems.append((i, where, f"index entry {i}: bytes {off}..{off + nb} are not "
                                           f"inside the shard's chunk bytes {lo}..{hi}"))
        else:
            spans.append((off, off + nb, i))
    spans.sort()
    # against the span reaching furthest so far, not only the previous one: a long entry
    # can cover several later ones that do not overlap each other
    far: Optional[Tuple[int, int, int]] = None
    for b0, b1, bi in spans:
        if far is not None and b0 < far[1]:
            a0, a1, ai = far
            idx.problems.append((bi, at + ENTRY * bi, f"index entry {bi}: bytes {b0}..{b1} "
                                                      f"overlap entry {ai}'s {a0}..{a1}"))
        if far is None or b1 > far[1]:
            far = (b0, b1, bi)
    return idx, ""


def local_coords(sp: ShardSpec, i: int) -> Tuple[int, ...]:
    return tuple(int(x) for x in np.unravel_index(i, sp.per_shard)) if sp.per_shard else ()


def global_coords(sp: ShardSpec, shard: Tuple[int, ...], local: Tuple[int, ...]
                  ) -> Optional[Tuple[int, ...]]:
    """The inner chunk's position in the array's grid of inner chunks; None beyond the
    array's edge (an edge shard's padding: nothing there is read)."""
    g = tuple(s * p + c for s, p, c in zip(shard, sp.per_shard, local))
    return None if any(x >= n for x, n in zip(g, sp.inner.grid)) else g


def inner_chunks(meta: ArrayMeta, shard: Tuple[int, ...], data, key: str,
                 errors: List[str]) -> Iterator[Tuple[Tuple[int, ...], bytes]]:
    """(coords in the inner grid, decoded bytes) of each present inner chunk of shard
    `data`; problems are appended to `errors` and their inner chunks skipped."""
    sp = meta.shard
    assert sp is not None
    idx, why = read_index(sp, data)
    if idx is None:
        errors.append(f"{key}: {why}")
        return
    bad = {i for i, _, _ in idx.problems if i is not None}
    errors.extend(f"{key}: {m}" for _, _, m in idx.problems)
    for i in range(sp.count):
        if i in bad or not idx.present(i):
            continue
        local = local_coords(sp, i)
        g = global_coords(sp, shard, local)
        if g is None:
            continue
        off, nb = int(idx.entries[i, 0]), int(idx.entries[i, 1])
        try:
            out = decode_chunk(sp.inner, bytes(data[off:off + nb]))
        except Exception as e:  # noqa: BLE001 - a damaged inner chunk is an error entry
            errors.append(f"{key} inner chunk {list(local)}: {e}")
            continue
        yield g, out


# ---- the tree ------------------------------------------------------------------------------
def inner_label(label: str, local: Tuple[int, ...]) -> str:
    """The name of an inner chunk's derived source (what its findings name): the shard's
    name, then its coordinates in the shard (`c/1/0 [0, 1]`)."""
    return f"{label} {list(local)}"


def split_inner_label(name: str) -> Optional[Tuple[str, Tuple[int, ...]]]:
    """(shard name, coordinates in the shard) of an `inner_label`; None for another name."""
    head, sep, tail = name.rpartition(" [")
    if not sep or not tail.endswith("]"):
        return None
    try:
        local = tuple(int(x) for x in tail[:-1].split(",") if x.strip())
    except ValueError:
        return None
    return head, local

"""`__fragment_metadata.tdb` written (format_spec/fragment.md): the sections as generic tiles,
then the footer, then `u64 footer length` — the layout `parse/fragment_metadata.py` reads,
field for field in the order `model/footer_reader.footer_of` and
`parse/fragment_sections.py` read them. Each payload form has its reader beside its writer
(`read_*` / `*_payload`) so that what salvage changes is read and written by one definition.

Formats 12 and later only (`WRITABLE_FROM`): older ones differ in the footer (no fragment
min/max/sum/null-count section before 12, no footer length before 10) and are not rewritten."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..parse.fragment_footer import Footer, section_kinds
from .generic_tile import GenericTileForm, encode_generic_tile

WRITABLE_FROM = 12

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")

Range = Tuple[bytes, bytes]       # one dimension's (min, max), raw little-endian bytes
Mbr = Tuple[Range, ...]           # one range per dimension


class PayloadError(ValueError):
    """A section payload that does not have the form its kind declares."""


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = memoryview(data), 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise PayloadError(f"{n} bytes at {self.pos} run past the {len(self.data)}-byte payload")
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def u32(self) -> int:
        return _U32.unpack(self.take(4))[0]

    def u64(self) -> int:
        return _U64.unpack(self.take(8))[0]

    def end(self) -> None:
        if self.pos != len(self.data):
            raise PayloadError(f"{len(self.data) - self.pos} bytes left after the payload")


# -- u64 lists: tile offsets, var offsets, var sizes, validity offsets, sums, null counts --
def read_u64_list(payload: bytes) -> np.ndarray:
    """`u64 n`, then n 64-bit words (sums are typed words: kept as raw u64)."""
    r = _Reader(payload)
    n = r.u64()
    out = np.frombuffer(r.take(8 * n), "<u8") if n else np.zeros(0, "<u8")
    r.end()
    return out


def u64_list_payload(values: Sequence[int]) -> bytes:
    arr = np.asarray(values, dtype="<u8")
    return _U64.pack(len(arr)) + arr.tobytes()


# -- tile mins / maxs: u64 fixed size, u64 var size, fixed bytes, var bytes -----------------
def read_minmax(payload: bytes) -> Tuple[bytes, bytes]:
    r = _Reader(payload)
    nf, nv = r.u64(), r.u64()
    fixed, var = r.take(nf), r.take(nv)
    r.end()
    return fixed, var


def minmax_payload(fixed: bytes, var: bytes) -> bytes:
    return _U64.pack(len(fixed)) + _U64.pack(len(var)) + fixed + var


def split_minmax(fixed: bytes, var: bytes, tiles: int, is_var: bool) -> Optional[List[bytes]]:
    """Per tile, its min (or max) bytes; None when the slot has none (both buffers empty)."""
    if not fixed and not var:
        return None
    if is_var:
        offs = np.frombuffer(fixed, "<u8").astype(np.int64)
        if len(offs) != tiles:
            raise PayloadError(f"{len(offs)} var min/max offsets for {tiles} tiles")
        ends = list(offs[1:]) + [len(var)]
        return [var[int(a):int(b)] for a, b in zip(offs, ends)]
    if tiles == 0 or len(fixed) % tiles:
        raise PayloadError(f"{len(fixed)} min/max bytes do not split into {tiles} tiles")
    w = len(fixed) // tiles
    return [fixed[i * w:(i + 1) * w] for i in range(tiles)]


def join_minmax(values: Optional[List[bytes]], is_var: bool) -> Tuple[bytes, bytes]:
    if values is None:
        return b"", b""
    if not is_var:
        return b"".join(values), b""
    offs = np.cumsum([0] + [len(v) for v in values[:-1]]).astype("<u8") if values else \
        np.zeros(0, "<u8")
    return offs.tobytes(), b"".join(values)


# -- the R-tree: u32 fanout, u32 levels, per level u64 n and n MBRs (root level first) -------
@dataclass
class RTree:
    fanout: int
    levels: List[List[Mbr]]    # root first; the last level has one MBR per data tile


def read_rtree(payload: bytes, var_dims: Sequence[bool], cell_sizes: Sequence[int]) -> RTree:
    r = _Reader(payload)
    fanout, nlevels = r.u32(), r.u32()
    levels = []
    for _ in range(nlevels):
        n = r.u64()
        if n * len(var_dims) > len(payload):
            raise PayloadError(f"{n} MBRs cannot fit in {len(payload)} bytes")
        level = []
        for _i in range(n):
            mbr = []
            for var, cs in zip(var_dims, cell_sizes):
                if var:
                    total, first = r.u64(), r.u64()
                    if first > total:
                        raise PayloadError("a range's minimum is longer than the range")
                    mbr.append((r.take(first), r.take(total - first)))
                else:
                    mbr.append((r.take(cs), r.take(cs)))
            level.append(tuple(mbr))
        levels.append(level)
    r.end()
    return RTree(fanout, levels)


def range_bytes(rng: Range, var: bool) -> bytes:
    lo, hi = rng
    if var:
        return _U64.pack(len(lo) + len(hi)) + _U64.pack(len(lo)) + lo + hi
    return lo + hi


def rtree_payload(tree: RTree, var_dims: Sequence[bool]) -> bytes:
    out = [_U32.pack(tree.fanout), _U32.pack(len(tree.levels))]
    for level in tree.levels:
        out.append(_U64.pack(len(level)))
        out += [range_bytes(rng, v) for mbr in level for rng, v in zip(mbr, var_dims)]
    return b"".join(out)


# -- fragment min / max / sum / null count: per slot u64 + min, u64 + max, sum word, nulls ---
@dataclass
class SlotStats:
    min: bytes
    max: bytes
    sum: bytes          # one 64-bit word (int64, uint64 or float64 bits)
    null_count: int


def read_fmmsn(payload: bytes, slots: int) -> List[SlotStats]:
    r = _Reader(payload)
    out = []
    for _ in range(slots):
        lo = r.take(r.u64())
        hi = r.take(r.u64())
        out.append(SlotStats(lo, hi, r.take(8), r.u64()))
    r.end()
    return out


def fmmsn_payload(stats: Sequence[SlotStats]) -> bytes:
    return b"".join(_U64.pack(len(s.min)) + s.min + _U64.pack(len(s.max)) + s.max + s.sum +
                    _U64.pack(s.null_count) for s in stats)


# -- the file ---------------------------------------------------------------------------------
Section = Tuple[str, int]   # ("rtree", 0), (per-slot kind, slot), ("fmmsn", 0), ("processed", 0)


@dataclass
class MetadataFile:
    """What a fragment-metadata file holds, payloads decoded; `footer` gives the footer's
    fixed facts (version, schema name, dense, flags, slots) and `ned` the non-empty domain
    (None: a null one). `order`: the sections in file order."""

    footer: Footer
    ned: Optional[List[Range]]
    var_dims: List[bool]
    file_sizes: List[int]
    file_var_sizes: List[int]
    file_validity_sizes: List[int]
    sparse_tile_num: int
    last_tile_cell_num: int
    payloads: Dict[Section, bytes] = field(default_factory=dict)
    order: List[Section] = field(default_factory=list)


def section_order(footer: Footer) -> List[Section]:
    """The sections of `footer` in the order their offsets place them in its file."""
    where: List[Tuple[int, Section]] = []
    if footer.rtree is not None:
        where.append((footer.rtree, ("rtree", 0)))
    for kind in section_kinds(footer.version):
        for s, off in enumerate(footer.sections.get(kind, [])):
            where.append((off, (kind, s)))
    if footer.fmmsn is not None:
        where.append((footer.fmmsn, ("fmmsn", 0)))
    if footer.processed_conditions is not None:
        where.append((footer.processed_conditions, ("processed", 0)))
    return [sec for _off, sec in sorted(where)]


def footer_bytes(m: MetadataFile, offsets: Dict[Section, int]) -> bytes:
    """The footer (`footer_of` reads it back), the sections at `offsets`."""
    ft = m.footer
    v = ft.version
    name = ft.schema_name.encode("utf-8")
    out = [_U32.pack(v), _U64.pack(len(name)), name, bytes([ft.dense, m.ned is None])]
    if m.ned is None:
        if not any(m.var_dims):
            raise PayloadError("a null non-empty domain of fixed dimensions is not written")
    else:
        out += [range_bytes(rng, var) for rng, var in zip(m.ned, m.var_dims)]
    out += [_U64.pack(m.sparse_tile_num), _U64.pack(m.last_tile_cell_num)]
    if v >= 14:
        out.append(bytes([ft.has_timestamps]))
    if v >= 15:
        out.append(bytes([ft.has_delete_meta]))
    for sizes in (m.file_sizes, m.file_var_sizes, m.file_validity_sizes):
        out += [_U64.pack(x) for x in sizes]
    out.append(_U64.pack(offsets[("rtree", 0)]))
    for kind in section_kinds(v):
        out += [_U64.pack(offsets[(kind, s)]) for s in range(len(ft.slots))]
    out.append(_U64.pack(offsets[("fmmsn", 0)]))
    if v >= 16:
        out.append(_U64.pack(offsets[("processed", 0)]))
    return b"".join(out)


def write_metadata_file(m: MetadataFile, form: GenericTileForm, key: Optional[bytes]) -> bytes:
    """The bytes of the file: every section of `m.order` as a generic tile, the footer,
    its length."""
    if m.footer.version < WRITABLE_FROM:
        raise PayloadError(f"format {m.footer.version} fragment metadata is not written "
                           f"(from format {WRITABLE_FROM} only)")
    parts: List[bytes] = []
    offsets: Dict[Section, int] = {}
    pos = 0
    for sec in m.order:
        tile = encode_generic_tile(m.payloads[sec], form, key)
        offsets[sec] = pos
        parts.append(tile)
        pos += len(tile)
    foot = footer_bytes(m, offsets)
    return b"".join(parts) + foot + _U64.pack(len(foot))


def read_metadata_file(source, footer: Footer, var_dims: Sequence[bool],
                       cell_sizes: Sequence[int], key: Optional[bytes]) -> MetadataFile:
    """The `MetadataFile` of the file `source` whose footer is `footer` (read by
    `footer_of`): every section's payload decoded (TileError / PayloadError when one cannot
    be)."""
    from ..parse.decode import decode_generic_tile

    if footer.version < WRITABLE_FROM or not footer.complete:
        raise PayloadError(f"format {footer.version} fragment metadata is not rewritten "
                           f"(from format {WRITABLE_FROM} only)")
    r = _Reader(source.read(footer.offset, footer.size))
    r.take(4)
    r.take(r.u64())
    r.take(2)
    ned: Optional[List[Range]] = None
    if not footer.null_ned:
        ned = []
        for var, cs in zip(var_dims, cell_sizes):
            if var:
                total, first = r.u64(), r.u64()
                ned.append((r.take(first), r.take(total - first)))
            else:
                ned.append((r.take(cs), r.take(cs)))
    m = MetadataFile(footer, ned, list(var_dims), list(footer.file_sizes),
                     list(footer.file_var_sizes), list(footer.file_validity_sizes),
                     footer.sparse_tile_num, footer.last_tile_cell_num)
    m.order = section_order(footer)
    offsets = {("rtree", 0): footer.rtree, ("fmmsn", 0): footer.fmmsn,
               ("processed", 0): footer.processed_conditions}
    for kind, offs in footer.sections.items():
        offsets.update({(kind, s): o for s, o in enumerate(offs)})
    for sec in m.order:
        at = offsets[sec]
        if at is None:
            raise PayloadError(f"no offset for section {sec}")
        m.payloads[sec] = decode_generic_tile(source, at, key)[0]
    return m

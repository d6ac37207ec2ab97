"""The footer of `__fragment_metadata.tdb`: a plain blob read first, from the end of the file.

It gives the non-empty domain, the file sizes and the offset of every section. Without a
schema the slot count is inferred from the section offsets.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from ...core.cursor import Cursor
from ...core.fielddoc import doc
from ...core.node import WARNING
from ..model.array_model import ArraySchema
from ..model.fragment_slots import slot_names
from .fragment_values import parse_range, short_text
from .rawtile import peek_generic_tile

SPEC = "fragment.md"
D_VERSION = doc("Version number: format version of the fragment", spec=SPEC + " Footer")
D_SCHEMA_NAME_SIZE = doc("Array schema name size: bytes of the name that follows", added_in=10,
                         spec=SPEC + " Footer",
                         note="The spec lists the name twice (also at the end of the footer); "
                              "2.30 writes it once, here (FORMAT_NOTES 6)")
D_SCHEMA_NAME = doc("Array schema name: the file under __schema/ this fragment was written with",
                    added_in=10, spec=SPEC + " Footer")
D_DENSE = doc("Dense: 1 when the fragment is dense (no coordinates stored)", spec=SPEC + " Footer")
D_NULL_NED = doc("Null non-empty domain: 1 when the fragment has no non-empty domain (then "
                 "dummy zero bytes follow)", spec=SPEC + " Footer")
D_NED = doc("Non-empty domain: per dimension the smallest and largest coordinate written "
            "(an MBR)", spec=SPEC + " MBR")
D_NED_DUMMY = doc("Dummy non-empty domain: zero bytes written when the non-empty domain is null")
D_SPARSE_TILES = doc("Number of sparse tiles (0 for dense fragments)", spec=SPEC + " Footer")
D_LAST_TILE = doc("Last tile cell num: cells in the last tile (sparse); for dense fragments the "
                  "cells per tile", spec=SPEC + " Footer")
D_HAS_TS = doc("Includes timestamps: the fragment stores a per-cell timestamp slot (t.tdb)",
               added_in=14, spec=SPEC + " Footer")
D_HAS_DEL = doc("Includes delete metadata: the fragment stores delete timestamp and delete "
                "condition slots", added_in=15, spec=SPEC + " Footer")
D_FILE_SIZES = doc("File sizes: bytes of each slot's data file (the offsets file for var-sized "
                   "slots)", spec=SPEC + " Footer")
D_FILE_VAR_SIZES = doc("File var sizes: bytes of each slot's _var file", spec=SPEC + " Footer")
D_FILE_VALIDITY_SIZES = doc("File validity sizes: bytes of each slot's _validity file",
                            added_in=7, spec=SPEC + " Footer")
D_RTREE_OFF = doc("R-Tree offset: where the R-tree generic tile starts in this file",
                  spec=SPEC + " Footer")
D_GT_OFFSETS = {
    "tile_offsets": doc("Offsets of the generic tiles holding each slot's tile offsets",
                        spec=SPEC + " Footer"),
    "tile_var_offsets": doc("Offsets of the generic tiles holding each slot's var tile offsets",
                            spec=SPEC + " Footer"),
    "tile_var_sizes": doc("Offsets of the generic tiles holding each slot's var tile sizes",
                          spec=SPEC + " Footer"),
    "tile_validity_offsets": doc("Offsets of the generic tiles holding each slot's validity "
                                 "tile offsets", added_in=7, spec=SPEC + " Footer"),
    "tile_mins": doc("Offsets of the generic tiles holding each slot's tile minimums",
                     added_in=11, spec=SPEC + " Footer"),
    "tile_maxs": doc("Offsets of the generic tiles holding each slot's tile maximums",
                     added_in=11, spec=SPEC + " Footer"),
    "tile_sums": doc("Offsets of the generic tiles holding each slot's tile sums", added_in=11,
                     spec=SPEC + " Footer"),
    "tile_null_counts": doc("Offsets of the generic tiles holding each slot's tile null counts",
                            added_in=11, spec=SPEC + " Footer"),
}
D_FMMSN_OFF = doc("Fragment min max sum null count offset: where that generic tile starts",
                  added_in=12, spec=SPEC + " Footer")
D_PROC_OFF = doc("Processed conditions offset: where that generic tile starts", added_in=16,
                 spec=SPEC + " Footer")
D_FOOTER = doc("Footer: a plain blob (not a generic tile) read first, from the end of the file",
               spec=SPEC + " Footer")
D_SLOT_ITEM = doc("One value per slot (attributes, __coords, dimensions, then the optional "
                  "timestamp and delete slots)")
FOOTER_GROUP_TITLES = {
    "tile_offsets": "Tile offsets offsets", "tile_var_offsets": "Tile var offsets offsets",
    "tile_var_sizes": "Tile var sizes offsets",
    "tile_validity_offsets": "Tile validity offsets offsets", "tile_mins": "Tile mins offsets",
    "tile_maxs": "Tile maxs offsets", "tile_sums": "Tile sums offsets",
    "tile_null_counts": "Tile null counts offsets",
}


@dataclass
class Footer:
    """What a footer says, with the layout facts needed to find the sections."""

    version: int = 0
    schema_name: str = ""
    dense: bool = True
    null_ned: bool = False
    non_empty_domain: Optional[list] = None   # per dimension (min, max)
    ned_raw: List[bytes] = field(default_factory=list)
    sparse_tile_num: int = 0
    last_tile_cell_num: int = 0
    has_timestamps: bool = False
    has_delete_meta: bool = False
    slots: List[str] = field(default_factory=list)
    file_sizes: List[int] = field(default_factory=list)
    file_var_sizes: List[int] = field(default_factory=list)
    file_validity_sizes: List[int] = field(default_factory=list)
    rtree: Optional[int] = None
    sections: Dict[str, List[int]] = field(default_factory=dict)   # kind -> per-slot offsets
    fmmsn: Optional[int] = None
    processed_conditions: Optional[int] = None
    offset: int = 0
    size: int = 0
    complete: bool = False
    schema_used: bool = False


def footer_tail_size(version: int, n: int) -> int:
    """Bytes of a footer after the non-empty domain, for `n` slots."""
    size = 16 + (1 if version >= 14 else 0) + (1 if version >= 15 else 0)
    size += 8 * n * (3 if version >= 7 else 2)
    per_slot = 3 + (1 if version >= 7 else 0) + (4 if version >= 11 else 0)
    size += 8 + 8 * n * per_slot
    size += (8 if version >= 12 else 0) + (8 if version >= 16 else 0)
    return size


def fixed_footer_size(version: int, schema: ArraySchema) -> Optional[int]:
    """Bytes of the footer of a format 3–9 fragment whose dimensions are all fixed-sized:
    those versions write no footer length, libtiledb computes the size from the schema
    (`footer_size_v3_v4`, `_v5_v6`, `_v7_v9`). None when the footer carries its length."""
    dims = schema.dimensions
    if not dims or version >= 10 or any(d.var for d in dims):
        return None
    a = len(schema.attributes)
    if version < 5:  # one shared domain type; no var/validity entry for the coords slot
        ned = 2 * len(dims) * dims[0].cell_size
        return 6 + ned + 16 + 8 * (a + 1) + 8 * a + 8 + 8 * (a + 1) + 16 * a
    ned = sum(2 * d.cell_size for d in dims)
    return 6 + ned + footer_tail_size(version, a + 1 + len(dims))


def section_kinds(version: int) -> List[str]:
    kinds = ["tile_offsets", "tile_var_offsets", "tile_var_sizes"]
    if version >= 7:
        kinds.append("tile_validity_offsets")
    if version >= 11:
        kinds += ["tile_mins", "tile_maxs", "tile_sums", "tile_null_counts"]
    return kinds



def _infer_slot_count(source, start: int, end: int, version: int, head_end: int,
                      sections_here: bool = True) -> Optional[Tuple[int, int]]:
    """Without a schema: (slot count, non-empty-domain bytes) that make the footer consistent.
    When the sections are in the same file (`sections_here`), they must chain exactly: the
    R-tree at 0, each generic tile ending where the next section starts, the last one where
    the footer starts. Otherwise the offsets must start at 0 and increase."""
    total = end - start
    head = head_end - start
    for n in range(1, 4096):
        tail = footer_tail_size(version, n)
        ned = total - head - tail
        if ned < 0:
            return None
        t0 = head_end + ned + 16
        ts = source.read(t0, 1)[0] if version >= 14 else 0
        dl = source.read(t0 + 1, 1)[0] if version >= 15 else 0
        if ts > 1 or dl > 1 or n < 2 + ts + 2 * dl:
            continue
        offs_at = t0 + (1 if version >= 14 else 0) + (1 if version >= 15 else 0)
        offs_at += 8 * n * (3 if version >= 7 else 2)
        count = (end - offs_at) // 8
        offs = np.frombuffer(source.read(offs_at, count * 8), "<u8")
        if len(offs) != count or count == 0 or int(offs[0]) != 0:
            continue
        if not (np.all(offs[1:] > offs[:-1]) and int(offs[-1]) < max(start, 1)):
            if sections_here:
                continue
        if sections_here:
            ok = True
            for i, o in enumerate(offs.tolist()):
                head_ = peek_generic_tile(source, o)
                nxt = int(offs[i + 1]) if i + 1 < len(offs) else start
                if head_ is None or o + head_[0] != nxt:
                    ok = False
                    break
            if not ok:
                continue
        elif not np.all(offs[1:] > offs[:-1]):
            continue
        return n, ned
    return None


def parse_footer(cur: Cursor, schema: Optional[ArraySchema], name: str = "Footer",
                 size: Optional[int] = None, sections_here: bool = True) -> Footer:
    """The footer at `cur` as a group node `name` (bounded by `size` when known). Without a
    schema the slot count is inferred from the section offsets and the non-empty domain is
    shown as raw bytes."""
    ft = Footer(offset=cur.pos)

    def body(c: Cursor):
        ft.version = c.u32("Version number", D_VERSION).value
        v = ft.version
        if v < 3:
            c.fail("Footer (format < 3)", f"format version {v} keeps its metadata in one generic "
                                          f"tile with no footer; arrayscope does not parse it")
        if v >= 10:
            n = c.length("u64", "Array schema name size", 1, D_SCHEMA_NAME_SIZE, "bytes").value
            ft.schema_name = c.string("Array schema name", n, D_SCHEMA_NAME).value
        ft.dense = bool(c.boolean("Dense", D_DENSE).value)
        ft.null_ned = bool(c.boolean("Null non-empty domain", D_NULL_NED).value)
        use = schema
        if use is not None and ft.schema_name and use.name and use.name != ft.schema_name:
            c.node["Array schema name"].mark(
                WARNING, f"written with schema {ft.schema_name}; parsed with {use.name}")
        n_slots = None
        ned_bytes = None
        if use is None:
            if size is None:
                c.fail("Non-empty domain", "no array schema: the non-empty domain and the rest "
                                           "of the footer cannot be sized")
            guess = _infer_slot_count(c.source, ft.offset, ft.offset + size, v, c.pos,
                                      sections_here)
            if guess is None:
                c.fail("Non-empty domain", "no array schema, and no slot count makes the footer's "
                                           "section offsets consistent")
            n_slots, ned_bytes = guess
            # a note, not a warning: the schema's absence is an error where it is (the array
            # with no schema, the schema file unreadable or not parsed, the one it names gone)
            c.raw("Non-empty domain", ned_bytes, D_NED).message = (
                "no array schema: the non-empty domain is shown as raw bytes "
                f"({n_slots} slots inferred from the section offsets)")
        else:
            ft.schema_used = True
            _parse_ned(c, use, ft)
        ft.sparse_tile_num = c.u64("Number of sparse tiles", D_SPARSE_TILES).value
        ft.last_tile_cell_num = c.u64("Last tile cell num", D_LAST_TILE).value
        if v >= 14:
            ft.has_timestamps = bool(c.boolean("Includes timestamps", D_HAS_TS).value)
        if v >= 15:
            ft.has_delete_meta = bool(c.boolean("Includes delete metadata", D_HAS_DEL).value)
        ft.slots = slot_names(use, v, ft.has_timestamps, ft.has_delete_meta, n_slots)
        if use is None and n_slots is not None and len(ft.slots) != n_slots:
            ft.slots = slot_names(None, v, False, False, n_slots)
        ns = len(ft.slots)
        ft.file_sizes = _slot_u64s(c, "File sizes", ft.slots, D_FILE_SIZES)
        # v3/v4: no var size for the coords slot
        ft.file_var_sizes = _slot_u64s(c, "File var sizes", ft.slots[:-1] if v < 5 else ft.slots,
                                       D_FILE_VAR_SIZES)
        if v >= 7:
            ft.file_validity_sizes = _slot_u64s(c, "File validity sizes", ft.slots,
                                                D_FILE_VALIDITY_SIZES)
        else:
            ft.file_validity_sizes = [0] * ns
        ft.rtree = c.u64("R-Tree offset", D_RTREE_OFF).value
        for kind in section_kinds(v):
            slots = ft.slots
            if v < 5 and kind != "tile_offsets":
                slots = ft.slots[:-1]  # v3/v4: no var/validity entry for the coords slot
            ft.sections[kind] = _slot_u64s(c, FOOTER_GROUP_TITLES[kind], slots, D_GT_OFFSETS[kind])
        if v >= 12:
            ft.fmmsn = c.u64("Fragment min max sum null count offset", D_FMMSN_OFF).value
        if v >= 16:
            ft.processed_conditions = c.u64("Processed conditions offset", D_PROC_OFF).value
        ft.complete = True

    g = cur.group(name, body, size=size, doc=D_FOOTER)
    ft.size = g.size
    g.value = ft.version
    g.display = (f"version {ft.version}, {'dense' if ft.dense else 'sparse'}, "
                 f"{len(ft.slots)} slots")
    return ft


def _slot_u64s(c: Cursor, title: str, slots: List[str], fdoc) -> List[int]:
    c.need(title, 8 * len(slots), f"{len(slots)} × uint64")
    vals: List[int] = []

    def body(gc: Cursor):
        for s in slots:
            vals.append(gc.u64(s, D_SLOT_ITEM).value)
    g = c.group(title, body, doc=fdoc)
    g.value = vals
    g.display = "[" + ", ".join(str(x) for x in vals[:12]) + (", …" if len(vals) > 12 else "") + "]"
    return vals



def _parse_ned(c: Cursor, schema: ArraySchema, ft: Footer) -> None:
    dims = schema.dimensions
    if ft.null_ned:
        if ft.version >= 5 and any(d.var for d in dims):
            return  # nothing is written for a null domain with var-sized dimensions
        size = (2 * len(dims) * dims[0].cell_size if ft.version < 5 else
                sum(2 * d.cell_size for d in dims)) if dims else 0
        if size:
            c.raw("Non-empty domain (null)", size, D_NED_DUMMY)
        return
    ned: list = []

    def body(nc: Cursor):
        for d in dims:
            if ft.version < 5 and d.var:
                nc.fail(d.name, "var-sized dimensions need format ≥ 5")
            lo, hi, raw = parse_range(nc, d, d.name)
            ned.append((lo, hi))
            ft.ned_raw.append(raw)
    g = c.group("Non-empty domain", body, doc=D_NED)
    ft.non_empty_domain = ned
    g.value = [list(x) for x in ned]
    g.display = ", ".join(f"{d.name}: [{short_text(lo)}, {short_text(hi)}]"
                          for d, (lo, hi) in zip(dims, ned))


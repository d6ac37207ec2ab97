"""The footer of `__fragment_metadata.tdb`: a plain blob read first, from the end of the file.

It gives the non-empty domain, the file sizes and the offset of every section. Without a
schema the slot count is inferred from the section offsets.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from ...core.cursor import Cursor
from ...core.fielddoc import doc
from ...core.node import WARNING
from ..model.array_model import ArraySchema
from ..model.footer_layout import (  # noqa: F401  (the layout's names, re-exported)
    FOOTER,
    Footer,
    FooterField,
    fixed_footer_size,
    footer_tail_size,
    null_ned_size,
    section_kinds,
    tail_layout,
)
from ..model.fragment_slots import slot_names
from .fragment_values import parse_range, short_text
from .rawtile import peek_generic_tile

D_SCHEMA_NAME_SIZE = doc("Array schema name size: bytes of the name that follows", added_in=10,
                         spec="fragment.md Footer")
D_NED_DUMMY = doc("Dummy non-empty domain: zero bytes written when the non-empty domain is null")
D_FOOTER = doc("Footer: a plain blob (not a generic tile) read first, from the end of the file",
               spec="fragment.md Footer")
D_SLOT_ITEM = doc("One value per slot (attributes, __coords, dimensions, then the optional "
                  "timestamp and delete slots)")
FOOTER_GROUP_TITLES = {f.name: f.label for f in FOOTER if f.kind == "section"}


def _infer_slot_count(source, start: int, end: int, version: int, head_end: int,
                      sections_here: bool = True) -> Optional[Tuple[int, int]]:
    """Without a schema: (slot count, non-empty-domain bytes) that make the footer consistent.
    When the sections are in the same file (`sections_here`), they must chain exactly: the
    R-tree at 0, each generic tile ending where the next section starts, the last one where
    the footer starts. Otherwise the offsets must start at 0 and increase."""
    total = end - start
    head = head_end - start
    for n in range(1, 4096):
        lay = tail_layout(version, n)
        ned = total - head - lay[""][0]
        if ned < 0:
            return None
        t0 = head_end + ned
        ts = source.read(t0 + lay["has_timestamps"][0], 1)[0] if "has_timestamps" in lay else 0
        dl = source.read(t0 + lay["has_delete_meta"][0], 1)[0] if "has_delete_meta" in lay else 0
        if ts > 1 or dl > 1 or n < 2 + ts + 2 * dl:
            continue
        offs_at = t0 + lay["rtree"][0]
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
        version, *rest = FOOTER
        ft.version = v = c.u32(version.label, version.doc).value
        if v < 3:
            c.fail("Footer (format < 3)", f"format version {v} keeps its metadata in one generic "
                                          f"tile with no footer; arrayscope does not parse it")
        n_slots = None
        for f in rest:
            if v < f.since:
                continue
            if f.kind == "name":
                n = c.length("u64", "Array schema name size", 1, D_SCHEMA_NAME_SIZE, "bytes").value
                ft.schema_name = c.string(f.label, n, f.doc).value
            elif f.kind == "ned":
                n_slots = _non_empty_domain(c, f, schema, ft, size, sections_here)
            elif f.kind in ("slots", "section"):
                if not ft.slots:
                    ft.slots = slot_names(schema, v, ft.has_timestamps, ft.has_delete_meta, n_slots)
                    if schema is None and n_slots is not None and len(ft.slots) != n_slots:
                        ft.slots = slot_names(None, v, False, False, n_slots)
                ft.set(f, _slot_u64s(c, f.label, ft.slots[:f.count(v, len(ft.slots))], f.doc))
            elif f.kind == "bool":
                ft.set(f, c.boolean(f.label, f.doc).value)
            else:
                ft.set(f, c.u64(f.label, f.doc).value)
        if v < 7:
            ft.file_validity_sizes = [0] * len(ft.slots)
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



def _non_empty_domain(c: Cursor, f: FooterField, schema: Optional[ArraySchema], ft: Footer,
                      size: Optional[int], sections_here: bool) -> Optional[int]:
    """The non-empty domain's nodes; without a schema, raw bytes of the size that makes the
    footer's section offsets consistent, and the slot count that does (else None)."""
    if schema is not None and ft.schema_name and schema.name and schema.name != ft.schema_name:
        c.node["Array schema name"].mark(
            WARNING, f"written with schema {ft.schema_name}; parsed with {schema.name}")
    if schema is not None:
        ft.schema_used = True
        _parse_ned(c, schema, ft, f)
        return None
    if size is None:
        c.fail(f.label, "no array schema: the non-empty domain and the rest "
                        "of the footer cannot be sized")
    guess = _infer_slot_count(c.source, ft.offset, ft.offset + size, ft.version, c.pos,
                              sections_here)
    if guess is None:
        c.fail(f.label, "no array schema, and no slot count makes the footer's "
                        "section offsets consistent")
    n_slots, ned_bytes = guess
    # a note, not a warning: the schema's absence is an error where it is (the array with no
    # schema, the schema file unreadable or not parsed, the one it names gone)
    c.raw(f.label, ned_bytes, f.doc).message = (
        "no array schema: the non-empty domain is shown as raw bytes "
        f"({n_slots} slots inferred from the section offsets)")
    return n_slots


def _parse_ned(c: Cursor, schema: ArraySchema, ft: Footer, f: FooterField) -> None:
    dims = schema.dimensions
    if ft.null_ned:
        size = null_ned_size(schema)
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
    g = c.group(f.label, body, doc=f.doc)
    ft.non_empty_domain = ned
    g.value = [list(x) for x in ned]
    g.display = ", ".join(f"{d.name}: [{short_text(lo)}, {short_text(hi)}]"
                          for d, (lo, hi) in zip(dims, ned))


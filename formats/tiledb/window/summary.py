"""The array as a whole, for the window's Array dock (a `plugin.SummaryRow` tree): the schema
in one line, its dimensions and attributes with their types and filters, and the fragments
in read order with their time range, cell count, format version and size — what the
structure tree shows only file by file. Groups (SOMA experiments...) have none: the dock
lists their members."""
from __future__ import annotations

import os
from typing import List, Optional

from ...core.node import Node
from ...core.plugin import SummaryRow
from ...filters.enums import DATATYPE_NAMES
from ..model.array_model import ArraySchema, Fragment, TileDBArray
from .entries import ms_text
from .lab import describe_spec

ORDERS = {0: "row-major", 1: "col-major", 2: "global", 3: "unordered", 4: "hilbert"}


def _type(obj) -> str:
    dt = DATATYPE_NAMES.get(obj.datatype, str(obj.datatype))
    if obj.var:
        return f"{dt}, var"
    return dt if obj.cell_val_num == 1 else f"{dt}[{obj.cell_val_num}]"


def _filters(specs) -> str:
    return " → ".join(describe_spec(s) for s in specs) if specs else "no filters"


def _schema_row(schema: ArraySchema, node: Optional[Node], versions: int) -> SummaryRow:
    kind = "dense" if schema.dense else "sparse"
    text = (f"{kind}, tiles {ORDERS.get(schema.tile_order, '?')}, cells "
            f"{ORDERS.get(schema.cell_order, '?')}, format v{schema.version}")
    if not schema.dense:
        text += f", capacity {schema.capacity:,}" + (", duplicates allowed" if schema.allows_dups else "")
    row = SummaryRow("Schema", text, f"{versions} version{'s' * (versions != 1)}", node=node)
    dims = SummaryRow("Dimensions", f"{len(schema.dimensions)}", node=node)
    for d in schema.dimensions:
        dom = f" [{d.domain[0]}, {d.domain[1]}]" if d.domain is not None else ""
        ext = f", tile {d.tile_extent}" if d.tile_extent is not None else ""
        dims.children.append(SummaryRow(d.name, f"{_type(d)}{dom}{ext} — "
                                                f"{_filters(schema.pipeline_for(d, 'dimension'))}",
                                        node=node))
    attrs = SummaryRow("Attributes", f"{len(schema.attributes)}", node=node)
    for a in schema.attributes:
        extra = ", nullable" if a.nullable else ""
        extra += f", enumeration {a.enumeration}" if a.enumeration else ""
        attrs.children.append(SummaryRow(a.name, f"{_type(a)}{extra} — {_filters(a.filters)}",
                                         node=node))
    row.children = [dims, attrs]
    return row


def _cells(schema: Optional[ArraySchema], frag: Fragment) -> Optional[int]:
    fm = frag.metadata
    if fm is None:
        return None
    if fm.dense:
        ned = fm.non_empty_domain
        if not ned:
            return None
        n = 1
        try:
            for lo, hi in ned:
                n *= int(hi) - int(lo) + 1
        except (TypeError, ValueError):
            return None
        return n
    if not fm.sparse_tile_num:
        return 0
    cap = schema.capacity if schema is not None else 0
    return (fm.sparse_tile_num - 1) * cap + fm.last_tile_cell_num


def _bytes(node: Optional[Node]) -> str:
    """The fragment's bytes on disk; "" while a lazy open has not listed its folder (listing
    every fragment for this column would undo the lazy open)."""
    if node is None:
        return "0 B"
    if node.pending:
        return ""
    return f"{sum(c.size for c in node.iter_children() if c.kind == 'file'):,} B"


def _fragment_row(array: TileDBArray, frag: Fragment, node: Optional[Node]) -> SummaryRow:
    if frag.t1 is not None and frag.t2 is not None:
        when = ms_text(frag.t1) if frag.t1 == frag.t2 else f"{ms_text(frag.t1)} → {ms_text(frag.t2)}"
    else:
        when = frag.name
    fm = frag.metadata
    schema = array.schema_for(fm.schema_name) if fm is not None else None
    cells = _cells(schema, frag)
    parts = [f"{cells:,} cells" if cells is not None else "cells unknown"]
    if fm is not None:
        parts.append("dense" if fm.dense else "sparse")
        if fm.non_empty_domain:
            parts.append("domain " + " × ".join(f"[{lo}, {hi}]" for lo, hi in fm.non_empty_domain))
    if frag.version is not None:
        parts.append(f"format v{frag.version}")
    return SummaryRow(when, ", ".join(parts), _bytes(node), node=node, tooltip=frag.name)


def _footer_only(document, array: TileDBArray, frag: Fragment) -> None:
    from ..values.field_values import _metadata

    try:
        _metadata(document, array, frag)
    except Exception:  # noqa: BLE001 - shown as "cells unknown"; the tree and verify say why
        pass


def _fragment_rows(document, array: TileDBArray, frags: List[Fragment],
                   fdir: Optional[Node]) -> List[SummaryRow]:
    """One row per fragment, made when the Fragments row is expanded: a lazy open has not
    parsed their footers, each is read then (one small node-free read each)."""
    by_name = {c.name: c for c in fdir.iter_children()} if fdir is not None else {}
    rows = []
    for f in frags:
        if f.metadata is None:
            _footer_only(document, array, f)
        rows.append(_fragment_row(array, f, by_name.get(f.name)))
    return rows


def array_summary(document) -> Optional[SummaryRow]:
    array = getattr(document, "model", None)
    root: Optional[Node] = getattr(document, "root", None)
    if not isinstance(array, TileDBArray) or array.latest_schema is None or root is None:
        return None
    schema = array.latest_schema
    frags = sorted(array.fragments, key=Fragment.order_key)
    name = os.path.basename(os.path.normpath(array.path)) or array.path
    top = SummaryRow(name, f"TileDB {'dense' if schema.dense else 'sparse'} array: "
                           f"{len(schema.dimensions)}-D, {len(schema.attributes)} attribute"
                           f"{'s' * (len(schema.attributes) != 1)}, {len(frags)} fragment"
                           f"{'s' * (len(frags) != 1)}", node=root, tooltip=array.path)
    sdir = root.find("__schema")
    snode = sdir.find(schema.name) if sdir is not None and schema.name else sdir
    top.children.append(_schema_row(schema, snode, max(1, len(array.schemas))))
    fdir = root.find("__fragments")
    frow = SummaryRow("Fragments", "in read order (oldest first): time, cells, domain",
                      f"{len(frags)}", node=fdir)
    if frags:
        frow.load = lambda: _fragment_rows(document, array, frags, fdir)
    top.children.append(frow)
    for folder, what in (("__meta", "array metadata"), ("__commits", "commits"),
                         ("__labels", "dimension labels"), ("__enumerations", "enumerations")):
        n = root.find(folder)
        if n is not None and n.pending:   # a lazy open lists it when it is expanded
            top.children.append(SummaryRow(what.capitalize(), f"in {folder}: listed when "
                                           "opened in the Structure tree", node=n))
        elif n is not None and n.child_count():
            top.children.append(SummaryRow(what.capitalize(), f"{n.child_count()} file"
                                           f"{'s' * (n.child_count() != 1)} in {folder}",
                                           node=n))
    return top


def rows_of(summary: SummaryRow) -> List[SummaryRow]:
    """Every row, depth first (tests, search)."""
    out = [summary]
    for c in summary.expand():
        out.extend(rows_of(c))
    return out

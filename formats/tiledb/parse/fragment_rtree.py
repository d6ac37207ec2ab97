"""The R-tree section of fragment metadata: per level, the MBRs of the tiles below.

The last level has one MBR per data tile; dense fragments have no levels. Big fixed-size
levels build their MBR nodes on demand.
"""
from __future__ import annotations

from typing import Optional

from ...core.cursor import Cursor
from ...core.engine import run_parser
from ...core.fielddoc import doc
from ...core.node import WARNING, LazyChildren, Node
from ...filters.enums import DATATYPE_NAMES
from ..model.array_model import ArraySchema
from .fragment_values import parse_range

SPEC = "fragment.md"
D_FANOUT = doc("Fanout: children per R-tree node (10); dense fragments have 0 levels",
               spec=SPEC + " R-Tree")
D_LEVELS = doc("Num levels: levels of the R-tree, root first", spec=SPEC + " R-Tree")
D_NMBRS = doc("Num MBRs at this level", spec=SPEC + " R-Tree")
D_MBR = doc("MBR: per dimension the range of the coordinates below this node; the last level "
            "has one MBR per data tile", spec=SPEC + " MBR")
D_RT_DIMNUM = doc("Dimension number (format ≤ 4; ignored by readers)", removed_in=5,
                  spec="rtree.cc deserialize_v1_v4")
D_RT_TYPE = doc("Datatype (format ≤ 4; ignored by readers)", removed_in=5,
                spec="rtree.cc deserialize_v1_v4")


def rtree_parser(schema: Optional[ArraySchema], version: int):
    """The R-tree payload parser (without a schema the levels stay raw bytes)."""
    dims = schema.dimensions if schema is not None else None

    def parse(c: Cursor):
        if version < 5:
            c.u32("Dimension number", D_RT_DIMNUM)
        c.u32("Fanout", D_FANOUT)
        if version < 5:
            c.u8("Datatype", D_RT_TYPE, enum=DATATYPE_NAMES)
        levels = c.u32("Num levels", D_LEVELS).value
        if dims is None:
            if c.remaining:
                c.raw("Levels", c.remaining).mark(
                    WARNING, "no array schema: MBRs cannot be split into dimension ranges")
            return
        for li in range(levels):
            c.group(f"Level {li + 1}", lambda lc: _rtree_level(lc, dims, version))
    return parse


def _rtree_level(c: Cursor, dims, version: int) -> None:
    fixed = all(not d.var for d in dims) or version < 5
    n = c.length("u64", "Num MBRs", 2 if fixed else 16, D_NMBRS, "MBRs").value
    if fixed:
        mbr_size = sum(2 * d.cell_size for d in dims)
        c.need("MBRs", n * mbr_size, f"{n} MBRs × {mbr_size} B")
        base, src = c.pos, c.source

        def make(i: int) -> Node:
            m = Node(f"MBR {i + 1}", "struct", src, base + i * mbr_size, mbr_size, doc=D_MBR)
            run_parser(m.name, "struct", src, lambda mc: _mbr(mc, dims), None,
                       m.offset, m.end, node=m)
            m.value = [r.value for r in m.iter_children()]
            m.display = ", ".join(f"{d.name}: {r.display}" for d, r in zip(dims, m.iter_children()))
            return m
        node = Node("MBRs", "array", src, base, n * mbr_size, display=f"{n} MBRs", doc=D_MBR)
        node.set_lazy(LazyChildren(n, make))
        c.node.add(node)
        c.pos += n * mbr_size
    else:
        for i in range(n):
            g = c.group(f"MBR {i + 1}", lambda mc: _mbr(mc, dims), doc=D_MBR)
            g.display = ", ".join(f"{d.name}: {r.display}" for d, r in zip(dims, g.iter_children()))


def _mbr(c: Cursor, dims) -> None:
    for d in dims:
        parse_range(c, d, d.name)

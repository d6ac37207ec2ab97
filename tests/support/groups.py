"""Test helper: open a whole TileDB group tree at once (the app opens members on demand)."""
from __future__ import annotations

from typing import List

from arrayscope.formats.core.node import Node
from arrayscope.formats.tiledb.model.group_walk import member_children


def open_all(root: Node) -> List[Node]:
    """Open every member (and non-member folder) under `root`, recursively; returns them."""
    out: List[Node] = []
    stack = [root]
    while stack:
        n = stack.pop()
        n.ensure_built()
        kids = list(member_children(n))
        out.extend(kids)
        stack.extend(reversed(kids))
    return out


def group_with_damaged_member(dest, damage: str = "zstd") -> str:
    """A TileDB group `g` (written by tiledb-py) holding group `ms` holding dense array `X`
    (1000 float64 cells, one tile). `damage`: "zstd" flips a byte inside the zstd frame of
    the attribute's one chunk (tiledb-py cannot read it); "value" writes the attribute
    unfiltered and changes one cell's bytes (tiledb-py reads a wrong value silently).
    Returns the group's path; the damaged file is `g/ms/X/__fragments/<frag>/a0.tdb`."""
    import os

    import numpy as np
    import tiledb

    root = os.path.join(str(dest), "g")
    tiledb.Group.create(root)
    sub = os.path.join(root, "ms")
    tiledb.Group.create(sub)
    arr = os.path.join(sub, "X")
    filters = tiledb.FilterList([tiledb.ZstdFilter()] if damage == "zstd" else [])
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 999), tile=1000, dtype=np.int64))
    tiledb.Array.create(arr, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("a", dtype=np.float64, filters=filters)]))
    with tiledb.open(arr, "w") as a:
        a[:] = np.arange(1000, dtype=np.float64)
    with tiledb.Group(sub, "w") as g:
        g.add("X", name="X", relative=True)
    with tiledb.Group(root, "w") as g:
        g.add("ms", name="ms", relative=True)
    frags = os.path.join(arr, "__fragments")
    path = os.path.join(frags, os.listdir(frags)[0], "a0.tdb")
    data = bytearray(open(path, "rb").read())
    data[len(data) - 50 if damage == "zstd" else len(data) - 8 * 10 + 7] ^= 0x40
    with open(path, "wb") as f:
        f.write(bytes(data))
    return root

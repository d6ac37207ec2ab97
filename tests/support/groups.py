"""Test helper: open a whole TileDB group tree at once (the app opens members on demand)."""
from __future__ import annotations

from typing import List

from arrayscope.formats.node import Node
from arrayscope.formats.tiledb.group_walk import member_children


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

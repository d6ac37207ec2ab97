"""Node paths (names joined by "/") for --select, with a helpful message when one is unknown."""
from __future__ import annotations

from typing import Optional, Tuple

from arrayscope.formats.core.node import Node


def resolve(root: Node, path: str) -> Tuple[Optional[Node], str]:
    """(node, "") or (None, message listing what exists at the deepest level reached)."""
    node = root.resolve(path)
    if node is not None:
        return node, ""
    parts = [p for p in path.split("/") if p]
    if parts and parts[0] == root.name and root.find(parts[0]) is None:
        parts = parts[1:]
    cur, reached = root, [root.name]
    for p in parts:
        nxt = cur.find(p)
        if nxt is None:
            break
        cur = nxt
        reached.append(p)
    names = [c.name for c in cur.iter_children()] if not cur.is_lazy else \
        [f"(lazy: {cur.child_count()} items)"]
    shown = ", ".join(repr(n) for n in names[:60]) + (" …" if len(names) > 60 else "")
    return None, (f"no node {path!r}: {'/'.join(reached)!r} has no child "
                  f"{parts[len(reached) - 1] if len(reached) - 1 < len(parts) else ''!r}; "
                  f"it has: {shown or '(no children)'}")


def resolve_built(root: Node, path: str) -> Tuple[Optional[Node], Optional[Node]]:
    """`path` walked through what is built, never building a member (real work, done off the
    GUI thread): (node, None) when reached, (None, member) when the walk needs that member's
    children built first, (None, None) when there is no such node."""
    parts = [p for p in path.split("/") if p]
    if parts and parts[0] == root.name and root.find(parts[0]) is None:
        parts = parts[1:]
    cur = root
    for p in parts:
        if cur.pending and getattr(cur.children, "background", False):
            return None, cur
        nxt = cur.find(p)
        if nxt is None:
            return None, None
        cur = nxt
    return cur, None

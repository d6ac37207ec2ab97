"""The node a finding names, for findings made from a place alone (a verify check's source
and offset): the node whose bytes are wrong, by its path from the dataset's root.

A format's own checks say where (the data file, the offset of the chunk or tile) without
building nodes; this finds the node there once the checks are done, so every finding of
`verify` carries a node path (`--json` `node`, the window's marks and links), inside a
group's members too. The walk goes down by source name and offset: folders whose name
leads to the source, then the nodes of that source holding the offset, the deepest one —
or, for a finding about a whole part (`findings.NODE_KIND`: a tile's cells), the first of
that kind. Deferred children built for it (a member, a fragment of a lazy open) are
released again, so the walk costs memory for one part at a time."""
from __future__ import annotations

from dataclasses import replace
from typing import List, Optional

from .findings import NODE_KIND, Finding
from .node import Node

_LINEAR_MAX = 4096   # lazy children scanned one by one; more are searched by offset


def with_nodes(findings: List[Finding], document) -> List[Finding]:
    """`findings`, each with an empty `node` given the path of the node at its place (left
    empty when the tree has none there)."""
    root = getattr(document, "root", None)
    if root is None or all(f.node for f in findings):
        return findings
    built: List[Node] = []
    out: List[Finding] = []
    try:
        for f in findings:
            if f.node or not f.source:
                out.append(f)
                continue
            node = node_at(root, f.source, f.offset, NODE_KIND.get(f.code), built)
            out.append(replace(f, node=node.path()) if node is not None else f)
    finally:
        for n in reversed(built):   # innermost first
            n.release_deferred()
    return out


def _name(node: Node) -> str:
    src = node.source
    return src if isinstance(src, str) else getattr(src, "name", "") or ""


def _holds(node: Node, offset: int) -> bool:
    return node.offset <= offset < node.end or (node.size == 0 and node.offset == offset)


def node_at(root: Node, source: str, offset: int, kind: Optional[str] = None,
            built: Optional[List[Node]] = None) -> Optional[Node]:
    """The deepest node of `source` holding `offset` (the first of `kind` on the way, when
    given); a folder named `source` itself; None when the tree has no such source.
    Nodes whose deferred children this builds are appended to `built`."""
    node = root
    found = root if _name(root) == source and not isinstance(root.source, str) and \
        _holds(root, offset) else None   # a document of one file
    while True:
        if node.pending:
            node.ensure_built()
            if built is not None:
                built.append(node)
        nxt = _child_toward(node, source, offset)
        if nxt is None:
            return found
        found = node = nxt
        if isinstance(nxt.source, str) and _name(nxt) == source:
            return nxt   # the folder the finding is about
        if kind is not None and nxt.kind == kind and _name(nxt) == source:
            return nxt


def _child_toward(node: Node, source: str, offset: int) -> Optional[Node]:
    if node.is_lazy and node.child_count() > _LINEAR_MAX:
        return _search_by_offset(node, source, offset)
    for c in node.iter_children():
        name = _name(c)
        if isinstance(c.source, str):   # a folder: its own name or one leading to the source
            if name == source or source.startswith(name + "/"):
                return c
            continue
        if name == source and _holds(c, offset):
            return c
    return None


def _search_by_offset(node: Node, source: str, offset: int) -> Optional[Node]:
    """A long lazy list (tiles, cells) is in offset order: the child holding `offset`."""
    lo, hi = 0, node.child_count() - 1
    if _name(node.child(0)) != source:
        return None
    while lo <= hi:
        mid = (lo + hi) // 2
        c = node.child(mid)
        if c.end <= offset and c.size > 0:
            lo = mid + 1
        elif c.offset > offset:
            hi = mid - 1
        else:
            return c
    return None

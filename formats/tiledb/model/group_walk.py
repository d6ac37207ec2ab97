"""Walking a group's members for `values --array`, `verify` and the tests.

A member node (group.py) holds its member's tree as deferred children; these functions open
members on purpose: by member path (`ms/RNA/X/data`), all of them, or one at a time for
`verify` (open, check, release), so checking a large experiment never holds it all.
"""
from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

from ...core.node import OK, Node
from ..parse.group import MemberRef, TileDBGroup, details_findings


def is_group_document(document) -> bool:
    return isinstance(getattr(document, "model", None), TileDBGroup)


def member_children(node: Node) -> Iterator[Node]:
    """The member nodes (and non-member folders) directly under a group node."""
    for c in node.iter_children():
        if isinstance(c.data, MemberRef):
            yield c


def find_member(root: Node, member_path: str) -> Optional[Node]:
    """The member node named by member names joined by "/" (groups on the way are opened)."""
    node: Optional[Node] = root
    for part in [p for p in member_path.split("/") if p]:
        if node is None:
            return None
        node.ensure_built()
        node = next((c for c in member_children(node) if c.name == part and
                     c.data.member is not None), None)
    return node


def array_member_paths(root: Node) -> List[str]:
    """Every array member's path, depth first in tree order (groups opened, arrays not)."""
    out: List[str] = []
    stack = [root]
    while stack:
        n = stack.pop()
        n.ensure_built()
        kids = [c for c in member_children(n) if c.data.member is not None]
        for c in kids:
            if c.data.kind == "array":
                out.append(c.data.member_path)
        stack.extend(reversed([c for c in kids if c.data.kind == "group"]))
    return sorted(out)


class MemberView:
    """A member array seen as a document of its own: its node as the root, its array as the
    model; sources, names and the key stay the group document's."""

    def __init__(self, document, root: Node, model):
        self._document = document
        self.root = root
        self.model = model

    def __getattr__(self, name):
        return getattr(self._document, name)


def member_document(document, member_path: str) -> MemberView:
    """The array member at `member_path` with its array model (the member's tree is not
    built for it); LookupError (listing the arrays) when there is no such array member."""
    node = find_member(document.root, member_path)
    if node is None or node.data.kind != "array":
        arrays = array_member_paths(document.root)
        what = f"{member_path!r} is a {node.data.kind}, not an array" if node is not None \
            else f"no array member {member_path!r}"
        raise LookupError(f"{what}; arrays: "
                          f"{', '.join(arrays) or '(none)'}")
    model = node.data.model
    if model is None:  # decoding needs the array model, not the member's tree
        from .model_loader import load_array_model

        model = load_array_model(document, node.data.path, document.ctx.derive(format=None))
    return MemberView(document, node, model)


def verify_group(document) -> List[object]:
    """Findings of every member, member by member (opened, checked, released): the member's
    own tree diagnostics and, for an array, the array checks; in tree order."""
    from ..verify.array_verify import verify_array

    out: List[object] = list(details_findings(document.root))
    # a work list, not a call a level (a dataset sets the depth: 1 500 nested groups): each
    # entry is a group's members still to visit and the member to release once they are
    stack: List[Tuple[Iterator[Node], Optional[Node]]] = [(member_children(document.root), None)]
    while stack:
        members, opened = stack[-1]
        m = next(members, None)
        if m is None:
            stack.pop()
            if opened is not None:
                opened.release_deferred()
            continue
        release = m.pending
        m.ensure_built()
        out.extend(n for n in m.walk() if n.status != OK)
        if m.data.kind == "group":
            out.extend(details_findings(m))
        if m.data.kind == "array" and m.data.model is not None:
            out.extend(verify_array(MemberView(document, m, m.data.model)))
        stack.append((member_children(m), m if release else None))
    return out

"""Where each finding sits (no Qt): the node it names and its ancestors, and the byte range
it covers in its source, so the tree, the hex view, the overview bar and the status light
show every problem in place — verify's findings as well as the parse errors of the tree.

A finding names a node path; when that path is not a node of the tree (a verify check of
its own), the leaf holding its offset in its source stands for it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from arrayscope.formats.findings import Finding, Status
from arrayscope.formats.node import Node

from .nodepath import resolve

RANK = {"info": 1, "warning": 2, "error": 3}
Range = Tuple[int, int, str]   # start, end (exclusive), status


def worse(a: Optional[str], b: Optional[str]) -> Optional[str]:
    return a if RANK.get(a or "", 0) >= RANK.get(b or "", 0) else b


@dataclass(frozen=True)
class Mark:
    """One finding placed: its node (None when nothing holds it) and byte range."""
    finding: Finding
    node: Optional[Node]
    source: object
    start: int
    end: int


class FindingMarks:
    """The findings of one document, placed. `node_at(source, offset)` is the window's
    interval index (Session.node_at)."""

    def __init__(self, document=None, node_at: Optional[Callable[[object, int], Optional[Node]]] = None):
        self.document = document
        self.node_at = node_at
        self.marks: List[Mark] = []
        self._status: Dict[int, str] = {}        # id(node) -> worst status at or below it
        self._own: Dict[int, List[Finding]] = {}  # id(node) -> findings placed on it
        self._ranges: Dict[int, List[Range]] = {}  # id(source) -> ranges
        self._keep: Dict[int, object] = {}        # ids stay valid while the marks live

    def clear(self) -> None:
        self.marks.clear()
        self._status.clear()
        self._own.clear()
        self._ranges.clear()
        self._keep.clear()

    # ---- placing ---------------------------------------------------------------------
    def add(self, findings: Iterable[Finding]) -> List[Mark]:
        """Place each finding; one already placed (same source, offset, message) is not
        repeated. Returns the new marks."""
        seen = {(m.finding.source, m.finding.offset, m.finding.message) for m in self.marks}
        new = []
        for f in findings:
            k = (f.source, f.offset, f.message)
            if k in seen:
                continue
            seen.add(k)
            m = self._place(f)
            self.marks.append(m)
            new.append(m)
            self._record(m)
        return new

    def add_nodes(self, nodes: Iterable[Node]) -> List[Mark]:
        """The tree's own problems (nodes whose status is not ok) as findings."""
        out = []
        for n in nodes:
            src = getattr(n, "source", None)
            name = src if isinstance(src, str) else getattr(src, "name", "") or ""
            status: Status = "error" if n.status == "error" else \
                "info" if n.status == "info" else "warning"
            f = Finding(status, "parse-error" if status == "error" else "parse-warning", name,
                        0 if isinstance(src, str) or src is None else n.offset, n.path(),
                        n.message or n.name)
            out.extend(self.add([f]))
        return out

    def _place(self, f: Finding) -> Mark:
        doc = self.document
        root = getattr(doc, "root", None)
        node: Optional[Node] = None
        if root is not None and f.node and "/" in f.node:
            found, _msg = resolve(root, f.node)
            node = found if isinstance(found, Node) else None
        src = doc.source_by_name(f.source) if doc is not None and f.source else None
        if node is not None and src is not None and node.source is not src:
            node = None
        if node is None and src is not None and self.node_at is not None:
            node = self.node_at(src, f.offset)
        if src is None and node is not None and not isinstance(node.source, str):
            src = node.source
        start, end = f.offset, f.offset + 1
        if node is not None and node.source is src and getattr(node, "size", 0) > 0 \
                and node.kind not in ("file", "dir"):
            start, end = node.offset, node.end
        if src is not None:
            size = getattr(src, "size", 0)
            start, end = max(0, min(start, size)), max(0, min(end, size))
        return Mark(f, node, src, start, end)

    def _record(self, m: Mark) -> None:
        st = m.finding.status
        if m.node is not None:
            self._own.setdefault(id(m.node), []).append(m.finding)
            n: Optional[Node] = m.node
            while n is not None:
                self._keep[id(n)] = n
                self._status[id(n)] = worse(self._status.get(id(n)), st) or st
                n = n.parent
        if m.source is not None and m.end > m.start:
            self._keep[id(m.source)] = m.source
            rs = self._ranges.setdefault(id(m.source), [])
            rs.append((m.start, m.end, st))
            rs.sort()

    # ---- asking ----------------------------------------------------------------------
    def status_of(self, node: Node) -> Optional[str]:
        """The worst status of the findings on `node` or anywhere under it."""
        return self._status.get(id(node))

    def findings_on(self, node: Node) -> List[Finding]:
        return list(self._own.get(id(node), ()))

    def ranges_for(self, source) -> List[Range]:
        return list(self._ranges.get(id(source), ()))

    def counts(self) -> Tuple[int, int]:
        errors = sum(1 for m in self.marks if m.finding.status == "error")
        warnings = sum(1 for m in self.marks if m.finding.status == "warning")
        return errors, warnings

    def worst(self) -> Optional[str]:
        w: Optional[str] = None
        for m in self.marks:
            w = worse(w, m.finding.status)
        return w

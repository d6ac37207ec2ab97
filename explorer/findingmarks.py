"""Where each finding sits (no Qt): the node it names and its ancestors, and the byte range
it covers in its source, so the tree, the hex view, the overview bar and the status light
show every problem in place — verify's findings as well as the parse errors of the tree.

A finding names a node path; when that path is not a node of the tree, the leaf holding its
offset in its source stands for it. Placing never opens a group member (real work: the
window does it off the GUI thread): a finding inside a member not opened yet marks its
ancestors by path (`status_of`), and is placed on its node once the member is open (its
file shown, `ranges_for`; the node asked about, `findings_on`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from arrayscope.formats.core.findings import Finding, default_code
from arrayscope.formats.core.node import Node
from arrayscope.formats.core.status import Status

from .nodepath import resolve_built

Range = Tuple[int, int, str]   # start, end (exclusive), status


def worse(a: Optional[Status], b: Optional[Status]) -> Optional[Status]:
    """The worse of two statuses (None: nothing found)."""
    return a if (Status(a).rank if a else 0) >= (Status(b).rank if b else 0) else b


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
        self._status: Dict[int, Status] = {}        # id(node) -> worst status at or below it
        self._own: Dict[int, List[Finding]] = {}  # id(node) -> findings placed on it
        self._ranges: Dict[int, List[Range]] = {}  # id(source) -> ranges
        self._keep: Dict[int, object] = {}        # ids stay valid while the marks live
        self._paths: Dict[str, Status] = {}        # node path -> worst status at or below it
        self._unplaced: List[Finding] = []        # in members not opened yet

    def clear(self) -> None:
        self.marks.clear()
        self._status.clear()
        self._own.clear()
        self._ranges.clear()
        self._keep.clear()
        self._paths.clear()
        self._unplaced.clear()

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
            self._record_path(f)
        return new

    def add_nodes(self, nodes: Iterable[Node]) -> List[Mark]:
        """The tree's own problems (nodes whose status is not ok) as findings."""
        out = []
        for n in nodes:
            src = getattr(n, "source", None)
            name = src if isinstance(src, str) else getattr(src, "name", "") or ""
            status = Status.WARNING if n.status == Status.OK else Status(n.status)
            f = Finding(status, default_code(status, None), name,
                        0 if isinstance(src, str) or src is None else n.offset, n.path(),
                        n.message or n.name)
            out.extend(self.add([f]))
        return out

    def _place(self, f: Finding) -> Mark:
        doc = self.document
        root = getattr(doc, "root", None)
        node: Optional[Node] = None
        if root is not None and f.node and "/" in f.node:
            node, member = resolve_built(root, f.node)
            if member is not None:   # placed when the member is open
                self._unplaced.append(f)
                return Mark(f, None, None, f.offset, f.offset)
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

    def _record_path(self, f: Finding) -> None:
        """Every ancestor path of the finding's node carries its status, built or not."""
        if "/" not in (f.node or ""):
            return
        parts = f.node.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            self._paths[p] = worse(self._paths.get(p), f.status) or f.status

    def _place_opened(self, source_name: Optional[str] = None) -> None:
        """Place the findings whose member has been opened since (those of `source_name`,
        or all)."""
        waiting = [f for f in self._unplaced if source_name is None or f.source == source_name]
        if not waiting:
            return
        self._unplaced = [f for f in self._unplaced if f not in waiting]
        for f in waiting:
            m = self._place(f)
            if m.node is None and m.source is None:
                continue   # still waiting (put back by _place)
            self.marks[:] = [m if x.finding is f else x for x in self.marks]
            self._record(m)

    # ---- asking ----------------------------------------------------------------------
    def status_of(self, node: Node) -> Optional[Status]:
        """The worst status of the findings on `node` or anywhere under it."""
        st = self._status.get(id(node))
        if self._paths:
            st = worse(st, self._paths.get(node.path()))
        return st

    def findings_on(self, node: Node) -> List[Finding]:
        if self._unplaced:
            path = node.path()
            if any(f.node == path for f in self._unplaced):
                self._place_opened()
        return list(self._own.get(id(node), ()))

    def ranges_for(self, source) -> List[Range]:
        if self._unplaced and source is not None:
            self._place_opened(getattr(source, "name", None))
        return list(self._ranges.get(id(source), ()))

    def counts(self) -> Tuple[int, int]:
        errors = sum(1 for m in self.marks if m.finding.status == Status.ERROR)
        warnings = sum(1 for m in self.marks if m.finding.status == Status.WARNING)
        return errors, warnings

    def worst(self) -> Optional[Status]:
        w: Optional[Status] = None
        for m in self.marks:
            w = worse(w, m.finding.status)
        return w

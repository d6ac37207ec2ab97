"""The application's state, without Qt: the opened document (its `Session`), the selected
node, the findings of the last verify, and the navigation history (back / forward).

Panels follow it through one small protocol (`Panel.state_changed(state, event)`), called
for every event in subscription order; the window's shell only wires actions to it. Events
are plain data, so the state can be driven and checked without a display."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Protocol, Sequence, Union

from arrayscope.formats.core.findings import Finding
from arrayscope.formats.core.node import Node

from .session import Session

MAX_HISTORY = 200


@dataclass(frozen=True)
class DocumentChanged:
    """A document was opened (`state.session` set) or closed (`state.session` is None)."""


@dataclass(frozen=True)
class SelectionChanged:
    node: Node
    # who asked: "tree", "browser", "hex", "diagnostics", "history" or None (the window)
    origin: Optional[str] = None


@dataclass(frozen=True)
class FindingsAdded:
    findings: Sequence[Finding]


Event = Union[DocumentChanged, SelectionChanged, FindingsAdded]


class Panel(Protocol):
    def state_changed(self, state: "AppState", event: Event) -> None: ...


class Follower:
    """A panel that is one function (a feature that needs no class of its own)."""

    def __init__(self, fn: Callable[["AppState", Event], None]) -> None:
        self.state_changed = fn


def on_document(state: "AppState", fn: Callable[[object], None]) -> None:
    """Call `fn(document)` when a document is opened, `fn(None)` when it is closed."""
    def changed(app: "AppState", event: Event) -> None:
        if isinstance(event, DocumentChanged):
            fn(app.session.document if app.session is not None else None)
    state.subscribe(Follower(changed))


class AppState:
    def __init__(self) -> None:
        self.session: Optional[Session] = None
        self.current: Optional[Node] = None
        self.findings: List[Finding] = []
        self._panels: List[Panel] = []
        self._back: List[Node] = []
        self._forward: List[Node] = []

    # ---- subscribers -------------------------------------------------------------------
    def subscribe(self, panel: Panel) -> None:
        self._panels.append(panel)

    def _emit(self, event: Event) -> None:
        for p in list(self._panels):
            p.state_changed(self, event)

    # ---- document ----------------------------------------------------------------------
    def open(self, session: Session) -> None:
        if self.session is not None:
            self.session.close()
        self.session = session
        self._reset()
        self._emit(DocumentChanged())

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
        self.session = None
        self._reset()
        self._emit(DocumentChanged())

    def _reset(self) -> None:
        self.current = None
        self.findings = []
        self._back.clear()
        self._forward.clear()

    # ---- selection and history ----------------------------------------------------------
    def select(self, node: Optional[Node], origin: Optional[str] = None) -> bool:
        """Make `node` the selection (a step of the history); False when nothing is open."""
        if node is None or self.session is None:
            return False
        kids = node.children if node.pending else None
        if getattr(kids, "owner_fields", False) and not getattr(kids, "background", False):
            node.ensure_built()   # a file parsed when first shown (a lazy open): now
        if origin != "history" and self.current is not None and self.current is not node:
            self._back.append(self.current)
            del self._back[:-MAX_HISTORY]
            self._forward.clear()
        self.current = node
        self._emit(SelectionChanged(node, origin))
        return True

    def back(self) -> bool:
        if not self._back or self.current is None:
            return False
        self._forward.append(self.current)
        return self.select(self._back.pop(), "history")

    def forward(self) -> bool:
        if not self._forward or self.current is None:
            return False
        self._back.append(self.current)
        return self.select(self._forward.pop(), "history")

    def forget(self, node: Node) -> None:
        """`node` left the tree (a closed stage tab): history never returns to it or below."""
        def gone(n: Node) -> bool:
            p: Optional[Node] = n
            while p is not None:
                if p is node:
                    return True
                p = p.parent
            return False
        self._back = [n for n in self._back if not gone(n)]
        self._forward = [n for n in self._forward if not gone(n)]

    # ---- findings ----------------------------------------------------------------------
    def add_findings(self, findings: Sequence[Finding]) -> None:
        if self.session is None:
            return
        self.findings.extend(findings)
        self._emit(FindingsAdded(list(findings)))

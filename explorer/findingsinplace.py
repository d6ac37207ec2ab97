"""Findings in place: every finding of the open document (the tree's parse problems and
verify's checks) marked where it is — a status icon on its node and each ancestor, a red
(or amber) range in the hex view, and the status light in the status bar.

`install(window)` builds it; it follows the document, the selection and the findings as a
panel of the window's state (`state.subscribe`: DocumentChanged, SelectionChanged,
FindingsAdded), the verifier's progress and its hex views through their signals."""
from __future__ import annotations

import html
from typing import List, Optional

from arrayscope.formats.core.findings import Finding
from arrayscope.formats.core.status import Status

from . import theme
from .findinglight import FindingLight
from .findingmarks import FindingMarks
from .state import AppState, DocumentChanged, Event, FindingsAdded, SelectionChanged


class FindingsInPlace:
    def __init__(self, window):
        self.window = window
        self.marks = FindingMarks()
        self.checking = False
        self.light = FindingLight(window)
        window.statusBar().addPermanentWidget(self.light)
        self.light.clicked.connect(self.show_list)
        window.tree.model.mark_of = self._mark_of
        window.state.subscribe(self)
        window.tabs.viewCreated.connect(self._decorate)
        window.verifier.started.connect(lambda: self._checking(True))
        window.verifier.failed.connect(lambda _msg: self._checking(False))

    def state_changed(self, state: AppState, event: Event) -> None:
        if isinstance(event, DocumentChanged):
            self.set_document(state.session.document if state.session is not None else None)
        elif isinstance(event, SelectionChanged):
            self.node_shown(event.node)
        elif isinstance(event, FindingsAdded):
            self.add(list(event.findings))

    def _mark_of(self, node) -> Optional[str]:
        return self.marks.status_of(node)

    def set_document(self, doc) -> None:
        session = self.window.session
        self.marks = FindingMarks(doc, session.node_at if session is not None else None)
        self.checking = False
        if doc is not None:
            self.marks.add_nodes(session.opened_diagnostics if session is not None
                                 else doc.diagnostics())
        self.light.setVisible(doc is not None)
        self._apply()

    def add(self, findings: List[Finding]) -> None:
        """Verify's findings arrived (in the GUI thread): place and show them."""
        self.checking = False
        if self.window.session is not None:
            self.marks.add(findings)
        self._apply()
        cur = self.window.current_node
        if cur is not None:
            self.node_shown(cur)

    def _checking(self, on: bool) -> None:
        self.checking = on
        self._update_light()

    def _apply(self) -> None:
        self.window.tree.view.viewport().update()
        for v in self.window.tabs.views():
            self._decorate(v)
        self._update_light()

    def _update_light(self) -> None:
        e, w = self.marks.counts()
        self.light.set_counts(e, w, checking=self.checking)

    def _decorate(self, view) -> None:
        view.set_marks(self.marks.ranges_for(view.source))
        overview = getattr(view, "overview", None)
        if overview is not None:
            overview.set_marks(self.marks.ranges_for(view.source))

    def node_shown(self, node) -> None:
        """The inspector says what verify found on this very node."""
        found = self.marks.findings_on(node)
        if not found or node.status != Status.OK:
            return   # a parse problem the inspector already shows
        parts = []
        for f in found:
            c = theme.error_color() if f.status == Status.ERROR else theme.warning_color()
            hint = f"<br><i>{html.escape(f.hint)}</i>" if f.hint else ""
            parts.append(f"<p style='color:{c.name()}'><b>{html.escape(f.status.upper())}</b> "
                         f"({html.escape(f.code)}): {html.escape(f.message)}{hint}</p>")
        self.window.inspector.show_findings("".join(parts))

    def show_list(self) -> None:
        d = self.window.d_diag
        d.show()
        d.raise_()


def install(window) -> FindingsInPlace:
    fip = FindingsInPlace(window)
    window.findings_in_place = fip
    return fip

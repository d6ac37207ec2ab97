"""The pipeline panel's outputs in the window: a chunk's reversed stages (and its forward
bytes) hang under the chunk in the tree and open as hex tabs; a clicked cell's bytes are
selected in their tabs, and the stage highlight follows the tab shown; a stage tab closed
by the user, or dropped over the panel's budget, leaves the document and the tree.
`StageTabs(window)` wires it (the panel's signals, the tabs' sourceClosed and
currentSourceChanged)."""
from __future__ import annotations

from typing import Dict, Optional


class StageTabs:
    def __init__(self, window) -> None:
        self.win = window
        self.units: Dict[int, str] = {}   # id(stage source) -> datetime unit of its values
        p = window.pipeline
        p.stageReady.connect(self.stage_ready)
        p.rangesRequested.connect(self.select_ranges)
        p.sourceReleased.connect(self.released)
        window.tabs.sourceClosed.connect(self.source_closed)
        window.tabs.currentSourceChanged.connect(p.follow_source)   # the stage highlight

    def unit_of(self, source) -> Optional[str]:
        return self.units.get(id(source))

    def clear(self) -> None:
        self.units = {}

    def stage_ready(self, chunk_node, stage_node, show_source, unit) -> None:
        w = self.win
        if w.session is None:
            return
        if stage_node.parent is not None:
            w.tree.model.notify_children_added(stage_node.parent)
        if unit:
            self.units[id(stage_node.source)] = unit
        if show_source is False:   # attached only (a chunk reversed at selection)
            return
        if show_source is not None:
            w.tabs.view_for(show_source)
            w.select_node(stage_node)
        else:
            w.tabs.view_for(stage_node.source, activate=False)

    def select_ranges(self, ranges) -> None:
        """A cell's bytes (plugin.CellRange list, its own buffer first): each selected in its
        source's tab, the first tab in front."""
        for r in reversed(ranges):
            view = self.win.tabs.view_for(r.source, activate=r is ranges[0])
            if view is not None:
                view.select_range(r.offset, r.offset + r.length)

    def released(self, src) -> None:
        """A chunk's stage dropped over the pipeline's budget: as if its tab were closed."""
        self.win.tabs.close_source(src)   # emits sourceClosed when a tab was open
        self.source_closed(src)           # a no-op when that already detached it

    def source_closed(self, src) -> None:
        """A hex tab was closed: a filter-stage output made by the pipeline panel is dropped
        from the document (Document.remove_derived) and its nodes leave the tree; other
        sources (files, payloads parsed at open) stay, only their view is gone."""
        w = self.win
        if w.session is None or not w.pipeline.is_stage_source(src):
            return
        node = w.pipeline.forget_source(src)
        w.session.document.remove_derived(src)
        self.units.pop(id(src), None)
        if node is not None and node.parent is not None:
            parent = node.parent
            cur = w.current_node
            inside = cur is not None and cur.source is src
            w.tree.model.remove_child(parent, node)
            w.state.forget(node)
            w.session.index.invalidate()
            if inside:
                w.select_node(parent)

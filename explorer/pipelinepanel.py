"""The pipeline panel: a chunk's stages (TileDB filters, Zarr codecs: a `ChunkView` from the
format's plugin), reversed step by step or all at once, checked forward, ending in a table
of the chunk's values; and a pipeline editor to try other filters on the decoded cells
(teaching).

The parts: `stagetree` (the stage list), `cellspane` (the values table), `pipelineeditor`
(the editor). What was done with each chunk lives in its view (kept per chunk here)."""
from __future__ import annotations

import html
from typing import Dict, Optional

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from arrayscope.formats import registry
from arrayscope.formats.node import Node
from arrayscope.formats.plugin import ChunkView

from . import theme
from .cellspane import CellsPane
from .pipelineeditor import PipelineEditor
from .stagetree import ROLE, StageTree
from .state import AppState, DocumentChanged, Event, SelectionChanged

__all__ = ["PipelineEditor", "PipelinePanel"]


class PipelinePanel(QWidget):
    # chunk node, stage root node, source to show (None: open its tab without switching),
    # the stage's datetime unit (None: not datetimes)
    stageReady = Signal(object, object, object, object)
    nodeRequested = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.session = None
        self.state: Optional[ChunkView] = None
        self._views: Dict[object, ChunkView] = {}

        self.title = QLabel("Select a tile or a chunk to see its filter pipeline.", self)
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.chunk_combo = QComboBox(self)
        self.chunk_combo.setVisible(False)
        self.chunk_combo.activated.connect(self._chunk_picked)
        self.btn_next = QPushButton("Reverse next stage", self)
        self.btn_all = QPushButton("Reverse all", self)
        self.btn_fwd = QPushButton("Apply forward", self)
        self.btn_next.setToolTip("Undo the next filter (from the disk side): its output opens as a hex tab")
        self.btn_all.setToolTip("Undo every filter down to the cells")
        self.btn_fwd.setToolTip("Apply each filter again to the reversed bytes and compare with the stored bytes")
        self.btn_next.clicked.connect(self.reverse_next)
        self.btn_all.clicked.connect(self.reverse_all)
        self.btn_fwd.clicked.connect(self.apply_forward)
        btns = QHBoxLayout()
        btns.setContentsMargins(0, 0, 0, 0)
        for b in (self.btn_next, self.btn_all, self.btn_fwd):
            btns.addWidget(b)
        btns.addStretch(1)

        self.tree = StageTree(self)
        self.tree.itemDoubleClicked.connect(self._row_activated)
        self.tree.itemClicked.connect(self._row_clicked)

        self.cells_pane = CellsPane(self)
        self.cells, self.cells_view = self.cells_pane.model, self.cells_pane.view
        self.cells_label = self.cells_pane.label
        self.cells_view.clicked.connect(self._cell_clicked)

        self.editor = PipelineEditor(self)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.cells_pane, "Cells")
        self.tabs.addTab(self.editor, "Edit pipeline")

        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.tree)
        split.addWidget(self.tabs)
        self.tree.setMinimumHeight(150)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addWidget(self.title)
        lay.addWidget(self.chunk_combo)
        lay.addLayout(btns)
        lay.addWidget(split, 1)
        self._enable(False)

    # ---- context ---------------------------------------------------------------------
    @property
    def _document(self):
        return self.session.document if self.session is not None else None

    @property
    def _key(self) -> Optional[bytes]:
        return self.session.key if self.session is not None else None

    def state_changed(self, state: AppState, event: Event) -> None:
        if isinstance(event, DocumentChanged):
            self.set_session(state.session)
        elif isinstance(event, SelectionChanged):
            self.set_node(event.node)

    def set_session(self, session) -> None:
        self.session = session
        self.state = None
        self._views.clear()
        self.tree.clear()
        self.cells_pane.clear()
        self.editor.set_lab(None)
        self.editor.set_cells(None)
        self.title.setText(registry.pipeline_hint(self._document))
        self.chunk_combo.setVisible(False)
        self._enable(False)

    def _enable(self, on: bool) -> None:
        for b in (self.btn_next, self.btn_all, self.btn_fwd):
            b.setEnabled(on)
        self.editor.setEnabled(on)

    def set_node(self, node: Optional[Node]) -> bool:
        """Show the stages of the chunk `node` belongs to; False when none."""
        try:
            view = registry.chunk_view(self._document, node)
        except Exception:  # noqa: BLE001 - a panel is not worth an exception
            view = None
        if view is None:
            return False
        known = self._views.get(view.identity)
        if known is not None and known is self.state:
            self._follow(node)
            return True
        self._show(known or view)
        self._follow(node)
        return True

    def _show(self, view: ChunkView) -> None:
        if view.keeps_state:
            self._views.setdefault(view.identity, view)
        self.state = view
        sib = view.siblings()
        self.chunk_combo.blockSignals(True)
        self.chunk_combo.clear()
        for label, _node in sib:
            self.chunk_combo.addItem(label)
        if sib:
            self.chunk_combo.setCurrentIndex(view.sibling_index())
        self.chunk_combo.setVisible(bool(sib))
        self.chunk_combo.blockSignals(False)
        muted = theme.muted_color().name()
        heading = f"<b>{html.escape(view.heading, quote=False)}</b><br>" if view.heading else ""
        self.title.setText(f"{heading}{html.escape(view.title, quote=False)}<br>"
                           f"<span style='color:{muted}'>{html.escape(view.subtitle, quote=False)}</span>")
        self.title.setToolTip(view.tooltip)
        lab = view.lab()
        self.editor.set_lab(lab)
        self._enable(lab is not None)   # stages to reverse by hand, a pipeline to apply forward
        self._refresh()

    def _follow(self, node: Optional[Node]) -> None:
        """The values table follows the selection (the record `node` is or is inside)."""
        table = self.cells.table
        if table is not None and node is not None:
            row = table.row_of_node(node)
            if row is not None:
                self.cells_pane.select_row(row)

    def _chunk_picked(self, i: int) -> None:
        if self.state is None:
            return
        view = self.state.sibling_view(i)
        if view is None:
            return
        self._show(self._views.get(view.identity) or view)
        if view.node is not None:
            self.nodeRequested.emit(view.node)

    # ---- actions ---------------------------------------------------------------------
    def reverse_next(self) -> None:
        st = self.state
        if st is not None and st.can_reverse():
            self._reverse_to(st.lowest() - 1)

    def reverse_all(self) -> None:
        if self.state is not None and self.state.can_reverse():
            self._reverse_to(0)

    def _reverse_to(self, k: int) -> None:
        st = self.state
        if st is None or self.session is None:
            return
        for j in st.reverse_to(k, self._key):
            self._attach(st, j, show=False)
        self._refresh()
        low = st.lowest()
        last = st.stage_node(low)
        if last is not None:
            self.stageReady.emit(st.node, last, st.stage_source(low), self._unit(st, low))

    def _attach(self, st: ChunkView, k: int, show: bool) -> None:
        node = st.stage_node(k)
        if node is None or self.session is None:
            return
        if st.node is not None:
            self.session.attach(st.node, node)
        self.stageReady.emit(st.node, node, st.stage_source(k) if show else None, self._unit(st, k))

    @staticmethod
    def _unit(st: ChunkView, k: int) -> Optional[str]:
        return st.value_unit() if k == 0 else None

    def apply_forward(self, refresh: bool = True) -> None:
        st = self.state
        if st is None:
            return
        if st.lowest() > 0 or st.cells() is None:
            self._reverse_to(0)
            return
        st.forward_check(self._key)
        if refresh:
            self._refresh()

    # ---- display ---------------------------------------------------------------------
    def _refresh(self) -> None:
        st = self.state
        if st is None:
            self.tree.clear()
            return
        self.tree.show_rows(st.rows())
        table = st.cell_table(self._key)
        cells = st.cells()
        self.editor.set_cells(cells)
        if table is not None:
            self.cells_pane.show_table(table)
        else:
            self.cells_pane.show_message(st.cells_message())
        self.btn_next.setEnabled(st.can_reverse())
        self.btn_all.setEnabled(st.can_reverse())

    def is_stage_source(self, src) -> bool:
        return any(v.owns_source(src) for v in self._views.values())

    def forget_source(self, src) -> Optional[Node]:
        """A stage tab was closed: drop the stage's source and node from its chunk's view.
        Returns the stage root node (for the window to detach), or None."""
        for v in self._views.values():
            if v.owns_source(src):
                node = v.forget_source(src)
                if v is self.state:
                    self._refresh()
                return node
        return None

    def _cell_clicked(self, index: QModelIndex) -> None:
        """A row of the values table: select that cell's or record's node."""
        table = self.cells.table
        node = table.node_of_row(index.row()) if table is not None else None
        if node is not None:
            self.nodeRequested.emit(node)

    def _row_clicked(self, item: QTreeWidgetItem, _c: int) -> None:
        d = item.data(0, ROLE)
        if d and d[0] == "node":
            self.nodeRequested.emit(d[1])

    def _row_activated(self, item: QTreeWidgetItem, _c: int) -> None:
        d = item.data(0, ROLE)
        st = self.state
        if not d or st is None or d[0] != "stage":
            return
        k = d[1]
        if st.stage_node(k) is None and st.lowest() > k:
            self._reverse_to(k)
        elif st.stage_node(k) is None and st.remake_stage(k):   # its tab was closed
            self._attach(st, k, show=False)
            self._refresh()
        node = st.stage_node(k)
        if node is not None:
            self.nodeRequested.emit(node)

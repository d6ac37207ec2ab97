"""The pipeline panel: a chunk's stages (TileDB filters, Zarr codecs: a `ChunkView` from the
format's plugin), ending in a table of the chunk's values; and a pipeline editor to try other
filters on the decoded cells (teaching).

One rule for every format: a selected chunk is reversed down to its cells at once (lazily,
when first selected: `ChunkView.open`); the stage shown is highlighted, and one stage back
(reverse) or forward (re-apply) is a button or a key away. "Apply forward" re-encodes the
cells: its bytes open as a tab, with a match / differ verdict. Clicking a cell selects its
bytes (value, offset entry, var bytes, validity byte) in the hex views.

The parts: `stagetree` (the stage list), `cellspane` (the values table), `pipelineeditor`
(the editor). What was done with each chunk lives in its view, kept per chunk here while
the bytes it reversed fit a budget (`REVERSED_BUDGET`, least recently shown dropped first:
its stage tabs and nodes go, and selecting it again reverses it again)."""
from __future__ import annotations

import html
from collections import OrderedDict
from typing import Optional

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from arrayscope.formats.core import registry
from arrayscope.formats.core.node import Node
from arrayscope.formats.core.plugin import ChunkView
from arrayscope.formats.core.status import Status

from . import theme
from .cellspane import CellsPane
from .pipelineeditor import PipelineEditor
from .stagetree import ROLE, StageTree
from .state import AppState, DocumentChanged, Event, SelectionChanged

__all__ = ["PipelineEditor", "PipelinePanel"]

# (Ctrl+Shift+F is Edit ▸ Find Node: one binding per key, tests/gui/test_window_keys.py)
KEY_BACK, KEY_FORWARD, KEY_APPLY = "Ctrl+[", "Ctrl+]", "Ctrl+Shift+P"
NO_TAB = False   # stageReady's source: attach the stage, open no tab
# the reversed stage bytes kept for chunks visited (every stage of a chunk is a derived
# source in memory): beyond this the least recently shown chunk's stages are dropped
REVERSED_BUDGET = 256 << 20


class PipelinePanel(QWidget):
    # chunk node, stage root node, source to show (None: open its tab without switching),
    # the stage's datetime unit (None: not datetimes)
    stageReady = Signal(object, object, object, object)
    nodeRequested = Signal(object)
    rangesRequested = Signal(object)   # [plugin.CellRange]: a clicked cell's bytes
    # a stage's derived source dropped over budget: the window closes its tab and detaches
    # its node, as when the user closes the tab (`forget_source` is called back)
    sourceReleased = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.session = None
        self.state: Optional[ChunkView] = None
        self._views: "OrderedDict[object, ChunkView]" = OrderedDict()   # oldest shown first
        self.budget = REVERSED_BUDGET
        self.current: Optional[int] = None   # the stage shown (n: the stored chunk)

        self.title = QLabel("Select a tile or a chunk to see its filter pipeline.", self)
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.chunk_combo = QComboBox(self)
        self.chunk_combo.setVisible(False)
        self.chunk_combo.activated.connect(self._chunk_picked)
        self.btn_cells = QPushButton("|◀ Cells", self)
        self.btn_back = QPushButton("◀ Back", self)
        self.btn_step = QPushButton("Forward ▶", self)
        self.btn_fwd = QPushButton("Apply forward", self)
        for b in (self.btn_cells, self.btn_back, self.btn_step, self.btn_fwd):
            b.setAutoDefault(False)
            b.setStyleSheet("padding: 2px 4px")   # they fit a 1024-px screen's dock
        self.btn_cells.setToolTip("Show the cells: every stage reversed")
        self.btn_back.setToolTip(f"Reverse one stage: the bytes before the next filter ({KEY_BACK})")
        self.btn_step.setToolTip(f"Re-apply one stage: the bytes after the next filter ({KEY_FORWARD})")
        self.btn_fwd.setToolTip("Apply the whole pipeline to the cells: the re-encoded bytes open "
                                f"as a tab, compared with the stored bytes ({KEY_APPLY})")
        self.btn_cells.clicked.connect(self.reverse_all)
        self.btn_back.clicked.connect(self.step_back)
        self.btn_step.clicked.connect(self.step_forward)
        self.btn_fwd.clicked.connect(lambda: self.apply_forward())
        btns = QHBoxLayout()
        btns.setContentsMargins(0, 0, 0, 0)
        btns.setSpacing(3)
        for b in (self.btn_cells, self.btn_back, self.btn_step):
            btns.addWidget(b)
        btns.addStretch(1)
        fwd_row = QHBoxLayout()   # Apply forward with its verdict beside it
        fwd_row.setContentsMargins(0, 0, 0, 0)
        fwd_row.addWidget(self.btn_fwd, 0, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.shortcuts = []
        for key, fn, what in ((KEY_BACK, self.step_back, "pipeline: reverse one stage"),
                              (KEY_FORWARD, self.step_forward, "pipeline: re-apply one stage"),
                              (KEY_APPLY, self.apply_forward,
                               "pipeline: apply every filter forward to the cells")):
            sc = QShortcut(QKeySequence(key), self)
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.setWhatsThis(what)   # its line in Help ▸ Keyboard Shortcuts
            sc.activated.connect(fn)
            self.shortcuts.append(sc)
        self.verdict = QLabel("", self)
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.TextFormat.RichText)
        self.verdict.setVisible(False)
        fwd_row.addWidget(self.verdict, 1)

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
        # the editor scrolls in its tab: its controls' height would otherwise be the
        # tabs' minimum and push the cells below the fold on a 700-px screen
        editor_area = QScrollArea(self)
        editor_area.setWidgetResizable(True)
        editor_area.setFrameShape(QFrame.Shape.NoFrame)
        editor_area.setWidget(self.editor)
        self.tabs.addTab(editor_area, "Edit pipeline")
        # narrow docks (a 1024-px screen): the tables scroll rather than widen the panel
        for w in (self.tree, self.cells_pane, self.editor, self.tabs):
            w.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)

        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.tree)
        split.addWidget(self.tabs)
        self.tree.setMinimumHeight(80)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 4)
        split.setSizes([100, 400])   # the cells get the larger part (8 rows at 1024×700)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 4, 2, 4)
        lay.setSpacing(4)
        lay.addWidget(self.title)
        lay.addWidget(self.chunk_combo)
        lay.addLayout(btns)
        lay.addLayout(fwd_row)
        lay.addWidget(split, 1)
        self._enable(False)

    def heightForWidth(self, width: int) -> int:
        # the dock's scroll area asks this (the title wraps): the least height at `width`,
        # not the tables' wishes, which would make the panel taller than a 700-px screen
        # and push the cells below the fold
        extra = 0
        for label in (self.title, self.verdict):
            if label.isVisible():
                extra += max(0, label.heightForWidth(width) - label.minimumSizeHint().height())
        return self.minimumSizeHint().height() + extra

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
        self._views.clear()
        self.clear()

    def clear(self) -> None:
        """No chunk: an empty panel saying what to select."""
        self.state = None
        self.current = None
        self.tree.clear()
        self.cells_pane.show_message("")
        self.editor.set_lab(None)
        self.editor.set_cells(None)
        self.title.setText(registry.pipeline_hint(self._document))
        self.title.setToolTip("")
        self.chunk_combo.setVisible(False)
        self.verdict.setVisible(False)
        self._enable(False)

    def _enable(self, on: bool) -> None:
        for b in (self.btn_cells, self.btn_back, self.btn_step, self.btn_fwd):
            b.setEnabled(on)
        self.editor.setEnabled(on)

    def set_node(self, node: Optional[Node]) -> bool:
        """Show the stages of the chunk `node` belongs to; False (an empty panel) when none."""
        try:
            view = registry.chunk_view(self._document, node)
        except Exception:  # noqa: BLE001 - a panel is not worth an exception
            view = None
        if view is None:
            self.clear()
            return False
        known = self._views.get(view.identity)
        if known is None or known is not self.state:
            self._show(known or view)
        st = self.state
        if st is not None:
            k = st.stage_of(node)
            self.current = st.stage_count() if k is None else k
        self._follow(node)
        self._sync_buttons()
        return True

    def _show(self, view: ChunkView) -> None:
        if view.keeps_state:
            self._views.setdefault(view.identity, view)
            self._views.move_to_end(view.identity)
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
        self.editor.setEnabled(lab is not None)
        self.verdict.setVisible(False)
        self.current = view.stage_count()
        try:
            made = view.open(self._key)   # the one rule: shown reversed down to the cells
        except Exception:  # noqa: BLE001 - a chunk that cannot be reversed says so in its rows
            made = []
        for j in made:
            self._attach(view, j, show=NO_TAB)
        self._refresh()
        self._trim()

    def held_bytes(self) -> int:
        """The bytes of every stage output kept for the chunks visited."""
        return sum(_size(v) for v in self._views.values())

    def _trim(self) -> None:
        """Drop the least recently shown chunks' stages until the rest fit the budget (the
        chunk shown stays whatever its size)."""
        total = self.held_bytes()
        for ident, v in list(self._views.items()):
            if total <= self.budget:
                break
            if v is self.state:
                continue
            total -= _size(v)
            for src in list(v.held_sources()):
                self.sourceReleased.emit(src)
            self._views.pop(ident, None)

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
    def step_back(self) -> None:
        """Reverse one stage (towards the cells)."""
        if self.state is not None and self.current is not None and self.current > 0:
            self.go_to_stage(self.current - 1)

    def step_forward(self) -> None:
        """Re-apply one stage (towards the stored bytes)."""
        st = self.state
        if st is not None and self.current is not None and self.current < st.stage_count():
            self.go_to_stage(self.current + 1)

    # the names of the first panel (tests, menus)
    reverse_next = step_back

    def reverse_all(self) -> None:
        self.go_to_stage(0)

    def go_to_stage(self, k: int) -> None:
        """Show stage k of the chunk (n: the stored chunk) and select its node."""
        st = self.state
        if st is None or self.session is None:
            return
        n = st.stage_count()
        k = max(0, min(n, k))
        for j in st.open(self._key):
            self._attach(st, j, show=NO_TAB)
        node = st.stage_node(k) if k < n else st.node
        if node is None and k < n and st.remake_stage(k):   # its tab was closed
            self._attach(st, k, show=NO_TAB)
            node = st.stage_node(k)
        self._refresh()
        self._trim()
        if node is None:
            return
        self.current = k
        self._sync_buttons()
        self.nodeRequested.emit(node)

    def _attach(self, st: ChunkView, k: int, show: object) -> None:
        node = st.stage_node(k)
        if node is None or self.session is None:
            return
        if st.node is not None and node.parent is None:
            self.session.attach(st.node, node)
        self.stageReady.emit(st.node, node, st.stage_source(k) if show is True else show,
                             self._unit(st, k))

    @staticmethod
    def _unit(st: ChunkView, k: int) -> Optional[str]:
        return st.value_unit() if k == 0 else None

    def apply_forward(self) -> None:
        """Re-encode the cells with the whole pipeline: its bytes as a tab, and the verdict."""
        st = self.state
        if st is None or self.session is None:
            return
        res = st.forward_result(self._key)
        if res is None:
            self._say("This format's codecs are not applied forward here.", Status.WARNING)
            return
        self._say(res.verdict, res.status, res.detail)
        node = res.node
        if node is not None:
            if st.node is not None and node.parent is None:
                self.session.attach(st.node, node)
            self.stageReady.emit(st.node, node, node.source, None)
        self._refresh()
        self._trim()

    def _say(self, text: str, status: Status, detail: str = "") -> None:
        col = {Status.OK: theme.ok_color(), Status.WARNING: theme.warning_color()}.get(
            status, theme.error_color()).name()
        self.verdict.setText(f"<span style='color:{col}'><b>Forward:</b> "
                             f"{html.escape(text, quote=False)}</span>")
        self.verdict.setToolTip(detail)
        self.verdict.setVisible(True)

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
        self._sync_buttons()

    def _sync_buttons(self) -> None:
        """Back / forward as far as the stages go; the stage shown highlighted."""
        st, k = self.state, self.current
        if st is None or k is None:
            self._enable(False)
            return
        n = st.stage_count()
        self.btn_cells.setEnabled(k > 0)
        self.btn_back.setEnabled(k > 0)
        self.btn_step.setEnabled(k < n)
        self.btn_fwd.setEnabled(n > 0 and st.lab() is not None)
        self.tree.mark_current(k, n)

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
        """A row of the values table: select that cell's or record's node, and its bytes
        (value, offset entry and var bytes, validity byte) in the hex views."""
        table = self.cells.table
        if table is None:
            return
        node = table.node_of_row(index.row())
        if node is not None:
            self.nodeRequested.emit(node)
        ranges = table.cell_ranges(index.row())
        self.cells_pane.show_ranges(ranges)
        if ranges:
            self.rangesRequested.emit(ranges)
            self.follow_source(ranges[0].source)   # the tab put in front

    def follow_source(self, source: object) -> None:
        """The stage highlight follows the hex tab shown (a clicked cell's bytes, a tab
        picked by hand), not the selected node: stage k when `source` is stage k's output,
        the stored row when it is the chunk's file; unchanged for any other source."""
        st = self.state
        if st is None or source is None:
            return
        n = st.stage_count()
        k = next((j for j in range(n) if st.stage_source(j) is source), None)
        if k is None and st.node is not None and source is st.node.source:
            k = n
        if k is not None and k != self.current:
            self.current = k
            self._sync_buttons()

    def _row_clicked(self, item: QTreeWidgetItem, _c: int) -> None:
        d = item.data(0, ROLE)
        if d and d[0] == "node":
            self.nodeRequested.emit(d[1])
        elif d and d[0] == "stage":
            self.go_to_stage(d[1])

    def _row_activated(self, item: QTreeWidgetItem, c: int) -> None:
        self._row_clicked(item, c)


def _size(view: ChunkView) -> int:
    return sum(int(getattr(s, "size", 0) or 0) for s in view.held_sources())

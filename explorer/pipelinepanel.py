"""The pipeline panel: a chunk's filter stages, reversed step by step or all at once, checked
forward, ending in a table of typed cells; and a pipeline editor to try other filters on
the decoded cells (teaching).

The parts: `stagetree` (the stage list), `cellspane` (the cells / records table),
`pipelineeditor` (the editor), `chunkstate` (what was done with each chunk)."""
from __future__ import annotations

import html
import os
from typing import Dict, Optional

from PySide6.QtCore import Qt, Signal
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

from arrayscope.formats.tiledb import tile_cells as TC
from arrayscope.formats.tiledb.enums import DATATYPE_NAMES

from . import stages as S
from . import theme
from .cellspane import CellsPane
from .chunkstate import ChunkState
from .pipelineeditor import PipelineEditor
from .recordsmodel import zarr_chunk_of
from .stagetree import StageTree

__all__ = ["ChunkState", "PipelineEditor", "PipelinePanel"]


class PipelinePanel(QWidget):
    stageReady = Signal(object, object, object)   # chunk node, stage root node, source
    nodeRequested = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.session = None
        self.state: Optional[ChunkState] = None
        self._states: Dict[int, ChunkState] = {}
        self._tile_node = None
        self._tile = None
        self._by_source: Dict[int, tuple] = {}   # id(stage source) -> (ChunkState, k)

        self.title = QLabel("Select a tile or a chunk to see its filter pipeline.", self)
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.RichText)
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
        # the pane's parts, by the names the window and the tests use
        self.cells, self.tile_cells = self.cells_pane.cells, self.cells_pane.tile_cells
        self.records = self.cells_pane.records
        self.cells_view, self.cells_label = self.cells_pane.view, self.cells_pane.label
        self.cells_view.clicked.connect(self._cell_clicked)
        self.zarr = None   # the Zarr chunk shown (ZarrChunk) when not a TileDB chunk

        self.editor = PipelineEditor(self)
        self.lower = QTabWidget(self)
        self.lower.setDocumentMode(True)
        self.lower.addTab(self.cells_pane, "Cells")
        self.lower.addTab(self.editor, "Edit pipeline")

        split = QSplitter(Qt.Vertical, self)
        split.addWidget(self.tree)
        split.addWidget(self.lower)
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
    def set_session(self, session) -> None:
        self.session = session
        self.state = None
        self.zarr = None
        self._states.clear()
        self._by_source.clear()
        self._tile_node = self._tile = None
        self.tree.clear()
        self.cells_pane.clear()
        self.editor.set_specs([], None)
        self.editor.set_cells(None)
        fmt = getattr(getattr(session, "document", None), "format", None)
        self.title.setText({
            "scdl": "SCDL arrays are stored raw (no filters, no codecs): their values are the "
                    "tree's nodes and the hex view's bytes.",
            "zarr": "Select a chunk file (or a record) to see its codec chain and its records.",
        }.get(fmt, "Select a tile or a chunk to see its filter pipeline."))
        self.chunk_combo.setVisible(False)
        self._enable(False)

    def _enable(self, on: bool) -> None:
        for b in (self.btn_next, self.btn_all, self.btn_fwd):
            b.setEnabled(on)
        self.editor.setEnabled(on)

    def set_node(self, node) -> bool:
        """Show the pipeline of the chunk or tile `node` belongs to; False when none."""
        chunk_node, ci, tile_node, ti = S.find_chunk_context(node)
        if ci is None:
            doc = self.session.document if self.session is not None else None
            zc = zarr_chunk_of(doc, node)
            if zc is None:
                return False
            if self.zarr is None or self.zarr.file_node is not zc.file_node:
                self._show_zarr(zc)
            self._select_record_row(node)
            return True
        if self.state is not None and self.state.ci is ci and self.zarr is None:
            return True
        self.zarr = None
        self._tile_node, self._tile = tile_node, ti
        self.chunk_combo.blockSignals(True)
        self.chunk_combo.clear()
        if ti is not None and len(ti.chunks) > 1:
            for c in ti.chunks:
                self.chunk_combo.addItem(f"Chunk {c.index + 1}: {c.original_length:,} B → {c.filtered_length:,} B")
            self.chunk_combo.setCurrentIndex(ci.index)
            self.chunk_combo.setVisible(True)
        else:
            self.chunk_combo.setVisible(False)
        self.chunk_combo.blockSignals(False)
        self._show_chunk(chunk_node, ci)
        return True

    def _chunk_picked(self, i: int) -> None:
        if self._tile is None or self._tile_node is None:
            return
        ci = self._tile.chunks[i]
        node = self._tile_node.find(f"Chunk {i + 1}")
        self._show_chunk(node, ci)
        if node is not None:
            self.nodeRequested.emit(node)

    def _show_chunk(self, chunk_node, ci) -> None:
        st = self._states.get(id(ci))
        if st is None:
            st = ChunkState(chunk_node, ci)
            st.where = self._locate(ci)
            self._states[id(ci)] = st
        self.state = st
        info = ci.info
        src = getattr(ci.source, "name", "")
        dt = DATATYPE_NAMES.get(info.datatype, str(info.datatype))
        pipe = " → ".join(S.describe_spec(s) for s in ci.specs) or "no filters"
        muted = theme.muted_color().name()
        field = ""
        if st.where is not None:
            field = f"<b>{html.escape(st.where.describe(), quote=False)}</b><br>"
        short = src.rsplit("/", 1)[-1]
        self.title.setText(
            f"{field}<b>Chunk {ci.index + 1}</b> of <code>{html.escape(short)}</code> "
            f"@ 0x{ci.metadata_offset - 12:X}: "
            f"{ci.filtered_length:,} B on disk (+{ci.metadata_length:,} B metadata) → "
            f"{ci.original_length:,} B of {dt} ({info.role})<br>"
            f"<span style='color:{muted}'>pipeline: {html.escape(pipe)}</span>")
        self.title.setToolTip(src)
        self.editor.set_specs(ci.specs, info)
        self._enable(True)
        self._refresh()

    def _locate(self, ci) -> Optional[TC.FieldTile]:
        """The attribute / dimension, part and tile of a data file's chunk (None for other
        tiles: generic tiles, label arrays, files without readable fragment metadata)."""
        if self.session is None:
            return None
        try:
            return TC.locate(self.session.document, ci.source, ci.metadata_offset)
        except Exception:  # noqa: BLE001 - a title is not worth an exception
            return None

    def _show_zarr(self, zc) -> None:
        """A Zarr chunk: its codec chain (reversed when the array was opened; each stage's
        output is a derived source with its own tab) and its records."""
        self.zarr = zc
        self.state = None
        self.chunk_combo.setVisible(False)
        self._enable(False)
        fn, meta = zc.file_node, zc.meta
        muted = theme.muted_color().name()
        codecs = " → ".join(c.label for c in meta.codecs) or "no codecs"
        where = f" {list(zc.coords)}" if zc.coords is not None else ""
        arr = os.path.basename(meta.path.rstrip("/")) or meta.path
        self.title.setText(
            f"<b>Zarr v{meta.zarr_format} chunk{html.escape(where)}</b> of array "
            f"<code>{html.escape(arr)}</code>: <code>{html.escape(str(fn.value or fn.name))}</code>, "
            f"{fn.size:,} B stored<br><span style='color:{muted}'>codecs: {html.escape(codecs)} "
            f"— {'decoded on demand' if fn.find('decoded') is not None else 'reversed at open'}; "
            f"click a stage for its bytes</span>")
        self.tree.show_zarr(zc)
        self.cells_pane.show_records(zc)
        self.editor.set_specs([], None)

    def _select_record_row(self, node) -> None:
        """Follow the selection in the records table (the record `node` is or is inside)."""
        rec = self.zarr.records if self.zarr is not None else None
        if rec is None or self.cells_view.model() is not self.records:
            return
        n = node
        while n is not None and n.parent is not rec:
            n = n.parent
        if n is None or n.source is not rec.source or not rec.size:
            return
        self.cells_pane.select_record((n.offset - rec.offset) // max(1, self.zarr.meta.rtype.itemsize))

    def _show_paired(self, st: ChunkState) -> bool:
        """Show the tile's cells paired with its sibling tiles; False when not applicable."""
        w = st.where
        if w is None or not w.paired or self.session is None:
            return False
        if st.paired is None:
            st.paired = TC.tile_cells(self.session.document, w, self.session.key)
        return self.cells_pane.show_paired(st.paired, w)

    # ---- actions ---------------------------------------------------------------------
    def reverse_next(self) -> None:
        st = self.state
        if st is None or st.reached == 0:
            return
        self._reverse_to(st.reached - 1)

    def reverse_all(self) -> None:
        if self.state is not None:
            self._reverse_to(0)

    def _reverse_to(self, stop_at: int) -> None:
        st = self.state
        key = self.session.key if self.session is not None else None
        run = st.ci.reverse(key, stop_at)
        st.run = run
        n = len(st.ci.specs)
        lowest = n
        for k in range(n - 1, stop_at - 1, -1):
            if run.stages[k] is None:
                break
            lowest = k
            self._make_stage(st, k, run.stages[k])
        st.reached = min(st.reached, lowest)
        if st.reached == 0 and run.error is None:
            self.apply_forward(refresh=False)
        self._refresh()
        last = st.nodes.get(st.reached)
        if last is not None:
            self.stageReady.emit(st.chunk_node, last, st.sources[st.reached])

    def _make_stage(self, st: ChunkState, k: int, stage) -> None:
        if k in st.sources or self.session is None:
            return
        doc = self.session.document
        ci = st.ci
        base = getattr(ci.source, "name", "chunk").rsplit("/", 1)[-1]
        label = "cells" if k == 0 else f"stage {k}"
        name = f"{base} @0x{ci.metadata_offset - 12:X} chunk {ci.index + 1} {label}"
        origin = (f"{S.stage_title(ci.specs, k)} of chunk {ci.index + 1} of "
                  f"{getattr(ci.source, 'name', '')} (reversed "
                  f"{', '.join(s.name for s in reversed(ci.specs[k:]))})")
        src = doc.add_derived(S.stage_bytes(stage), name, origin=origin,
                              origin_node=st.chunk_node, parent=ci.source)
        node = S.build_stage_nodes(src, ci.specs, k, stage, ci.info, ci)
        st.sources[k] = src
        st.nodes[k] = node
        self._by_source[id(src)] = (st, k)
        if st.chunk_node is not None:
            self.session.attach(st.chunk_node, node)
        self.stageReady.emit(st.chunk_node, node, None)

    def apply_forward(self, refresh: bool = True) -> None:
        st = self.state
        if st is None:
            return
        if st.run is None or st.reached > 0:
            self._reverse_to(0)
            return
        key = self.session.key if self.session is not None else None
        st.checks = S.forward_checks(st.ci.specs, st.run.stages, st.ci.info, key,
                                     st.ci.original_length, st.run.offsets)
        if refresh:
            self._refresh()

    # ---- display ---------------------------------------------------------------------
    def _refresh(self) -> None:
        st = self.state
        if st is None:
            self.tree.clear()
            return
        self.tree.show_chunk(st)
        ci = st.ci
        run = st.run
        cells_stage = run.stages[0] if run is not None else None
        if cells_stage is not None and run.error is None:
            self.editor.set_cells(cells_stage.data_bytes)
            if not self._show_paired(st):
                arr = S.cell_array(cells_stage.data_bytes, ci.info)
                self.cells_pane.show_cells(arr, ci.info, len(cells_stage.data_bytes),
                                           st.sources.get(0))
        else:
            self.cells_pane.show_no_cells(
                ci.info.datatype, "Reverse every stage to see the cells." if run is None or run.error is None
                else f"Cannot reach the cells: {run.error}")
            self.editor.set_cells(None)
        self.btn_next.setEnabled(st.reached > 0 and not (run is not None and run.error is not None))
        self.btn_all.setEnabled(st.reached > 0 and not (run is not None and run.error is not None))

    def is_stage_source(self, src) -> bool:
        return id(src) in self._by_source

    def forget_source(self, src):
        """A stage tab was closed: drop the stage's source and node from the chunk's state.
        Returns the stage root node (for the window to detach), or None."""
        hit = self._by_source.pop(id(src), None)
        if hit is None:
            return None
        st, k = hit
        st.sources.pop(k, None)
        node = st.nodes.pop(k, None)
        if st is self.state:
            self._refresh()
        return node

    def _cell_clicked(self, index) -> None:
        """A row of the cells / records table: select that cell's or record's node."""
        r = index.row()
        node = None
        if self.zarr is not None and self.cells_view.model() is self.records:
            rec = self.zarr.records
            if rec is not None and r < rec.child_count():
                node = rec.child(r)
        elif self.state is not None and self.cells_view.model() is self.cells:
            stage0 = self.state.nodes.get(0)
            cells = stage0.find("Cells") if stage0 is not None else None
            if cells is not None and r < cells.child_count():
                node = cells.child(r)
        if node is not None:
            self.nodeRequested.emit(node)

    def _row_clicked(self, item: QTreeWidgetItem, _c: int) -> None:
        d = item.data(0, Qt.UserRole)
        if d and d[0] == "node":
            self.nodeRequested.emit(d[1])

    def _row_activated(self, item: QTreeWidgetItem, _c: int) -> None:
        d = item.data(0, Qt.UserRole)
        st = self.state
        if not d or st is None:
            return
        if d[0] == "disk" and st.chunk_node is not None:
            self.nodeRequested.emit(st.chunk_node)
        elif d[0] == "stage":
            k = d[1]
            if k not in st.nodes and st.reached > k:
                self._reverse_to(k)
            elif k not in st.nodes and st.run is not None and st.run.stages[k] is not None:
                self._make_stage(st, k, st.run.stages[k])   # its tab was closed: make it again
            node = st.nodes.get(k)
            if node is not None:
                self.nodeRequested.emit(node)

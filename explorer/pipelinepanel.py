"""The pipeline panel: a chunk's filter stages, reversed step by step or all at once, checked
forward, ending in a table of typed cells; and a pipeline editor to try other filters on
the decoded cells (teaching)."""
from __future__ import annotations

import html
import os
from typing import Dict, List, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDoubleSpinBox, QFormLayout,
                               QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem,
                               QMenu, QPushButton, QSpinBox, QSplitter, QTableView, QTableWidget,
                               QTableWidgetItem, QTabWidget, QToolButton, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from formats import filters as F
from formats.tiledb import tile_cells as TC
from formats.tiledb.enums import DATATYPE_NAMES

from . import stages as S
from . import theme
from .cellsmodel import CellsModel, TileCellsModel
from .recordsmodel import RecordsModel, zarr_chunk_of

CHECK_TEXT = {"identical": "✓ identical", "re-encoded": "≈ re-encoded", "different": "✗ different",
              "failed": "✗ failed"}


class ChunkState:
    """What the user has done with one chunk so far."""

    def __init__(self, chunk_node, ci):
        self.chunk_node = chunk_node
        self.ci = ci
        self.reached = len(ci.specs)   # lowest stage index reversed so far
        self.run: Optional[F.ChunkRun] = None
        self.checks: List[S.ForwardCheck] = []
        self.sources: Dict[int, object] = {}   # k -> derived source
        self.nodes: Dict[int, object] = {}     # k -> stage root node
        self.where: Optional[TC.FieldTile] = None   # field / part / tile of a data file
        self.paired: Optional[TC.TileCells] = None  # the tile's cells with sibling tiles


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

        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["Stage", "Bytes", "Status", "Forward check"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        h = self.tree.header()
        h.setStretchLastSection(True)
        self.tree.setColumnWidth(0, 190)
        self.tree.setColumnWidth(1, 64)
        self.tree.setColumnWidth(2, 70)
        self.tree.itemDoubleClicked.connect(self._row_activated)
        self.tree.itemClicked.connect(self._row_clicked)

        self.cells = CellsModel(self)
        self.tile_cells = TileCellsModel(self)
        self.records = RecordsModel(self)
        self.zarr = None   # the Zarr chunk shown (ZarrChunk) when not a TileDB chunk
        self.cells_view = QTableView(self)
        self.cells_view.setModel(self.cells)
        self.cells_view.setWordWrap(False)
        self.cells_view.clicked.connect(self._cell_clicked)
        self.cells_view.setAlternatingRowColors(True)
        self.cells_view.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.cells_view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.cells_view.horizontalHeader().setStretchLastSection(True)
        self.cells_label = QLabel("Reverse the pipeline to see the cells.", self)
        self.cells_label.setWordWrap(True)
        cells_box = QWidget(self)
        cl = QVBoxLayout(cells_box)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.cells_label)
        cl.addWidget(self.cells_view, 1)

        self.editor = PipelineEditor(self)
        self.lower = QTabWidget(self)
        self.lower.setDocumentMode(True)
        self.lower.addTab(cells_box, "Cells")
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
        self.cells.set_cells(None, 6)
        self.tile_cells.set_tile(None)
        self.records.set_chunk(None)
        self._use_model(self.cells)
        self.cells_label.setText("Reverse the pipeline to see the cells.")
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
            f"— reversed at open; click a stage for its bytes</span>")
        self.tree.clear()
        top = QTreeWidgetItem(["Stored chunk", f"{fn.size:,}", "stored", ""])
        top.setData(0, Qt.UserRole, ("node", fn))
        top.setIcon(0, theme.kind_icon("payload"))
        self.tree.addTopLevelItem(top)
        for st in zc.stages:
            bad = any(n.status == "error" for n in st.walk())
            out = st.display_text()
            it = QTreeWidgetItem([f"⟲ {st.name}", f"{st.size:,}", "failed" if bad else "reversed", out])
            it.setIcon(0, theme.status_icon("error" if bad else "ok"))
            it.setData(0, Qt.UserRole, ("node", st))
            it.setToolTip(0, f"{st.name}: its input bytes ({getattr(st.source, 'name', '')}); "
                             f"{out}")
            for c in st.iter_children():
                ci = QTreeWidgetItem([c.name, f"{c.size:,}", "", c.display_text()])
                ci.setData(0, Qt.UserRole, ("node", c))
                ci.setIcon(0, theme.kind_icon(c.kind))
                it.addChild(ci)
            self.tree.addTopLevelItem(it)
        rec = zc.records
        if rec is not None:
            it = QTreeWidgetItem(["Records", f"{rec.size:,}", "decoded", rec.display_text()])
            it.setIcon(0, theme.kind_icon("cells"))
            it.setData(0, Qt.UserRole, ("node", rec))
            self.tree.addTopLevelItem(it)
        self.records.set_chunk(zc)
        self._use_model(self.records)
        self.editor.set_specs([], None)
        if rec is not None:
            n_out = 0 if self.records.inside is None else int((~self.records.inside).sum())
            self.cells_label.setText(
                f"{self.records.n:,} records × {meta.rtype.itemsize} B ({len(self.records.leaves)} "
                f"fields) from tab “{getattr(rec.source, 'name', '')}”"
                + (f"; {n_out} outside the array (edge padding, greyed)" if n_out else ""))
        else:
            self.cells_label.setText("The chunk could not be decoded: see Diagnostics.")

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
        row = (n.offset - rec.offset) // max(1, self.zarr.meta.rtype.itemsize)
        if 0 <= row < self.records.rowCount():
            idx = self.records.index(row, 0)
            self.cells_view.blockSignals(True)
            self.cells_view.setCurrentIndex(idx)
            self.cells_view.scrollTo(idx)
            self.cells_view.blockSignals(False)

    def _use_model(self, model) -> None:
        if self.cells_view.model() is not model:
            self.cells_view.setModel(model)
            h = self.cells_view.horizontalHeader()
            h.setStretchLastSection(True)
            if model is self.tile_cells:
                self.cells_view.setColumnWidth(0, 240)
                self.cells_view.setColumnWidth(1, 80)
                self.cells_view.setColumnWidth(2, 50)
            elif model is self.records:
                h.setStretchLastSection(False)
                self.cells_view.resizeColumnsToContents()

    def _show_paired(self, st: ChunkState) -> bool:
        """Show the tile's cells paired with its sibling tiles; False when not applicable."""
        w = st.where
        if w is None or not w.paired or self.session is None:
            return False
        if st.paired is None:
            st.paired = TC.tile_cells(self.session.document, w, self.session.key)
        tc = st.paired
        if tc.error is not None and tc.count == 0:
            self.cells_label.setText(f"Cannot pair the tile's sibling files: {tc.error}")
            return False
        self.tile_cells.set_tile(tc)
        self._use_model(self.tile_cells)
        files = " + ".join(f"{n} ({'offsets' if p == 'fixed' and w.var else p if p != 'fixed' else 'data'})"
                           for p, n in tc.sources.items())
        text = (f"Tile {w.tile_index + 1} of {w.field_kind} '{w.field_name}': {tc.summary()} "
                f"— paired from {files}")
        for note in tc.notes:
            text += f"; {note}"
        if tc.error:
            text += f"; error: {tc.error}"
        self.cells_label.setText(text)
        return True

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
                                     st.ci.original_length)
        if refresh:
            self._refresh()

    # ---- display ---------------------------------------------------------------------
    def _refresh(self) -> None:
        st = self.state
        self.tree.clear()
        if st is None:
            return
        ci = st.ci
        specs = ci.specs
        n = len(specs)
        run = st.run
        checks = {c.k: c for c in st.checks}
        md_nodes = self._metadata_nodes(st)
        top = QTreeWidgetItem([S.stage_title(specs, n),
                               f"{ci.metadata_length + ci.filtered_length:,}", "stored", ""])
        top.setData(0, Qt.UserRole, ("disk", n))
        top.setIcon(0, theme.kind_icon("payload"))
        self.tree.addTopLevelItem(top)
        for k in range(n - 1, -1, -1):
            spec = specs[k]
            stage = run.stages[k] if run is not None else None
            if stage is not None:
                status, icon = ("reversed", theme.status_icon("ok"))
            elif run is not None and run.failed_at == k:
                status, icon = ("failed", theme.status_icon("error"))
            else:
                status, icon = ("pending", theme.kind_icon("padding"))
            size = f"{stage.nbytes:,}" if stage is not None else ""
            label = f"⟲ {k + 1}. {S.describe_spec(spec)}"
            it = QTreeWidgetItem([label, size, status, ""])
            it.setIcon(0, icon)
            it.setData(0, Qt.UserRole, ("stage", k))
            it.setToolTip(0, f"reverse filter {k + 1} ({spec.name}): gives {S.stage_title(specs, k).lower()}")
            if status == "failed":
                it.setText(2, "failed")
                it.setToolTip(2, str(run.error))
                it.setForeground(2, QBrush(theme.error_color()))
                err = QTreeWidgetItem([str(run.error), "", "", ""])
                err.setForeground(0, QBrush(theme.error_color()))
                it.addChild(err)
                it.setExpanded(True)
            chk = checks.get(k)
            if chk is not None:
                it.setText(3, CHECK_TEXT[chk.status])
                it.setToolTip(3, chk.text)
                col = {"identical": theme.ok_color(), "re-encoded": theme.warning_color()}.get(
                    chk.status, theme.error_color())
                it.setForeground(3, QBrush(col))
            for mn in md_nodes.get(k, []):
                c = QTreeWidgetItem([mn.name, f"{mn.size:,}", "", mn.display_text()])
                c.setData(0, Qt.UserRole, ("node", mn))
                c.setIcon(0, theme.kind_icon(mn.kind))
                c.setToolTip(3, mn.display_text())
                it.addChild(c)
            self.tree.addTopLevelItem(it)
            if md_nodes.get(k) and status != "failed":
                it.setExpanded(k == n - 1)
        cells_stage = run.stages[0] if run is not None else None
        if cells_stage is not None and run.error is None:
            self.editor.set_cells(cells_stage.data_bytes)
            if not self._show_paired(st):
                arr = S.cell_array(cells_stage.data_bytes, ci.info)
                src = st.sources.get(0)
                self.cells.set_cells(arr, ci.info.datatype, 0)
                self._use_model(self.cells)
                dt = DATATYPE_NAMES.get(ci.info.datatype, "?")
                self.cells_label.setText(f"{arr.shape[0]:,} cells of {dt} — {len(cells_stage.data_bytes):,} B"
                                         + (f" (tab “{src.name}”)" if src is not None else ""))
        else:
            self.cells.set_cells(None, ci.info.datatype)
            self._use_model(self.cells)
            self.cells_label.setText("Reverse every stage to see the cells." if run is None or run.error is None
                                     else f"Cannot reach the cells: {run.error}")
            self.editor.set_cells(None)
        self.btn_next.setEnabled(st.reached > 0 and not (run is not None and run.error is not None))
        self.btn_all.setEnabled(st.reached > 0 and not (run is not None and run.error is not None))

    def _metadata_nodes(self, st: ChunkState) -> Dict[int, list]:
        """On-disk chunk metadata nodes by filter index, plus those of reversed stages."""
        out: Dict[int, list] = {}
        specs = st.ci.specs
        groups = []
        if st.chunk_node is not None:
            md = st.chunk_node.find("Chunk metadata")
            if md is not None:
                groups.append(md)
        for k, node in st.nodes.items():
            m = node.find("Stage metadata")
            if m is not None:
                groups.append(m)
        for g in groups:
            for c in g.iter_children():
                parts = c.name.split(" ")
                if len(parts) > 2 and parts[0] == "Filter" and parts[1].isdigit():
                    k = int(parts[1]) - 1
                    if 0 <= k < len(specs):
                        out.setdefault(k, []).append(c)
        return out

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


class PipelineEditor(QWidget):
    """Edit a copy of the pipeline (add, remove, reorder, options) and apply it to the cells."""

    stageOpened = Signal(bytes, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.specs: List[F.FilterSpec] = []
        self.info = None
        self.cells: Optional[bytes] = None
        self.list = QListWidget(self)
        self.list.setDragDropMode(QAbstractItemView.InternalMove)
        self.list.model().rowsMoved.connect(self._moved)
        self.list.currentRowChanged.connect(self._show_options)
        self.add_btn = QToolButton(self, text="Add filter ▾")
        self.add_btn.setPopupMode(QToolButton.InstantPopup)
        self.add_menu = QMenu(self)
        self.add_btn.setMenu(self.add_menu)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        self.rm_btn = QToolButton(self, text="Remove")
        self.up_btn = QToolButton(self, text="▲")
        self.down_btn = QToolButton(self, text="▼")
        self.reset_btn = QToolButton(self, text="Reset")
        self.rm_btn.clicked.connect(self._remove)
        self.up_btn.clicked.connect(lambda: self._move(-1))
        self.down_btn.clicked.connect(lambda: self._move(1))
        self.reset_btn.clicked.connect(lambda: self.set_specs(self._orig, self.info))
        self.apply_btn = QPushButton("Apply to cells", self)
        self.apply_btn.clicked.connect(self.apply)
        self.opts = QWidget(self)
        self.opts_form = QFormLayout(self.opts)
        self.opts_form.setContentsMargins(0, 0, 0, 0)
        self.results = QTableWidget(0, 5, self)
        self.results.setHorizontalHeaderLabels(["Stage", "Filter", "Bytes", "vs cells", "Time"])
        self.results.verticalHeader().setVisible(False)
        self.results.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.results.horizontalHeader().setSectionResizeMode(1, QHeaderView.Stretch)
        self.results.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.summary = QLabel("", self)
        self.summary.setWordWrap(True)
        tools = QHBoxLayout()
        tools.setContentsMargins(0, 0, 0, 0)
        for w in (self.add_btn, self.rm_btn, self.up_btn, self.down_btn, self.reset_btn):
            tools.addWidget(w)
        tools.addStretch(1)
        tools.addWidget(self.apply_btn)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        left.addWidget(self.opts)
        top = QHBoxLayout()
        top.addLayout(left, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.addLayout(tools)
        lay.addLayout(top, 1)
        lay.addWidget(self.results, 1)
        lay.addWidget(self.summary)
        self._orig: List[F.FilterSpec] = []

    def set_specs(self, specs, info) -> None:
        self._orig = list(specs)
        self.specs = [F.FilterSpec(s.type, dict(s.options)) for s in specs]
        self.info = info
        self._fill()
        self.results.setRowCount(0)
        self.summary.setText("")

    def set_cells(self, cells: Optional[bytes]) -> None:
        self.cells = cells
        self.apply_btn.setEnabled(cells is not None)
        self.apply_btn.setToolTip("" if cells is not None else "reverse the chunk first: the editor starts from its cells")

    def _fill(self) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for i, s in enumerate(self.specs):
            it = QListWidgetItem(f"{i + 1}. {S.describe_spec(s)}")
            it.setData(Qt.UserRole, i)
            self.list.addItem(it)
        self.list.blockSignals(False)
        self._show_options(self.list.currentRow())

    def _fill_add_menu(self) -> None:
        self.add_menu.clear()
        for t, name in S.available_filters():
            self.add_menu.addAction(name, lambda t=t: self._add(t))

    def _add(self, t: int) -> None:
        self.specs.append(S.default_spec(t))
        self._fill()
        self.list.setCurrentRow(len(self.specs) - 1)

    def _remove(self) -> None:
        r = self.list.currentRow()
        if 0 <= r < len(self.specs):
            del self.specs[r]
            self._fill()

    def _move(self, d: int) -> None:
        r = self.list.currentRow()
        j = r + d
        if 0 <= r < len(self.specs) and 0 <= j < len(self.specs):
            self.specs[r], self.specs[j] = self.specs[j], self.specs[r]
            self._fill()
            self.list.setCurrentRow(j)

    def _moved(self, *_a) -> None:
        order = [self.list.item(i).data(Qt.UserRole) for i in range(self.list.count())]
        self.specs = [self.specs[i] for i in order]
        self._fill()

    def _show_options(self, row: int) -> None:
        while self.opts_form.rowCount():
            self.opts_form.removeRow(0)
        if not 0 <= row < len(self.specs):
            return
        spec = self.specs[row]
        o = spec.options
        if "level" in o:
            sb = QSpinBox(self.opts)
            sb.setRange(-1, 22)
            sb.setValue(int(o["level"]))
            sb.setSpecialValueText("default")
            sb.valueChanged.connect(lambda v, s=spec: self._set(s, "level", v))
            self.opts_form.addRow("Level", sb)
        if "max_window" in o:
            sb = QSpinBox(self.opts)
            sb.setRange(1, 1 << 30)
            sb.setValue(int(o["max_window"]))
            sb.valueChanged.connect(lambda v, s=spec: self._set(s, "max_window", v))
            self.opts_form.addRow("Max window", sb)
        if "scale" in o:
            for key in ("scale", "offset"):
                ds = QDoubleSpinBox(self.opts)
                ds.setDecimals(6)
                ds.setRange(-1e12, 1e12)
                ds.setValue(float(o[key]))
                ds.valueChanged.connect(lambda v, s=spec, k=key: self._set(s, k, v))
                self.opts_form.addRow(key.capitalize(), ds)
            cb = QComboBox(self.opts)
            for w in (1, 2, 4, 8):
                cb.addItem(str(w), w)
            cb.setCurrentText(str(o["byte_width"]))
            cb.currentIndexChanged.connect(lambda i, s=spec, c=cb: self._set(s, "byte_width", c.currentData()))
            self.opts_form.addRow("Byte width", cb)
        if not self.opts_form.rowCount():
            self.opts_form.addRow(QLabel(f"{spec.name} has no options", self.opts))

    def _set(self, spec, key, value) -> None:
        spec.options[key] = value
        r = self.list.currentRow()
        if 0 <= r < self.list.count():
            self.list.item(r).setText(f"{r + 1}. {S.describe_spec(spec)}")

    def apply(self) -> Optional[S.Experiment]:
        if self.cells is None or self.info is None:
            return None
        ex = S.run_experiment(self.specs, self.cells, self.info)
        n0 = len(self.cells)
        rows = len(ex.stages)
        self.results.setRowCount(rows)
        for k, stage in enumerate(ex.stages):
            name = "cells" if k == 0 else S.describe_spec(self.specs[k - 1])
            vals = [str(k), name, f"{stage.nbytes:,}",
                    f"{100.0 * stage.nbytes / n0:.1f} %" if n0 else "",
                    f"{ex.seconds[k - 1] * 1000:.2f} ms" if k else ""]
            for c, v in enumerate(vals):
                it = QTableWidgetItem(v)
                if c in (2, 3, 4):
                    it.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                self.results.setItem(k, c, it)
        if ex.error:
            self.summary.setText(f"<span style='color:{theme.error_color().name()}'>stopped: {ex.error}</span>")
        else:
            last = ex.stages[-1].nbytes
            rt = "round trip ✓ (reversing gives the cells back)" if ex.round_trip else "round trip ✗"
            self.summary.setText(f"{n0:,} B of cells → {last:,} B "
                                 f"({100.0 * last / n0 if n0 else 0:.1f} %); {rt}")
        self.experiment = ex
        return ex

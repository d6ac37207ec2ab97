"""The pipeline panel's lower "Cells" tab: a label and one table showing either a chunk's
typed cells, a tile's cells paired with its sibling tiles (offsets, var data, validity), or
a Zarr chunk's records."""
from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QLabel, QTableView, QVBoxLayout, QWidget

from arrayscope.formats.tiledb.enums import DATATYPE_NAMES

from .cellsmodel import CellsModel, TileCellsModel
from .recordsmodel import RecordsModel

HINT = "Reverse the pipeline to see the cells."


class CellsPane(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.cells = CellsModel(self)
        self.tile_cells = TileCellsModel(self)
        self.records = RecordsModel(self)
        self.view = QTableView(self)
        self.view.setModel(self.cells)
        self.view.setWordWrap(False)
        self.view.setAlternatingRowColors(True)
        self.view.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.label = QLabel(HINT, self)
        self.label.setWordWrap(True)
        cl = QVBoxLayout(self)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.label)
        cl.addWidget(self.view, 1)

    def clear(self) -> None:
        self.cells.set_cells(None, 6)
        self.tile_cells.set_tile(None)
        self.records.set_chunk(None)
        self.use_model(self.cells)
        self.label.setText(HINT)

    def use_model(self, model) -> None:
        if self.view.model() is not model:
            self.view.setModel(model)
            h = self.view.horizontalHeader()
            h.setStretchLastSection(True)
            if model is self.tile_cells:
                self.view.setColumnWidth(0, 240)
                self.view.setColumnWidth(1, 80)
                self.view.setColumnWidth(2, 50)
            elif model is self.records:
                h.setStretchLastSection(False)
                self.view.resizeColumnsToContents()

    def show_cells(self, arr, info, nbytes: int, src) -> None:
        """The reversed chunk's cells (`src`: the cells' tab, if open)."""
        self.cells.set_cells(arr, info.datatype, 0)
        self.use_model(self.cells)
        dt = DATATYPE_NAMES.get(info.datatype, "?")
        self.label.setText(f"{arr.shape[0]:,} cells of {dt} — {nbytes:,} B"
                           + (f" (tab “{src.name}”)" if src is not None else ""))

    def show_no_cells(self, datatype: int, text: str) -> None:
        self.cells.set_cells(None, datatype)
        self.use_model(self.cells)
        self.label.setText(text)

    def show_paired(self, tc, w) -> bool:
        """The tile's cells paired with its sibling tiles; False (and why, in the label) when
        they cannot be paired."""
        if tc.error is not None and tc.count == 0:
            self.label.setText(f"Cannot pair the tile's sibling files: {tc.error}")
            return False
        self.tile_cells.set_tile(tc)
        self.use_model(self.tile_cells)
        files = " + ".join(f"{n} ({'offsets' if p == 'fixed' and w.var else p if p != 'fixed' else 'data'})"
                           for p, n in tc.sources.items())
        text = (f"Tile {w.tile_index + 1} of {w.field_kind} '{w.field_name}': {tc.summary()} "
                f"— paired from {files}")
        for note in tc.notes:
            text += f"; {note}"
        if tc.error:
            text += f"; error: {tc.error}"
        self.label.setText(text)
        return True

    def show_records(self, zc) -> None:
        """A Zarr chunk's records (greyed where outside the array)."""
        self.records.set_chunk(zc)
        self.use_model(self.records)
        rec = zc.records
        if rec is not None:
            n_out = 0 if self.records.inside is None else int((~self.records.inside).sum())
            self.label.setText(
                f"{self.records.n:,} records × {zc.meta.rtype.itemsize} B ({len(self.records.leaves)} "
                f"fields) from tab “{getattr(rec.source, 'name', '')}”"
                + (f"; {n_out} outside the array (edge padding, greyed)" if n_out else ""))
        else:
            self.label.setText("The chunk could not be decoded: see Diagnostics.")

    def select_record(self, row: int) -> None:
        """Follow the selection: make record `row` current, without emitting `clicked`."""
        if 0 <= row < self.records.rowCount():
            idx = self.records.index(row, 0)
            self.view.blockSignals(True)
            self.view.setCurrentIndex(idx)
            self.view.scrollTo(idx)
            self.view.blockSignals(False)

"""The pipeline editor: a copy of a chunk's filter pipeline to change (add, remove, reorder,
options) and apply to the decoded cells, stage by stage, with sizes and timings (teaching)."""
from __future__ import annotations

from typing import List, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from arrayscope.formats import filters as F

from . import stages as S
from . import theme


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
        self.apply_btn.setToolTip(
            "" if cells is not None else "reverse the chunk first: the editor starts from its cells")

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

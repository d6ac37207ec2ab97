"""The pipeline editor: a copy of a chunk's filter pipeline to change (add, remove, reorder,
options) and apply to the decoded cells, stage by stage, with sizes and timings (teaching)."""
from __future__ import annotations

from typing import List, Optional

from PySide6.QtCore import Qt
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

from arrayscope.formats.core.plugin import Experiment, PipelineLab

from . import theme

ROLE = Qt.ItemDataRole.UserRole


class PipelineEditor(QWidget):
    """Edit a copy of the pipeline (add, remove, reorder, options) and apply it to the cells."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.lab: Optional[PipelineLab] = None
        self.steps: List[object] = []
        self.cells: Optional[bytes] = None
        self.experiment: Optional[Experiment] = None
        self.list = QListWidget(self)
        self.list.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.list.model().rowsMoved.connect(self._moved)
        self.list.currentRowChanged.connect(self._show_options)
        self.add_btn = _tool_button("Add filter ▾", self)
        self.add_btn.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_menu = QMenu(self)
        self.add_btn.setMenu(self.add_menu)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        self.rm_btn = _tool_button("Remove", self)
        self.up_btn = _tool_button("▲", self)
        self.down_btn = _tool_button("▼", self)
        self.reset_btn = _tool_button("Reset", self)
        self.rm_btn.clicked.connect(self._remove)
        self.up_btn.clicked.connect(lambda: self._move(-1))
        self.down_btn.clicked.connect(lambda: self._move(1))
        self.reset_btn.clicked.connect(lambda: self.set_lab(self.lab))
        self.apply_btn = QPushButton("Apply to cells", self)
        self.apply_btn.clicked.connect(self.apply)
        self.opts = QWidget(self)
        self.opts_form = QFormLayout(self.opts)
        self.opts_form.setContentsMargins(0, 0, 0, 0)
        self.results = QTableWidget(0, 5, self)
        self.results.setHorizontalHeaderLabels(["Stage", "Filter", "Bytes", "vs cells", "Time"])
        self.results.verticalHeader().setVisible(False)
        self.results.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.results.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
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

    def set_lab(self, lab: Optional[PipelineLab]) -> None:
        """Edit a fresh copy of `lab`'s pipeline (None: nothing to edit)."""
        self.lab = lab
        self.steps = lab.original() if lab is not None else []
        self._fill()
        self.results.setRowCount(0)
        self.summary.setText("")

    def set_cells(self, cells: Optional[bytes]) -> None:
        self.cells = cells
        self.apply_btn.setEnabled(cells is not None)
        self.apply_btn.setToolTip(
            "" if cells is not None else "reverse the chunk first: the editor starts from its cells")

    def _text(self, i: int) -> str:
        return f"{i + 1}. {self.lab.describe(self.steps[i])}" if self.lab is not None else ""

    def _fill(self) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for i in range(len(self.steps)):
            it = QListWidgetItem(self._text(i))
            it.setData(ROLE, i)
            self.list.addItem(it)
        self.list.blockSignals(False)
        self._show_options(self.list.currentRow())

    def _fill_add_menu(self) -> None:
        self.add_menu.clear()
        if self.lab is None:
            return
        for name, sid in self.lab.available():
            self.add_menu.addAction(name).triggered.connect(lambda _c=False, sid=sid: self._add(sid))

    def _add(self, step_id: object) -> None:
        if self.lab is None:
            return
        self.steps.append(self.lab.new_step(step_id))
        self._fill()
        self.list.setCurrentRow(len(self.steps) - 1)

    def _remove(self) -> None:
        r = self.list.currentRow()
        if 0 <= r < len(self.steps):
            del self.steps[r]
            self._fill()

    def _move(self, d: int) -> None:
        r = self.list.currentRow()
        j = r + d
        if 0 <= r < len(self.steps) and 0 <= j < len(self.steps):
            self.steps[r], self.steps[j] = self.steps[j], self.steps[r]
            self._fill()
            self.list.setCurrentRow(j)

    def _moved(self, *_a) -> None:
        order = [self.list.item(i).data(ROLE) for i in range(self.list.count())]
        self.steps = [self.steps[i] for i in order]
        self._fill()

    def _show_options(self, row: int) -> None:
        while self.opts_form.rowCount():
            self.opts_form.removeRow(0)
        if self.lab is None or not 0 <= row < len(self.steps):
            return
        step = self.steps[row]
        for o in self.lab.options(step):
            if o.kind == "int":
                sb = QSpinBox(self.opts)
                sb.setRange(int(o.minimum), int(o.maximum))
                sb.setValue(int(o.value))  # type: ignore[call-overload]
                if o.special_text:
                    sb.setSpecialValueText(o.special_text)
                sb.valueChanged.connect(lambda v, s=step, k=o.key: self._set(s, k, v))
                self.opts_form.addRow(o.label, sb)
            elif o.kind == "float":
                ds = QDoubleSpinBox(self.opts)
                ds.setDecimals(6)
                ds.setRange(o.minimum, o.maximum)
                ds.setValue(float(o.value))  # type: ignore[arg-type]
                ds.valueChanged.connect(lambda v, s=step, k=o.key: self._set(s, k, v))
                self.opts_form.addRow(o.label, ds)
            else:
                cb = QComboBox(self.opts)
                for text, value in o.choices:
                    cb.addItem(text, value)
                cb.setCurrentIndex(next((i for i, (_t, v) in enumerate(o.choices) if v == o.value), 0))
                cb.currentIndexChanged.connect(
                    lambda _i, s=step, k=o.key, c=cb: self._set(s, k, c.currentData()))
                self.opts_form.addRow(o.label, cb)
        if not self.opts_form.rowCount():
            self.opts_form.addRow(QLabel(f"{self.lab.describe(step)} has no options", self.opts))

    def _set(self, step: object, key: str, value: object) -> None:
        if self.lab is None:
            return
        self.lab.set_option(step, key, value)
        r = self.list.currentRow()
        if 0 <= r < self.list.count():
            self.list.item(r).setText(self._text(r))

    def apply(self) -> Optional[Experiment]:
        if self.cells is None or self.lab is None:
            return None
        ex = self.lab.run(self.steps, self.cells)
        n0 = len(self.cells)
        self.results.setRowCount(len(ex.sizes))
        for k, size in enumerate(ex.sizes):
            vals = [str(k), ex.labels[k], f"{size:,}", f"{100.0 * size / n0:.1f} %" if n0 else "",
                    f"{ex.seconds[k - 1] * 1000:.2f} ms" if k else ""]
            for c, v in enumerate(vals):
                it = QTableWidgetItem(v)
                if c in (2, 3, 4):
                    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.results.setItem(k, c, it)
        if ex.error:
            self.summary.setText(f"<span style='color:{theme.error_color().name()}'>stopped: {ex.error}</span>")
        else:
            last = ex.sizes[-1]
            rt = "round trip ✓ (reversing gives the cells back)" if ex.round_trip else "round trip ✗"
            self.summary.setText(f"{n0:,} B of cells → {last:,} B "
                                 f"({100.0 * last / n0 if n0 else 0:.1f} %); {rt}")
        self.experiment = ex
        return ex


def _tool_button(text: str, parent: QWidget) -> QToolButton:
    b = QToolButton(parent)
    b.setText(text)
    return b

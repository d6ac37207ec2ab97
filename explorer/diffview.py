"""Side-by-side diff of two files (or two fragments' files): both hex views scroll
together, differing bytes are marked, and the list of differing ranges selects a range in
both. The comparison runs in a worker thread, in constant memory (bytediff)."""
from __future__ import annotations

import html
from typing import List, Optional, Tuple

from PySide6.QtCore import QObject, Qt, QThreadPool, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from arrayscope.formats.core.node import Node
from arrayscope.formats.core.source import FileSource
from arrayscope.formats.core.status import Status

from .background import BackgroundJob
from .bytediff import DiffRange, diff_ranges
from .fielddiff import FieldDiff, field_diffs
from .hexview import HexView

MAX_RANGES = 100_000


class _Signals(QObject):
    ranges = Signal(int, object)      # job id, list of DiffRange
    progress = Signal(int, object, object)
    finished = Signal(int, bool)      # job id, truncated


class _Job(BackgroundJob):
    def __init__(self, a, b, signals: _Signals):
        super().__init__(signals)
        self.a, self.b = a, b

    def run(self) -> None:
        own = [FileSource(s.path, s.name, s.root) if isinstance(s, FileSource) else s for s in (self.a, self.b)]
        batch: List[DiffRange] = []
        n = 0
        truncated = False
        try:
            for r in diff_ranges(own[0], own[1], cancelled=self.stop.is_set,
                                 progress=lambda d, t: self.report("progress", d, t)):
                batch.append(r)
                n += 1
                if len(batch) >= 500:
                    self.report("ranges", batch)
                    batch = []
                if n >= MAX_RANGES:
                    truncated = True
                    break
        except Exception:  # noqa: BLE001 - a failing read ends the diff, never the window
            pass
        finally:
            for s, o in zip(own, (self.a, self.b)):
                if s is not o:
                    s.close()
        if batch:
            self.report("ranges", batch)
        self.report("finished", truncated)


class DiffView(QWidget):
    """Two sources side by side. `finished` when the comparison is complete."""

    finished = Signal()

    def __init__(self, a, b, parent: Optional[QWidget] = None,
                 titles: Optional[Tuple[str, str]] = None, nodes: Optional[Tuple[Node, Node]] = None):
        """`titles`: what each side is (a path that tells them apart: the member, the
        fragment); `nodes`: the two files' nodes, for the field-by-field list."""
        super().__init__(parent)
        self.a, self.b = a, b
        self.ranges: List[DiffRange] = []
        self.done = False
        self.left, self.right = HexView(a, self), HexView(b, self)
        for v in (self.left, self.right):
            v.verticalScrollBar().valueChanged.connect(lambda _v, src=v: self._sync_scroll(src))
            v.selectionChanged.connect(lambda _a, _b, src=v: self._sync_selection(src))
        self._syncing = False
        self.title_a, self.title_b = QLabel(self), QLabel(self)
        names = titles or (a.name, b.name)
        for lab, s, name in ((self.title_a, a, names[0]), (self.title_b, b, names[1])):
            lab.setText(f"<b>{html.escape(name)}</b> — {s.size:,} bytes")
            lab.setToolTip(getattr(s, "path", s.name))
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, 3, self)
        self.table.setHorizontalHeaderLabels(["Offset", "Size", "Left → right"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        h = self.table.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.currentCellChanged.connect(lambda r, _c, _pr, _pc: self.go(r))
        self.summary = QLabel("Comparing…", self)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1000)
        self.bar.setMaximumWidth(200)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        for title, view in ((self.title_a, self.left), (self.title_b, self.right)):
            w = QWidget(split)
            lay = QVBoxLayout(w)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.setSpacing(2)
            lay.addWidget(title)
            lay.addWidget(view, 1)
            split.addWidget(w)
        lower = QWidget(self)
        ll = QVBoxLayout(lower)
        ll.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.bar)
        ll.addLayout(top)
        self.fields: List[FieldDiff] = field_diffs(*nodes) if nodes is not None else []
        self.field_table = QTableWidget(len(self.fields), 3, self)
        self.field_table.setHorizontalHeaderLabels(["Field", "Left", "Right"])
        self.field_table.verticalHeader().setVisible(False)
        self.field_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.field_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.field_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.field_table.setWordWrap(False)
        self.field_table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        fh = self.field_table.horizontalHeader()
        fh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        fh.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        fh.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        for i, d in enumerate(self.fields):
            for c, t in enumerate((d.path, FieldDiff.shown(d.left), FieldDiff.shown(d.right))):
                item = QTableWidgetItem(t)
                item.setToolTip(t)
                self.field_table.setItem(i, c, item)
        self.field_table.currentCellChanged.connect(lambda r, _c, _pr, _pc: self.go_field(r))
        self.lists = QTabWidget(self)
        if nodes is not None:   # the fields first: they say what differs
            self.lists.addTab(self.field_table, f"Fields ({len(self.fields):,})")
        else:
            self.field_table.hide()
        self.lists.addTab(self.table, "Byte ranges")
        ll.addWidget(self.lists, 1)
        vsplit = QSplitter(Qt.Orientation.Vertical, self)
        vsplit.addWidget(split)
        vsplit.addWidget(lower)
        vsplit.setStretchFactor(0, 3)
        vsplit.setStretchFactor(1, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(vsplit)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self.signals = _Signals(self)
        self.signals.ranges.connect(self._ranges)
        self.signals.progress.connect(lambda _id, d, t: self.bar.setValue(int(1000 * d / max(t, 1))))
        self.signals.finished.connect(self._finished)
        self.job = _Job(a, b, self.signals)
        self.pool.start(self.job)

    def closeEvent(self, e) -> None:
        self.job.stop.set()
        self.pool.waitForDone(5000)
        super().closeEvent(e)

    def _ranges(self, _job_id: int, ranges: List[DiffRange]) -> None:
        first = len(self.ranges)
        self.ranges.extend(ranges)
        self.table.setRowCount(len(self.ranges))
        for i, r in enumerate(ranges, first):
            left = self.a.read(r.start, min(r.size, 8)).hex(" ")
            right = self.b.read(r.start, min(r.size, 8)).hex(" ")
            more = " …" if r.size > 8 else ""
            text = (f"only in {'left' if self.a.size > self.b.size else 'right'}" if r.tail
                    else f"{left}{more}  →  {right}{more}")
            for c, t in enumerate((f"0x{r.start:X}", f"{r.size:,}", text)):
                self.table.setItem(i, c, QTableWidgetItem(t))
        marks = [(r.start, r.end, Status.WARNING) for r in self.ranges]
        self.left.set_marks(marks)
        self.right.set_marks(marks)

    def _finished(self, _job_id: int, truncated: bool) -> None:
        self.done = True
        self.bar.hide()
        n = len(self.ranges)
        changed = sum(r.size for r in self.ranges if not r.tail)
        if n == 0:
            self.summary.setText("The two are identical.")
        else:
            self.summary.setText(f"{n:,} differing range{'s' * (n != 1)}, {changed:,} bytes differ"
                                 + (" (first ranges only)" if truncated else ""))
        self.finished.emit()

    def _sync_scroll(self, src: HexView) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            other = self.right if src is self.left else self.left
            other.set_top_row(src.top_row)
        finally:
            self._syncing = False

    def _sync_selection(self, src: HexView) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            other = self.right if src is self.left else self.left
            a, b = src.selection()
            if other.size_bytes > a:
                other.select_range(a, min(b, other.size_bytes), scroll=False)
                other.set_top_row(src.top_row)
        finally:
            self._syncing = False

    def go_field(self, row: int) -> None:
        """Select the field's bytes on each side it is on."""
        if not 0 <= row < len(self.fields):
            return
        d = self.fields[row]
        self._syncing = True   # each side its own field's range, not the other's offsets
        try:
            for v, n in ((self.left, d.left), (self.right, d.right)):
                if n is not None and n.source is v.source and n.size > 0:
                    v.select_range(n.offset, n.end)
        finally:
            self._syncing = False

    def go(self, row: int) -> None:
        if not 0 <= row < len(self.ranges):
            return
        r = self.ranges[row]
        for v in (self.left, self.right):
            if v.size_bytes > r.start:
                v.select_range(r.start, min(r.end, v.size_bytes))

"""The pipeline panel's lower "Cells" tab: a caption and one table of a chunk's values
(typed cells, cells paired with sibling tiles, records: whatever the chunk view gives)."""
from __future__ import annotations

from typing import List, cast

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QAbstractItemView, QLabel, QTableView, QVBoxLayout, QWidget

from arrayscope.formats.core.plugin import CellRange, CellTable
from arrayscope.formats.core.source import ByteSource

from . import theme
from .celltable import CellTableModel
from .windowfit import ElidedLabel

HINT = "Select a tile, a chunk or a cell to see its values."
MIN_COLUMN = 36    # px: a one-digit coordinate with its header elided
MAX_COLUMN = 320   # px: a long value or byte run elides (whole in its tooltip)
PAD = 6           # px each side of a cell's text


class Caption(ElidedLabel):
    """The table's caption on one line, elided in the middle (whole in its tooltip and
    `text()`): on a short window (1024×700) the rows below need the height; it wrapped to
    three lines for a var attribute. A message (no table: why there are no cells) wraps."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWordWrap(True)

    def set_caption(self, text: str) -> None:
        self.setWordWrap(False)
        self.setText(text)

    def set_message(self, text: str) -> None:
        self.setWordWrap(True)
        self.full = text
        self.setToolTip("")
        QLabel.setText(self, text)
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        return QLabel.sizeHint(self) if self.wordWrap() else super().sizeHint()

    def minimumSizeHint(self) -> QSize:
        return QLabel.minimumSizeHint(self) if self.wordWrap() else super().minimumSizeHint()

    def _elide(self) -> None:
        if not self.wordWrap():
            super()._elide()


class CellsPane(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = CellTableModel(self)
        self.view = QTableView(self)
        self.view.setModel(self.model)
        self.view.setWordWrap(False)
        self.view.setAlternatingRowColors(True)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.view.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.horizontalHeader().setResizeContentsPrecision(50)   # the first rows' widths
        self.label = Caption(self)
        self.label.set_message(HINT)
        # a clicked cell's bytes, every part in one place: a var cell's offset entry beside
        # its var bytes (each is also selected in its own hex tab), its validity byte
        self.bytes = QLabel(self)
        self.bytes.setFont(theme.mono_font())
        self.bytes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.bytes.setVisible(False)
        cl = QVBoxLayout(self)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.label)
        cl.addWidget(self.view, 1)
        cl.addWidget(self.bytes)

    def clear(self) -> None:
        self.show_message(HINT)

    def show_table(self, table: CellTable) -> None:
        if self.model.table is table:
            return
        self.show_ranges([])
        self.model.set_table(table)
        self.label.set_caption(table.caption)
        # the coordinates and the values lead a row: each column as wide as its cells on
        # screen (a long header elides; its tooltip says it), so that in a narrow dock (the
        # 1024-px layout) a cell's coordinates and value are seen together
        self.view.horizontalHeader().setStretchLastSection(False)
        n = table.row_count()
        fm = self.view.fontMetrics()
        for c in range(len(table.columns)):
            # the first rows and the last (the largest coordinates of a tile)
            last = fm.horizontalAdvance(table.text(n - 1, c)) + 2 * PAD if n else 0
            w = max(self.view.sizeHintForColumn(c), last)
            self.view.setColumnWidth(c, max(MIN_COLUMN, min(MAX_COLUMN, w)))

    def show_message(self, text: str) -> None:
        self.model.set_table(None)
        self.label.set_message(text)
        self.show_ranges([])

    def show_ranges(self, ranges: List[CellRange]) -> None:
        """The bytes of a cell's parts, one line each: where (tab, offset) and what."""
        lines = [range_line(r) for r in ranges]
        self.bytes.setText("\n".join(lines))
        self.bytes.setToolTip("\n".join(lines))
        self.bytes.setVisible(bool(lines))

    def select_row(self, row: int) -> None:
        """Follow the selection: make `row` current, without emitting `clicked`."""
        if 0 <= row < self.model.rowCount():
            idx = self.model.index(row, 0)
            self.view.blockSignals(True)
            self.view.setCurrentIndex(idx)
            self.view.scrollTo(idx)
            self.view.blockSignals(False)


SHOWN_BYTES = 16


def range_line(r: CellRange) -> str:
    """`offset   a0.tdb @0x28: 10 00 00 00 00 00 00 00 = 16`: a part of a cell, its bytes
    and what they say (an offset entry's u64, var bytes as text)."""
    src = cast(ByteSource, r.source)   # a CellRange's source is a byte source
    data = src.read(r.offset, min(r.length, SHOWN_BYTES))
    more = " …" if r.length > SHOWN_BYTES else ""
    said = ""
    if r.part == "offset" and len(data) == 8:
        said = f" = {int.from_bytes(data, 'little'):,}"
    elif r.part == "var":
        said = f" = {data.decode('utf-8', 'replace')!r}{more}"
    name = getattr(r.source, "name", "")
    return f"{r.part:<8} {name} @0x{r.offset:X}: {data.hex(' ')}{more}{said}"

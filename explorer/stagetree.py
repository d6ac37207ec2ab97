"""The pipeline panel's stage list: one row per stage of a chunk (TileDB filters, Zarr
codecs alike: `formats.core.plugin.StageRow`), from the disk side, with the stage's metadata or
framing nodes under it.

Each row's `Qt.ItemDataRole.UserRole` data says what it stands for: ("stage", k) (a stage to
reverse to) or ("node", node) (a node to select)."""
from __future__ import annotations

from typing import List, Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from arrayscope.formats.core.plugin import StageRow
from arrayscope.formats.core.status import Status

from . import theme

ROLE = Qt.ItemDataRole.UserRole


class StageTree(QTreeWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setColumnCount(4)
        self.setHeaderLabels(["Stage", "Bytes", "Status", "Forward check"])
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.header().setStretchLastSection(True)
        self.setColumnWidth(0, 190)
        self.setColumnWidth(1, 64)
        self.setColumnWidth(2, 70)

    def show_rows(self, rows: List[StageRow]) -> None:
        self.clear()
        for row in rows:
            it = QTreeWidgetItem([row.label, f"{row.size:,}" if row.size is not None else "",
                                  row.status, row.note])
            it.setIcon(0, _icon(row))
            if row.k is not None:
                it.setData(0, ROLE, ("stage", row.k))
            elif row.node is not None:
                it.setData(0, ROLE, ("node", row.node))
            if row.tooltip:
                it.setToolTip(0, row.tooltip)
            if row.error is not None:
                it.setToolTip(2, row.error)
                it.setForeground(2, QBrush(theme.error_color()))
                err = QTreeWidgetItem([row.error, "", "", ""])
                err.setForeground(0, QBrush(theme.error_color()))
                it.addChild(err)
            if row.note_tooltip:
                it.setToolTip(3, row.note_tooltip)
            if row.note_status is not None:
                col = {Status.OK: theme.ok_color(), Status.WARNING: theme.warning_color()}.get(
                    row.note_status, theme.error_color())
                it.setForeground(3, QBrush(col))
            for mn in row.details:
                c = QTreeWidgetItem([mn.name, f"{mn.size:,}", "", mn.display_text()])
                c.setData(0, ROLE, ("node", mn))
                c.setIcon(0, theme.kind_icon(mn.kind))
                c.setToolTip(3, mn.display_text())
                it.addChild(c)
            self.addTopLevelItem(it)
            if row.error is not None or row.expanded:
                it.setExpanded(True)
        self._current: Optional[QTreeWidgetItem] = None

    def mark_current(self, k: int, n: int) -> None:
        """Highlight the row of stage k (the stored row for k == n): bold on a tint."""
        want = None
        items = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        for i, it in enumerate(items):
            assert it is not None
            d = it.data(0, ROLE)
            if (k == n and i == 0) or (k < n and d == ("stage", k)):
                want = it
                break
        for it in items:
            assert it is not None
            on = it is want
            for c in range(self.columnCount()):
                f = QFont(it.font(c))
                f.setBold(on)
                it.setFont(c, f)
                it.setBackground(c, QBrush(_tint()) if on else QBrush())
        if want is not None:
            self.setCurrentItem(want)
            self.scrollToItem(want)
        self._current = want

    def current_stage_row(self) -> Optional[QTreeWidgetItem]:
        return getattr(self, "_current", None)


def _tint() -> QColor:
    c = QColor(theme.info_color())
    c.setAlpha(70)
    return c


def _icon(row: StageRow):
    if row.status == "reversed":
        return theme.status_icon(Status.OK)
    if row.status == "failed":
        return theme.status_icon(Status.ERROR)
    if row.status == "pending":
        return theme.kind_icon("padding")
    return theme.kind_icon(row.kind)

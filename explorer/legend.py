"""The colour legend: what each tint in the hex view and each icon in the tree means."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPixmap
from PySide6.QtWidgets import QGridLayout, QLabel, QScrollArea, QWidget

from arrayscope.formats.core.status import Status

from . import theme

# the kinds a user meets in the hex view, with what they are
KINDS = (
    ("struct", "a structure (header, record)"), ("field", "a number or flag"),
    ("enum", "a value from a fixed list"), ("string", "text"), ("array", "an array of values"),
    ("bytes", "raw bytes"), ("tile", "a tile"), ("chunk", "a chunk (one filter pipeline run)"),
    ("filter", "filter metadata"), ("metadata", "metadata"), ("payload", "a chunk's filtered data"),
    ("cells", "cell values"), ("padding", "padding"), ("unparsed", "bytes no rule explains"),
)


def _swatch(c: QColor, c2: QColor | None = None) -> QLabel:
    pm = QPixmap(28, 14)
    pm.fill(c)
    if c2 is not None:
        from PySide6.QtGui import QPainter

        p = QPainter(pm)
        p.fillRect(14, 0, 14, 14, c2)
        p.end()
    lab = QLabel()
    lab.setPixmap(pm)
    return lab


def _opaque(c: QColor) -> QColor:
    """A tint as it shows on the base colour (a legend swatch has nothing under it)."""
    base = QColor(40, 40, 40) if theme.is_dark() else QColor(255, 255, 255)
    a = c.alphaF()
    return QColor(int(c.red() * a + base.red() * (1 - a)), int(c.green() * a + base.green() * (1 - a)),
                  int(c.blue() * a + base.blue() * (1 - a)))


class Legend(QScrollArea):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.rebuild()

    def rebuild(self) -> None:
        body = QWidget(self)
        grid = QGridLayout(body)
        grid.setContentsMargins(6, 6, 6, 6)
        grid.setHorizontalSpacing(8)
        row = 0
        head = QLabel("<b>Bytes</b> (two shades: neighbouring fields)", body)
        grid.addWidget(head, row, 0, 1, 3)
        row += 1
        for kind, what in KINDS:
            grid.addWidget(_swatch(_opaque(theme.kind_color(kind, 0.8)),
                                   _opaque(theme.kind_color(kind, 0.8, alt=True))), row, 0)
            grid.addWidget(QLabel(kind, body), row, 1)
            grid.addWidget(QLabel(f"<span style='color:gray'>{what}</span>", body), row, 2)
            row += 1
        grid.addWidget(QLabel("<b>Problems</b>", body), row, 0, 1, 3)
        row += 1
        for status, what in ((Status.ERROR, "an error: red bytes, icon on the node and its ancestors"),
                             (Status.WARNING, "a warning"),
                             (Status.INFO, "information; verify still running"),
                             (Status.OK, "checked, no problems")):
            icon = QLabel(body)
            icon.setPixmap(theme.status_icon(status).pixmap(16, 16))
            grid.addWidget(icon, row, 0, Qt.AlignmentFlag.AlignCenter)
            grid.addWidget(QLabel(status, body), row, 1)
            lab = QLabel(f"<span style='color:gray'>{what}</span>", body)
            lab.setWordWrap(True)
            grid.addWidget(lab, row, 2)
            row += 1
        grid.addWidget(QLabel("<b>Marks</b>", body), row, 0, 1, 3)
        row += 1
        for c, name, what in ((theme.error_color(), "finding", "bytes a finding is about"),
                              (QColor("#4363d8"), "bookmark", "tint and underline in its colour"),
                              (self.palette().highlight().color(), "selection", "the selected bytes")):
            grid.addWidget(_swatch(c), row, 0)
            grid.addWidget(QLabel(name, body), row, 1)
            grid.addWidget(QLabel(f"<span style='color:gray'>{what}</span>", body), row, 2)
            row += 1
        grid.setColumnStretch(2, 1)
        grid.setRowStretch(row, 1)
        self.setWidget(body)


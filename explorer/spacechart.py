"""The space chart: per fragment, per data file, bars for the stored bytes, the bytes after
reversing each filter, and the decoded bytes (one scale for the whole chart), with the
fragment metadata beside; clicking a fragment's heading emits `fragmentSelected(name)`."""
from __future__ import annotations

import bisect
from typing import List, Optional

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QScrollArea, QWidget

from arrayscope.formats.core.health import SpaceReport

STAGE_COLOURS = ["#5e35b1", "#1e88e5", "#00897b", "#7cb342", "#fdd835", "#fb8c00"]


def _fmt(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


class SpaceBars(QWidget):
    """The bars, laid out when the report comes (each fragment's block of lines and the
    one scale) and painted for the exposed blocks only: 1 000 fragments' blocks, all painted
    (three bars and ~7 texts each), held the GUI thread 170-190 ms in one turn."""

    clicked = Signal(str)
    LINE = 15
    LABEL = 230

    def __init__(self, parent=None):
        super().__init__(parent)
        self.report: Optional[SpaceReport] = None
        self.selected: Optional[str] = None
        self._tops: List[float] = []      # each fragment block's top (its heading line)
        self._bottoms: List[float] = []   # and bottom, in the report's order
        self._big = 1
        self.painted_blocks = 0           # fragment blocks drawn by the last paint (tests)

    def set_report(self, report: Optional[SpaceReport]) -> None:
        self.report = report
        self._tops, self._bottoms = [], []
        y = 4.0 + self.LINE * 1.5
        if report is not None:
            for f in report.fragments:
                lines = 2 + sum(1 + max(1, len(x.stages)) for x in f.fields)
                self._tops.append(y)
                y += lines * self.LINE
                self._bottoms.append(y)
                y += self.LINE / 2
            self._big = max([1] + [max([x.stored, x.decoded] + [s.nbytes for s in x.stages])
                                   for f in report.fragments for x in f.fields] +
                            [f.metadata_bytes for f in report.fragments])
        self.setMinimumHeight(int(y) + self.LINE + 10)
        self.update()

    def paintEvent(self, e) -> None:
        p = QPainter(self)
        exposed = e.rect()
        p.fillRect(exposed, self.palette().base())
        r = self.report
        self.painted_blocks = 0
        if r is None:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No space breakdown")
            p.end()
            return
        width = max(50, self.width() - self.LABEL - 90)
        text = self.palette().text().color()
        y = 4.0

        def bar(label: str, n: int, colour: str, indent: int = 24) -> None:
            nonlocal y
            p.setPen(QPen(text))
            p.drawText(QRectF(indent, y, self.LABEL - indent, self.LINE), Qt.AlignmentFlag.AlignVCenter, label)
            w = max(1.0, width * n / self._big)
            p.fillRect(QRectF(self.LABEL, y + 2, w, self.LINE - 4), QColor(colour))
            p.drawText(QRectF(self.LABEL + w + 4, y, 90, self.LINE), Qt.AlignmentFlag.AlignVCenter, _fmt(n))
            y += self.LINE

        p.setPen(QPen(text))
        p.drawText(QRectF(4, y, self.width(), self.LINE), Qt.AlignmentFlag.AlignVCenter,
                   f"total {_fmt(r.total)} on disk; " +
                   ", ".join(f"{k} {_fmt(v)}" for k, v in r.other.items() if v))
        first = bisect.bisect_right(self._bottoms, exposed.top())
        for k in range(first, len(r.fragments)):
            if self._tops[k] > exposed.bottom():
                break
            f = r.fragments[k]
            y = self._tops[k]
            self.painted_blocks += 1
            head = self._head(k)
            font = p.font()
            font.setBold(True)
            p.setFont(font)
            p.setPen(QPen(QColor("#1e88e5") if f.fragment == self.selected else text))
            ratio = f"{f.data_decoded / f.data_stored:.2f}x" if f.data_stored else "-"
            p.drawText(head, Qt.AlignmentFlag.AlignVCenter, f"{f.fragment}: data {_fmt(f.data_stored)} stored → "
                                              f"{_fmt(f.data_decoded)} decoded ({ratio})")
            font.setBold(False)
            p.setFont(font)
            y += self.LINE
            bar("fragment metadata", f.metadata_bytes, "#9e9e9e", 12)
            for x in f.fields:
                bar(f"{x.file} {x.name} stored", x.stored, "#546e7a", 12)
                for i, s in enumerate(x.stages):
                    bar(s.stage.replace("after reversing ", "↳ after un-") +
                        ("" if x.exact else " (est.)"), s.nbytes,
                        STAGE_COLOURS[i % len(STAGE_COLOURS)])
                if not x.stages:
                    bar("↳ decoded (no filters)", x.decoded, STAGE_COLOURS[0])
        p.end()

    def _head(self, k: int) -> QRectF:
        return QRectF(4, self._tops[k], self.width() - 8, self.LINE)

    def mousePressEvent(self, ev) -> None:
        pos = ev.position() if hasattr(ev, "position") else QPointF(ev.pos())
        k = bisect.bisect_right(self._tops, pos.y()) - 1
        if self.report is not None and 0 <= k < len(self._tops) and self._head(k).contains(pos):
            name = self.report.fragments[k].fragment
            self.selected = name
            self.update()
            self.clicked.emit(name)


class SpaceChart(QScrollArea):
    fragmentSelected = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.bars = SpaceBars(self)
        self.bars.clicked.connect(self.fragmentSelected)
        self.setWidget(self.bars)
        self.setWidgetResizable(True)

    def set_report(self, report: Optional[SpaceReport]) -> None:
        self.bars.set_report(report)

    def select(self, name: Optional[str]) -> None:
        self.bars.selected = name
        self.bars.update()

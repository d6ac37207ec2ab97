"""The extent plot: every fragment's tile MBRs (sparse) or non-empty domain (dense) over two
chosen dimensions (one-dimensional arrays: the dimension against the fragment's row),
coloured by the fragment's state; clicking a box emits `fragmentSelected(name)`."""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Tuple

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from arrayscope.formats.core.health import Extents

from .fragmentspanel import short_name, state_colour


def _num(v) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _pair(box, d: int) -> Optional[Tuple[float, float]]:
    """Box `box`'s [lo, hi] over dimension `d` as numbers (None: absent or not numeric)."""
    if d >= len(box):
        return None
    lo, hi = _num(box[d][0]), _num(box[d][1])
    return None if lo is None or hi is None else (lo, hi)


class PlotArea(QWidget):
    clicked = Signal(str)
    M = 40

    def __init__(self, parent=None):
        super().__init__(parent)
        self.extents: Optional[Extents] = None
        self.states: Dict[str, str] = {}
        self.order: List[str] = []
        self.dx, self.dy = 0, 1
        self.selected: Optional[str] = None
        self._hits: List[Tuple[QRectF, str]] = []
        # what a paint draws, kept until the data, the dimensions or the size change (a
        # thousand fragments' boxes are not worth laying out on every expose)
        self._laid: Optional[Tuple[tuple, List[Tuple[QRectF, str]], int]] = None
        self._spans: Dict[int, Tuple[float, float]] = {}
        self.setMinimumSize(300, 220)

    def changed(self) -> None:
        """The data or the dimensions changed: lay out again, repaint."""
        self._laid = None
        self._spans.clear()
        self.update()

    def _span(self, d: int) -> Tuple[float, float]:
        """[lo, hi] of the boxes over dimension `d` (what the axis label says)."""
        if d in self._spans:
            return self._spans[d]
        vals: List[float] = []
        if self.extents is not None:
            for boxes in self.extents.boxes.values():
                for b in boxes:
                    if d < len(b):
                        vals += [x for x in (_num(b[d][0]), _num(b[d][1])) if x is not None]
        span = self._spans[d] = (min(vals), max(vals)) if vals else (0.0, 1.0)
        return span

    def _range(self, d: int) -> Tuple[float, float]:
        """The span with a margin (what the plot shows)."""
        lo, hi = self._span(d)
        return (lo - 0.5, hi + 0.5) if lo == hi else (lo - (hi - lo) * 0.03, hi + (hi - lo) * 0.03)

    def paintEvent(self, _e) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), self.palette().base())
        self._hits = []
        e = self.extents
        if e is None or not e.boxes:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No fragment extents")
            p.end()
            return
        one_d = len(e.dimensions) < 2
        x0, x1 = self._range(self.dx)
        if one_d:
            y0, y1 = -0.5, len(self.order) - 0.5
        else:
            y0, y1 = self._range(self.dy)
        left = 64 if one_d else self.M    # room for the fragment labels of a 1-D plot
        w, h = self.width() - left - self.M, self.height() - 2 * self.M
        if w <= 0 or h <= 0:
            p.end()
            return

        def X(v: float) -> float:
            return left + (v - x0) / (x1 - x0) * w

        def Y(v: float) -> float:
            return self.M + h - (v - y0) / (y1 - y0) * h

        p.setPen(QPen(self.palette().mid().color()))
        p.drawRect(QRectF(left, self.M, w, h))
        p.setPen(QPen(self.palette().text().color()))
        p.drawText(QRectF(left, self.height() - self.M + 4, w, 16), Qt.AlignmentFlag.AlignCenter,
                   "{}  [{:g}, {:g}]".format(e.dimensions[self.dx], *self._span(self.dx)))
        if not one_d:
            p.save()
            p.translate(12, self.M + h / 2)
            p.rotate(-90)
            p.drawText(QRectF(-h / 2, -8, h, 16), Qt.AlignmentFlag.AlignCenter,
                       "{}  [{:g}, {:g}]".format(e.dimensions[self.dy], *self._span(self.dy)))
            p.restore()
        key = (left, w, h, x0, x1, y0, y1, self.dx, self.dy)
        if self._laid is None or self._laid[0] != key:
            self._laid = (key, *self._boxes(one_d, X, Y))
        _key, boxes, skipped = self._laid
        self._hits = boxes
        exposed = QRectF(_e.rect()).adjusted(-3, -3, 3, 3)
        colours = {name: state_colour(self.states.get(name, "")) for name in self.order}
        for r, name in boxes:
            if not exposed.intersects(r):
                continue
            c = colours[name]
            fill = QColor(c)
            fill.setAlpha(90)
            p.setBrush(fill)
            p.setPen(QPen(c.darker(130), 2.5 if name == self.selected else 1))
            p.drawRect(r)
        if one_d:   # the fragments' labels that fit, one per 16 px at most
            p.setPen(QPen(self.palette().text().color()))
            right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            every = max(1, math.ceil(16 / max(1e-9, h / max(1, len(self.order)))))
            for row in range(0, len(self.order), every):
                label = QRectF(2, Y(row) - 8, left - 6, 16)
                if exposed.intersects(label):
                    p.drawText(label, right, short_name(self.order[row], 6))
        if skipped:
            p.drawText(QRectF(self.M, 4, w, 16), Qt.AlignmentFlag.AlignLeft,
                       f"{skipped} box(es) over non-numeric dimensions not drawn")
        p.end()

    def _boxes(self, one_d: bool, X, Y) -> Tuple[List[Tuple[QRectF, str]], int]:
        """Each fragment's boxes in widget coordinates, and how many could not be placed
        (a non-numeric dimension)."""
        out: List[Tuple[QRectF, str]] = []
        skipped = 0
        assert self.extents is not None
        for row, name in enumerate(self.order):
            for b in self.extents.boxes.get(name, []):
                xs = _pair(b, self.dx)
                ys: Optional[Tuple[float, float]] = (row - 0.35, row + 0.35) if one_d \
                    else _pair(b, self.dy)
                if xs is None or ys is None:
                    skipped += 1
                    continue
                r = QRectF(QPointF(X(xs[0] - 0.5 if one_d else xs[0]), Y(ys[1])),
                           QPointF(X(xs[1] + 0.5 if one_d else xs[1]), Y(ys[0]))).normalized()
                if r.width() < 2:
                    r.setWidth(2)
                if r.height() < 2:
                    r.setHeight(2)
                out.append((r, name))
        return out, skipped

    def mousePressEvent(self, ev) -> None:
        pos = ev.position() if hasattr(ev, "position") else QPointF(ev.pos())
        for r, name in reversed(self._hits):
            if r.contains(pos):
                self.selected = name
                self.update()
                self.clicked.emit(name)
                return


class ExtentPlot(QWidget):
    fragmentSelected = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.area = PlotArea(self)
        self.area.clicked.connect(self.fragmentSelected)
        self.cx, self.cy = QComboBox(self), QComboBox(self)
        self.cx.currentIndexChanged.connect(self._dims)
        self.cy.currentIndexChanged.connect(self._dims)
        top = QHBoxLayout()
        top.addWidget(QLabel("x:", self))
        top.addWidget(self.cx)
        top.addWidget(QLabel("y:", self))
        top.addWidget(self.cy)
        top.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.area, 1)

    def set_data(self, extents: Optional[Extents], states: Dict[str, str],
                 order: List[str]) -> None:
        self.area.extents, self.area.states = extents, states
        self.area.order = [n for n in order if extents is not None and n in extents.boxes]
        dims = extents.dimensions if extents is not None else []
        for c, default in ((self.cx, 0), (self.cy, 1)):
            c.blockSignals(True)
            c.clear()
            c.addItems(dims)
            c.setCurrentIndex(min(default, len(dims) - 1))
            c.blockSignals(False)
        self.cy.setEnabled(len(dims) > 1)
        self._dims()

    def select(self, name: Optional[str]) -> None:
        self.area.selected = name
        self.area.update()   # (the layout stays: only a pen changes)

    def _dims(self, *_a) -> None:
        self.area.dx = max(0, self.cx.currentIndex())
        self.area.dy = max(0, self.cy.currentIndex())
        self.area.changed()

"""The overview bar beside the hex view's scroll bar: the whole source top to bottom —
entropy per block (pale: zeros or repeats, dark: compressed or encrypted), where the
findings are (red / amber ticks), the bookmarks (coloured ticks), and the part on screen.
A click scrolls there. The entropy is computed in a worker thread."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from PySide6.QtCore import QObject, QRectF, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QWidget

from arrayscope.formats.core.source import FileSource
from arrayscope.formats.core.status import Status

from . import theme
from .entropy import entropy_profile

WIDTH = 16
BINS = 512


class _Hub(QObject):
    """One long-lived signal object the workers report to (never deleted while a worker
    may still emit): each bar takes the results for its own source."""
    done = Signal(object, object)   # source, list of entropies


_hub: Optional[_Hub] = None


def _the_hub() -> _Hub:
    global _hub
    if _hub is None:
        _hub = _Hub()
    return _hub


class _EntropyJob(QRunnable):
    def __init__(self, source, signals: _Hub):
        super().__init__()
        self.source, self.signals = source, signals
        self.setAutoDelete(True)

    def run(self) -> None:
        src = self.source
        own = None
        try:
            if isinstance(src, FileSource):
                own = src = FileSource(src.path, src.name, src.root)   # its own reads, off the GUI's
            prof = entropy_profile(src, BINS)
        except Exception:  # noqa: BLE001 - no overview is better than a crash
            prof = []
        finally:
            if own is not None:
                own.close()
        try:
            self.signals.done.emit(self.source, prof)
        except RuntimeError:
            pass   # the view went away


_pool: Optional[QThreadPool] = None


def _threads() -> QThreadPool:
    global _pool
    if _pool is None:
        _pool = QThreadPool()
        _pool.setMaxThreadCount(1)
    return _pool


class OverviewBar(QWidget):
    ready = Signal()

    def __init__(self, view):
        super().__init__(view)
        self.view = view
        self.profile: List[float] = []
        self.marks: List[Tuple[int, int, str]] = []
        self.setFixedWidth(WIDTH)
        self.setToolTip("Overview: entropy per block (dark = compressed or random), "
                        "findings (red), bookmarks; click to go there")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        view.set_side_widget(self)
        view.verticalScrollBar().valueChanged.connect(lambda _v: self.update())
        _the_hub().done.connect(self._done)
        self.compute()

    def compute(self) -> None:
        src = self.view.source
        self.profile = []
        if src is not None and src.size > 0:
            _threads().start(_EntropyJob(src, _the_hub()))

    def _done(self, source, prof) -> None:
        if source is self.view.source:
            self.profile = list(prof)
            self.update()
            self.ready.emit()

    def set_marks(self, ranges: Sequence[Tuple[int, int, str]]) -> None:
        self.marks = list(ranges)
        self.update()

    # ---- painting --------------------------------------------------------------------
    def _y(self, offset: int) -> float:
        size = max(1, self.view.size_bytes)
        return offset / size * self.height()

    def paintEvent(self, e: QPaintEvent) -> None:
        p = QPainter(self)
        h, w = self.height(), self.width()
        pal = self.palette()
        p.fillRect(self.rect(), pal.color(QPalette.ColorRole.AlternateBase))
        n = len(self.profile)
        dark = theme.is_dark()
        for i, ent in enumerate(self.profile):
            y0, y1 = i * h / n, (i + 1) * h / n
            t = ent / 8.0
            # light theme: white (no information) to deep blue (random); dark: the reverse
            c = QColor.fromHsl(220, 120, int(230 - 170 * t) if not dark else int(40 + 150 * t))
            p.fillRect(QRectF(2, y0, w - 4, max(1.0, y1 - y0)), c)
        for a, b, colour in self.view.bookmarks:
            y = self._y(a)
            p.fillRect(QRectF(0, y, w / 2, max(2.0, self._y(b) - y)), QColor(colour))
        for a, b, status in self.marks:
            c = theme.error_color() if status == Status.ERROR else theme.warning_color()
            y = self._y(a)
            p.fillRect(QRectF(0, y, w, max(3.0, self._y(b) - y)), c)
        # the rows on screen
        v = self.view
        top = v.top_row * v.bpr
        bottom = min(v.size_bytes, (v.top_row + v.visible_rows) * v.bpr)
        pen = QColor(pal.color(QPalette.ColorRole.Text))
        pen.setAlpha(160)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        y0, y1 = self._y(top), self._y(bottom)
        p.drawRect(QRectF(0.5, y0, w - 1, max(3.0, y1 - y0)))
        p.end()

    def offset_at(self, y: float) -> int:
        size = self.view.size_bytes
        return max(0, min(size - 1, int(y / max(1, self.height()) * size)))

    def mousePressEvent(self, e: QMouseEvent) -> None:
        if self.view.size_bytes:
            v = self.view
            off = self.offset_at(e.position().y())
            v.set_top_row(off // v.bpr - v.visible_rows // 2)
            self.update()

    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        if e.buttons() & Qt.MouseButton.LeftButton:
            self.mousePressEvent(e)


def attach(view) -> OverviewBar:
    bar = OverviewBar(view)
    view.overview = bar
    return bar

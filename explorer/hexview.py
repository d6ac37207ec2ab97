"""The hex view: a scroll area that wires Qt's events to its models and paints the rows on
screen, Okteta's split: where bytes are (`hexlayout.HexLayout`), which are selected and
marked (`hexranges.HexRanges`), both without Qt, and the column painters (`hexpainters`).

Nothing is read but the visible window of the source (a few KiB), so a 10 GiB sparse file
paints as fast as a small one."""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import QFontMetricsF, QGuiApplication, QKeySequence, QPainter
from PySide6.QtWidgets import QAbstractScrollArea, QMenu, QWidget

from . import theme
from .hexlayout import AUTO_CHOICES, ROW_CHOICES, HexLayout
from .hexpainters import Colours, HexPainter, LeafProvider
from .hexranges import HexRanges, Range

__all__ = ["HexView", "ROW_CHOICES", "Range"]

# The keys that move the cursor, by `HexLayout.moved`'s names (with Ctrl: Home, End).
_MOVES = {
    Qt.Key.Key_Left: "left", Qt.Key.Key_Right: "right", Qt.Key.Key_Up: "up", Qt.Key.Key_Down: "down",
    Qt.Key.Key_PageUp: "page-up", Qt.Key.Key_PageDown: "page-down",
    Qt.Key.Key_Home: "row-start", Qt.Key.Key_End: "row-end",
}
_CTRL_MOVES = {Qt.Key.Key_Home: "start", Qt.Key.Key_End: "end"}


class HexView(QAbstractScrollArea):
    cursorMoved = Signal(object)             # offset
    selectionChanged = Signal(object, object)  # start, end (end exclusive)
    byteClicked = Signal(object)              # offset clicked with the mouse
    nodeRequested = Signal(object)            # offset: "show the node here" (Enter / menu)
    findRequested = Signal()
    gotoRequested = Signal()

    def __init__(self, source=None, parent=None, bytes_per_row: int = 0):
        super().__init__(parent)
        self.setFont(theme.mono_font())
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().setCursor(Qt.CursorShape.IBeamCursor)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        fm = QFontMetricsF(self.font())
        self.table_layout = HexLayout(fm.horizontalAdvance("0"), int(fm.height() + 3), fm.ascent(),
                                      bytes_per_row)
        self.ranges = HexRanges()
        self.painter = HexPainter(self.table_layout)
        self.source = None
        # feature modules add their entries to the context menu: fn(menu, view)
        self.menu_hooks: List[Callable[[QMenu, "HexView"], None]] = []
        self._side: Optional[QWidget] = None
        self._leaf_provider: Optional[LeafProvider] = None
        self._press_offset: Optional[int] = None   # while the left button drags
        self._syncing_bar = False
        self.verticalScrollBar().valueChanged.connect(self._bar_moved)
        self.set_source(source)

    def _layout(self) -> HexLayout:
        """The layout at the viewport's height now (margins and frames change it too, not
        only a resize of the view)."""
        self.table_layout.height = self.viewport().height()
        return self.table_layout

    # ---- data ------------------------------------------------------------------------
    def set_source(self, source) -> None:
        self.source = source
        self.table_layout.set_size(self.size_bytes)
        self.ranges.reset(self.size_bytes)
        self._update_bar()
        self.viewport().update()

    @property
    def size_bytes(self) -> int:
        return self.source.size if self.source is not None else 0

    def set_leaf_provider(self, fn: Optional[LeafProvider]) -> None:
        """`fn(start, stop)` yields the leaf nodes overlapping the window (structure colours)."""
        self._leaf_provider = fn
        self.viewport().update()

    def set_marks(self, ranges: Sequence[Range]) -> None:
        """Byte ranges of findings (start, end, status), painted red / amber in place."""
        self.ranges.set_marks(ranges)
        self.viewport().update()

    @property
    def marks(self) -> List[Range]:
        return list(self.ranges.marks)

    def set_bookmarks(self, ranges: Sequence[Range]) -> None:
        """Bookmarked ranges (start, end, colour): a tint and a bar under the bytes."""
        self.ranges.set_bookmarks(ranges)
        self.viewport().update()

    @property
    def bookmarks(self) -> List[Range]:
        return list(self.ranges.bookmarks)

    def set_node_ranges(self, primary: Optional[Range], ancestors: Sequence[Range] = ()) -> None:
        self.ranges.set_node_ranges(primary, ancestors)
        self.viewport().update()

    # ---- geometry (the layout's; rows on screen at the viewport's height now) -----------
    @property
    def bpr(self) -> int:
        return self.table_layout.bpr

    @property
    def visible_rows(self) -> int:
        return self._layout().visible_rows

    @property
    def max_top(self) -> int:
        return self._layout().max_top

    @property
    def top_row(self) -> int:
        return self.table_layout.top

    def set_bytes_per_row(self, mode: int) -> None:
        """0 (Auto: fit the width), 8, 16 or 32; the cursor's byte stays in view."""
        self.table_layout.bpr_mode = mode
        self._fit_bpr()

    def _fit_bpr(self) -> None:
        lay = self._layout()
        if lay.set_bpr(lay.fitting_bpr(self.viewport().width()), self.ranges.cursor):
            self.scroll_to(self.ranges.cursor, center=True)
            self._update_bar()
            self.viewport().update()

    def sizeHint(self) -> QSize:
        return QSize(int(self.table_layout.total_w + self.verticalScrollBar().sizeHint().width() + 4), 400)

    def minimum_width(self) -> int:
        """Auto shrinks to 8 bytes a row; a fixed choice needs its full width."""
        lay = self.table_layout
        w = lay.width_for(lay.bpr_mode or AUTO_CHOICES[0])
        right = self.viewportMargins().right()
        return int(w + right + self.verticalScrollBar().sizeHint().width() + 4)

    def _update_bar(self) -> None:
        bar = self.verticalScrollBar()
        self._syncing_bar = True
        try:
            maximum, page, value = self._layout().bar_range()
            bar.setRange(0, maximum)
            bar.setPageStep(page)
            bar.setValue(value)
            bar.setSingleStep(1)
        finally:
            self._syncing_bar = False

    def _bar_moved(self, value: int) -> None:
        if self._syncing_bar:
            return
        lay = self._layout()
        lay.top = lay.top_at_bar(value)
        self.viewport().update()

    def set_top_row(self, row: int) -> None:
        self._layout().set_top(row)
        self._update_bar()
        self.viewport().update()

    def scroll_to(self, offset: int, center: bool = False) -> None:
        top = self._layout().top_showing(offset, center)
        if top is not None:
            self.set_top_row(top)

    def set_side_widget(self, w: Optional[QWidget]) -> None:
        """A strip between the bytes and the scroll bar (the overview bar), kept in place
        here rather than by an event filter (filters run while a view is destroyed)."""
        self._side = w
        if w is not None:
            w.setParent(self)
        self._place_side()

    def _place_side(self) -> None:
        w = self._side
        if w is None:
            return
        self.setViewportMargins(0, 0, 0 if w.isHidden() else w.width(), 0)
        vp = self.viewport().geometry()
        w.setGeometry(QRect(vp.right() + 1, vp.top(), w.width(), vp.height()))

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._place_side()
        if not self.table_layout.bpr_mode:
            self._fit_bpr()
        self._layout().clamp_top()
        self._update_bar()

    def wheelEvent(self, e) -> None:
        steps = e.angleDelta().y() / 120.0
        top = self.top_row
        if steps:
            self.set_top_row(top - int(round(steps * 3)) or top - (1 if steps > 0 else -1))
        e.accept()

    # ---- selection -------------------------------------------------------------------
    @property
    def cursor_offset(self) -> int:
        return self.ranges.cursor

    def selection(self) -> Tuple[int, int]:
        """(start, end) of the selected bytes, end exclusive (one byte when nothing is marked)."""
        return self.ranges.selection()

    def select_range(self, start: int, end: int, scroll: bool = True) -> None:
        if not self.ranges.select_range(start, end):
            return
        if scroll:
            self.scroll_to(self.ranges.cursor, center=True)
        self._selection_moved()

    def set_cursor(self, offset: int, extend: bool = False, scroll: bool = True) -> None:
        if not self.ranges.set_cursor(offset, extend):
            return
        if scroll:
            self.scroll_to(self.ranges.cursor)
        self._selection_moved()

    def _selection_moved(self) -> None:
        self.viewport().update()
        self.cursorMoved.emit(self.ranges.cursor)
        self.selectionChanged.emit(*self.selection())

    def selected_bytes(self, limit: int = 64 << 20) -> bytes:
        a, b = self.selection()
        return self.source.read(a, min(b - a, limit)) if self.source is not None else b""

    def offset_at(self, pos) -> Optional[int]:
        return self._layout().offset_at(pos.x(), pos.y())

    # ---- painting --------------------------------------------------------------------
    def paintEvent(self, e) -> None:
        p = QPainter(self.viewport())
        p.setFont(self.font())
        vp = self.viewport().rect()
        self._layout()
        self.painter.paint(p, vp.width(), vp.height(), self.source, self.ranges, self._leaf_provider,
                           Colours.of(self.palette()), self.hasFocus())
        p.end()

    # ---- input -----------------------------------------------------------------------
    def mousePressEvent(self, e) -> None:
        if e.button() == Qt.MouseButton.LeftButton:
            off = self.offset_at(e.position())
            if off is not None:
                self._press_offset = off
                self.set_cursor(off, extend=bool(e.modifiers() & Qt.KeyboardModifier.ShiftModifier), scroll=False)
        super().mousePressEvent(e)

    def mouseMoveEvent(self, e) -> None:
        if self._press_offset is not None:
            off = self.offset_at(e.position())
            if off is not None and self.ranges.drag_to(off, self._press_offset):
                self._selection_moved()

    def mouseReleaseEvent(self, e) -> None:
        if e.button() == Qt.MouseButton.LeftButton and self._press_offset is not None:
            self._press_offset = None
            if not self.ranges.marked:
                self.byteClicked.emit(self.ranges.cursor)
        super().mouseReleaseEvent(e)

    def mouseDoubleClickEvent(self, e) -> None:
        off = self.offset_at(e.position())
        if off is not None:
            self.nodeRequested.emit(off)

    def keyPressEvent(self, e) -> None:
        key = e.key()
        ctrl = bool(e.modifiers() & Qt.KeyboardModifier.ControlModifier)
        move = (_CTRL_MOVES if ctrl else {}).get(key) or _MOVES.get(key)
        if move is not None:
            lay = self._layout()
            target = lay.moved(self.ranges.cursor, move)
            if move in ("page-up", "page-down"):
                self.set_top_row(lay.top + (lay.visible_rows if move == "page-down" else -lay.visible_rows))
            self.set_cursor(target, extend=bool(e.modifiers() & Qt.KeyboardModifier.ShiftModifier))
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.nodeRequested.emit(self.ranges.cursor)
            return
        if e.matches(QKeySequence.StandardKey.SelectAll):
            if self.ranges.select_all():
                self.viewport().update()
                self.selectionChanged.emit(*self.selection())
            return
        if e.matches(QKeySequence.StandardKey.Copy):
            self.copy_as("Hex")
            return
        super().keyPressEvent(e)

    def focusInEvent(self, e):
        super().focusInEvent(e)
        self.viewport().update()

    def focusOutEvent(self, e):
        super().focusOutEvent(e)
        self.viewport().update()

    # ---- clipboard -------------------------------------------------------------------
    def copy_as(self, fmt: str) -> None:
        from PySide6.QtCore import QMimeData

        from . import copyfmt

        data = self.selected_bytes(copyfmt.MAX_COPY)
        cb = QGuiApplication.clipboard()
        if fmt == "Bytes":
            mime = QMimeData()
            mime.setData("application/octet-stream", data)
            mime.setText(data.decode("latin-1"))
            cb.setMimeData(mime)
        else:
            cb.setText(copyfmt.FORMATS[fmt](data))

    def contextMenuEvent(self, e) -> None:
        m = QMenu(self)
        for fmt in ("Hex", "Bytes", "C array", "Python bytes", "Base64"):
            m.addAction(f"Copy as {fmt}").triggered.connect(lambda _c=False, f=fmt: self.copy_as(f))
        m.addAction("Copy offset", lambda: QGuiApplication.clipboard().setText(f"0x{self.ranges.cursor:X}"))
        m.addSeparator()
        m.addAction("Show node at cursor", lambda: self.nodeRequested.emit(self.ranges.cursor))
        m.addAction("Go to offset…", self.gotoRequested.emit)
        m.addAction("Find…", self.findRequested.emit)
        for hook in self.menu_hooks:
            hook(m, self)
        m.exec(e.globalPos())

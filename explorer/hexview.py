"""The hex view: a custom-painted scroll area that paints only the rows on screen.

Nothing is read but the visible window of the source (a few KiB), so a 10 GiB sparse file
paints as fast as a small one. Offsets are Python ints (64-bit); QScrollBar is int32, so the
bar is scaled when a file has more rows than it can count.
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Sequence, Tuple

from PySide6.QtCore import QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QGuiApplication, QKeySequence, QPainter, QPalette, QPen
from PySide6.QtWidgets import QAbstractScrollArea, QMenu, QWidget

from . import theme

HEX = [f"{b:02X}" for b in range(256)]
ASC = ["." if b < 32 or b >= 127 else chr(b) for b in range(256)]
ASC_TABLE = bytes(ord(c) for c in ASC)
SCROLL_LIMIT = 1 << 30
GUTTER_LEVELS = 6
ROW_CHOICES = (8, 16, 32)          # what the user can pick; 0 = Auto
AUTO_CHOICES = (8, 16, 32, 64)     # what Auto fits to the width
Range = Tuple[int, int, str]  # start, end, kind


def _hex_text(seg: bytes, first_col: int) -> str:
    """Hex of `seg` laid out from column `first_col` (one space apart, two after every 8th)."""
    h = seg.hex(" ").upper()
    n = len(seg)
    parts, prev = [], 0
    b = (first_col // 8 + 1) * 8  # the first group boundary after the run's start
    while b < first_col + n:
        pos = (b - first_col) * 3
        parts.append(h[prev:pos])
        prev = pos
        b += 8
    parts.append(h[prev:])
    return " ".join(parts)


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
        self.bpr_mode = bytes_per_row      # 0: as many as fit (Auto)
        self.bpr = bytes_per_row or 16
        self.source = None
        self._top = 0            # first visible row (Python int)
        self._cursor = 0
        self._anchor: Optional[int] = None
        self._primary: Optional[Range] = None
        self._ancestors: List[Range] = []
        self._marks: List[Range] = []   # findings: (start, end, status), sorted
        self._bookmarks: List[Range] = []   # (start, end, colour name)
        # feature modules add their entries to the context menu: fn(menu, view)
        self.menu_hooks: List[Callable[[QMenu, "HexView"], None]] = []
        self._side: Optional[QWidget] = None
        self._leaf_provider: Optional[Callable[[int, int], Iterable]] = None
        self._dragging = False
        self._press_offset: Optional[int] = None
        self._syncing_bar = False
        self.verticalScrollBar().valueChanged.connect(self._bar_moved)
        self._metrics()
        self.set_source(source)

    # ---- data ------------------------------------------------------------------------
    def set_source(self, source) -> None:
        self.source = source
        self._top = 0
        self._cursor = 0
        self._anchor = None
        self._primary = None
        self._ancestors = []
        self._metrics()
        self._update_bar()
        self.viewport().update()

    @property
    def size_bytes(self) -> int:
        return self.source.size if self.source is not None else 0

    def set_leaf_provider(self, fn: Optional[Callable[[int, int], Iterable]]) -> None:
        """`fn(start, stop)` yields the leaf nodes overlapping the window (structure colours)."""
        self._leaf_provider = fn
        self.viewport().update()

    def set_marks(self, ranges: Sequence[Range]) -> None:
        """Byte ranges of findings (start, end, status), painted red / amber in place."""
        self._marks = sorted(ranges)
        self.viewport().update()

    @property
    def marks(self) -> List[Range]:
        return list(self._marks)

    def set_bookmarks(self, ranges: Sequence[Range]) -> None:
        """Bookmarked ranges (start, end, colour): a tint and a bar under the bytes."""
        self._bookmarks = sorted(ranges)
        self.viewport().update()

    @property
    def bookmarks(self) -> List[Range]:
        return list(self._bookmarks)

    def set_node_ranges(self, primary: Optional[Range], ancestors: Sequence[Range] = ()) -> None:
        self._primary = primary
        self._ancestors = list(ancestors)[-GUTTER_LEVELS:]
        self.viewport().update()

    # ---- geometry --------------------------------------------------------------------
    def _metrics(self) -> None:
        fm = QFontMetricsF(self.font())
        self.cw = fm.horizontalAdvance("0")
        self.lh = int(fm.height() + 3)
        self.ascent = fm.ascent()
        size = self.size_bytes
        self.digits = max(8, len(f"{max(size - 1, 0):X}"))
        self.x_gutter = 4
        self.x_off = self.x_gutter + GUTTER_LEVELS * 4 + 6
        self.x_hex = self.x_off + (self.digits + 2) * self.cw
        self.x_asc = self.x_hex + (self.bpr * 3 + (self.bpr // 8 - 1) + 2) * self.cw
        self.header_h = self.lh + 4
        self.total_w = self.x_asc + (self.bpr + 2) * self.cw

    def _width_for(self, bpr: int) -> float:
        """Width of the painted rows at `bpr` bytes per row (as _metrics lays them out)."""
        x_asc = self.x_hex + (bpr * 3 + (bpr // 8 - 1) + 2) * self.cw
        return x_asc + (bpr + 2) * self.cw

    def set_bytes_per_row(self, mode: int) -> None:
        """0 (Auto: fit the width), 8, 16 or 32; the cursor's byte stays in view."""
        self.bpr_mode = mode
        self._fit_bpr()

    def _fit_bpr(self) -> None:
        mode = self.bpr_mode
        if mode:
            bpr = mode
        else:
            avail = self.viewport().width()
            bpr = AUTO_CHOICES[0]
            for n in AUTO_CHOICES:
                if self._width_for(n) <= avail:
                    bpr = n
        if bpr == self.bpr:
            return
        self.bpr = bpr
        self._metrics()
        self._top = min(self._cursor // bpr, self.max_top)
        self.scroll_to(self._cursor, center=True)
        self._update_bar()
        self.viewport().update()

    def sizeHint(self) -> QSize:
        return QSize(int(self.total_w + self.verticalScrollBar().sizeHint().width() + 4), 400)

    def minimum_width(self) -> int:
        """Auto shrinks to 8 bytes a row; a fixed choice needs its full width."""
        w = self._width_for(self.bpr_mode or AUTO_CHOICES[0])
        right = self.viewportMargins().right()
        return int(w + right + self.verticalScrollBar().sizeHint().width() + 4)

    def hex_x(self, col: int) -> float:
        return self.x_hex + (col * 3 + col // 8) * self.cw

    def asc_x(self, col: int) -> float:
        return self.x_asc + col * self.cw

    @property
    def total_rows(self) -> int:
        return max(1, (self.size_bytes + self.bpr - 1) // self.bpr)

    @property
    def visible_rows(self) -> int:
        return max(1, (self.viewport().height() - self.header_h) // self.lh)

    @property
    def max_top(self) -> int:
        return max(0, self.total_rows - self.visible_rows)

    @property
    def top_row(self) -> int:
        return self._top

    def _update_bar(self) -> None:
        bar = self.verticalScrollBar()
        self._syncing_bar = True
        try:
            mt = self.max_top
            if mt <= SCROLL_LIMIT:
                bar.setRange(0, mt)
                bar.setPageStep(self.visible_rows)
                bar.setValue(self._top)
            else:
                bar.setRange(0, SCROLL_LIMIT)
                bar.setPageStep(max(1, self.visible_rows * SCROLL_LIMIT // mt))
                bar.setValue(self._top * SCROLL_LIMIT // mt)
            bar.setSingleStep(1)
        finally:
            self._syncing_bar = False

    def _bar_moved(self, value: int) -> None:
        if self._syncing_bar:
            return
        mt = self.max_top
        self._top = value if mt <= SCROLL_LIMIT else value * mt // SCROLL_LIMIT
        self.viewport().update()

    def set_top_row(self, row: int) -> None:
        self._top = max(0, min(int(row), self.max_top))
        self._update_bar()
        self.viewport().update()

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
        if not self.bpr_mode:
            self._fit_bpr()
        self._top = min(self._top, self.max_top)
        self._update_bar()

    def wheelEvent(self, e) -> None:
        steps = e.angleDelta().y() / 120.0
        if steps:
            self.set_top_row(self._top - int(round(steps * 3)) or self._top - (1 if steps > 0 else -1))
        e.accept()

    def scroll_to(self, offset: int, center: bool = False) -> None:
        row = offset // self.bpr
        vis = self.visible_rows
        if center:
            if not (self._top <= row < self._top + vis):
                self.set_top_row(row - vis // 3)
        elif row < self._top:
            self.set_top_row(row)
        elif row >= self._top + vis:
            self.set_top_row(row - vis + 1)

    # ---- selection -------------------------------------------------------------------
    @property
    def cursor_offset(self) -> int:
        return self._cursor

    def selection(self) -> Tuple[int, int]:
        """(start, end) of the selected bytes, end exclusive (one byte when nothing is marked)."""
        if self.size_bytes == 0:
            return 0, 0
        if self._anchor is None:
            return self._cursor, self._cursor + 1
        a, b = sorted((self._anchor, self._cursor))
        return a, b + 1

    def select_range(self, start: int, end: int, scroll: bool = True) -> None:
        size = self.size_bytes
        if size == 0:
            return
        start = max(0, min(start, size - 1))
        end = max(start + 1, min(end, size))
        self._anchor = end - 1 if end - start > 1 else None
        self._cursor = start
        if scroll:
            self.scroll_to(start, center=True)
        self.viewport().update()
        self.cursorMoved.emit(self._cursor)
        self.selectionChanged.emit(*self.selection())

    def set_cursor(self, offset: int, extend: bool = False, scroll: bool = True) -> None:
        size = self.size_bytes
        if size == 0:
            return
        offset = max(0, min(int(offset), size - 1))
        if extend:
            if self._anchor is None:
                self._anchor = self._cursor
        else:
            self._anchor = None
        self._cursor = offset
        if scroll:
            self.scroll_to(offset)
        self.viewport().update()
        self.cursorMoved.emit(self._cursor)
        self.selectionChanged.emit(*self.selection())

    def selected_bytes(self, limit: int = 64 << 20) -> bytes:
        a, b = self.selection()
        return self.source.read(a, min(b - a, limit)) if self.source is not None else b""

    # ---- hit testing -----------------------------------------------------------------
    def offset_at(self, pos) -> Optional[int]:
        x, y = pos.x(), pos.y()
        if y < self.header_h or self.source is None or self.size_bytes == 0:
            return None
        row = self._top + int((y - self.header_h) // self.lh)
        if x >= self.x_asc - self.cw:
            col = int((x - self.x_asc) // self.cw)
        elif x >= self.x_hex - self.cw:
            rel = (x - self.x_hex) / self.cw
            group = int(rel // 25)  # 8 bytes = 24 chars + 1 gap
            within = rel - group * 25
            col = group * 8 + int(min(within, 23.99) // 3)
        else:
            col = 0
        col = max(0, min(col, self.bpr - 1))
        return max(0, min(row * self.bpr + col, self.size_bytes - 1))

    # ---- painting --------------------------------------------------------------------
    def paintEvent(self, e) -> None:
        p = QPainter(self.viewport())
        pal = self.palette()
        vp = self.viewport().rect()
        p.fillRect(vp, pal.color(QPalette.ColorRole.Base))
        p.setFont(self.font())
        text_c = pal.color(QPalette.ColorRole.Text)
        dim_c = pal.color(QPalette.ColorRole.PlaceholderText)
        if self.source is None:
            p.setPen(dim_c)
            p.drawText(vp, Qt.AlignmentFlag.AlignCenter, "no bytes: select a file or a node with bytes")
            return
        bpr, lh, cw = self.bpr, self.lh, self.cw
        self._paint_header(p, pal, dim_c)
        size = self.size_bytes
        first = self._top
        nrows = self.visible_rows + 1
        start = first * bpr
        stop = min(size, start + nrows * bpr)
        data = self.source.read(start, stop - start) if stop > start else b""
        err = None
        p.setClipRect(QRect(0, self.header_h, vp.width(), vp.height() - self.header_h))

        # structure colours: the leaves in view, alternating strength so neighbours part
        if self._leaf_provider is not None and stop > start:
            for i, leaf in enumerate(self._leaf_provider(start, stop)):
                kind = "error" if leaf.status == "error" else leaf.kind
                if kind in ("dir", "file"):
                    continue
                col = theme.kind_color(kind, 0.8, alt=bool(i % 2))
                a, b = max(leaf.offset, start), min(leaf.offset + leaf.size, stop)
                self._fill_range(p, a, b, first, col)
                if leaf.status == "error":
                    if err is None:
                        err = bytearray(stop - start)
                    err[a - start:b - start] = b"\x01" * (b - a)
        # findings: a strong tint and red text, over the structure colours
        for a, b, status in self._marks:
            if a >= stop:
                break
            a, b = max(a, start), min(b, stop)
            if b <= a:
                continue
            tint = QColor(theme.error_color() if status == "error" else theme.warning_color())
            tint.setAlpha(90)
            self._fill_range(p, a, b, first, tint)
            if status == "error":
                if err is None:
                    err = bytearray(stop - start)
                err[a - start:b - start] = b"\x01" * (b - a)
        for a, b, colour in self._bookmarks:
            a, b = max(a, start), min(b, stop)
            if b > a:
                tint = QColor(colour)
                tint.setAlpha(70)
                self._fill_range(p, a, b, first, tint)
                self._underline(p, a, b, first, QColor(colour))
        if self._primary is not None:
            a, b, kind = self._primary
            a, b = max(a, start), min(b, stop)
            if b > a:
                self._fill_range(p, a, b, first, theme.kind_color(kind, 1.1))
        # user's selection
        sa, sb = self.selection()
        if self._anchor is not None:
            hl = QColor(pal.color(QPalette.ColorRole.Highlight))
            same = self._primary is not None and (sa, sb) == tuple(self._primary[:2])
            hl.setAlpha(55 if same else 110)
            self._fill_range(p, max(sa, start), min(sb, stop), first, hl)
        # ancestor gutter
        for level, (a, b, kind) in enumerate(self._ancestors + ([self._primary] if self._primary else [])):
            r0, r1 = max(a // bpr, first), min((b - 1) // bpr, first + nrows)
            if r1 < r0:
                continue
            x = self.x_gutter + level * 4
            y0 = self.header_h + (r0 - first) * lh + (2 if r0 == a // bpr else 0)
            y1 = self.header_h + (r1 - first + 1) * lh - (2 if r1 == (b - 1) // bpr else 0)
            p.fillRect(QRectF(x, y0, 3, y1 - y0), theme.kind_solid(kind))

        # text
        red = theme.error_color()
        off_c = QColor(dim_c)
        base_y = self.header_h + self.ascent + 1
        fmt = f"{{:0{self.digits}X}}"
        for r in range(nrows):
            row_off = start + r * bpr
            if row_off >= size:
                break
            y = base_y + r * lh
            p.setPen(off_c)
            p.drawText(QPointF(self.x_off, y), fmt.format(row_off))
            chunk = data[r * bpr:(r + 1) * bpr]
            # runs of equal colour class: 0 text, 1 zero byte (dim), 2 error
            for j, k, cls in self._runs(chunk, err, r * bpr):
                p.setPen(red if cls == 2 else dim_c if cls == 1 else text_c)
                seg = chunk[j:k]
                p.drawText(QPointF(self.hex_x(j), y), _hex_text(seg, j))
                p.drawText(QPointF(self.asc_x(j), y), seg.translate(ASC_TABLE).decode("latin-1"))
        # cursor box
        c = self._cursor
        if start <= c < stop:
            r, col = (c - start) // bpr, (c - start) % bpr
            y = self.header_h + r * lh
            pen = QPen(pal.color(QPalette.ColorRole.Highlight) if self.hasFocus() else dim_c, 1.2)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(QRectF(self.hex_x(col) - 1.5, y + 0.5, 2 * cw + 3, lh - 1))
            p.drawRect(QRectF(self.asc_x(col) - 0.5, y + 0.5, cw + 1, lh - 1))
        p.setClipping(False)
        # separators
        sep = QColor(pal.color(QPalette.ColorRole.Mid))
        p.fillRect(QRectF(self.x_hex - cw, 0, 1, vp.height()), sep)
        p.fillRect(QRectF(self.x_asc - cw, 0, 1, vp.height()), sep)
        p.end()

    @staticmethod
    def _runs(chunk: bytes, err, base: int):
        """(start, stop, class) runs of one row: 0 text, 1 zero byte, 2 error."""
        n = len(chunk)
        if err is None or not any(err[base:base + n]):
            zeros = chunk.count(0)
            if zeros == 0:
                return [(0, n, 0)]
            if zeros == n:
                return [(0, n, 1)]
            cls = [1 if b == 0 else 0 for b in chunk]
        else:
            cls = [2 if err[base + i] else (1 if b == 0 else 0) for i, b in enumerate(chunk)]
        runs = []
        j = 0
        while j < n:
            k = j + 1
            while k < n and cls[k] == cls[j]:
                k += 1
            runs.append((j, k, cls[j]))
            j = k
        return runs

    def _paint_header(self, p: QPainter, pal, dim_c) -> None:
        w = self.viewport().width()
        p.fillRect(QRect(0, 0, w, self.header_h), pal.color(QPalette.ColorRole.AlternateBase))
        p.setPen(dim_c)
        y = self.ascent + 2
        p.drawText(QPointF(self.x_off, y), "Offset".ljust(self.digits))
        p.drawText(QPointF(self.hex_x(0), y), _hex_text(bytes(range(self.bpr)), 0))
        p.drawText(QPointF(self.x_asc, y), "Decoded text" if self.bpr >= 16 else "Text")
        p.fillRect(QRect(0, self.header_h - 1, w, 1), pal.color(QPalette.ColorRole.Mid))

    def _fill_range(self, p: QPainter, a: int, b: int, first: int, color: QColor) -> None:
        """Fill bytes [a, b) in both panes (one rect per row and pane)."""
        if b <= a:
            return
        bpr, lh = self.bpr, self.lh
        ra, rb = a // bpr, (b - 1) // bpr
        for row in range(max(ra, first), min(rb, first + self.visible_rows + 1) + 1):
            c0 = a - row * bpr if row == ra else 0
            c1 = (b - 1) - row * bpr if row == rb else bpr - 1
            y = self.header_h + (row - first) * lh
            x0 = self.hex_x(c0) - self.cw * 0.5
            x1 = self.hex_x(c1) + self.cw * 2.5
            p.fillRect(QRectF(x0, y, x1 - x0, lh), color)
            p.fillRect(QRectF(self.asc_x(c0), y, (c1 - c0 + 1) * self.cw, lh), color)

    def _underline(self, p: QPainter, a: int, b: int, first: int, color: QColor) -> None:
        """A 2-pixel bar under bytes [a, b) in the hex pane (bookmarks)."""
        bpr, lh = self.bpr, self.lh
        ra, rb = a // bpr, (b - 1) // bpr
        for row in range(max(ra, first), min(rb, first + self.visible_rows + 1) + 1):
            c0 = a - row * bpr if row == ra else 0
            c1 = (b - 1) - row * bpr if row == rb else bpr - 1
            y = self.header_h + (row - first + 1) * lh - 2
            x0 = self.hex_x(c0) - self.cw * 0.5
            x1 = self.hex_x(c1) + self.cw * 2.5
            p.fillRect(QRectF(x0, y, x1 - x0, 2), color)

    # ---- input -----------------------------------------------------------------------
    def mousePressEvent(self, e) -> None:
        if e.button() == Qt.MouseButton.LeftButton:
            off = self.offset_at(e.position())
            if off is not None:
                self._dragging = True
                self._press_offset = off
                self.set_cursor(off, extend=bool(e.modifiers() & Qt.KeyboardModifier.ShiftModifier), scroll=False)
        super().mousePressEvent(e)

    def mouseMoveEvent(self, e) -> None:
        if self._dragging:
            off = self.offset_at(e.position())
            if off is not None and off != self._cursor:
                if self._anchor is None:
                    self._anchor = self._press_offset
                self._cursor = off
                self.viewport().update()
                self.cursorMoved.emit(off)
                self.selectionChanged.emit(*self.selection())

    def mouseReleaseEvent(self, e) -> None:
        if e.button() == Qt.MouseButton.LeftButton and self._dragging:
            self._dragging = False
            if self._anchor is None:
                self.byteClicked.emit(self._cursor)
        super().mouseReleaseEvent(e)

    def mouseDoubleClickEvent(self, e) -> None:
        off = self.offset_at(e.position())
        if off is not None:
            self.nodeRequested.emit(off)

    def keyPressEvent(self, e) -> None:
        key, mods = e.key(), e.modifiers()
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        c, bpr, page = self._cursor, self.bpr, self.visible_rows * self.bpr
        moves = {
            Qt.Key.Key_Left: c - 1, Qt.Key.Key_Right: c + 1, Qt.Key.Key_Up: c - bpr, Qt.Key.Key_Down: c + bpr,
            Qt.Key.Key_PageUp: c - page, Qt.Key.Key_PageDown: c + page,
            Qt.Key.Key_Home: 0 if ctrl else c - c % bpr,
            Qt.Key.Key_End: self.size_bytes - 1 if ctrl else c - c % bpr + bpr - 1,
        }
        if key in moves:
            target = moves[key]
            if key in (Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
                self.set_top_row(self._top + (self.visible_rows if key == Qt.Key.Key_PageDown else -self.visible_rows))
            self.set_cursor(target, extend=shift)
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.nodeRequested.emit(self._cursor)
            return
        if e.matches(QKeySequence.StandardKey.SelectAll):
            if self.size_bytes:
                self._anchor, self._cursor = 0, self.size_bytes - 1
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
        m.addAction("Copy offset", lambda: QGuiApplication.clipboard().setText(f"0x{self._cursor:X}"))
        m.addSeparator()
        m.addAction("Show node at cursor", lambda: self.nodeRequested.emit(self._cursor))
        m.addAction("Go to offset…", self.gotoRequested.emit)
        m.addAction("Find…", self.findRequested.emit)
        for hook in self.menu_hooks:
            hook(m, self)
        m.exec(e.globalPos())

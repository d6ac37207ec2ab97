"""The hex view's painters: one per column (offsets with the node gutter, hex bytes, text),
as Okteta's column renderers, and `HexPainter`, which paints a screenful in layers.

They read the layout (`hexlayout`) and the ranges (`hexranges`) and keep no state of their
own; only the bytes on screen are read from the source (a few KiB)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, List, Optional, Tuple

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QPen

from arrayscope.formats.core.status import Status

from . import theme
from .hexlayout import HexLayout
from .hexranges import HexRanges

ASC = ["." if b < 32 or b >= 127 else chr(b) for b in range(256)]
ASC_TABLE = bytes(ord(c) for c in ASC)
TEXT, ZERO, BAD = 0, 1, 2   # how a byte's text is coloured: text, a zero byte (dim), an error

LeafProvider = Callable[[int, int], Iterable]


def hex_text(seg: bytes, first_col: int) -> str:
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


def runs(chunk: bytes, bad: Optional[bytearray], base: int) -> List[Tuple[int, int, int]]:
    """(start, stop, class) runs of one row's bytes: TEXT, ZERO or BAD (`bad[base + i]` set)."""
    n = len(chunk)
    if bad is None or not any(bad[base:base + n]):
        zeros = chunk.count(0)
        if zeros == 0:
            return [(0, n, TEXT)]
        if zeros == n:
            return [(0, n, ZERO)]
        cls = [ZERO if b == 0 else TEXT for b in chunk]
    else:
        cls = [BAD if bad[base + i] else (ZERO if b == 0 else TEXT) for i, b in enumerate(chunk)]
    out = []
    j = 0
    while j < n:
        k = j + 1
        while k < n and cls[k] == cls[j]:
            k += 1
        out.append((j, k, cls[j]))
        j = k
    return out


@dataclass(frozen=True)
class Colours:
    """The palette's colours one paint uses (read once)."""

    base: QColor
    alternate: QColor
    text: QColor
    dim: QColor
    mid: QColor
    highlight: QColor
    error: QColor

    @staticmethod
    def of(pal: QPalette) -> "Colours":
        role = QPalette.ColorRole
        return Colours(pal.color(role.Base), pal.color(role.AlternateBase), pal.color(role.Text),
                       pal.color(role.PlaceholderText), pal.color(role.Mid), pal.color(role.Highlight),
                       theme.error_color())


class OffsetColumn:
    """Each row's offset, and left of it the gutter: a bar per level of the selected node
    and its ancestors, over the rows they span."""

    def __init__(self, layout: HexLayout) -> None:
        self.layout = layout

    def paint_header(self, p: QPainter, y: float) -> None:
        lay = self.layout
        p.drawText(QPointF(lay.x_off, y), "Offset".ljust(lay.digits))

    def paint_row(self, p: QPainter, y: float, offset: int) -> None:
        lay = self.layout
        p.drawText(QPointF(lay.x_off, y), f"{offset:0{lay.digits}X}")

    def paint_gutter(self, p: QPainter, ranges: HexRanges) -> None:
        lay = self.layout
        first, bpr = lay.top, lay.bpr
        last = first + lay.visible_rows + 1
        for level, (a, b, kind) in enumerate(ranges.gutter()):
            r0, r1 = max(a // bpr, first), min((b - 1) // bpr, last)
            if r1 < r0:
                continue
            x = lay.x_gutter + level * 4
            y0 = lay.row_y(r0) + (2 if r0 == a // bpr else 0)
            y1 = lay.row_y(r1 + 1) - (2 if r1 == (b - 1) // bpr else 0)
            p.fillRect(QRectF(x, y0, 3, y1 - y0), theme.kind_solid(kind))


class HexColumn:
    """The bytes as hex, grouped by 8."""

    def __init__(self, layout: HexLayout) -> None:
        self.layout = layout

    def paint_header(self, p: QPainter, y: float) -> None:
        lay = self.layout
        p.drawText(QPointF(lay.hex_x(0), y), hex_text(bytes(range(lay.bpr)), 0))

    def fill_span(self, p: QPainter, row: int, c0: int, c1: int, color: QColor) -> None:
        lay = self.layout
        x0 = lay.hex_x(c0) - lay.cw * 0.5
        x1 = lay.hex_x(c1) + lay.cw * 2.5
        p.fillRect(QRectF(x0, lay.row_y(row), x1 - x0, lay.lh), color)

    def underline(self, p: QPainter, a: int, b: int, color: QColor) -> None:
        """A 2-pixel bar under bytes [a, b) (bookmarks)."""
        lay = self.layout
        for row, c0, c1 in lay.spans(a, b):
            x0 = lay.hex_x(c0) - lay.cw * 0.5
            x1 = lay.hex_x(c1) + lay.cw * 2.5
            p.fillRect(QRectF(x0, lay.row_y(row + 1) - 2, x1 - x0, 2), color)

    def paint_run(self, p: QPainter, y: float, col: int, seg: bytes) -> None:
        p.drawText(QPointF(self.layout.hex_x(col), y), hex_text(seg, col))

    def paint_cursor(self, p: QPainter, row: int, col: int) -> None:
        lay = self.layout
        p.drawRect(QRectF(lay.hex_x(col) - 1.5, lay.row_y(row) + 0.5, 2 * lay.cw + 3, lay.lh - 1))


class TextColumn:
    """The bytes as Latin-1 text ('.' for what does not print)."""

    def __init__(self, layout: HexLayout) -> None:
        self.layout = layout

    def paint_header(self, p: QPainter, y: float) -> None:
        lay = self.layout
        p.drawText(QPointF(lay.x_asc, y), "Decoded text" if lay.bpr >= 16 else "Text")

    def fill_span(self, p: QPainter, row: int, c0: int, c1: int, color: QColor) -> None:
        lay = self.layout
        p.fillRect(QRectF(lay.asc_x(c0), lay.row_y(row), (c1 - c0 + 1) * lay.cw, lay.lh), color)

    def paint_run(self, p: QPainter, y: float, col: int, seg: bytes) -> None:
        p.drawText(QPointF(self.layout.asc_x(col), y), seg.translate(ASC_TABLE).decode("latin-1"))

    def paint_cursor(self, p: QPainter, row: int, col: int) -> None:
        lay = self.layout
        p.drawRect(QRectF(lay.asc_x(col) - 0.5, lay.row_y(row) + 0.5, lay.cw + 1, lay.lh - 1))


class HexPainter:
    """A screenful, bottom layer first: structure colours (the leaves on screen, alternating
    shades so neighbours part), findings, bookmarks, the selected node, the selection, the
    gutter; then the text, the cursor box and the column separators."""

    def __init__(self, layout: HexLayout) -> None:
        self.layout = layout
        self.offsets = OffsetColumn(layout)
        self.hex = HexColumn(layout)
        self.text = TextColumn(layout)

    def fill(self, p: QPainter, a: int, b: int, color: QColor) -> None:
        """Bytes [a, b) in both byte columns."""
        for row, c0, c1 in self.layout.spans(a, b):
            self.hex.fill_span(p, row, c0, c1, color)
            self.text.fill_span(p, row, c0, c1, color)

    def paint(self, p: QPainter, width: int, height: int, source, ranges: HexRanges,
              leaves: Optional[LeafProvider], colours: Colours, focused: bool) -> None:
        lay = self.layout
        p.fillRect(QRect(0, 0, width, height), colours.base)
        if source is None:
            p.setPen(colours.dim)
            p.drawText(QRect(0, 0, width, height), Qt.AlignmentFlag.AlignCenter,
                       "no bytes: select a file or a node with bytes")
            return
        self._paint_header(p, width, colours)
        start, stop = lay.window()
        data = source.read(start, stop - start) if stop > start else b""
        p.setClipRect(QRect(0, lay.header_h, width, height - lay.header_h))
        bad = self._paint_ranges(p, start, stop, ranges, leaves, colours)
        self.offsets.paint_gutter(p, ranges)
        self._paint_text(p, start, stop, data, bad, colours)
        c = ranges.cursor
        if start <= c < stop:
            row, col = divmod(c, lay.bpr)
            p.setPen(QPen(colours.highlight if focused else colours.dim, 1.2))
            p.setBrush(Qt.BrushStyle.NoBrush)
            self.hex.paint_cursor(p, row, col)
            self.text.paint_cursor(p, row, col)
        p.setClipping(False)
        sep = QColor(colours.mid)
        p.fillRect(QRectF(lay.x_hex - lay.cw, 0, 1, height), sep)
        p.fillRect(QRectF(lay.x_asc - lay.cw, 0, 1, height), sep)

    def _paint_header(self, p: QPainter, width: int, colours: Colours) -> None:
        lay = self.layout
        p.fillRect(QRect(0, 0, width, lay.header_h), colours.alternate)
        p.setPen(colours.dim)
        y = lay.ascent + 2
        self.offsets.paint_header(p, y)
        self.hex.paint_header(p, y)
        self.text.paint_header(p, y)
        p.fillRect(QRect(0, lay.header_h - 1, width, 1), colours.mid)

    def _paint_ranges(self, p: QPainter, start: int, stop: int, ranges: HexRanges,
                      leaves: Optional[LeafProvider], colours: Colours) -> Optional[bytearray]:
        """The background layers; the bytes on screen to write in red (None: none)."""
        bad: Optional[bytearray] = None

        def mark_bad(a: int, b: int) -> None:
            nonlocal bad
            if bad is None:
                bad = bytearray(stop - start)
            bad[a - start:b - start] = b"\x01" * (b - a)

        if leaves is not None and stop > start:
            for i, leaf in enumerate(leaves(start, stop)):
                kind = "error" if leaf.status == Status.ERROR else leaf.kind
                if kind in ("dir", "file"):
                    continue
                a, b = max(leaf.offset, start), min(leaf.offset + leaf.size, stop)
                self.fill(p, a, b, theme.kind_color(kind, 0.8, alt=bool(i % 2)))
                if leaf.status == Status.ERROR:
                    mark_bad(a, b)
        # findings: a strong tint and red text, over the structure colours
        for a, b, status in ranges.marks:
            if a >= stop:
                break
            a, b = max(a, start), min(b, stop)
            if b <= a:
                continue
            tint = QColor(theme.error_color() if status == Status.ERROR else theme.warning_color())
            tint.setAlpha(90)
            self.fill(p, a, b, tint)
            if status == Status.ERROR:
                mark_bad(a, b)
        for a, b, colour in ranges.bookmarks:
            a, b = max(a, start), min(b, stop)
            if b > a:
                tint = QColor(colour)
                tint.setAlpha(70)
                self.fill(p, a, b, tint)
                self.hex.underline(p, a, b, QColor(colour))
        if ranges.primary is not None:
            a, b, kind = ranges.primary
            a, b = max(a, start), min(b, stop)
            if b > a:
                self.fill(p, a, b, theme.kind_color(kind, 1.1))
        if ranges.marked:
            sa, sb = ranges.selection()
            hl = QColor(colours.highlight)
            hl.setAlpha(55 if ranges.selection_is_node() else 110)
            self.fill(p, max(sa, start), min(sb, stop), hl)
        return bad

    def _paint_text(self, p: QPainter, start: int, stop: int, data: bytes,
                    bad: Optional[bytearray], colours: Colours) -> None:
        """Each row's offset and bytes (a short read leaves its rows' bytes blank)."""
        lay = self.layout
        bpr = lay.bpr
        off_c = QColor(colours.dim)
        base_y = lay.header_h + lay.ascent + 1
        for r in range((stop - start + bpr - 1) // bpr):
            y = base_y + r * lay.lh
            p.setPen(off_c)
            self.offsets.paint_row(p, y, start + r * bpr)
            chunk = data[r * bpr:(r + 1) * bpr]
            for j, k, cls in runs(chunk, bad, r * bpr):
                p.setPen(colours.error if cls == BAD else colours.dim if cls == ZERO else colours.text)
                seg = chunk[j:k]
                self.hex.paint_run(p, y, j, seg)
                self.text.paint_run(p, y, j, seg)

"""The hex view's layout, without Qt: rows of bytes and where each byte is painted.

Like Okteta's table layout, it turns offsets into rows and columns and those into pixels
(and back), from three numbers the widget measures on its font: a character's width, a
line's height and the text's ascent. Offsets are Python ints (64-bit); a scroll bar counts
int32, so `bar_*` scale it when a file has more rows than it can count."""
from __future__ import annotations

from typing import Iterator, Optional, Tuple

SCROLL_LIMIT = 1 << 30
GUTTER_LEVELS = 6                  # nested node ranges shown as bars left of the offsets
ROW_CHOICES = (8, 16, 32)          # what the user can pick; 0 = Auto
AUTO_CHOICES = (8, 16, 32, 64)     # what Auto fits to the width
GROUP = 8                          # hex bytes are grouped by 8 (a wider gap between groups)

# Cursor moves, each a key of the view (the widget maps keys to these names).
MOVES = ("left", "right", "up", "down", "page-up", "page-down", "row-start", "row-end",
         "start", "end")


class HexLayout:
    """Rows of `bpr` bytes from offset 0, scrolled to `top`, in a viewport `height` pixels
    high. Columns left to right: the node gutter, the offset, the hex bytes, the text."""

    def __init__(self, char_width: float, line_height: int, ascent: float,
                 bytes_per_row: int = 0) -> None:
        self.cw = char_width
        self.lh = line_height
        self.ascent = ascent
        self.bpr_mode = bytes_per_row      # 0: as many as fit (Auto)
        self.bpr = bytes_per_row or 16
        self.size = 0
        self.top = 0                       # first visible row (Python int)
        self.height = 0                    # of the viewport, header included
        self._place_columns()

    # ---- columns -----------------------------------------------------------------------
    def set_size(self, size: int) -> None:
        """A new source: `size` bytes, shown from the top."""
        self.size = size
        self.top = 0
        self._place_columns()

    def _place_columns(self) -> None:
        cw = self.cw
        self.digits = max(8, len(f"{max(self.size - 1, 0):X}"))
        self.x_gutter = 4
        self.x_off = self.x_gutter + GUTTER_LEVELS * 4 + 6
        self.x_hex = self.x_off + (self.digits + 2) * cw
        self.x_asc = self.x_hex + (self.bpr * 3 + (self.bpr // GROUP - 1) + 2) * cw
        self.header_h = self.lh + 4
        self.total_w = self.x_asc + (self.bpr + 2) * cw

    def width_for(self, bpr: int) -> float:
        """Width of the painted rows at `bpr` bytes per row."""
        x_asc = self.x_hex + (bpr * 3 + (bpr // GROUP - 1) + 2) * self.cw
        return x_asc + (bpr + 2) * self.cw

    def fitting_bpr(self, width: float) -> int:
        """The bytes per row for a viewport `width` wide: the fixed choice, or (Auto) the
        most of `AUTO_CHOICES` that fit, at least the first."""
        if self.bpr_mode:
            return self.bpr_mode
        bpr = AUTO_CHOICES[0]
        for n in AUTO_CHOICES:
            if self.width_for(n) <= width:
                bpr = n
        return bpr

    def set_bpr(self, bpr: int, keep: int) -> bool:
        """Rows of `bpr` bytes with offset `keep`'s row at the top (the view then scrolls it
        into place); False when `bpr` is already the layout's."""
        if bpr == self.bpr:
            return False
        self.bpr = bpr
        self._place_columns()
        self.top = min(keep // bpr, self.max_top)
        return True

    def hex_x(self, col: int) -> float:
        return self.x_hex + (col * 3 + col // GROUP) * self.cw

    def asc_x(self, col: int) -> float:
        return self.x_asc + col * self.cw

    def row_y(self, row: int) -> float:
        """Top of `row` (absolute) in the viewport."""
        return self.header_h + (row - self.top) * self.lh

    # ---- rows --------------------------------------------------------------------------
    @property
    def total_rows(self) -> int:
        return max(1, (self.size + self.bpr - 1) // self.bpr)

    @property
    def visible_rows(self) -> int:
        return max(1, (self.height - self.header_h) // self.lh)

    @property
    def max_top(self) -> int:
        return max(0, self.total_rows - self.visible_rows)

    def set_top(self, row: int) -> None:
        self.top = max(0, min(int(row), self.max_top))

    def clamp_top(self) -> None:
        self.top = min(self.top, self.max_top)

    def top_showing(self, offset: int, center: bool = False) -> Optional[int]:
        """The top row that brings `offset` into view (a third down when `center`), None
        when it is in view already."""
        row = offset // self.bpr
        vis = self.visible_rows
        if center:
            if not (self.top <= row < self.top + vis):
                return row - vis // 3
        elif row < self.top:
            return row
        elif row >= self.top + vis:
            return row - vis + 1
        return None

    def window(self) -> Tuple[int, int]:
        """[start, stop) of the bytes on screen (a partly shown last row included)."""
        start = self.top * self.bpr
        return start, min(self.size, start + (self.visible_rows + 1) * self.bpr)

    def spans(self, a: int, b: int) -> Iterator[Tuple[int, int, int]]:
        """(row, first column, last column) of bytes [a, b) in the rows on screen."""
        if b <= a:
            return
        bpr, first = self.bpr, self.top
        ra, rb = a // bpr, (b - 1) // bpr
        for row in range(max(ra, first), min(rb, first + self.visible_rows + 1) + 1):
            yield (row, a - row * bpr if row == ra else 0,
                   (b - 1) - row * bpr if row == rb else bpr - 1)

    # ---- hit testing and moves ---------------------------------------------------------
    def offset_at(self, x: float, y: float) -> Optional[int]:
        """The byte painted at (x, y) or the nearest in its row; None in the header or when
        there are no bytes."""
        if y < self.header_h or self.size == 0:
            return None
        row = self.top + int((y - self.header_h) // self.lh)
        if x >= self.x_asc - self.cw:
            col = int((x - self.x_asc) // self.cw)
        elif x >= self.x_hex - self.cw:
            rel = (x - self.x_hex) / self.cw
            group = int(rel // (GROUP * 3 + 1))  # 8 bytes = 24 chars + 1 gap
            within = rel - group * (GROUP * 3 + 1)
            col = group * GROUP + int(min(within, GROUP * 3 - 0.01) // 3)
        else:
            col = 0
        col = max(0, min(col, self.bpr - 1))
        return max(0, min(row * self.bpr + col, self.size - 1))

    def moved(self, cursor: int, move: str) -> int:
        """Where `move` (one of `MOVES`) takes the cursor; not clamped to the bytes."""
        bpr, page = self.bpr, self.visible_rows * self.bpr
        return {
            "left": cursor - 1, "right": cursor + 1, "up": cursor - bpr, "down": cursor + bpr,
            "page-up": cursor - page, "page-down": cursor + page,
            "row-start": cursor - cursor % bpr, "row-end": cursor - cursor % bpr + bpr - 1,
            "start": 0, "end": self.size - 1,
        }[move]

    # ---- scroll bar --------------------------------------------------------------------
    def bar_range(self) -> Tuple[int, int, int]:
        """(maximum, page step, value) of an int32 scroll bar showing `top`."""
        mt = self.max_top
        if mt <= SCROLL_LIMIT:
            return mt, self.visible_rows, self.top
        return SCROLL_LIMIT, max(1, self.visible_rows * SCROLL_LIMIT // mt), self.top * SCROLL_LIMIT // mt

    def top_at_bar(self, value: int) -> int:
        mt = self.max_top
        return value if mt <= SCROLL_LIMIT else value * mt // SCROLL_LIMIT

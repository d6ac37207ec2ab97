"""The hex view's models without Qt: the layout (rows, columns, pixels, the scroll bar) and
the ranges (cursor, selection, marks). A character 10 px wide and lines 20 px high make the
pixel figures easy to check by hand."""
from __future__ import annotations

import subprocess
import sys

from arrayscope.explorer.hexlayout import SCROLL_LIMIT, HexLayout
from arrayscope.explorer.hexranges import HexRanges


def layout(size: int, bpr: int = 16, height: int = 24 + 10 * 20) -> HexLayout:
    lay = HexLayout(10.0, 20, 15.0, bpr)
    lay.set_size(size)
    lay.height = height          # a 24 px header and ten rows
    return lay


def test_models_need_no_qt():
    code = ("import sys, arrayscope.explorer.hexlayout, arrayscope.explorer.hexranges;"
            "print(any(m.startswith('PySide6') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_columns_and_pixels():
    lay = layout(0x1000)
    assert (lay.digits, lay.x_off, lay.header_h) == (8, 34, 24)
    assert lay.x_hex == 34 + 10 * 10                     # 8 digits and 2 spaces
    # 16 bytes: 3 characters each, one more between the two groups of 8, 2 before the text
    assert lay.x_asc == lay.x_hex + (48 + 1 + 2) * 10
    assert lay.total_w == lay.width_for(16) == lay.x_asc + 18 * 10
    assert lay.hex_x(0) == lay.x_hex and lay.hex_x(8) == lay.x_hex + 25 * 10
    assert lay.asc_x(3) == lay.x_asc + 30
    # more than 8 hex digits widen the offset column
    big = layout(1 << 40)
    assert big.digits == 10 and big.x_hex == lay.x_hex + 20


def test_rows_window_and_scrolling():
    lay = layout(1000)
    assert (lay.total_rows, lay.visible_rows, lay.max_top) == (63, 10, 53)
    assert lay.window() == (0, 176)                      # ten rows and the partly shown next
    lay.set_top(60)
    assert lay.top == 53 and lay.window() == (848, 1000)
    lay.set_top(-4)
    assert lay.top == 0
    assert lay.top_showing(5 * 16) is None               # in view
    assert lay.top_showing(12 * 16) == 3                 # scrolls down: its row last
    assert lay.top_showing(40 * 16, center=True) == 37   # a third down
    lay.set_top(20)
    assert lay.top_showing(2 * 16) == 2
    assert layout(0).total_rows == 1 and layout(0).window() == (0, 0)


def test_fitting_and_changing_bytes_per_row():
    lay = layout(5000, bpr=0)
    assert lay.bpr == 16 and lay.fitting_bpr(lay.width_for(32)) == 32
    assert lay.fitting_bpr(lay.width_for(64) + 1) == 64
    assert lay.fitting_bpr(10) == 8                      # never fewer than 8
    fixed = layout(5000, bpr=8)
    assert fixed.fitting_bpr(10_000) == 8
    assert not lay.set_bpr(16, keep=0)
    assert lay.set_bpr(32, keep=4000) and lay.top == 125 and lay.x_asc > layout(5000).x_asc
    assert lay.set_bpr(8, keep=4999) and lay.top == lay.max_top == 615


def test_offset_at_and_spans():
    lay = layout(1000)
    y_row2 = lay.header_h + 2 * lay.lh + 5
    assert lay.offset_at(0, 5) is None                   # the header
    assert lay.offset_at(lay.hex_x(3) + 12, y_row2) == 35
    assert lay.offset_at(lay.hex_x(8) - 5, y_row2) == 39   # the gap between groups: the left byte
    assert lay.offset_at(lay.asc_x(9) + 1, y_row2) == 41
    assert lay.offset_at(0, y_row2) == 32                # the offset column: the row's first
    assert lay.offset_at(10_000, y_row2) == 47           # right of the text: the row's last
    assert lay.offset_at(lay.hex_x(0), 10_000) == 999    # below the bytes: the last
    assert layout(0).offset_at(lay.x_hex, y_row2) is None
    assert list(lay.spans(20, 50)) == [(1, 4, 15), (2, 0, 15), (3, 0, 1)]
    assert list(lay.spans(5, 5)) == []
    lay.set_top(2)
    assert list(lay.spans(0, 40)) == [(2, 0, 7)]         # rows above the screen skipped
    assert list(lay.spans(0, 1000))[-1][0] == 13         # to a row past the screen (clipped)
    assert lay.row_y(2) == lay.header_h and lay.row_y(3) == lay.header_h + 20


def test_moves():
    lay = layout(1000)
    assert [lay.moved(37, m) for m in ("left", "right", "up", "down", "page-up", "page-down",
                                       "row-start", "row-end", "start", "end")] == [
        36, 38, 21, 53, 37 - 160, 37 + 160, 32, 47, 0, 999]


def test_scroll_bar_beyond_int32():
    lay = layout(1000)
    assert lay.bar_range() == (53, 10, 0)
    big = layout(1 << 40)
    mt = big.max_top
    assert mt > SCROLL_LIMIT
    big.set_top(mt // 2)
    maximum, page, value = big.bar_range()
    assert maximum == SCROLL_LIMIT and page == 1 and value == mt // 2 * SCROLL_LIMIT // mt
    assert big.top_at_bar(SCROLL_LIMIT) == mt and big.top_at_bar(0) == 0
    assert lay.top_at_bar(7) == 7


def test_selection_cursor_and_drag():
    r = HexRanges(100)
    assert r.selection() == (0, 1) and not r.marked
    assert r.set_cursor(500) and r.cursor == 99 and r.selection() == (99, 100)
    assert r.set_cursor(10, extend=True) and r.selection() == (10, 100) and r.marked
    assert r.set_cursor(20, extend=True) and r.selection() == (20, 100)
    assert r.set_cursor(-3) and r.selection() == (0, 1) and not r.marked
    assert r.select_range(40, 60) and (r.cursor, r.selection()) == (40, (40, 60))
    assert r.select_range(40, 41) and not r.marked and r.selection() == (40, 41)
    assert r.select_range(90, 500) and r.selection() == (90, 100)
    r.set_cursor(5)
    assert not r.drag_to(5, 5)                           # not moved: nothing to report
    assert r.drag_to(9, 5) and r.selection() == (5, 10)
    assert r.drag_to(2, 5) and r.selection() == (2, 6)
    assert r.select_all() and r.selection() == (0, 100)
    empty = HexRanges(0)
    assert empty.selection() == (0, 0)
    assert not (empty.set_cursor(3) or empty.select_range(0, 4) or empty.select_all())


def test_marked_ranges():
    r = HexRanges(100)
    r.set_marks([(50, 60, "warning"), (10, 20, "error")])
    assert r.marks == [(10, 20, "error"), (50, 60, "warning")]
    r.set_bookmarks([(30, 31, "#ff0000"), (5, 9, "#00ff00")])
    assert r.bookmarks[0] == (5, 9, "#00ff00")
    ancestors = [(0, 100, f"level{i}") for i in range(8)]
    r.set_node_ranges((40, 48, "tile"), ancestors)
    assert [k for _a, _b, k in r.gutter()] == [f"level{i}" for i in range(2, 8)] + ["tile"]
    assert not r.selection_is_node()
    r.select_range(40, 48)
    assert r.selection_is_node()
    r.reset(10)
    assert (r.cursor, r.anchor, r.primary, r.ancestors) == (0, None, None, [])
    assert r.marks and r.bookmarks                       # their owners replace them

"""View options (pytest-qt, offscreen): bytes per row Auto / 8 / 16 / 32 (Auto fits the
width), the overview bar (entropy per block, findings, click scrolls), the theme switch and
the colour legend; neighbouring fields get clearly different colours."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from arrayscope.explorer import theme  # noqa: E402
from arrayscope.explorer.entropy import byte_entropy, entropy_profile  # noqa: E402
from arrayscope.formats.core.source import BytesSource  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS


def _blob(tmp_path):
    path = tmp_path / "blob.bin"
    zeros = bytes(1 << 20)
    noise = os.urandom(1 << 20)
    path.write_bytes(zeros + noise)
    return str(path)


def test_bytes_per_row_and_overview(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(_blob(tmp_path), sync=True)
    view = win.tabs.current_view()
    vo = win.view_options
    # Auto: 32 at this width, 64 on a wide screen, 8 in a narrow one
    view.resize(1400, 500)
    assert view.bpr == 32 and view.table_layout.bpr_mode == 0
    view.resize(2400, 500)
    assert view.bpr == 64
    view.resize(520, 500)
    assert view.bpr == 8
    view.resize(1400, 500)
    view.set_cursor(1000)
    for mode in (8, 16, 32):
        vo.row_actions[mode].trigger()
        assert view.bpr == mode
        assert view.top_row <= 1000 // mode < view.top_row + view.visible_rows   # cursor kept
    assert int(win.settings.value("view/bytes_per_row")) == 32
    vo.row_actions[0].trigger()
    assert view.bpr == 32
    # the overview: entropy of the zero half low, of the random half high
    bar = view.overview
    if not bar.profile:
        with qtbot.waitSignal(bar.ready, timeout=WAIT_MS):
            pass
    prof = bar.profile
    half = len(prof) // 2
    assert max(prof[:half]) == 0.0 and min(prof[half:]) > 7.0
    assert bar.isVisibleTo(win) and bar.width() > 0
    assert bar.geometry().left() >= view.viewport().geometry().right()
    # a click in the bar's lower quarter scrolls there
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=QPoint(5, bar.height() * 3 // 4))
    mid = view.top_row * view.bpr + view.visible_rows * view.bpr // 2
    assert abs(mid - view.size_bytes * 3 // 4) < view.size_bytes // bar.height() + view.bpr * 2
    # turning it off gives the width back to the bytes
    vo.overview_action.setChecked(False)
    assert not bar.isVisibleTo(win) and view.viewportMargins().right() == 0
    vo.overview_action.setChecked(True)
    assert bar.isVisibleTo(win)


def test_entropy():
    assert byte_entropy(bytes(100)) == 0.0
    assert abs(byte_entropy(bytes(range(256)) * 4) - 8.0) < 1e-9
    src = BytesSource(bytes(1000) + bytes(range(256)) * 4, "mix")
    prof = entropy_profile(src, 2, sample=500)
    assert prof[0] == 0.0 and prof[1] > 7.5


def test_theme_switch_and_legend(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    vo = win.view_options
    try:
        vo.theme_actions["Dark"].trigger()
        assert theme.is_dark()
        assert win.settings.value("view/theme") == "Dark"
        vo.theme_actions["Light"].trigger()
        assert not theme.is_dark()
    finally:
        vo.theme_actions["System"].trigger()
    assert QApplication.instance().palette() is not None
    vo.d_legend.toggleViewAction().trigger()
    assert vo.d_legend.isVisibleTo(win)
    text = " ".join(w.text() for w in vo.legend.widget().findChildren(type(win.st_value)))
    for word in ("payload", "chunk", "error", "bookmark", "selection"):
        assert word in text


def test_neighbouring_fields_distinct():
    for kind in ("field", "struct", "payload"):
        a, b = theme.kind_color(kind, 0.8), theme.kind_color(kind, 0.8, alt=True)
        assert abs(a.hslHue() - b.hslHue()) >= 20 or abs(a.lightness() - b.lightness()) >= 30

"""The window on the screen (pytest-qt, offscreen): `arrayscope --sample` on a 1024×700
screen opens inside its available area, frame included, with the bytes, the tree and the
inspector on it; a large screen is used (90% of it, centred); a saved geometry from a
larger screen is clamped; a long file path in the status bar is elided; the Health dock
keeps the short layout's bottom height. The offscreen platform has one 800×800 screen: its
available area is patched (`QScreen.availableGeometry`, which the window asks)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPoint, QRect, QSettings, QSize  # noqa: E402
from PySide6.QtGui import QScreen  # noqa: E402
from PySide6.QtWidgets import QLabel, QWidget  # noqa: E402

from arrayscope.explorer.mainwindow import MainWindow  # noqa: E402
from arrayscope.explorer.startpage import default_sample  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS


def _screen(monkeypatch, avail: QRect) -> None:
    monkeypatch.setattr(QScreen, "availableGeometry", lambda self: QRect(avail))


def _window(qtbot, tmp_path, restore: bool = False) -> MainWindow:
    """The window as `arrayscope` makes it: sized by itself (no resize by the test)."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings=settings, restore=restore)
    w.quiet = True
    qtbot.addWidget(w)
    return w


def _on_screen(widget: QWidget) -> QRect:
    return QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())


def _shown(qtbot, win: MainWindow, avail: QRect) -> None:
    """Shown, and framed (the offscreen platform's frame comes with the first show)."""
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(lambda: avail.contains(win.frameGeometry()), timeout=WAIT_MS)


def test_sizes_for_screens():
    from arrayscope.explorer.screenfit import fit_rect, preferred_size

    assert preferred_size(QSize(1024, 700)) == QSize(1024, 700)      # all of a small screen
    assert preferred_size(QSize(1600, 1000)) == QSize(1500, 920)
    assert preferred_size(QSize(1920, 1080)) == QSize(1728, 972)
    assert preferred_size(QSize(2560, 1440)) == QSize(2304, 1296)
    avail = QRect(0, 24, 1024, 676)                                  # a panel on top
    assert fit_rect(QRect(0, 0, 1500, 920), avail) == avail
    assert fit_rect(QRect(500, 400, 600, 400), avail) == QRect(424, 300, 600, 400)
    assert fit_rect(QRect(-50, 30, 600, 400), avail) == QRect(0, 30, 600, 400)
    assert fit_rect(QRect(10, 30, 600, 400), avail) == QRect(10, 30, 600, 400)


def test_sample_opens_inside_a_1024_by_700_screen(qtbot, tmp_path, monkeypatch):
    avail = QRect(0, 0, 1024, 700)
    _screen(monkeypatch, avail)
    win = _window(qtbot, tmp_path)
    assert win.frameGeometry().width() <= 1024 and win.frameGeometry().height() <= 700
    _shown(qtbot, win, avail)
    assert win.open_path(default_sample(), sync=True)
    qtbot.wait(300)                                  # the docks shared (debounced)
    frame = win.frameGeometry()
    assert avail.contains(frame), frame
    assert frame.width() >= 1000 and frame.height() >= 680    # and uses the screen
    hint = win.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 700
    for dock in (win.d_tree, win.d_inspector, win.d_pipeline):
        assert dock.isVisible()
        assert win.rect().contains(dock.geometry()), (dock.objectName(), dock.geometry())
        assert avail.contains(_on_screen(dock)), dock.objectName()
        assert dock.width() >= 180
    view = win.tabs.current_view()
    assert view is not None and avail.contains(_on_screen(view))
    assert view.width() >= view.minimum_width() - 1 and view.height() >= 300


@pytest.mark.parametrize("w,h", [(1920, 1080), (2560, 1440)])
def test_large_screen_used_and_centred(qtbot, tmp_path, monkeypatch, w, h):
    avail = QRect(0, 0, w, h)
    _screen(monkeypatch, avail)
    win = _window(qtbot, tmp_path)
    _shown(qtbot, win, avail)
    frame = win.frameGeometry()
    assert frame.width() >= 0.85 * w and frame.height() >= 0.85 * h, frame
    assert (frame.center() - avail.center()).manhattanLength() <= 8


def test_saved_geometry_clamped_to_a_smaller_screen(qtbot, tmp_path, monkeypatch):
    first = _window(qtbot, tmp_path)
    first.setGeometry(QRect(40, 60, 760, 720))      # saved on a larger screen
    first.settings.setValue("geometry", first.saveGeometry())
    avail = QRect(0, 24, 640, 456)                  # now: 640×480, a panel on top
    _screen(monkeypatch, avail)
    win = _window(qtbot, tmp_path, restore=True)
    assert avail.contains(win.frameGeometry()), win.frameGeometry()
    _shown(qtbot, win, avail)
    assert avail.contains(win.frameGeometry())
    assert win.frameGeometry().width() >= 600 and win.frameGeometry().height() >= 420


def test_saved_geometry_that_fits_is_kept(qtbot, tmp_path, monkeypatch):
    """The user's size, not the preferred one (fits Qt's own check on the 800×800 screen too)."""
    _screen(monkeypatch, QRect(0, 0, 1920, 1080))
    first = _window(qtbot, tmp_path)
    first.setGeometry(QRect(60, 80, 700, 500))
    first.settings.setValue("geometry", first.saveGeometry())
    win = _window(qtbot, tmp_path, restore=True)
    assert win.geometry() == QRect(60, 80, 700, 500)


def test_long_source_path_elided_in_the_status_bar(qtbot, tmp_path, monkeypatch):
    avail = QRect(0, 0, 1024, 700)
    _screen(monkeypatch, avail)
    win = _window(qtbot, tmp_path)
    _shown(qtbot, win, avail)
    assert win.open_path(default_sample(), sync=True)
    files = [n for n in win.session.document.root.walk() if n.kind == "file" and n.size > 0]
    node = max(files, key=lambda n: len(n.source.name))
    win.select_node(node)
    label = win.st_source
    qtbot.waitUntil(lambda: label.text() == node.source.name, timeout=WAIT_MS)
    qtbot.wait(100)
    shown = QLabel.text(label)                      # what is painted
    assert "…" in shown and len(shown) < len(node.source.name)
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
    assert label.toolTip() == node.source.name
    bar = win.statusBar()
    for w in (win.st_value, label, win.st_offset, win.st_sel):
        assert bar.rect().contains(w.geometry()), w.geometry()
    assert win.st_value.width() >= 150               # the message keeps a few words


def test_health_keeps_the_bytes_tall_on_a_short_window(qtbot, tmp_path):
    """At 1024×700 the Health dock, shown when its results come, does not take the bottom
    docks to 400 px (the bytes had a third of the window)."""
    win = open_window(qtbot, tmp_path)
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: win.height() == 700, timeout=WAIT_MS)
    assert win.open_path(default_sample(), sync=True)
    qtbot.waitUntil(lambda: win.d_health.isVisibleTo(win), timeout=WAIT_MS)
    qtbot.wait(300)
    view = win.tabs.current_view()
    assert view.height() >= win.height() // 2, view.height()

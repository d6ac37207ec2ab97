"""Test helper: the main window as the GUI tests use it (offscreen, private settings)."""
from __future__ import annotations


def open_window(qtbot, tmp_path):
    """A shown MainWindow with settings in `tmp_path`, nothing restored and no message boxes."""
    from PySide6.QtCore import QSettings

    from arrayscope.explorer.mainwindow import MainWindow

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    w = MainWindow(settings=settings, restore=False)
    w.quiet = True
    w.resize(1500, 950)
    qtbot.addWidget(w)
    w.show()
    return w

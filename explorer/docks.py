"""The bottom docks the habits add (Bookmarks, Find All): one way to place them."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget


def bottom_dock(window: QMainWindow, title: str, name: str, widget: QWidget) -> QDockWidget:
    """A dock at the bottom, tabbed behind Diagnostics (which stays in front), hidden until
    asked for."""
    dock = QDockWidget(title, window)
    dock.setObjectName(name)
    dock.setWidget(widget)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    diag = getattr(window, "d_diag", None)
    if diag is not None:
        window.tabifyDockWidget(diag, dock)
        diag.raise_()
    dock.hide()
    return dock

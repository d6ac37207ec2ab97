"""Finding the window's menus by title, so a feature module can add its actions."""
from __future__ import annotations

from PySide6.QtWidgets import QMainWindow, QMenu


def menu(window: QMainWindow, title: str) -> QMenu:
    """The menu bar's menu titled `title` ("&Edit"); made (before Help) when missing."""
    bar = window.menuBar()
    help_action = None
    for a in bar.actions():
        m = a.menu()
        if isinstance(m, QMenu) and a.text() == title:
            return m
        if a.text() == "&Help":
            help_action = a
    m = QMenu(title, window)
    if help_action is not None:
        bar.insertMenu(help_action, m)
    else:
        bar.addMenu(m)
    return m

"""Finding the window's menus by title, so a feature module can add its actions."""
from __future__ import annotations

from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu


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


def list_docks(window: QMainWindow) -> None:
    """Every dock of the window in View, so a closed one can be opened again: those the
    View menu does not list yet go after the last it lists (before its first separator)."""
    view = menu(window, "&View")
    have = set(view.actions())
    before = next((a for a in view.actions() if a.isSeparator()), None)
    for d in window.findChildren(QDockWidget):
        a = d.toggleViewAction()
        if a in have:
            continue
        if before is not None:
            view.insertAction(before, a)
        else:
            view.addAction(a)

"""The GUI entry point (`explorer/cli.py` calls `run_gui(args)`)."""
from __future__ import annotations

import os
import sys
from typing import Optional


def _app(offscreen: bool):
    if offscreen and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
            Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
        app = QApplication(sys.argv[:1])
        app.setApplicationName("arrayscope")
        app.setOrganizationName("arrayscope")
        app.setApplicationDisplayName("arrayscope")
    from . import theme

    app.setWindowIcon(theme.app_icon())
    return app


def _err(msg: str) -> None:
    print(f"arrayscope: {msg}", file=sys.stderr)


def run_gui(args) -> int:
    from arrayscope.formats.context import load_key

    try:
        key = load_key(getattr(args, "key_file", None))
    except (OSError, ValueError) as e:
        _err(f"key: {e}")
        return 2
    path = args.path
    from .mainwindow import MainWindow, default_sample

    if getattr(args, "sample", False) and not path:
        path = default_sample()
    if args.screenshot:
        return screenshot(path, args.screenshot, getattr(args, "select", None), key)
    app = _app(offscreen=False)
    win = MainWindow(key=key)
    win.show()
    if path:
        if not os.path.exists(path):
            _err(f"{path}: no such file or directory")
            return 2
        win.open_path(path, select=getattr(args, "select", None))
    return app.exec()


def screenshot(path: Optional[str], out: str, select: Optional[str], key: Optional[bytes],
               size=(1600, 1000)) -> int:
    """Render the window offscreen on `path` (optionally with a node selected), save, exit."""
    app = _app(offscreen=True)
    from PySide6.QtCore import QSettings, QTemporaryDir

    from .mainwindow import MainWindow
    from .nodepath import resolve

    tmp = QTemporaryDir()
    settings = QSettings(os.path.join(tmp.path(), "s.ini"), QSettings.IniFormat)
    win = MainWindow(settings=settings, key=key, restore=False)
    win.quiet = True
    win.resize(*size)
    if path:
        if not os.path.exists(path):
            _err(f"{path}: no such file or directory")
            return 2
        if not win.open_path(path, sync=True):
            _err(f"cannot open {path}")
            return 2
        if select:
            node, msg = resolve(win.session.root, select)
            if node is None:
                _err(msg)
                return 2
            win.select_node(node)
    win.show()
    if path:
        win.verifier.wait(30000)  # let the verify findings reach the diagnostics panel
    for _ in range(5):
        app.processEvents()
    img = win.grab()
    if not img.save(out):
        _err(f"cannot write {out}")
        return 2
    print(out)
    win.close()
    return 0

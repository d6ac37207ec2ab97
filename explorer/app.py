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

    QApplication.setWindowIcon(theme.app_icon())  # static: the running application's icon
    return app


def _err(msg: str) -> None:
    print(f"arrayscope: {msg}", file=sys.stderr)


def display_problem() -> Optional[str]:
    """Why a window cannot open here, said before Qt aborts with its own terse message.

    Qt's xcb plugin aborts the process when there is no X display, or when a system library
    it needs is missing (explorer/xcbcheck.py names every one)."""
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None  # offscreen, wayland, windows, cocoa...: Qt reports its own problems
    if not sys.platform.startswith("linux"):
        return None
    if not platform and os.environ.get("WAYLAND_DISPLAY"):
        return None
    if not os.environ.get("DISPLAY"):
        return ("no display: the window needs an X or Wayland session (DISPLAY is not set). "
                "Without one, use `arrayscope PATH --screenshot OUT.png`, or the display-free "
                "subcommands `dump`, `values`, `verify` (see `arrayscope --help`).")
    from . import xcbcheck

    return xcbcheck.problem()


ENDING_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")   # Ctrl+C, kill, a closed terminal
SIGNAL_POLL_MS = 200


def end_on_signals(app, win):
    """Ctrl+C, SIGTERM and a closed terminal close the window as its own Close does (the
    background verify is killed, the layout saved) and end the program with 128 + the
    signal's number, without a traceback. A signal this process was started ignoring
    (`nohup`, a background job of a script) stays ignored, as the starter asked. Python
    runs a signal handler only between its own bytecodes, so a timer lets it run while Qt's
    loop waits; the timer is returned for the caller to keep."""
    import signal

    from PySide6.QtCore import QTimer

    def end(signum, _frame) -> None:
        win.close()
        app.exit(128 + signum)

    for name in ENDING_SIGNALS:
        sig = getattr(signal, name, None)   # Windows has no SIGHUP
        if sig is not None and signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, end)
    timer = QTimer()
    timer.timeout.connect(lambda: None)
    timer.start(SIGNAL_POLL_MS)
    return timer


def run_gui(args) -> int:
    from arrayscope.formats.core.context import load_key
    from arrayscope.formats.core.remote import is_url

    try:
        key = load_key(getattr(args, "key_file", None))
    except (OSError, ValueError) as e:
        _err(f"key: {e}")
        return 2
    path = args.path
    from .mainwindow import MainWindow
    from .startpage import default_sample

    if getattr(args, "sample", False) and not path:
        path = default_sample()
    if args.screenshot:
        return screenshot(path, args.screenshot, getattr(args, "select", None), key)
    problem = display_problem()
    if problem is not None:
        _err(problem)
        return 2
    app = _app(offscreen=False)
    win = MainWindow(key=key)
    ender = end_on_signals(app, win)   # noqa: F841 - kept alive while the window runs
    win.show()
    if path:
        if not is_url(path) and not os.path.exists(path):
            _err(f"{path}: no such file or directory")
            return 2
        win.open_path(path, select=getattr(args, "select", None))
    code = app.exec()
    # Quit now: a worker thread still reading (a member being opened) is not waited for, its
    # result has nobody to go to; the window saved its settings and killed the verify and
    # health processes when it closed (MainWindow.closeEvent, healthdock.install).
    win.settings.sync()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def screenshot(path: Optional[str], out: str, select: Optional[str], key: Optional[bytes],
               size=(1600, 1000)) -> int:
    """Render the window offscreen on `path` (optionally with a node selected), save, exit.

    The window's settings go to a private scratch folder, removed before returning (the
    window is destroyed first: QSettings writes its file when it is destroyed)."""
    import shutil
    import tempfile

    scratch = tempfile.mkdtemp(prefix="arrayscope-screenshot-")
    previous = _quiet_offscreen_plugin()
    try:
        return _screenshot(path, out, select, key, size, scratch)
    finally:
        _restore_messages(previous)
        shutil.rmtree(scratch, ignore_errors=True)


# what Qt's offscreen plugin says each time a window's size limits change (it has no window
# manager to tell): nothing a user of --screenshot can act on
OFFSCREEN_NOISE = ("This plugin does not support propagateSizeHints()",)


def _quiet_offscreen_plugin():
    """Qt's messages to stderr as before, less OFFSCREEN_NOISE; returns the handler replaced."""
    from PySide6.QtCore import qInstallMessageHandler

    def handler(_mode, _context, message: str) -> None:
        if message not in OFFSCREEN_NOISE:
            print(message, file=sys.stderr)

    return qInstallMessageHandler(handler)


def _restore_messages(previous) -> None:
    from PySide6.QtCore import qInstallMessageHandler

    qInstallMessageHandler(previous)   # None: Qt's own handler again


def _screenshot(path: Optional[str], out: str, select: Optional[str], key: Optional[bytes],
                size, scratch: str) -> int:
    app = _app(offscreen=True)
    from PySide6.QtCore import QCoreApplication, QEvent, QSettings

    from arrayscope.formats.core.remote import is_url

    from .mainwindow import MainWindow
    from .nodepath import resolve

    settings = QSettings(os.path.join(scratch, "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, key=key, restore=False)
    win.quiet = True
    win.resize(*size)
    try:
        if path:
            if not is_url(path) and not os.path.exists(path):
                _err(f"{path}: no such file or directory")
                return 2
            if not win.open_path(path, sync=True):
                _err(f"cannot open {path}: {getattr(win, 'open_error', '') or 'see above'}")
                return 2
            if select and win.session is not None and win.session.root is not None:
                node, msg = resolve(win.session.root, select)
                if node is None:
                    _err(msg)
                    return 2
                win.select_node(node)
        win.show()
        # the picture is of the opened window: the background verify (a process of its own)
        # is cancelled, not waited for (a large array's verify can take minutes)
        win.verifier.cancel()
        health = getattr(win, "health_view", None)   # installed by habits.FEATURES
        if health is not None:
            health.runner.cancel()   # the same for the health (its worker process)
        for _ in range(5):
            app.processEvents()
        img = win.grab()
        if not img.save(out):
            _err(f"cannot write {out}")
            return 2
        print(out)
        return 0
    finally:
        win.close()
        win.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        settings.sync()

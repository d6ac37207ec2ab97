"""One measurement in a fresh process, for test_bench_scale.py (peak RSS is per process):

    python -m tests.benchmarks.scale_probe window PATH   # open in the window: first paint
    python -m tests.benchmarks.scale_probe cli ARGS...   # an `arrayscope` command

Prints one JSON line: {"seconds": ..., "peak_mib": ..., ...}. `window` times from the
`open_path` call (the window's own background open, as a user's open runs) to the first
paint of both the structure tree and a hex view showing the opened document, and reports
the peak resident memory at that moment; then it exits at once (os._exit: the background
verify, if any, is not waited for)."""
from __future__ import annotations

import json
import os
import resource
import sys
import time


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def window(path: str) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import shutil
    import tempfile

    from PySide6.QtCore import QEvent, QObject, QSettings
    from PySide6.QtWidgets import QApplication

    from arrayscope.explorer.hexview import HexView
    from arrayscope.explorer.mainwindow import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    scratch = tempfile.mkdtemp(prefix="arrayscope-probe-")
    settings = QSettings(os.path.join(scratch, "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, restore=False)
    win.quiet = True
    win.resize(1600, 1000)
    win.show()
    app.processEvents()
    painted: dict = {}
    t0 = [0.0]

    class Painted(QObject):
        def eventFilter(self, obj, ev):  # noqa: N802 - Qt's name
            if ev.type() == QEvent.Type.Paint and win.session is not None:
                parent = obj.parent()
                if "tree" not in painted and parent is win.tree.view:
                    painted["tree"] = time.perf_counter() - t0[0]
                elif "hex" not in painted and isinstance(parent, HexView):
                    painted["hex"] = time.perf_counter() - t0[0]
            return False

    spy = Painted()
    app.installEventFilter(spy)
    t0[0] = time.perf_counter()
    win.open_path(path)
    limit = time.perf_counter() + 600
    while len(painted) < 2 and time.perf_counter() < limit:
        app.processEvents()
        time.sleep(0.001)
    nodes = _built_nodes(win.session.root) if win.session is not None else 0
    shutil.rmtree(scratch, ignore_errors=True)
    return {"seconds": max(painted.values()) if len(painted) == 2 else None,
            "tree_s": painted.get("tree"), "hex_s": painted.get("hex"),
            "peak_mib": _peak_mib(), "nodes": nodes}


def _built_nodes(root) -> int:
    """Nodes built so far (lazy and deferred children not counted)."""
    return sum(1 for _ in root.walk()) if root is not None else 0


def cli(args) -> dict:
    from arrayscope.explorer.cli import main

    out = open(os.devnull, "w")
    old = sys.stdout
    sys.stdout = out
    t0 = time.perf_counter()
    try:
        code = main(list(args))
    except SystemExit as e:  # noqa: PERF203
        code = e.code
    finally:
        sys.stdout = old
    return {"seconds": time.perf_counter() - t0, "peak_mib": _peak_mib(), "exit": code}


if __name__ == "__main__":
    what, rest = sys.argv[1], sys.argv[2:]
    result = window(rest[0]) if what == "window" else cli(rest)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)

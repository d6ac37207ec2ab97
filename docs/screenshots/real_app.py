"""Screenshots of the real program (`arrayscope PATH`) on an X server, driven by its widgets:

    python docs/screenshots/real_app.py OUT_DIR [STEP]      (STEP: all, soma or frags)

For each screen size (1024x700, 2560x1440) it starts `Xvfb :N -screen 0 WxHx24` and runs
the program in its own process on that display: `real_app.py --drive STATE OUT SIZE PATH`
builds the QApplication, schedules a driver on its event loop and calls the program's own
entry (`explorer.cli.main([PATH])`: the window, its worker processes and settings as a
user gets them). The driver finds what it needs by widget, not by screen position: it
sizes the window with xdotool, waits for the load and verify, finds the Diagnostics row of
the damaged chunk and clicks its place on screen (xdotool, an X event: the window's own
click handling), waits until that chunk is selected with its pipeline, and captures the
screen with ImageMagick's `import -window root` (what the X server shows).
States: a damaged SOMA experiment (8 bytes flipped inside a zstd frame of ms/RNA/X/data's
a0.tdb) after opening (`soma_open`) and after clicking its Diagnostics row (`soma_chunk`),
and a 1 000-fragment array with `__fragments` expanded (`frags1000`).
Needs Xvfb, xdotool and ImageMagick."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOMA = os.path.join(ROOT, "tests", "data", "soma", "pbmc68k")
SIZES = {"1024x700": (1024, 700), "2560x1440": (2560, 1440)}
STEP_TIMEOUT = 240.0   # s: the most one driven step may wait (a load, verify, a click)


def damaged_soma(dest: str) -> str:
    """A copy of the committed SOMA experiment (tiledbsoma wrote it) with 8 bytes flipped
    inside the first zstd frame of ms/RNA/X/data's first a0.tdb."""
    path = os.path.join(dest, "pbmc68k_damaged")
    shutil.copytree(SOMA, path)
    f = sorted(glob.glob(os.path.join(path, "ms", "RNA", "X", "data", "__fragments", "*",
                                      "a0.tdb")))[0]
    data = bytearray(open(f, "rb").read())
    at = data.index(b"\x28\xb5\x2f\xfd") + 24
    for i in range(at, at + 8):
        data[i] ^= 0xFF
    with open(f, "wb") as out:
        out.write(bytes(data))
    return path


def fragments(dest: str, n: int = 1000) -> str:
    sys.path.insert(0, ROOT)
    from tests.gui.test_window_latency import _fragments
    return _fragments(dest, n)


# ---- inside the program's process: the driver -----------------------------------------
class Driver:
    """Steps run one after another on the program's event loop; each waits (polling) for
    its condition, so nothing depends on how long a load or a verify takes."""

    def __init__(self, state: str, out: str, size: str):
        self.state, self.out, self.size = state, out, size
        self.win = None
        self.steps = [self._find_window, self._sized, self._loaded, self._verified]
        self.steps += ([self._shot("soma_open"), self._click_damaged_row, self._chunk_shown,
                        self._shot("soma_chunk")] if state == "soma" else
                       [self._expand_fragments, self._shot("frags1000")])
        self.steps.append(self._quit)
        self.since = time.monotonic()

    def start(self) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer()
        self.timer.setInterval(200)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        if not self.steps:
            return
        step = self.steps[0]
        try:
            ok = step()
        except Exception as e:  # noqa: BLE001 - a failed step ends the run, said why
            print(f"driver: {getattr(step, '__name__', step)}: {e!r}", file=sys.stderr)
            self.steps = [self._quit]
            return
        if ok:
            self.steps.pop(0)
            self.since = time.monotonic()
        elif time.monotonic() - self.since > STEP_TIMEOUT:
            print(f"driver: gave up at {getattr(step, '__name__', step)}", file=sys.stderr)
            self.steps = [self._quit]

    def xdo(self, *args: str) -> None:
        subprocess.run(["xdotool", *args], check=False, timeout=60)

    # the steps: True when done
    def _find_window(self) -> bool:
        from PySide6.QtWidgets import QApplication

        from arrayscope.explorer.mainwindow import MainWindow

        wins = [w for w in QApplication.topLevelWidgets()
                if isinstance(w, MainWindow) and w.isVisible()]
        if not wins:
            return False
        self.win = wins[0]
        w, h = SIZES[self.size]
        wid = str(int(self.win.winId()))
        self.xdo("windowmove", wid, "0", "0")
        self.xdo("windowsize", wid, str(w), str(h))
        return True

    def _sized(self) -> bool:
        w, h = SIZES[self.size]
        return abs(self.win.width() - w) <= 16 and abs(self.win.height() - h) <= 40

    def _loaded(self) -> bool:
        return self.win.session is not None and not self.win.loader.busy

    def _verified(self) -> bool:
        if self.win.verifier.busy:
            return False
        from arrayscope.explorer.windowfit import share_docks

        share_docks(self.win)   # as a resize does (debounced): the layout for this size
        return True

    def _shot(self, name: str):
        def shot() -> bool:
            from PySide6.QtWidgets import QApplication

            QApplication.processEvents()
            dest = os.path.join(self.out, f"{name}_{self.size}.png")
            subprocess.run(["import", "-window", "root", "-depth", "8", "-colors", "256",
                            dest], check=True, timeout=60)
            print(dest)
            return True
        shot.__name__ = f"shot {name}"
        return shot

    def _damaged_row(self):
        """The Diagnostics row (a proxy index) of the first error with a node in a0.tdb."""
        diag = self.win.diag
        for r in range(diag.proxy.rowCount()):
            row = diag.proxy.data(diag.proxy.index(r, 1), 0x0100)   # Qt.UserRole
            if row is not None and row.status == "error" and row.source.endswith("a0.tdb"):
                return diag.proxy.index(r, 1), row
        return None, None

    def _click_damaged_row(self) -> bool:
        idx, row = self._damaged_row()
        if idx is None:
            return False
        self.finding = row
        self.win.d_diag.show()
        self.win.d_diag.raise_()
        view = self.win.diag.view
        view.scrollTo(idx)
        rect = view.visualRect(idx)
        at = view.viewport().mapToGlobal(rect.center())
        self.xdo("mousemove", "--sync", str(at.x()), str(at.y()))
        self.xdo("click", "1")
        return True

    def _chunk_shown(self) -> bool:
        node = self.win.current_node
        want = self.finding.path
        return (node is not None and node.path() == want
                and self.win.pipeline.state is not None)

    def _expand_fragments(self) -> bool:
        root = self.win.session.document.root
        frags = root.find("__fragments")
        if frags is None:
            return False
        view, model = self.win.tree.view, self.win.tree.model
        view.expand(model.index_for_node(root))
        idx = model.index_for_node(frags)
        view.expand(idx)
        view.setCurrentIndex(idx)
        return view.isExpanded(idx)

    def _quit(self) -> bool:
        self.timer.stop()
        if self.win is not None:
            self.win.close()   # the program's own quit: its workers end with it
        from PySide6.QtWidgets import QApplication

        QApplication.quit()
        return True


def drive(state: str, out: str, size: str, path: str) -> int:
    """In the program's process: its QApplication (as `app._app` makes it), the driver on
    its event loop, then the program's own entry."""
    from arrayscope.explorer import app
    from arrayscope.explorer.cli import main

    app._app(offscreen=False)
    driver = Driver(state, out, size)
    driver.start()
    return main([path])


# ---- outside: the X servers ------------------------------------------------------------
class Screen:
    """An Xvfb display of one size running one program at a time."""

    def __init__(self, num: int, size: str):
        self.size = size
        self.display = f":{num}"
        w, h = SIZES[size]
        self.xvfb = subprocess.Popen(["Xvfb", self.display, "-screen", "0", f"{w}x{h}x24",
                                      "-nolisten", "tcp"], stderr=subprocess.DEVNULL)
        self.env = dict(os.environ, DISPLAY=self.display)
        self.env.pop("QT_QPA_PLATFORM", None)
        time.sleep(1.5)

    def run(self, state: str, path: str, out: str, home: str) -> None:
        env = dict(self.env, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                   PYTHONPATH=ROOT)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--drive", state, out,
                        self.size, path], env=env, check=False, timeout=4 * STEP_TIMEOUT)

    def close(self) -> None:
        self.xvfb.kill()
        self.xvfb.wait(10)


def main(out: str, step: str = "all") -> None:
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="arrayscope-real-")
    soma = damaged_soma(scratch)
    frags = os.path.join(scratch, "frags1000")
    for num, size in enumerate(SIZES, start=91):
        screen = Screen(num, size)
        try:
            if step in ("all", "soma"):
                screen.run("soma", soma, out, os.path.join(scratch, f"home{num}"))
            if step in ("all", "frags"):
                if not os.path.exists(frags):
                    fragments(scratch)
                screen.run("frags", frags, out, os.path.join(scratch, f"home{num}f"))
        finally:
            screen.close()
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--drive"]:
        sys.exit(drive(*sys.argv[2:6]))
    main(*(sys.argv[1:] or [os.path.join(HERE, "real")]))

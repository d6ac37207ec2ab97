"""Screenshots of the real program (`python -m arrayscope.explorer PATH`) on an X server:

    python docs/screenshots/real_app.py OUT_DIR [STEP]

For each screen size (1024x700, 2560x1440) it starts `Xvfb :N -screen 0 WxHx24`, runs the
program in its own process on that display, sizes its window to the screen with xdotool
and captures the screen with ImageMagick's `import -window root` (what the X server shows).
States: a damaged SOMA experiment (a byte flipped inside a zstd frame of ms/RNA/X/data's
a0.tdb) after opening (`soma_open`) and after clicking its Diagnostics row (`soma_chunk`,
the click at the row's place in that size's layout), and a 1 000-fragment array with
`__fragments` expanded (`frags1000`). Needs Xvfb, xdotool and ImageMagick."""
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
# where the first Diagnostics row is at each size (the bottom dock's first row), x, y
DIAG_ROW = {"1024x700": (290, 578), "2560x1440": (1055, 1317)}


def damaged_soma(dest: str) -> str:
    """A copy of the committed SOMA experiment with 8 bytes flipped inside the first zstd
    frame of ms/RNA/X/data's first a0.tdb."""
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
        self.app = None
        self.wid = ""

    def run(self, path: str, home: str, wait: float) -> None:
        w, h = SIZES[self.size]
        env = dict(self.env, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"))
        self.app = subprocess.Popen([sys.executable, "-m", "arrayscope.explorer", path],
                                    env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        self.wid = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--pid",
                                   str(self.app.pid)], env=self.env, capture_output=True,
                                  text=True, timeout=120).stdout.split()[0]
        self.xdo("windowmove", self.wid, "0", "0")
        self.xdo("windowsize", self.wid, str(w), str(h))
        time.sleep(wait)

    def xdo(self, *args: str) -> None:
        subprocess.run(["xdotool", *args], env=self.env, check=False, timeout=60)

    def shot(self, out: str, name: str) -> str:
        dest = os.path.join(out, f"{name}_{self.size}.png")
        subprocess.run(["import", "-window", "root", "-depth", "8", "-colors", "256", dest],
                       env=self.env, check=True, timeout=60)
        return dest

    def quit(self) -> None:
        if self.app is not None:
            self.app.kill()
            self.app.wait(10)
            self.app = None

    def close(self) -> None:
        self.quit()
        self.xvfb.kill()
        self.xvfb.wait(10)


def main(out: str, step: str = "all") -> list:
    os.makedirs(out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="arrayscope-real-")
    soma = damaged_soma(scratch)
    frags = os.path.join(scratch, "frags1000")
    written = []
    for num, size in enumerate(SIZES, start=91):
        screen = Screen(num, size)
        try:
            if step in ("all", "soma"):
                screen.run(soma, os.path.join(scratch, f"home{num}"), wait=25)
                written.append(screen.shot(out, "soma_open"))
                x, y = DIAG_ROW[size]
                if y:
                    screen.xdo("mousemove", str(x), str(y), "click", "1")
                    time.sleep(8)
                    written.append(screen.shot(out, "soma_chunk"))
                screen.quit()
            if step in ("all", "frags"):
                if not os.path.exists(frags):
                    fragments(scratch)
                screen.run(frags, os.path.join(scratch, f"home{num}f"), wait=30)
                written.append(screen.shot(out, "frags1000"))
                screen.quit()
        finally:
            screen.close()
    return written


if __name__ == "__main__":
    for p in main(*(sys.argv[1:] or [os.path.join(HERE, "real")])):
        print(p)

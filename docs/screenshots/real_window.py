"""Screenshots of the real window under an X server (Xvfb in CI-less setups):

    Xvfb :99 -screen 0 2560x1440x24 &
    DISPLAY=:99 python docs/screenshots/real_window.py OUT_DIR

The window is driven partly with xdotool (resizing, shortcuts) and captured with
ImageMagick's `import -window ID`, i.e. what the X server shows, not an offscreen render.
States: the start page; a corrupted array with its finding marked in place; bookmarks;
find-all; the diff of two fragments' files; at 1024x700, 1600x1000 and 2560x1440."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from tests.support.gui_helpers import corrupted_dense_sample  # noqa: E402

SIZES = {"1024x700": (1024, 700), "1600x1000": (1600, 1000), "2560x1440": (2560, 1440)}


def main(out: str) -> list:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from arrayscope.explorer.mainwindow import MainWindow
    from arrayscope.explorer.startpage import SAMPLES_DIR

    os.makedirs(out, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    scratch = tempfile.mkdtemp(prefix="arrayscope-shots-")
    settings = QSettings(os.path.join(scratch, "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings=settings, restore=False)
    w.quiet = True
    w.move(0, 0)
    w.show()
    wid = str(int(w.winId()))
    written = []

    def settle(secs: float = 0.4) -> None:
        end = time.time() + secs
        while time.time() < end:
            app.processEvents()
            time.sleep(0.02)

    def size(name: str) -> None:
        ww, hh = SIZES[name]
        subprocess.run(["xdotool", "windowsize", wid, str(ww), str(hh)], check=True)
        settle(0.6)

    def key(*keys: str) -> None:
        subprocess.run(["xdotool", "windowactivate", "--sync", wid], check=False)
        subprocess.run(["xdotool", "key", "--window", wid, *keys], check=True)
        settle(0.5)

    def shot(name: str) -> None:
        settle(0.3)
        p = os.path.join(out, name)
        subprocess.run(["import", "-window", wid, p], check=True)
        written.append(p)

    try:
        size("1024x700")
        shot("start_1024x700.png")
        # a corrupted array: its finding marked in place
        bad = corrupted_dense_sample(scratch)
        w.open_path(bad, sync=True)
        w.verifier.wait(60000)
        settle(1.0)
        fip = w.findings_in_place
        mark = next(m for m in fip.marks.marks if m.finding.status == "error")
        w.select_node(mark.node)
        w.tabs.current_view().set_cursor(mark.start + 9, scroll=False)
        for name in SIZES:
            size(name)
            w.select_node(mark.node)
            shot(f"finding_in_place_{name}.png")
        # bookmarks (Ctrl+D on a selection, then named in the dock)
        size("1600x1000")
        frag = next(w.session.document.root.find("__fragments").iter_children())
        a0 = frag.find("a0.tdb")
        w.select_node(a0)
        v = w.tabs.current_view()
        for (a, b), label in (((0, 8), "version + compressor"), ((8, 40), "tile sizes"),
                              ((60, 140), "first chunk")):
            w.bookmarks.add(a0.source, a, b, name=label)
        v.select_range(8, 40)
        w.bookmarks.table.selectRow(1)
        w.d_bookmarks.show()
        w.d_bookmarks.raise_()
        shot("bookmarks_1600x1000.png")
        # find all (Ctrl+Shift+A) with a wildcard pattern
        key("ctrl+shift+a")
        if not w.d_findall.isVisible():      # no window manager: the key may not reach it
            w.find_all.focus(w.d_findall)
        w.find_all.edit.setText("00 00 ?? 00")
        w.find_all.start()
        w.find_all.runner.wait(30000)
        settle(0.8)
        shot("find_all_1600x1000.png")
        # the diff of the damaged file against the intact sample's
        from arrayscope.formats.core.source import FileSource

        frags = list(w.session.document.root.find("__fragments").iter_children())
        damaged = frags[0].find("a1.tdb").source
        intact = FileSource(os.path.join(SAMPLES_DIR, "tiledb_dense", os.path.relpath(
            damaged.path, bad)), "intact " + damaged.name)
        dv = w.diffs.compare(damaged, intact)
        dv.pool.waitForDone(30000)
        settle(0.8)
        dv.table.setCurrentCell(0, 0)
        shot("diff_1600x1000.png")
        size("2560x1440")
        shot("diff_2560x1440.png")
        # the main window on the sample the README's --sample opens
        w.open_path(os.path.join(SAMPLES_DIR, "tiledb_dense"), sync=True)
        w.verifier.wait(60000)
        settle(1.0)
        for name in ("1024x700", "1600x1000", "2560x1440"):
            size(name)
            shot(f"main_{name}.png")
    finally:
        w.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return written


if __name__ == "__main__":
    for p in main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "real")):
        print(p)

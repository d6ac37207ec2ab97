"""Regenerate the README screenshots (offscreen):  python docs/screenshots/make_screenshots.py"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))


def main() -> int:
    from PySide6.QtCore import QSettings, QTemporaryDir

    from explorer.app import _app
    from explorer.mainwindow import MainWindow, default_sample

    app = _app(True)
    tmp = QTemporaryDir()
    w = MainWindow(settings=QSettings(os.path.join(tmp.path(), "s.ini"), QSettings.IniFormat),
                   restore=False)
    w.quiet = True
    w.resize(1600, 1000)
    w.open_path(default_sample(), sync=True)
    frag = next(w.session.root["__fragments"].iter_children())
    chunk = frag["a0.tdb"]["Tile 1"]["Chunk 1"]
    w.select_node(chunk)
    w.pipeline.reverse_all()
    w.select_node(chunk)
    w.show()
    for _ in range(5):
        app.processEvents()
    w.grab().save(os.path.join(HERE, "main_window.png"))
    w.pipeline.tree.expandAll()
    w.pipeline.resize(720, 780)
    for _ in range(3):
        app.processEvents()
    w.pipeline.grab().save(os.path.join(HERE, "pipeline_panel.png"))
    print("wrote", os.path.join(HERE, "main_window.png"), os.path.join(HERE, "pipeline_panel.png"))
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

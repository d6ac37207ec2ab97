"""Regenerate the README screenshots (offscreen):  python docs/screenshots/make_screenshots.py

- main_window.png     the dense TileDB sample, a BYTESHUFFLE+ZSTD chunk reversed to its cells
- pipeline_panel.png  the sparse sample's nullable attribute `score`: its stages, forward
                      checks, and the tile's cells paired with its validity tile (nulls grey)
- scdl.png            the SCDL sample: an array descriptor of header.sch
- zarr.png            the Zarr v3 struct sample: a record of a zstd chunk, in the decoded tab
- soma.png            the SOMA experiment of tests/data/soma: ms/RNA/X/data opened, a chunk
                      of its soma_data reversed to its cells
- `--dark DIR`        also writes the same views with a dark palette into DIR (for checking)
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import arrayscope.explorer.qtfix  # noqa: E402,F401


def _settle(app, w, n=6):
    w.verifier.wait(30000)
    for _ in range(n):
        app.processEvents()


def dark_palette():
    from PySide6.QtGui import QColor, QPalette

    p = QPalette()
    base, window, text = QColor(30, 30, 32), QColor(45, 45, 48), QColor(225, 225, 225)
    for role, c in [(QPalette.Window, window), (QPalette.WindowText, text), (QPalette.Base, base),
                    (QPalette.AlternateBase, QColor(38, 38, 41)), (QPalette.Text, text),
                    (QPalette.Button, window), (QPalette.ButtonText, text),
                    (QPalette.ToolTipBase, window), (QPalette.ToolTipText, text),
                    (QPalette.Highlight, QColor(42, 130, 218)),
                    (QPalette.HighlightedText, QColor(255, 255, 255)),
                    (QPalette.PlaceholderText, QColor(140, 140, 140)),
                    (QPalette.Link, QColor(100, 170, 255))]:
        p.setColor(role, c)
    p.setColor(QPalette.Disabled, QPalette.Text, QColor(120, 120, 120))
    p.setColor(QPalette.Disabled, QPalette.ButtonText, QColor(120, 120, 120))
    p.setColor(QPalette.Disabled, QPalette.WindowText, QColor(120, 120, 120))
    return p


def shoot(out_dir: str, dark: bool = False) -> list:
    from PySide6.QtCore import QSettings, QTemporaryDir

    from arrayscope.explorer.app import _app
    from arrayscope.explorer.mainwindow import MainWindow, default_sample
    from arrayscope.explorer.startpage import SAMPLES_DIR

    app = _app(True)
    if dark:
        app.setStyle("Fusion")
        app.setPalette(dark_palette())
    tmp = QTemporaryDir()
    w = MainWindow(settings=QSettings(os.path.join(tmp.path(), "s.ini"), QSettings.IniFormat),
                   restore=False)
    w.quiet = True
    w.resize(1600, 1000)
    w.show()
    written = []

    def save(widget, name):
        p = os.path.join(out_dir, name)
        widget.grab().save(p)
        written.append(p)

    # the dense sample: a ByteShuffle+Zstd chunk, reversed
    w.open_path(default_sample(), sync=True)
    frag = next(w.session.root["__fragments"].iter_children())
    chunk = frag["a0.tdb"]["Tile 1"]["Chunk 1"]
    w.select_node(chunk)
    w.pipeline.reverse_all()
    w.select_node(chunk)
    _settle(app, w)
    save(w, "main_window.png")

    # SCDL: an array descriptor of the header
    w.open_path(os.path.join(SAMPLES_DIR, "scdl"), sync=True)
    desc = w.session.root["header.sch"]["Array descriptors"]["Array 2"]
    w.select_node(desc)
    w.tree.view.expand(w.tree.model.index_for_node(desc))
    _settle(app, w)
    save(w, "scdl.png")

    # Zarr: a record of a zstd chunk of the nested struct sample
    w.open_path(os.path.join(SAMPLES_DIR, "zarr_struct"), sync=True)
    rec = w.session.root.resolve("c/0/0/Records").child(5)
    w.select_node(rec["pos"])
    _settle(app, w)
    save(w, "zarr.png")
    # the sparse sample: a nullable float, paired with its validity tile
    w.open_path(os.path.join(SAMPLES_DIR, "tiledb_sparse"), sync=True)
    frag = next(w.session.root["__fragments"].iter_children())
    chunk = frag["a1.tdb"]["Tile 1"]["Chunk 1"]
    w.select_node(chunk)
    w.pipeline.reverse_all()
    w.select_node(chunk)
    w.pipeline.tree.expandAll()
    _settle(app, w)
    w.d_pipeline.setFloating(True)   # a dock keeps its layout size: float it to size it
    w.d_pipeline.resize(760, 860)
    for _ in range(4):
        app.processEvents()
    w.pipeline.tree.setColumnWidth(0, 260)
    w.pipeline.cells_view.setColumnWidth(0, 300)
    for _ in range(2):
        app.processEvents()
    save(w.pipeline, "pipeline_panel.png")
    w.d_pipeline.setFloating(False)
    shoot_soma(app, w, save)

    w.close()
    return written


def shoot_soma(app, w, save) -> None:
    """The SOMA experiment: a member array opened in the tree, a chunk reversed to cells."""
    soma = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "soma", "pbmc68k")
    w.open_path(soma, sync=True)
    data = w.session.root.resolve("ms/RNA/X/data")   # opens ms, RNA, X and data
    frag = next(data["__fragments"].iter_children())
    chunk = frag["a0.tdb"]["Tile 1"]["Chunk 1"]
    w.select_node(chunk)
    w.pipeline.reverse_all()
    w.select_node(chunk)
    _settle(app, w)
    save(w, "soma.png")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--dark"] and len(argv) > 1:
        os.makedirs(argv[1], exist_ok=True)
        print("wrote", *shoot(argv[1], dark=True))
        return 0
    print("wrote", *shoot(HERE))
    return 0


if __name__ == "__main__":
    sys.exit(main())

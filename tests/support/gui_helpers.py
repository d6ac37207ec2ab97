"""Test helper: the main window as the GUI tests use it (offscreen, private settings)."""
from __future__ import annotations


def open_window(qtbot, tmp_path):
    """A shown MainWindow with settings in `tmp_path`, nothing restored and no message boxes."""
    from PySide6.QtCore import QSettings

    from arrayscope.explorer.mainwindow import MainWindow

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    w = MainWindow(settings=settings, restore=False)
    w.quiet = True
    w.resize(1500, 950)
    qtbot.addWidget(w)
    w.show()
    return w


def corrupted_dense_sample(dest) -> str:
    """A copy of the bundled dense TileDB sample with one byte of attribute a1's first
    fragment flipped inside its last compressed chunk (verify: LZ4 cannot decompress it).
    Returns the copy's path; the damaged file is `<copy>/<first fragment>/a1.tdb`."""
    import os
    import shutil

    from tests.support.paths import SAMPLES

    path = os.path.join(str(dest), "corrupt_dense")
    shutil.copytree(os.path.join(SAMPLES, "tiledb_dense"), path)
    frags = os.path.join(path, "__fragments")
    first = sorted(os.listdir(frags))[0]
    f = os.path.join(frags, first, "a1.tdb")
    data = bytearray(open(f, "rb").read())
    data[len(data) - 20] ^= 0xFF
    with open(f, "wb") as out:
        out.write(bytes(data))
    return path

"""File ▸ Salvage… (pytest-qt, offscreen): on a tiledb-py array with one damaged tile, the
preview comes from the worker process and writes nothing; Write writes OUT, which
libtiledb reads (the damaged tile's cells as fill, every other cell as before)."""
from __future__ import annotations

import glob
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from tests.salvage.support import break_zstd_frame  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS  # noqa: E402

tiledb = pytest.importorskip("tiledb")


def test_salvage_preview_then_write(qtbot, tmp_path):
    src, out = str(tmp_path / "a"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 29), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    with tiledb.open(src, "w", timestamp=1) as A:
        A[:] = np.arange(30, dtype=np.int64)
    (frag,) = glob.glob(os.path.join(src, "__fragments", "*"))
    break_zstd_frame(os.path.join(frag, "a0.tdb"), nth=1)     # tile 2: x 10..19
    win = open_window(qtbot, tmp_path)
    assert win.open_path(src, sync=True)
    sal = win.salvage
    file_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&File")
    assert sal.action in file_menu.actions()
    dlg = sal.start(out)
    qtbot.waitUntil(lambda: sal.result is not None, timeout=WAIT_MS)
    assert sal.worker.pid not in (0, os.getpid())          # the work ran in the worker
    preview = sal.result
    assert preview.exit_code == 3 and not os.path.exists(out)
    assert ".: a: 20 cells kept, 10 lost" in preview.lines
    assert [b.text() for b in dlg.buttons.buttons()][0] == "Write"
    sal.result = None
    dlg.accept()
    qtbot.waitUntil(lambda: sal.result is not None, timeout=WAIT_MS)
    assert sal.result.written and sal.result.exit_code == 3
    assert ".: a: 20 cells kept, 10 lost" in sal.dialog.text.toPlainText()
    with tiledb.open(out) as A:
        got = A[:]["a"]
    # the damaged tile's cells read as the fill value, every other cell as before
    assert list(got[:10]) == list(range(10)) and list(got[20:]) == list(range(20, 30))
    assert (got[10:20] == np.iinfo(np.int64).min).all()
    sal.dialog.reject()

"""Opening in the background with per-file progress, partial results and a real cancel
(pytest-qt, offscreen)."""
from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import SAMPLES  # noqa: E402
from tests.support.waits import WAIT_MS

# an SCDL archive parses every file at open (a TileDB array opens lazily in the window: its
# schemas at once, each fragment when expanded), so its open has per-file progress to show
SAMPLE = os.path.join(SAMPLES, "scdl")


@pytest.fixture
def win(qtbot, tmp_path):
    return open_window(qtbot, tmp_path)


def _n_files(path):
    return sum(len(f) for _, _, f in os.walk(path))


def test_open_reports_progress_then_shows_tree(qtbot, win):
    seen = []

    def on_progress(done, total, files):
        # the window's slot ran first: the browser lists every file parsed so far
        seen.append((done, total, list(files), win.browser.loading_names(),
                     win.progress.maximum(), win.progress.value()))

    win.loader.progress.connect(on_progress)
    with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
        win.open_path(SAMPLE)
    assert seen
    n = _n_files(SAMPLE)
    dones = [s[0] for s in seen]
    assert dones == sorted(dones) and dones[-1] == n and seen[-1][1] == n
    listed = [name for s in seen for name, _size in s[2]]
    assert len(listed) == n and len(set(listed)) == n
    for done, total, _files, names, maximum, value in seen:
        assert len(names) == done and maximum == total and value == done
    # sizes are the files' sizes
    name, size = seen[0][2][0]
    assert size == os.path.getsize(os.path.join(SAMPLE, name))
    # the full tree replaced the loading list
    doc = win.session.document
    assert not win.browser.loading
    assert win.browser.topLevelItem(0).data(0, 0x0100) is doc.root
    assert win.tree.model.root_node is doc.root
    assert not win.progress.isVisible() and not win.cancel_btn.isVisible()


def test_cancel_mid_load_stops_the_worker(qtbot, win, monkeypatch):
    import arrayscope.formats.scdl.archive as scdl

    real = scdl.file_node
    parsed = []

    def slow(*a, **kw):
        parsed.append(a[-1])
        time.sleep(0.15)
        return real(*a, **kw)

    monkeypatch.setattr(scdl, "file_node", slow)
    loaded, first = [], []
    win.loader.loaded.connect(lambda *a: loaded.append(a))

    def on_progress(done, total, files):
        if not first:
            first.append((done, total, win.browser.loading_names()))
            win.cancel_btn.click()

    win.loader.progress.connect(on_progress)
    with qtbot.waitSignal(win.loader.cancelled, timeout=WAIT_MS):
        win.open_path(SAMPLE)
    assert first and first[0][0] >= 1 and first[0][2]   # partial results were listed
    assert win.loader.wait(WAIT_MS)                      # the worker stops (quickly)
    qtbot.waitUntil(lambda: not win.loader._jobs, timeout=WAIT_MS)
    total = first[0][1]
    assert len(parsed) <= first[0][0] + 2 < total      # stopped within one file
    assert not loaded
    assert win.session is None and win.path is None
    assert win.stack.currentIndex() == 0
    assert not win.progress.isVisible() and not win.cancel_btn.isVisible()
    assert not win.browser.loading and win.browser.topLevelItemCount() == 0
    assert not win.d_browser.isVisible()
    assert "Cancelled" in win.st_value.text()
    # still usable: the next open works
    monkeypatch.undo()
    with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
        win.open_path(SAMPLE)
    assert win.session is not None and win.session.document.root is not None


def test_cancel_while_a_document_is_shown_keeps_it(qtbot, win, monkeypatch):
    with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
        win.open_path(SAMPLE)
    doc = win.session.document
    import arrayscope.formats.scdl.archive as scdl

    real = scdl.file_node
    monkeypatch.setattr(scdl, "file_node",
                        lambda *a, **kw: (time.sleep(0.1), real(*a, **kw))[1])
    win.loader.progress.connect(lambda *a: win.loader.busy and win.cancel_btn.click())
    with qtbot.waitSignal(win.loader.cancelled, timeout=WAIT_MS):
        win.open_path(SAMPLE)
    assert win.loader.wait(WAIT_MS)
    assert win.session.document is doc
    assert win.browser.topLevelItem(0).data(0, 0x0100) is doc.root
    assert win.d_browser.windowTitle() == "Archive"

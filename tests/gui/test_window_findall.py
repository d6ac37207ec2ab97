"""Find All (pytest-qt, offscreen): hex patterns with ?? wildcards and regular expressions,
read in blocks with overlap (matches across block edges found once, reads never larger
than a block), run in a worker with progress, cancelled on demand, results select bytes."""
from __future__ import annotations

import os
import re
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from arrayscope.explorer import findall, findallworker, search  # noqa: E402
from arrayscope.formats.core.source import BytesSource  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS


class CountingSource(BytesSource):
    """Remembers the longest read: the search must never read the whole source."""

    longest = 0

    def read(self, offset: int, length: int) -> bytes:
        self.longest = max(self.longest, length)
        return super().read(offset, length)


def _planted(n: int = 10_000) -> bytes:
    data = bytearray(n)
    for off in (0, 63, 127, 500, 9_995):              # 63 and 127 straddle 64-byte blocks
        data[off:off + 4] = b"\x28\xb5\x2f\xfd"
    data[300:305] = b"\x28\xb5\x99\xfd\x00"          # matches only with a wildcard
    return bytes(data)


def test_hex_wildcards_across_block_edges():
    data = _planted()
    src = CountingSource(data, "planted")
    pat = findall.compile_pattern("Hex (?? = any byte)", "28 b5 ?? fd")
    hits = list(findall.find_all(src, pat, block=64))
    expected = [m.start() for m in re.finditer(b"[(]\xb5.\xfd", data, re.DOTALL)]
    assert [h.offset for h in hits] == expected == [0, 63, 127, 300, 500, 9_995]
    assert all(h.length == 4 for h in hits)
    assert src.longest <= 64 + pat.overlap


def test_regex_and_errors():
    data = b"xx TILEDB\x01\x02 yy TILEDB\xff\xfe zz"
    pat = findall.compile_pattern("Regex", r"TILEDB[\x00-\x7f]{2}")
    assert [(h.offset, h.length) for h in findall.find_all(BytesSource(data, "d"), pat, block=8)] == [(3, 8)]
    for mode, text in (("Hex (?? = any byte)", "28 b"), ("Hex (?? = any byte)", "?? ??"),
                       ("Hex (?? = any byte)", "zz"), ("Regex", "(")):
        with pytest.raises(search.PatternError):
            findall.compile_pattern(mode, text)


def test_find_all_in_window_results_and_cancel(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "blob.bin"
    size = 48 << 20                                   # 12 blocks of 4 MiB
    with open(path, "wb") as f:
        f.truncate(size)
        for off in (5, findall.BLOCK - 2, 40 << 20):
            f.seek(off)
            f.write(b"\xde\xad\xbe\xef")
    win = open_window(qtbot, tmp_path)
    assert win.open_path(str(path), sync=True)
    panel = win.find_all
    panel.mode.setCurrentIndex(0)
    panel.edit.setText("de ad ?? ef")
    with qtbot.waitSignal(panel.runner.finished, timeout=WAIT_MS) as done:
        assert panel.start()
        assert panel.cancel_btn.isEnabled() and panel.bar.isVisibleTo(panel)
    assert done.args == [False, False]
    assert [h.offset for h in panel.model.hits] == [5, findall.BLOCK - 2, 40 << 20]
    assert "3 matches" in panel.status.text()
    assert not panel.bar.isVisibleTo(panel)
    # a click on a result selects its bytes
    view = win.tabs.current_view()
    panel.go(panel.model.index(1, 0))
    assert view.selection() == (findall.BLOCK - 2, findall.BLOCK + 2)
    # cancel after the first block: the worker waits at its first progress report until
    # the window has cancelled, so the test does not race it
    gate = threading.Event()
    real = findallworker.find_all

    def gated(src, pat, cancelled, progress):
        def report(done, total):
            progress(done, total)
            gate.wait(60)
        return real(src, pat, cancelled, report)

    monkeypatch.setattr(findallworker, "find_all", gated)

    def cancel_then_release(_done, _total):
        panel.runner.cancel()
        gate.set()

    panel.runner.progress.connect(cancel_then_release)
    with qtbot.waitSignal(panel.runner.finished, timeout=WAIT_MS) as done:
        assert panel.start()
    assert done.args[0] is True
    # only the first block was searched (its match straddling the block edge included)
    assert [h.offset for h in panel.model.hits] == [5, findall.BLOCK - 2]
    assert "cancelled" in panel.status.text()
    assert not panel.cancel_btn.isEnabled()

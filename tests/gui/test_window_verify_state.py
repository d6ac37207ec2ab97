"""What the window says while verify runs (pytest-qt, offscreen): no verdict before it is
done (issue 28 item 8)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS  # noqa: E402


def test_no_verdict_while_verify_runs(qtbot, tmp_path):
    """Diagnostics says "No problems found." only once verify is done (issue 28 item 8)."""
    from tests.support.paths import SAMPLES

    win = open_window(qtbot, tmp_path)
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
        running = win.diag.summary.text()
        light = win.findings_in_place.light.text()
    assert "No problems found" not in running and "verifying" in running
    assert light == "checking…"
    assert win.diag.summary.text().startswith("No problems found.")
    assert win.findings_in_place.light.text() == "no problems"

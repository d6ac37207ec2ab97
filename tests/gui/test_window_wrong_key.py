"""A wrong key is reported once per encrypted file (issue 13: "a wrong key reports every
chunk twice"): in `verify --json` and in the window's Diagnostics, on an array written by
tiledb-py with AES-256-GCM (pytest-qt, offscreen)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from arrayscope.formats.core.findings import AES_TAG, WRONG_KEY  # noqa: E402
from tests.support import tiledb_arrays  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS

WRONG = b"W" * 32
# the files tiledb-py encrypts in this array: schema, array metadata, fragment metadata
ENCRYPTED = ("__schema/", "__meta/", "__fragment_metadata.tdb")


@pytest.fixture(scope="module")
def encrypted(tmp_path_factory):
    return tiledb_arrays.build("encrypted", str(tmp_path_factory.mktemp("wrong_key")))


def _per_file(files):
    return sorted(next(m for m in ENCRYPTED if m in f) for f in files)


def test_verify_json_one_finding_per_encrypted_file(encrypted, tmp_path):
    key = tmp_path / "wrong.key"
    key.write_bytes(WRONG)
    out = subprocess.run([sys.executable, "-m", "arrayscope.explorer", "verify", "--json",
                          "--key-file", str(key), encrypted], capture_output=True, text=True,
                         timeout=WAIT_MS / 1000)
    report = json.loads(out.stdout)
    wrong = [f for f in report["findings"] if f["code"] == WRONG_KEY]
    assert _per_file(f["source"] for f in wrong) == sorted(ENCRYPTED)
    assert not [f for f in report["findings"] if f["code"] == AES_TAG]
    frag_md = next(f for f in wrong if "__fragment_metadata.tdb" in f["source"])
    assert "35 encrypted parts fail their AES-GCM tag" in frag_md["message"]
    schema = next(f for f in wrong if "__schema/" in f["source"])
    assert "1 encrypted part fails its AES-GCM tag" in schema["message"]


def test_window_diagnostics_one_row_per_encrypted_file(qtbot, tmp_path, encrypted):
    win = open_window(qtbot, tmp_path)
    win.key = WRONG
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(encrypted, sync=True)
    rows = win.diag.model.rows
    keyed = [r for r in rows if "AES" in r.message]
    assert len(keyed) == 3
    assert all(r.finding is not None and r.finding.code == WRONG_KEY for r in keyed)
    assert _per_file(r.source for r in keyed) == sorted(ENCRYPTED)
    assert not [r for r in rows if r.node is not None and r.node.code == AES_TAG]
    assert win.diag.summary.text().startswith("3 errors")

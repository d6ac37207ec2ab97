"""The messages of issue 31, item 12: each says what is wrong in words a user can act on."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import zarr

from arrayscope import formats
from arrayscope.explorer.cli import main
from arrayscope.formats.core.findings import Finding
from arrayscope.formats.core.printable import printable
from arrayscope.formats.core.verify import verify


def test_negative_counts_are_refused(capsys, tmp_path):
    for argv in (["dump", str(tmp_path), "--max-depth", "-1"],
                 ["verify", str(tmp_path), "--workers", "-3"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2
        assert "is negative" in capsys.readouterr().err


def test_a_mistyped_subcommand_is_named(capsys, tmp_path):
    assert main(["verfy", str(tmp_path)]) == 2
    assert "did you mean `arrayscope verify`" in capsys.readouterr().err


def test_verify_of_a_device_says_what_it_is(capsys):
    assert main(["verify", "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert "character device" in err and "OpenError" not in err


def test_an_azure_url_names_the_azure_extra(monkeypatch):
    from arrayscope.formats.core import remote

    def no_backend(url):
        raise ImportError("Install adlfs to access Azure Datalake Gen2 and Azure Blob Storage")

    monkeypatch.setattr(remote, "store_for", no_backend)
    with pytest.raises(formats.OpenError) as e:
        formats.open("az://container/array")
    assert 'arrayscope[azure]' in str(e.value) and "arrayscope[s3]" not in str(e.value)


def test_screenshot_of_an_unopenable_url_says_why(tmp_path, capsys, qapp, monkeypatch):
    from arrayscope.explorer import app
    from arrayscope.formats.core import remote

    def refused(url):
        raise OSError(f"{url}: connection refused")

    monkeypatch.setattr(remote, "store_for", refused)
    assert app.screenshot("s3://bucket/array", str(tmp_path / "x.png"), None, None,
                          size=(800, 600)) == 2
    assert "connection refused" in capsys.readouterr().err


def test_names_from_a_dataset_are_escaped_when_printed():
    assert printable("a\x00b\nc\x1b[31m\u202e") == "a\\x00b\\x0ac\\x1b[31m\\u202e"
    assert printable("clean/name ü") == "clean/name ü"
    f = Finding("error", "x", "evil\nname", 0, "", "member 'a\rb' is bad")
    assert "\n" not in f.line() and "\r" not in f.line()


def test_dump_escapes_member_names(tmp_path, capsys):
    store = str(tmp_path / "g")
    g = zarr.open_group(store, mode="w", zarr_format=3)
    g.create_array("ok", shape=(2,), dtype="i4")
    os.rename(os.path.join(store, "ok"), os.path.join(store, "bad\nname\x1b"))
    assert main(["dump", store]) == 0
    out = capsys.readouterr().out
    assert "bad\\x0aname\\x1b" in out and "\x1b" not in out


def test_a_fill_value_past_int64_is_a_finding(tmp_path):
    path = str(tmp_path / "z")
    z = zarr.create_array(path, shape=(8,), chunks=(4,), dtype="int64", zarr_format=3)
    z[:4] = np.arange(4)
    meta = json.load(open(os.path.join(path, "zarr.json")))
    meta["fill_value"] = 2 ** 64 + 5
    json.dump(meta, open(os.path.join(path, "zarr.json"), "w"))
    with pytest.raises(Exception):   # the library refuses the metadata
        zarr.open_array(path, mode="r")[:]
    found = verify(formats.open(path))
    [f] = [f for f in found if "fill_value" in f.message]
    assert f.status == "error" and "does not fit" in f.message
    assert not [f for f in found if f.code == "check-crashed" or "internal" in f.message]


@pytest.mark.no_qt_log   # Qt's messages to stderr, as the program's (not to pytest-qt)
def test_screenshot_prints_only_the_picture_path(tmp_path, capfd, qapp):
    """Qt's offscreen plugin said "This plugin does not support propagateSizeHints()" twice
    on every --screenshot; other messages of Qt still reach stderr."""
    from PySide6.QtCore import qWarning

    from arrayscope.explorer import app

    store = str(tmp_path / "z")
    z = zarr.create_array(store, shape=(12,), chunks=(4,), dtype="int32", zarr_format=3)
    z[:] = np.arange(12, dtype="int32")
    out = str(tmp_path / "x.png")
    assert app.screenshot(store, out, None, None, size=(800, 600)) == 0
    got = capfd.readouterr()
    assert got.out.strip() == out and os.path.getsize(out) > 0
    assert "propagateSizeHints" not in got.err, got.err
    previous = app._quiet_offscreen_plugin()
    try:
        qWarning("a message of Qt")
    finally:
        app._restore_messages(previous)
    assert "a message of Qt" in capfd.readouterr().err

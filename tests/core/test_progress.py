"""formats.open(progress=...): one report per parsed file, and cancel through Cancelled."""
from __future__ import annotations

import os

import numpy as np
import pytest

from arrayscope import formats
from arrayscope.formats.core import engine
from tests.support import paths

SCDL_BASIC = os.path.join(paths.DATA, "scdl", "basic")


def _open_recording(path, **kw):
    calls = []
    doc = formats.open(path, progress=lambda done, total, name: calls.append((done, total, name)),
                       **kw)
    return doc, calls


def _check_calls(calls, n_files=None):
    assert calls, "progress never called"
    dones = [c[0] for c in calls]
    assert dones == list(range(1, len(calls) + 1))
    assert all(done <= total for done, total, _ in calls)
    totals = [c[1] for c in calls]
    assert totals == sorted(totals)
    assert calls[-1][0] == calls[-1][1]
    assert all(isinstance(c[2], str) and c[2] for c in calls)
    if n_files is not None:
        assert calls[-1][1] == n_files


def _n_files(path):
    return sum(len(f) for _, _, f in os.walk(path))


def _same_tree(a, b):
    ta = [(n.path(), n.offset, n.size, n.status) for n in a.root.walk()]
    tb = [(n.path(), n.offset, n.size, n.status) for n in b.root.walk()]
    assert ta == tb


def _zarr_array(tmp_path):
    import zarr
    path = str(tmp_path / "z.zarr")
    a = zarr.open_array(path, mode="w", shape=(40,), chunks=(10,), dtype="<i4", zarr_format=2)
    a[...] = np.arange(40, dtype="<i4")
    return path


def test_progress_tiledb(tiledb_array):
    path = tiledb_array("dense_1d")
    doc, calls = _open_recording(path)
    _check_calls(calls, _n_files(path))
    assert {c[2] for c in calls} == {s.name for s in doc.sources}
    # the schema comes first: files are reported in parse (dependency) order
    assert calls[0][2].startswith("__schema/")
    _same_tree(doc, formats.open(path))


def test_progress_tiledb_dimension_labels_total_known_up_front(tiledb_array):
    path = tiledb_array("dim_labels")
    doc, calls = _open_recording(path)
    _check_calls(calls, _n_files(path))
    assert len({c[1] for c in calls}) == 1
    assert any(c[2].startswith("__labels/") for c in calls)


def test_progress_scdl():
    doc, calls = _open_recording(SCDL_BASIC)
    assert doc.format == "scdl"
    _check_calls(calls, _n_files(SCDL_BASIC))
    assert calls[0][2] == "header.sch"
    assert {c[2] for c in calls} == {s.name for s in doc.sources}
    _same_tree(doc, formats.open(SCDL_BASIC))


def test_progress_zarr(tmp_path):
    path = _zarr_array(tmp_path)
    doc, calls = _open_recording(path)
    assert doc.format == "zarr"
    _check_calls(calls, _n_files(path))
    assert {"0", "1", "2", "3", ".zarray"} <= {c[2] for c in calls}
    _same_tree(doc, formats.open(path))


def test_progress_single_file_and_plain(tmp_path):
    p = tmp_path / "blob.bin"
    p.write_bytes(b"\x00" * 10)
    _doc, calls = _open_recording(str(p))
    assert calls == [(1, 1, "blob.bin")]
    (tmp_path / "d").mkdir()
    for i in range(3):
        (tmp_path / "d" / f"f{i}").write_bytes(b"x")
    _doc, calls = _open_recording(str(tmp_path / "d"))
    _check_calls(calls, 3)


@pytest.mark.parametrize("kind", ["tiledb", "scdl", "zarr"])
def test_cancel_from_progress(kind, tiledb_array, tmp_path, monkeypatch):
    path = {"tiledb": lambda: tiledb_array("dense_1d"), "scdl": lambda: SCDL_BASIC,
            "zarr": lambda: _zarr_array(tmp_path)}[kind]()
    opened = []
    real_init = formats.Document.__init__

    def spy(self, *a, **kw):
        real_init(self, *a, **kw)
        opened.append(self)

    monkeypatch.setattr(formats.Document, "__init__", spy)
    calls = []

    def progress(done, total, name):
        calls.append(done)
        if done == 2:
            raise formats.Cancelled()

    with pytest.raises(formats.Cancelled):
        formats.open(path, progress=progress)
    assert calls == [1, 2]           # stopped at once: no file parsed after the cancel
    doc = opened[0]
    assert doc.sources == [] and doc.derived == [] and doc.root is None
    assert doc.progress is None
    monkeypatch.undo()
    # nothing left behind: the same path opens normally afterwards
    again = formats.open(path)
    assert again.root is not None and again.sources


def test_cancelled_is_not_swallowed_by_parsers():
    # a BaseException: engine.guarded / run_parser turn Exceptions into error nodes, not this
    assert not issubclass(formats.Cancelled, Exception)

    def boom():
        raise formats.Cancelled()

    with pytest.raises(formats.Cancelled):
        engine.guarded(boom, "x", None)


def test_cancel_at_the_last_report_closes_the_document(tmp_path, monkeypatch):
    p = tmp_path / "blob.bin"
    p.write_bytes(b"\x01" * 10)
    opened = []
    real_init = formats.Document.__init__

    def spy(self, *a, **kw):
        real_init(self, *a, **kw)
        opened.append(self)

    monkeypatch.setattr(formats.Document, "__init__", spy)

    def progress(done, total, name):
        raise formats.Cancelled()

    with pytest.raises(formats.Cancelled):
        formats.open(str(p), progress=progress)
    assert opened[0].sources == [] and opened[0].root is None

"""Checks that need no checksum, one damage each, on copies of arrays tiledb-py 0.36.1
wrote: the finding has its stable code and names the file that holds the damage."""
from __future__ import annotations

import glob
import os
import shutil

import numpy as np
import tiledb

from arrayscope import formats
from arrayscope.formats.core.verify import verify_report


def _errors(path):
    return [f for f in verify_report(formats.open(path)).findings if f.status == "error"]


def _frag(uri):
    (d,) = glob.glob(os.path.join(uri, "__fragments", "*"))
    return d


def _nullable(uri):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 19), tile=20, dtype=np.uint64))
    attr = tiledb.Attr("a", dtype=np.int32, nullable=True, filters=tiledb.FilterList([]))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[attr],
                                                validity_filters=tiledb.FilterList([])))
    data = np.ma.masked_array(np.arange(20, dtype=np.int32), mask=[i % 3 == 0 for i in range(20)])
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = data


def _patch(path, offset_from_end, value):
    with open(path, "r+b") as f:
        f.seek(-offset_from_end, os.SEEK_END)
        f.write(bytes([value]))


def test_validity_byte_not_0_or_1(tmp_path):
    uri = str(tmp_path / "n")
    _nullable(uri)
    assert not _errors(uri)
    p = os.path.join(_frag(uri), "a0_validity.tdb")
    _patch(p, 1, 2)   # the last validity byte (uncompressed tile)
    errs = _errors(uri)
    assert any(f.code == "validity-not-0-1" and f.source.endswith("a0_validity.tdb")
               for f in errs), errs


def test_null_count_and_sum(tmp_path):
    uri = str(tmp_path / "n")
    _nullable(uri)
    p = os.path.join(_frag(uri), "a0_validity.tdb")
    _patch(p, 2, 0)   # one more null cell: the null count and the sum disagree
    codes = {(f.code, os.path.basename(f.source)) for f in _errors(uri)}
    assert ("tile-stat-mismatch", "a0.tdb") in codes, codes


def test_cell_value_changed_without_checksum(tmp_path):
    uri = str(tmp_path / "n")
    _nullable(uri)
    _patch(os.path.join(_frag(uri), "a0.tdb"), 4, 0x7F)   # high byte of the last int32
    errs = _errors(uri)
    assert any(f.code == "tile-stat-mismatch" and f.source.endswith("a0.tdb")
               and "sum" in f.message for f in errs), errs


def test_bookkeeping(tmp_path, tiledb_array):
    src = tiledb_array("multi_fragment")
    uri = str(tmp_path / "m")
    shutil.copytree(src, uri)
    assert not _errors(uri)
    wrts = sorted(glob.glob(os.path.join(uri, "__commits", "*.wrt")))
    os.remove(wrts[0])                     # a fragment without its commit
    shutil.copy(wrts[1], os.path.join(uri, "__commits", "__9_9_" + "0" * 32 + "_22.wrt"))
    frags = sorted(glob.glob(os.path.join(uri, "__fragments", "*")))
    os.remove(os.path.join(frags[-1], "a0.tdb"))   # a data file missing
    report = verify_report(formats.open(uri))
    codes = {f.code for f in report.findings}
    assert {"fragment-commit-lost", "commit-without-fragment", "fragment-file-missing"} <= codes
    assert report.exit_code() == 1

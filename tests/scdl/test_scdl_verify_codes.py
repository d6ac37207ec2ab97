"""`verify` on damaged copies of a bionemo-scdl archive: each cross-file check is a finding
with its stable code, at the file that holds the offending item."""
from __future__ import annotations

import os
import shutil

import numpy as np

from arrayscope import formats
from arrayscope.formats.core.verify import verify_report
from tests.support import paths

BASIC = os.path.join(paths.DATA, "scdl", "basic")


def _damaged(tmp_path, fname, change):
    dst = str(tmp_path / "basic")
    shutil.copytree(BASIC, dst)
    # the arrays are raw memory maps typed by header.sch: take the dtype arrayscope read
    name = {"row_ptr.npy": "ROWPTR", "col_ptr.npy": "COLPTR",
            "neighbor_indptr.npy": "NEIGHBOR_INDICES_PTR",
            "neighbor_indices.npy": "NEIGHBOR_INDICES"}[fname]
    dtype = formats.open(BASIC).model.arrays[name].items.dtype
    a = np.memmap(os.path.join(dst, fname), dtype=dtype, mode="r+")
    change(a)
    a.flush()
    del a
    return verify_report(formats.open(dst))


def _codes(report, source):
    return {f.code for f in report.findings if f.status == "error" and f.source == source}


def test_clean_archive():
    report = verify_report(formats.open(BASIC))
    assert report.exit_code() == 0 and not report.findings


def test_decreasing_row_pointer(tmp_path):
    def change(a):
        a[1] = a[-1]   # row 0 takes every value: the next pointer decreases
    report = _damaged(tmp_path, "row_ptr.npy", change)
    assert "scdl-row-pointers" in _codes(report, "row_ptr.npy")
    assert report.exit_code() == 1


def test_row_pointers_not_ending_at_nnz(tmp_path):
    def change(a):
        a[-1] = a[-1] + 1
    report = _damaged(tmp_path, "row_ptr.npy", change)
    assert "scdl-row-pointers" in _codes(report, "row_ptr.npy")


def test_column_index_out_of_range(tmp_path):
    def change(a):
        a[0] = np.iinfo(a.dtype).max
    report = _damaged(tmp_path, "col_ptr.npy", change)
    assert "scdl-column-index" in _codes(report, "col_ptr.npy")


def test_garbage_neighbor_pointers_are_found(tmp_path):
    """neighbor_indptr.npy overwritten with noise (the library slices it unchecked)."""
    def change(a):
        a[:] = np.random.default_rng(3).integers(0, 2 ** 40, size=len(a), dtype=np.uint64)
    report = _damaged(tmp_path, "neighbor_indptr.npy", change)
    assert _codes(report, "neighbor_indptr.npy") == {"scdl-neighbors"}
    assert report.exit_code() == 1


def test_neighbor_index_past_the_cells(tmp_path):
    def change(a):
        a[7] = 20   # 20 cells: indices 0..19
    report = _damaged(tmp_path, "neighbor_indices.npy", change)
    [f] = [f for f in report.findings if f.source == "neighbor_indices.npy"]
    assert f.code == "scdl-neighbors" and "NEIGHBOR_INDICES[7] = 20" in f.message

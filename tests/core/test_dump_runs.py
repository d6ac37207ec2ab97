"""Dumps grow with structure, not with cells: a run of homogeneous elements (an SCDL array,
a Zarr chunk's decoded cells) is one leaf covering its bytes, with its values a `values`
call away. The same store with 100× the cells dumps the same number of nodes."""
import json
import os
import shutil

import numpy as np
import zarr

from arrayscope.explorer.cli import main
from tests.support import paths


def _dump(capsys, path):
    assert main(["dump", path, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _count(n):
    return 1 + sum(_count(c) for c in n["children"])


def _leaves(n):
    return [n] if not n["children"] else [x for c in n["children"] for x in _leaves(c)]


def _scdl(dest, nnz):
    """bionemo-scdl 0.0.8's layout (the legacy fixture), with `nnz` stored values."""
    shutil.copytree(os.path.join(paths.DATA, "scdl", "legacy_008"), dest)
    rng = np.random.default_rng(nnz)
    rng.random(nnz, dtype=np.float32).tofile(os.path.join(dest, "data.npy"))
    rng.integers(0, 50, nnz).astype(np.uint32).tofile(os.path.join(dest, "col_ptr.npy"))
    np.array([0] + [nnz] * 12, np.uint64).tofile(os.path.join(dest, "row_ptr.npy"))
    return dest


def test_scdl_dump_does_not_grow_with_cells(tmp_path, capsys):
    small = _dump(capsys, _scdl(str(tmp_path / "small"), 100))
    big = _dump(capsys, _scdl(str(tmp_path / "big"), 100_000))
    assert _count(big) == _count(small)
    data = next(c for c in big["children"] if c["name"] == "data.npy")["children"][0]
    assert (data["size"], data["children"]) == (400_000, [])
    assert data["status"] == "ok"


def _zarr(dest, rows):
    """An anndata-like X written by zarr 3 (bytes + zstd)."""
    g = zarr.open_group(dest, mode="w", zarr_format=3)
    x = g.create_array("X", shape=(rows, 50), chunks=(rows // 4, 50), dtype="float32")
    x[:] = np.arange(rows * 50, dtype=np.float32).reshape(rows, 50)
    return dest


def test_zarr_dump_does_not_grow_with_cells(tmp_path, capsys):
    small = _dump(capsys, _zarr(str(tmp_path / "small.zarr"), 8))
    big = _dump(capsys, _zarr(str(tmp_path / "big.zarr"), 800))
    assert _count(big) == _count(small)
    runs = [n for n in _leaves(big) if n["kind"] == "cells"]
    assert len(runs) == 4 and sum(n["size"] for n in runs) == 800 * 50 * 4

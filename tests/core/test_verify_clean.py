"""No false alarms: every clean fixture of the suite, written by a real library, verifies
with exit 0 and no error (issue 10's 'done when'). Writer quirks may appear, as infos."""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest

from arrayscope import formats
from arrayscope.formats.core.verify import verify_report
from tests.support import paths
from tests.support.tiledb_arrays import CATALOG, KEY


def _assert_clean(path, key=None):
    report = verify_report(formats.open(path, key=key))
    errors = [f.line() for f in report.findings if f.status == "error"]
    assert not errors, errors[:10]
    assert report.exit_code() == 0, [f.line() for f in report.findings][:10]
    assert report.tally.files, "nothing was checked"


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_tiledb_py_catalogue(tiledb_array, name):
    """Every array of tests/support/tiledb_arrays.py (tiledb-py 0.36.1)."""
    key = KEY.encode() if name == "encrypted" else None
    _assert_clean(tiledb_array(name), key)


def _dirs(root, marker):
    return sorted(os.path.dirname(p) for p in glob.glob(os.path.join(root, "**", marker),
                                                          recursive=True))


TDB_VERSIONS = _dirs(os.path.join(paths.DATA, "tiledb_versions"), "__schema")
WRITER_RULES = _dirs(os.path.join(paths.DATA, "writer_rules"), "__schema")


@pytest.mark.parametrize("path", TDB_VERSIONS + WRITER_RULES,
                         ids=[os.path.relpath(p, paths.DATA) for p in TDB_VERSIONS + WRITER_RULES])
def test_old_libtiledb_fixtures(path):
    _assert_clean(path)


def test_fixture_sets_are_present():
    assert len(TDB_VERSIONS) >= 21 and len(WRITER_RULES) >= 9
    assert len(SCDL) >= 5 and len(ZARR2) >= 5


# Fixtures made to be wrong are not clean: each is named with what is wrong in it.
NOT_CLEAN = {
    "trap_truncated_chunk": "a chunk cut short on purpose",
    "concat_stale": "bionemo-scdl's stale header after concatenation: a real writer bug",
    "header_api": "loose header files, no archive",
}
ZARR2 = sorted(p for p in glob.glob(os.path.join(paths.DATA, "zarr", "v2_*", "*"))
               if os.path.isdir(p) and os.path.basename(p) not in NOT_CLEAN)


@pytest.mark.parametrize("path", ZARR2, ids=[os.path.basename(p) for p in ZARR2])
def test_zarr2_fixtures(path):
    _assert_clean(path)


SCDL = sorted(p for p in glob.glob(os.path.join(paths.DATA, "scdl", "*"))   # (no __pycache__)
              if os.path.isdir(p) and os.path.basename(p) not in NOT_CLEAN
              and not os.path.basename(p).startswith(("_", ".")))


@pytest.mark.parametrize("path", SCDL, ids=[os.path.basename(p) for p in SCDL])
def test_scdl_fixtures(path):
    _assert_clean(path)


SAMPLES = sorted(p for p in glob.glob(os.path.join(paths.SAMPLES, "*")) if os.path.isdir(p))


SOMA = os.path.join(paths.DATA, "soma", "pbmc68k")


def test_tiledbsoma_experiment():
    """scanpy's pbmc68k_reduced as tiledbsoma 2.3 writes it (every member array)."""
    _assert_clean(SOMA)


@pytest.mark.parametrize("path", SAMPLES, ids=[os.path.basename(p) for p in SAMPLES])
def test_bundled_samples(path):
    key = None
    if os.path.exists(path + ".key"):
        from arrayscope.formats.core.context import parse_key

        with open(path + ".key", "rb") as f:
            key = parse_key(f.read())
    _assert_clean(path, key)


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_stores(tmp_path, fmt):
    """Arrays written here by zarr-python 3 (formats 2 and 3): numeric, structured, object
    strings."""
    import zarr

    root = zarr.open_group(str(tmp_path / "s.zarr"), mode="w", zarr_format=fmt)
    a = root.create_array("ints", shape=(100,), chunks=(30,), dtype="int32")
    a[:] = np.arange(100, dtype=np.int32)
    b = root.create_array("floats", shape=(10, 10), chunks=(4, 4), dtype="float64")
    b[:] = np.linspace(0, 1, 100).reshape(10, 10)
    for name in ("ints", "floats"):
        _assert_clean(str(tmp_path / "s.zarr" / name))


def test_array_with_more_tiles_than_are_built(tmp_path):
    """A data file with more tiles than the tree builds (a lazy TileRun): every chunk is
    still checked, and the array verifies clean."""
    import tiledb

    from arrayscope.formats.tiledb.parse.data_files import LAZY_TILES

    uri = str(tmp_path / "many")
    n = 2 * (LAZY_TILES + 1) * 2
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=2, dtype=np.uint64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr(
        "a", dtype=np.int64, filters=[tiledb.BitWidthReductionFilter(), tiledb.ZstdFilter()])]))
    with tiledb.open(uri, "w") as A:
        A[:] = np.arange(n, dtype=np.int64)
    report = verify_report(formats.open(uri))
    assert report.exit_code() == 0, [f.line() for f in report.findings]
    assert report.tally.tiles >= n // 2

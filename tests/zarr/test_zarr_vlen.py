"""Object arrays (vlen-utf8 / vlen-bytes) and struct field names with '/' in stores written by
zarr-python 3.1.6, formats 2 and 3 (anndata writes both): decoded, checked, never reported
as damage; a damaged item table is an error at its place."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from arrayscope import formats
from arrayscope.explorer.cli import main
from arrayscope.formats.core.verify import verify_report

WORDS = ["a", "bb", "", "dddd", "é✓", "f" * 40, "g"]


def _store(root, fmt):
    import zarr

    g = zarr.open_group(str(root), mode="w", zarr_format=fmt)
    s = g.create_array("s", shape=(len(WORDS),), chunks=(3,), dtype=str)
    s[:] = np.array(WORDS, dtype=object)
    rec = g.create_array("rec", shape=(4,), chunks=(3,),
                         dtype=[("CD4+/CD25 T Reg", "<f4"), ("b c", "<i4")])
    rec[:] = np.array([(1.5, 1), (2.5, 2), (3.5, 3), (4.5, 4)], dtype=rec.dtype)
    return str(root)


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def store(tmp_path, request):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _store(tmp_path / "s.zarr", request.param)


def _values(capsys, *argv):
    code = main(["values", *argv, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)["fragments"][0]["values"]


def test_store_verifies_clean(store):
    report = verify_report(formats.open(store))
    assert report.exit_code() == 0, [f.line() for f in report.findings]
    assert not report.findings


def test_vlen_utf8_values(store, capsys):
    assert _values(capsys, os.path.join(store, "s"), "--field", "value") == WORDS
    assert _values(capsys, store, "--field", "s/value") == WORDS


def test_field_names_with_slash_spaces_and_plus(store, capsys):
    assert _values(capsys, store, "--field", "rec/CD4+/CD25 T Reg") == [1.5, 2.5, 3.5, 4.5]
    assert _values(capsys, os.path.join(store, "rec"), "--field", "CD4+/CD25 T Reg") == \
        [1.5, 2.5, 3.5, 4.5]
    assert _values(capsys, store, "--field", "rec/b c") == [1, 2, 3, 4]


def _chunk_files(arr):
    out = []
    for d, _dirs, files in os.walk(arr):
        out += [os.path.join(d, f) for f in files if not f.startswith(".") and f != "zarr.json"]
    return sorted(out)


def test_uncompressed_vlen_damage_is_located(tmp_path):
    """An item length pointing past the chunk is an error at the chunk file."""
    import zarr

    arr = zarr.open_array(str(tmp_path / "a.zarr"), mode="w", zarr_format=2, shape=(4,),
                          chunks=(4,), dtype=str, compressor=None)
    arr[:] = np.array(["ab", "c", "de", "f"], dtype=object)
    (chunk,) = _chunk_files(str(tmp_path / "a.zarr"))
    with open(chunk, "r+b") as f:
        f.seek(4)
        f.write((200).to_bytes(4, "little"))
    report = verify_report(formats.open(str(tmp_path / "a.zarr")))
    errors = [f for f in report.findings if f.status == "error"]
    assert report.exit_code() == 1 and errors
    assert errors[0].source == os.path.basename(chunk) and "item 0" in errors[0].message

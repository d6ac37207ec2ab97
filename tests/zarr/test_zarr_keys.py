"""Files in an array directory that are no chunk of it, on copies of real stores: a key
outside the chunk grid has its own finding code (file, key, grid shape); a name that no key
spells keeps its own. Neither is read by `values`."""
from __future__ import annotations

import os
import shutil

import pytest

from arrayscope import formats
from arrayscope.formats.core.findings import ZARR_NOT_A_KEY, ZARR_OUTSIDE_GRID
from arrayscope.formats.core.verify import verify
from arrayscope.formats.zarr import PLUGIN
from tests.support import paths

TS = os.path.join(paths.DATA, "zarr", "tensorstore_0.1.86")


@pytest.mark.parametrize("name,outside,stray,grid", [
    ("v2_i4_blosc", "3.0", "0.x", [3, 3]),           # v2 keys, '.' separator
    ("v3_i2_default", "c/0/3", "c/00/1", [3, 3]),      # v3 default keys
])
def test_outside_grid_and_not_a_key(tmp_path, name, outside, stray, grid):
    path = str(tmp_path / name)
    shutil.copytree(os.path.join(TS, name), path)
    want = PLUGIN.values(formats.open(path), "value")[0]["values"]
    some_chunk = "0.0" if name.startswith("v2") else "c/0/0"
    for key in (outside, stray):
        os.makedirs(os.path.dirname(os.path.join(path, key)), exist_ok=True)
        shutil.copy(os.path.join(path, some_chunk), os.path.join(path, key))
    doc = formats.open(path)
    found = [f for f in verify(doc) if f.status != "info"]
    by_code = {f.code: f for f in found}
    assert sorted(by_code) == sorted([ZARR_OUTSIDE_GRID, ZARR_NOT_A_KEY]) and len(found) == 2
    out = by_code[ZARR_OUTSIDE_GRID]
    assert out.status == "warning" and out.source.endswith(outside)
    assert repr(outside) in out.message and str(grid) in out.message
    assert by_code[ZARR_NOT_A_KEY].source.endswith(stray)
    assert repr(stray) in by_code[ZARR_NOT_A_KEY].message
    # neither is read: the values are the store's own
    [entry] = PLUGIN.values(doc, "value")
    assert "error" not in entry and entry["values"] == want


def test_parse_key_vs_coords_of():
    doc = formats.open(os.path.join(TS, "v3_i2_default"))
    meta = doc.model.arrays["."]
    assert meta.grid == (3, 3)
    assert meta.coords_of("c/2/2") == meta.parse_key("c/2/2") == (2, 2)
    assert meta.coords_of("c/3/0") is None and meta.parse_key("c/3/0") == (3, 0)
    assert meta.parse_key("c/01/0") is None and meta.parse_key("0/0") is None

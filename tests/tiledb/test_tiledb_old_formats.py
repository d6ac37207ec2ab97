"""Formats 1–9 through the command line (issue 15 item 6, issue 10 item 4): the format 1
array built by tests/data/tiledb_versions/make_format1.py (an equivalent of TileDB's
`non_split_coords_v1_4_0`, read by libtiledb 2.30 as a = d1 = [1, 2, 3, 4], d2 = [10] * 4),
and what `values` says when fragments exist but cannot be read."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from arrayscope.explorer.cli import main
from arrayscope.formats.tiledb.values.legacy_coords import dimension_values
from tests.support import paths

VERSIONS = os.path.join(paths.DATA, "tiledb_versions")
FORMAT1 = os.path.join(VERSIONS, "1_1.4.0", "sparse")


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("field,want", [("a", [1, 2, 3, 4]), ("d1", [1, 2, 3, 4]),
                                        ("d2", [10, 10, 10, 10])])
def test_format1_values_equal_libtiledb(capsys, field, want):
    code, out, err = run(capsys, "values", FORMAT1, "--field", field, "--json")
    assert code == 0, err
    frags = json.loads(out)["fragments"]
    assert [f["values"] for f in frags] == [want]


def test_format1_verifies_clean(capsys):
    code, out, err = run(capsys, "verify", FORMAT1)
    assert code == 0, out + err


def test_values_on_unreadable_fragments_fails_instead_of_answering_empty(capsys, tmp_path):
    """A fragment folder arrayscope cannot read (here: renamed out of the fragment naming):
    no empty answer with exit 0, but exit 1 and the file that was not read."""
    arr = tmp_path / "sparse"
    shutil.copytree(FORMAT1, arr)
    frag = next(p for p in arr.iterdir() if p.is_dir())
    frag.rename(arr / "not_a_fragment_name")
    code, out, err = run(capsys, "values", str(arr), "--field", "a", "--json")
    assert code == 1
    assert "no fragment of 'a' could be read" in err and "not_a_fragment_name" in err


def test_values_on_an_array_without_fragments_is_an_empty_answer(capsys, tmp_path):
    arr = tmp_path / "sparse"
    shutil.copytree(FORMAT1, arr)
    shutil.rmtree(next(p for p in arr.iterdir() if p.is_dir()))
    code, out, err = run(capsys, "values", str(arr), "--field", "a", "--json")
    assert (code, json.loads(out)) == (0, {"fragments": []}), err


def test_coordinates_zipped_in_format1_split_per_tile_from_format2():
    # two tiles of a 2-D int32 domain: (1, 10) (2, 20) | (3, 30)
    zipped = np.array([1, 10, 2, 20, 3, 30], "<i4").tobytes()
    split = np.array([1, 2, 10, 20, 3, 30], "<i4").tobytes()
    bounds = [(0, 16), (16, 24)]
    for buf, version in ((zipped, 1), (split, 2)):
        got = [np.frombuffer(dimension_values(buf, bounds, 2, d, 4, version), "<i4").tolist()
               for d in (0, 1)]
        assert got == [[1, 2, 3], [10, 20, 30]], version
    with pytest.raises(ValueError):
        dimension_values(zipped[:20], [(0, 20)], 2, 0, 4, 1)

"""A TileDB group hierarchy as deep as its writer likes (tiledb-py nests 600 groups, an
array at the bottom) opens and verifies clean: no RecursionError on the way (the group walk
of verify and the confined opens are loops), every level a group, the array's values as
tiledb reads them; a file that deep opens without a walk from the root each time."""
from __future__ import annotations

import os

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.explorer.cli import main
from arrayscope.formats.core import confined
from arrayscope.formats.core.verify import verify

DEPTH = 600   # past recursion (a frame or more a level, a limit of 1 000)


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("deep") / "g")
    paths = [root]
    tiledb.Group.create(root)
    for _ in range(DEPTH):
        paths.append(paths[-1] + "/g")
        tiledb.Group.create(paths[-1])
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.int64))
    tiledb.Array.create(paths[-1] + "/arr", tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int32)]))
    with tiledb.open(paths[-1] + "/arr", "w") as A:
        A[:] = np.arange(10, dtype=np.int32) * 7
    for parent in paths:
        with tiledb.Group(parent, "w") as G:
            G.add("arr" if parent == paths[-1] else "g", name="arr" if parent == paths[-1] else "g",
                  relative=True)
    with tiledb.open(paths[-1] + "/arr") as A:   # what the library itself reads at the bottom
        assert A[:]["a"].tolist() == list(range(0, 70, 7))
    return root


def test_a_deep_group_verifies_clean(deep, capsys):
    doc = formats.open(deep)
    found = verify(doc)
    assert [f for f in found if f.status == "error"] == [], found[:3]
    assert not any("Recursion" in (f.message or "") or "nesting deeper" in (f.message or "")
                   for f in found)
    member = "/".join(["g"] * DEPTH + ["arr"])
    assert main(["values", deep, "--array", member, "--field", "a", "--json"]) == 0
    assert '"values":[0,7,14,21,28,35,42,49,56,63]' in capsys.readouterr().out


def test_opens_that_deep_walk_from_the_nearest_open_folder(deep, monkeypatch):
    opened = []
    real_open = os.open

    def counting(path, flags, *a, **kw):
        opened.append(path)
        return real_open(path, flags, *a, **kw)
    real = os.path.realpath(deep)
    bottom = os.path.join(real, *["g"] * DEPTH, "arr", "__schema")
    schema = sorted(os.listdir(bottom))[0]
    monkeypatch.setattr(confined.os, "open", counting)
    for _ in range(3):
        fd = confined.open_beneath(real, os.path.join(bottom, schema), os.O_RDONLY)
        os.close(fd)
    assert len(opened) <= DEPTH + 10   # one walk, then from the kept folder (was 3 walks)
    held = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    assert held < 200   # the walk closes the folders it passes (a descriptor a level: EMFILE)

"""A Zarr hierarchy as deep as its writer likes (1 200 nested groups, an array at the bottom)
opens and verifies with a work list: no RecursionError, every level checked, the array's
values as zarr reads them."""
from __future__ import annotations

import os

import numpy as np
import pytest
import zarr

from arrayscope import formats
from arrayscope.formats.core.verify import verify


def _remove(root: str) -> None:
    """Bottom up, in a loop: shutil.rmtree (pytest's cleanup of tmp_path) calls itself a
    level, a RecursionError at 1 200."""
    dirs, stack = [], [root]
    while stack:
        d = stack.pop()
        dirs.append(d)
        with os.scandir(d) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                else:
                    os.unlink(e.path)
    for d in reversed(dirs):
        os.rmdir(d)


@pytest.fixture
def deep_root(tmp_path):
    root = str(tmp_path / "deep.zarr")
    yield root
    if os.path.isdir(root):
        _remove(root)


# 600 levels: deeper than recursion would allow (two frames a level, a limit of 1 000)
@pytest.mark.parametrize("depth", [600, pytest.param(1200, marks=pytest.mark.slow)])
def test_a_deep_hierarchy_is_opened_and_checked(deep_root, depth):
    root = deep_root
    zarr.open_group(root, mode="w")
    path = root
    for _ in range(depth):
        path = os.path.join(path, "g")
        zarr.open_group(path, mode="w")
    data = np.arange(12, dtype=np.int32)
    z = zarr.create_array(os.path.join(path, "a"), shape=data.shape, chunks=(4,), dtype=data.dtype)
    z[...] = data
    doc = formats.open(root)
    node, levels = doc.root, 0
    while True:
        groups = [c for c in node.iter_children() if c.name == "g"]
        if not groups:
            break
        node, levels = groups[0], levels + 1
        assert node.display == "zarr v3 group"
    assert levels == depth
    array = next(c for c in node.iter_children() if c.name == "a")
    assert array.display.startswith("zarr v3 array, shape [12], chunks [4]")
    findings = verify(doc)
    assert [f for f in findings if f.status == "error"] == []
    assert not any("Recursion" in (f.message or "") for f in findings)
    # what zarr itself reads at the bottom
    assert zarr.open_array(os.path.join(path, "a"))[...].tolist() == data.tolist()

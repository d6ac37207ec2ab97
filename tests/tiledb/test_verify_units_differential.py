"""verify of a lazily opened array split into fragment-folder units (`verify_units.FolderWork`:
each folder built, checked and released by a worker, the caller building no fragment's
tree) gives the single-process streamed verify's findings, in the same order: on the arrays
every TileDB version wrote (tests/data) and on damaged copies of them (tests/support/
mutations: flips, runs, cuts, inflated lengths, swaps). Units of any size (MIN_TASK_BYTES
1), in this process: a unit's result is plain data, so a worker process gives the same
(tests/remote/test_verify_tasks.py runs them on local processes and Dask)."""
from __future__ import annotations

import os
import random
from typing import List

import pytest

from arrayscope.formats.core import verify_tasks
from arrayscope.formats.core.executors import InProcess
from arrayscope.formats.core.verify import open_for_verify, verify
from arrayscope.formats.tiledb.model import layout
from arrayscope.formats.tiledb.verify.verify_units import FolderWork
from tests.support.mutations import mutate
from tests.support.paths import REPO


def committed_arrays() -> List[str]:
    out = []
    for sub in ("tiledb_versions", "tiledb_updates", "writer_rules"):
        for d, dirs, _files in os.walk(os.path.join(REPO, "tests", "data", sub)):
            if layout.is_array_dir(d):
                dirs[:] = []
                out.append(d)
    return sorted(out)


ARRAYS = committed_arrays()


@pytest.fixture(autouse=True)
def small_units(monkeypatch):
    monkeypatch.setattr(verify_tasks, "MIN_TASK_BYTES", 1)


def same_in_units(path: str) -> int:
    """Assert the units' findings are the single-process ones; their number."""
    ref = verify(open_for_verify(path))
    doc = open_for_verify(path)
    works = [w for t, _u in verify_tasks.plan(doc, 2) for w in t.units]
    assert all(isinstance(w, FolderWork) for w in works), path
    ex = InProcess()
    ex.workers = 2
    assert verify(open_for_verify(path), ex) == ref, path
    return len(ref)


def test_the_committed_arrays_are_many_and_stream():
    assert len(ARRAYS) >= 80
    assert all(open_for_verify(d).lazy for d in ARRAYS[::10])


@pytest.mark.parametrize("path", ARRAYS[::6], ids=lambda p: os.path.relpath(p, REPO))
def test_committed_arrays_verify_the_same_in_units(path):
    same_in_units(path)


@pytest.mark.parametrize("path", ARRAYS[3::17], ids=lambda p: os.path.relpath(p, REPO))
def test_damaged_copies_verify_the_same_in_units(path, tmp_path):
    rng = random.Random(len(path))
    found = 0
    for k in range(4):
        dst = str(tmp_path / f"m{k}")
        m = mutate(path, dst, rng)
        try:
            found += same_in_units(dst)
        except AssertionError as e:
            raise AssertionError(f"{m}: {e}") from None
    assert found > 0   # the damage is seen


@pytest.mark.slow
def test_every_committed_array_and_damaged_copies_verify_the_same_in_units(tmp_path):
    for path in ARRAYS:
        same_in_units(path)
        rng = random.Random(path)
        for k in range(3):
            dst = str(tmp_path / "m")
            m = mutate(path, dst, rng)
            try:
                same_in_units(dst)
            except AssertionError as e:
                raise AssertionError(f"{m}: {e}") from None

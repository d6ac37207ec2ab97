"""`fragments --at T` on consolidated arrays, against libtiledb 2.30 (tiledb-py 0.36.1).

Arrays: dense and sparse (duplicates allowed), three writes at 10, 20, 30 of overlapping
ranges, then each consolidation: fragments (with and without vacuum), fragment metadata,
commits, and all three in turn (with and without vacuum). Readers at every write
timestamp, every midpoint, before the first write and now.

Oracles (tiledb-py cannot open `FragmentInfoList` at a timestamp: libtiledb's
`FragmentInfo` always loads `[0, now]`):
- now: `FragmentInfoList(uri).uri` is exactly the fragments the model says are visible;
- at T: libtiledb loads a fragment exactly when moving its `__fragment_metadata.tdb` aside
  makes opening and reading the array at `(0, T)` fail — asked of every fragment in turn;
- the cells the read at T returns are those the visible fragments hold of writes by T.
"""
from __future__ import annotations

import glob
import json
import os

import numpy as np
import pytest
import tiledb

from arrayscope.explorer.cli import main
from arrayscope.formats.core.document import Document
from arrayscope.formats.tiledb.health.array import array_health

WRITES = {10: (0, 8), 20: (8, 16), 30: (4, 20)}     # timestamp -> cells [lo, hi)
TIMES = (5, 10, 15, 20, 25, 30, None)                # None: now
MODES = {
    "consolidated": (["fragments"], False),
    "vacuumed": (["fragments"], True),
    "fragment_meta": (["fragment_meta"], False),
    "commits": (["commits"], False),
    "all": (["fragments", "fragment_meta", "commits"], False),
    "all_vacuumed": (["fragments", "fragment_meta", "commits"], True),
}


def _build(uri: str, sparse: bool, mode: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 23), tile=8, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=sparse, allows_duplicates=sparse,
        attrs=[tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    for t, (lo, hi) in WRITES.items():
        with tiledb.open(uri, "w", timestamp=t) as A:
            if sparse:
                A[np.arange(lo, hi)] = np.arange(lo, hi) + t * 1000
            else:
                A[lo:hi] = np.arange(lo, hi) + t * 1000
    steps, vacuum = MODES[mode]
    for step in steps:
        # (a small buffer: the default 50 MB one costs libtiledb seconds per call)
        tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": step,
                                                       "sm.consolidation.buffer_size": 1 << 20}))
    if vacuum:
        tiledb.vacuum(uri)


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    root = tmp_path_factory.mktemp("health_at")
    out = {}
    for sparse in (False, True):
        for mode in MODES:
            uri = str(root / f"{'sparse' if sparse else 'dense'}_{mode}")
            _build(uri, sparse, mode)
            out[(sparse, mode)] = uri
    return out


def _open_at(uri: str, at):
    return tiledb.open(uri, timestamp=(0, at) if at is not None else None, ctx=tiledb.Ctx())


def _loaded_by_libtiledb(uri: str, at) -> set:
    """The fragments libtiledb loads at (0, at): those whose metadata file it needs."""
    out = set()
    for frag in sorted(glob.glob(os.path.join(uri, "__fragments", "*"))):
        meta = os.path.join(frag, "__fragment_metadata.tdb")
        aside = meta + ".aside"
        os.rename(meta, aside)
        try:
            with _open_at(uri, at) as A:
                A[:]
        except tiledb.TileDBError:
            out.add(os.path.basename(frag))
        finally:
            os.rename(aside, meta)
    return out


def _expected_cells(visible, sparse: bool, at) -> list:
    """What a read at `at` returns from the visible fragments: the cells of the writes each
    holds (t1 <= t <= t2) made by `at`; dense: the latest write of each cell wins."""
    cells: list = []
    dense = np.full(24, np.iinfo(np.int64).min, dtype=np.int64)
    for name in sorted(visible, key=lambda n: tuple(int(x) for x in n.split("_")[2:4])):
        t1, t2 = (int(x) for x in name.split("_")[2:4])
        for t, (lo, hi) in sorted(WRITES.items()):
            if t1 <= t <= t2 and (at is None or t <= at):
                if sparse:
                    cells += [(d, d + t * 1000) for d in range(lo, hi)]
                else:
                    dense[lo:hi] = np.arange(lo, hi) + t * 1000
    return sorted(cells) if sparse else dense.tolist()


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_visible_at_t_is_what_libtiledb_loads(arrays, sparse, mode):
    uri = arrays[(sparse, mode)]
    for at in TIMES:
        h = array_health(Document(uri), at)
        visible = {f.name for f in h.visible}
        assert h.open_error is None and h.read_error is None
        assert visible == _loaded_by_libtiledb(uri, at), at
        if at is None:
            assert visible == {os.path.basename(u) for u in tiledb.FragmentInfoList(uri).uri}
        with _open_at(uri, at) as A:
            got = A[:]
        if sparse:
            cells = sorted(zip(got["d"].tolist(), got["a"].tolist()))
        else:
            cells = got["a"].tolist()
        assert cells == _expected_cells(visible, sparse, at), at


def test_dense_consolidated_fragment_not_seen_before_its_end(arrays, capsys):
    """The issue's case: a dense `__10_30_...` is not read at 10 or 20 (the originals are),
    nor at all before 30 once vacuumed; the command line says so and why."""
    uri = arrays[(False, "consolidated")]
    assert main(["fragments", uri, "--at", "20", "--json"]) == 0
    rows = {r["name"].split("_")[2] + "_" + r["name"].split("_")[3]: r
            for r in json.loads(capsys.readouterr().out)["fragments"]}
    assert {k for k, r in rows.items() if r["visible"]} == {"10_10", "20_20"}
    assert "not inside [0, 20]" in rows["10_30"]["reason"]
    vac = arrays[(False, "vacuumed")]
    assert main(["fragments", vac, "--at", "25", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["fragments"]
    assert row["visible"] is False and row["timestamps"] == [10, 30]
    assert main(["fragments", vac, "--at", "30", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fragments"][0]["visible"] is True


def test_sparse_consolidated_fragment_read_in_part(arrays):
    """Sparse, format 15 and later: the consolidated fragment carries each cell's timestamp,
    so a reader at 20 reads it (the writes of 10 and 20 from it), not the originals."""
    h = array_health(Document(arrays[(True, "consolidated")]), 20)
    [f] = h.visible
    assert f.timestamps == (10, 30) and "cells written by T" in f.reason

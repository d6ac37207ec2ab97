"""Update commits (`.upd`) written by libtiledb 2.30 itself (tests/data/tiledb_updates,
through its experimental update query: tiledb-py cannot write them): their bytes annotated
(the negated condition, the update values), and the fragment model against what tiledb-py
0.36.1 reads at each T — libtiledb applies an update's condition as a delete and never its
values."""
from __future__ import annotations

import os

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core.document import Document
from arrayscope.formats.tiledb.health.array import array_health
from tests.support.paths import DATA

ARRAY = os.path.join(DATA, "tiledb_updates", "sparse_upd")
# What make_fixture.py wrote: fragment cells (x -> a) by write time, and each update's
# condition as the user gave it (libtiledb stores it negated).
CELLS = {1: {x: x for x in range(50)}, 3: {x: x - 55 for x in range(50, 60)}}
UPDATES = {2: lambda x, a: a < 10, 4: lambda x, a: x > 55 and a < 3}


def _upd_files():
    d = os.path.join(ARRAY, "__commits")
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".upd"))


def test_the_fixture_holds_two_update_commits():
    assert [os.path.basename(p).split("_")[2] for p in _upd_files()] == ["2", "4"]


def test_update_bytes_are_annotated_clean():
    doc = formats.open(ARRAY)
    try:
        assert not doc.diagnostics()
        nodes = {n.name: n for n in doc.root.walk() if n.name.endswith(".upd")}
        assert len(nodes) == 2
        (c2, v2), (c4, v4) = (nodes[os.path.basename(p)].data for p in _upd_files())
        # stored negated: the cells to keep
        assert c2.text() == "a >= 10"
        assert c4.text() == "(x <= 55 OR a >= 3)"
        assert [(v.field_name, v.value) for v in v2] == [("b", 7.25)]
        assert [(v.field_name, v.value) for v in v4] == [("a", -1), ("s", "hi")]
        # every byte of both files is explained
        for p in _upd_files():
            cov = doc.coverage().get(os.path.relpath(p, ARRAY).replace(os.sep, "/"))
            assert cov is not None and cov[0] == cov[1] == os.path.getsize(p), cov
    finally:
        doc.close()


def _expected_cells(h, start, at):
    """x of the cells a reader reads, by the model: the cells of each write inside a
    fragment it sees (a consolidated fragment holds several, each with its own time) and
    inside [start, at], less those an update it applies to that fragment matches, when the
    write is not after the update."""
    out = set()
    applied = {int(c.name.split("_")[2]): set(c.applies_to) for c in h.conditions
               if c.considered}
    for f in h.visible:
        t1, t2 = f.timestamps
        for w, cells in CELLS.items():
            if not (t1 <= w <= t2 and start <= w <= at):
                continue
            for x, a in cells.items():
                if not any(f.name in frags and w <= u and UPDATES[u](x, a)
                           for u, frags in applied.items()):
                    out.add(x)
    return out


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """The fixture as written, and copies with its commits or its fragments consolidated by
    tiledb-py (a `.con` of the two writes; a fragment holding both writes)."""
    import shutil

    root = tmp_path_factory.mktemp("updates")
    out = {"written": ARRAY}
    for mode in ("commits", "fragments"):
        dst = str(root / mode)
        shutil.copytree(ARRAY, dst)
        tiledb.consolidate(dst, config=tiledb.Config({"sm.consolidation.mode": mode}))
        out[mode] = dst
    return out


@pytest.mark.parametrize("variant", ["written", "commits", "fragments"])
@pytest.mark.parametrize("start,at", [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (2, 3), (2, 4),
                                      (4, 4)])
def test_model_equals_what_tiledb_reads(variants, variant, start, at):
    uri = variants[variant]
    with Document(uri) as doc:
        h = array_health(doc, at, start=start)
    with tiledb.open(uri, timestamp=(start, at)) as A:
        got = A[:]
    assert sorted(_expected_cells(h, start, at)) == sorted(int(x) for x in got["x"])
    # libtiledb never applies the values: the cells it still returns keep theirs
    assert not np.any(got["b"] == 7.25) and all(v[0] in "cn" for v in got["s"])
    kinds = {c.kind for c in h.conditions}
    assert kinds == {"update"} and len(h.conditions) == 2   # once each, wherever listed
    # libtiledb 2.30 consolidates `.wrt` (and `.del`) commits into a `.con`, never `.upd`
    # ones: they stay files of their own
    assert {c.source.rsplit(".", 1)[-1] for c in h.conditions} == {"upd"}


def test_applies_to_follows_the_write_times():
    with Document(ARRAY) as doc:
        h = array_health(doc, 4)
    by_t = {int(c.name.split("_")[2]): c for c in h.conditions}
    frag = {f.timestamps[0]: f.name for f in h.fragments}
    assert by_t[2].considered and by_t[2].applies_to == [frag[1]]
    assert by_t[4].considered and by_t[4].applies_to == [frag[1], frag[3]]
    assert "applies its condition as a delete" in by_t[2].reason
    assert by_t[2].text == "sets b = 7.25 where NOT a >= 10"
    # at T = 3 the second update is in the future: not applied
    with Document(ARRAY) as doc:
        h3 = array_health(doc, 3)
    later = next(c for c in h3.conditions if c.name.startswith("__4_"))
    assert not later.considered and later.applies_to == [] and "after T" in later.reason

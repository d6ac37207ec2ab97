"""The fragments a reader sees at T, against tiledb-py on arrays it put into each state.

Oracles (tiledb-py 0.36.1, libtiledb 2.30):
- now: `FragmentInfoList` (the fragments an open at the current time loads, and `to_vacuum`);
  when it raises, the model must say that opening fails, with libtiledb's message;
- at T: a read with `timestamp=T` of the whole array: which writes' cells it returns (a cell
  written at t holds t * 1000 + x) must be exactly the writes inside the fragments the model
  says are visible at T (a consolidated fragment gives those written by T); when the read
  raises, the model must say the open or the read fails, with the message;
- deletes: the cells of x < 30 are gone from a write exactly when the model applies a delete
  to that write's fragment at T.
"""
from __future__ import annotations

import glob
import json
import os
import shutil

import pytest
import tiledb

from arrayscope.formats.core import health as H
from arrayscope.formats.core.document import Document
from arrayscope.formats.tiledb.health.array import array_health
from arrayscope.formats.tiledb.model import compat
from tests.support import health_arrays as HA
from tests.support import paths

NAMES = sorted(HA.CATALOG)
TIMES = (0, 1, 2, 3, 4, 5)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("health_arrays")
    return lambda name: HA.build(name, str(root))


def _health(uri, at=None, reader=None):
    return array_health(Document(uri), at, reader)


def _tiledb_error(fn):
    try:
        return fn(), None
    except tiledb.TileDBError as e:
        return None, str(e)


@pytest.mark.parametrize("name", NAMES)
def test_visible_now_equals_fragment_info(built, name):
    uri = built(name)
    h = _health(uri)
    fil, err = _tiledb_error(lambda: tiledb.FragmentInfoList(uri))
    if err is not None:
        assert h.open_error is not None and h.open_error in err, (h.open_error, err)
        return
    assert h.open_error is None
    assert {f.name for f in h.visible} == {os.path.basename(u) for u in fil.uri}
    to_vacuum = {os.path.basename(u.rstrip("/")) for u in fil.to_vacuum}
    assert {f.name for f in h.fragments if f.state == "vacuumable"} == to_vacuum


def _writes_in(frag_name: str, written, at: int):
    t1, t2 = (int(x) for x in frag_name.split("_")[2:4])
    return {w for w in written if t1 <= w <= t2 and w <= at}


@pytest.mark.parametrize("at", TIMES)
@pytest.mark.parametrize("name", NAMES)
def test_visible_at_t_equals_read(built, name, at):
    uri = built(name)
    h = _health(uri, at)

    def read():
        with tiledb.open(uri, timestamp=at) as A:
            return A[:]

    cells, err = _tiledb_error(read)
    if err is not None:
        got = h.open_error or h.read_error
        assert got is not None and got in err, (got, err)
        return
    assert h.open_error is None and h.read_error is None
    seen = {int(v) // 1000 for v in cells["v"]}
    expected = set()
    for f in h.visible:
        expected |= _writes_in(f.name, HA.written(name), at)
    assert seen == expected
    # deletes: a write lost its x < 30 cells exactly when a delete applies to its fragment
    xs = {}
    for x, v in zip(cells["x"], cells["v"]):
        xs.setdefault(int(v) // 1000, set()).add(int(x))
    applied = {f.name for f in h.visible if f.conditions}
    for f in h.visible:
        for w in _writes_in(f.name, HA.written(name), at):
            lost = not any(x < HA.DELETE_X for x in xs.get(w, ()))
            dels = [c for c in h.conditions if c.considered and c.kind == "delete"
                    and f.name in c.applies_to and c.timestamp is not None and w <= c.timestamp]
            assert lost == bool(dels), (f.name, w, lost, [c.name for c in h.conditions])
    assert applied <= {f.name for f in h.visible}


def _states(h):
    return sorted(f.state for f in h.fragments)


@pytest.mark.parametrize("name, states", [
    ("three_writes", ["committed"] * 3),
    ("consolidated", ["committed"] + ["vacuumable"] * 3),
    ("consolidated_vacuumed", ["committed"]),
    ("consolidated_partly", ["committed"] * 2 + ["vacuumable"] * 3),
    ("fragment_meta_consolidated", ["committed"] * 3),
    ("commits_consolidated", ["committed"] * 3),
    ("deletes", ["committed"] * 3),
    ("lost_data_file", ["committed", "committed", "missing-files"]),
    ("lost_metadata_file", ["committed", "committed", "missing-files"]),
    ("commit_without_fragment", ["committed", "committed", "orphan"]),
    ("uncommitted", ["committed", "committed", "uncommitted"]),
    ("stale_vac", ["committed", "orphan"]),
    ("vac_without_consolidated", ["vacuumable"] * 3),
    ("ignored_commit", ["committed", "committed", "ignored"]),
])
def test_states(built, name, states):
    h = _health(built(name))
    assert _states(h) == sorted(states)
    for f in h.fragments:
        assert f.state in H.STATES
        if not f.visible and f.state != "orphan":
            assert f.reason, f


def test_commits_consolidated_commit_is_the_con_line(built):
    h = _health(built("commits_consolidated_vacuumed"))
    assert [f.state for f in h.fragments] == ["committed"] * 3
    assert all(f.commit.startswith("__commits/") and ".con (line __commits/" in f.commit
               for f in h.fragments)


def test_vac_without_consolidated_says_cells_unreachable(built):
    h = _health(built("vac_without_consolidated"))
    assert not h.visible
    assert all("no reader sees these cells" in f.reason for f in h.fragments)
    assert h.notes and "unreachable" in h.notes[0]


def test_lost_files_named(built):
    h = _health(built("lost_data_file"))
    (bad,) = [f for f in h.fragments if f.state == "missing-files"]
    assert bad.missing == ["a0.tdb"] and bad.visible
    assert "a0.tdb" in h.read_error
    h = _health(built("lost_metadata_file"), at=1)
    assert h.open_error is None  # the damaged fragment is written at 2: a reader at 1 is fine


def test_conditions_text_and_timestamps(built):
    h = _health(built("deletes"))
    (c,) = h.conditions
    assert c.kind == "delete" and c.timestamp == 2 and c.considered
    assert c.text == "deletes cells where NOT x >= 30"
    assert len(c.applies_to) == 2
    h = _health(built("deletes"), at=1)
    assert not h.conditions[0].considered and "after T" in h.conditions[0].reason
    h = _health(built("deletes_in_consolidated_commits"))
    (c,) = h.conditions
    assert c.source.endswith(".con") and c.timestamp == 3


# ---- versions ---------------------------------------------------------------------------------
def test_reader_refuses_newer_schema(built):
    h = _health(built("three_writes"), reader="2.15")
    v = h.versions
    assert v.reader == "2.15" and v.reader_format == 18 and v.readable is False
    (schema,) = [f for f in v.files if f.kind == "schema"]
    assert schema.refused and schema.format_version == 22
    assert schema.message.endswith("Incompatible format version: got 22; expected <= 18")
    assert v.oldest_reader == "2.25"
    old = _health(built("three_writes"), reader="2.13.1").versions.files
    assert [f.message for f in old if f.refused] == [
        "[TileDB::ArraySchema] Error: Failed to deserialize array schema; Incompatible format "
        "version."]
    assert _health(built("three_writes"), reader="2.30").versions.readable is True


def test_reader_version_must_parse(built):
    with pytest.raises(ValueError):
        _health(built("three_writes"), reader="latest")


# ---- arrays written by older libtiledb releases (committed fixtures) ---------------------------
VERSIONS_ROOT = os.path.join(paths.DATA, "tiledb_versions")
OLD = sorted(p[:-len(".expected.json")] for p in
             glob.glob(os.path.join(VERSIONS_ROOT, "*", "*.expected.json")))


@pytest.mark.parametrize("case", OLD, ids=[os.path.relpath(c, VERSIONS_ROOT) for c in OLD])
def test_old_release_arrays(case, tmp_path):
    with open(case + ".expected.json", encoding="utf-8") as fh:
        exp = json.load(fh)
    h = _health(case)
    # what that release's tiledb-py listed, and what tiledb-py 0.36.1 lists now
    assert {f.name for f in h.visible} == {f["name"] for f in exp["fragments"]}
    copy = str(tmp_path / "a")
    shutil.copytree(case, copy)   # libtiledb may leave files behind: never in the fixtures
    assert {f.name for f in h.visible} == \
        {os.path.basename(u) for u in tiledb.FragmentInfoList(copy).uri}
    fmt = exp["format_version"]
    assert all(f.format_version == fmt for f in h.visible)
    assert h.versions.newest_format == fmt
    lib = tuple(int(x) for x in exp["libtiledb"].split("."))
    assert compat.format_of_release(lib) == fmt   # the table agrees with the real writer
    assert h.versions.oldest_reader == compat.vstr(compat.ARRAY_FORMAT_INTRODUCED[fmt])
    if fmt > 1:  # (format 1 has no older release to refuse it)
        older = _health(case, reader=compat.vstr(compat.ARRAY_FORMAT_INTRODUCED[fmt - 1]))
        assert older.versions.readable is False
    assert _health(case, reader=exp["libtiledb"]).versions.readable is True

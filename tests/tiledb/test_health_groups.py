"""`fragments` and `stats` on a TileDB group: the SOMA experiment tiledbsoma 2.3 wrote
(tests/data/soma/pbmc68k) walked member by member, against tiledb-py 0.36.1 (libtiledb 2.30)
on the same bytes: its group walk gives the member arrays, its `FragmentInfoList` on each
member URI the fragments a reader sees now."""
from __future__ import annotations

import json
import os

import pytest
import tiledb

from arrayscope.explorer.cli import main
from tests.support.paths import DATA

SOMA = os.path.join(DATA, "soma", "pbmc68k")


def _tiledb_members(uri, prefix=""):
    """(member path, URI) of every array member, recursively, as tiledb-py lists them."""
    out, groups = [], [prefix]
    with tiledb.Group(uri) as g:
        for m in g:
            path = f"{prefix}{m.name}"
            if m.type is tiledb.Array:
                out.append((path, m.uri))
            else:
                sub, subgroups = _tiledb_members(m.uri, path + "/")
                out += sub
                groups += subgroups
    return out, groups


TDB_ARRAYS, TDB_GROUPS = _tiledb_members(SOMA)


def _cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out


def _json(capsys, *argv):
    code, out = _cli(capsys, *argv)
    assert code == 0, out.err
    return json.loads(out.out)


def test_fixture_has_the_soma_members():
    # the walk below is over these: a real experiment, not an empty group
    assert len(TDB_ARRAYS) == 9 and ("ms/RNA/X/data", ) == tuple(
        m for m, _u in TDB_ARRAYS if m.endswith("X/data"))
    assert len(TDB_GROUPS) == 8   # the experiment, ms, RNA, X, obsm, uns, uns/pca, varm


def test_fragments_on_the_group_equal_tiledb_py_per_member(capsys):
    report = _json(capsys, "fragments", SOMA, "--json")
    assert report["group"] is True
    got = {m["member"]: m for m in report["members"]}
    assert sorted(got) == sorted(m for m, _u in TDB_ARRAYS)
    for member, uri in TDB_ARRAYS:
        fil = tiledb.FragmentInfoList(uri)
        want = [(os.path.basename(f.uri), list(f.timestamp_range), f.cell_num, f.version,
                 not f.sparse) for f in fil]
        mine = [(f["name"], f["timestamps"], f["cell_num"], f["format_version"], f["dense"])
                for f in got[member]["fragments"] if f["visible"]]
        assert mine == want, member
        # every fragment of the member is visible (a fresh write, nothing consolidated)
        assert len(got[member]["fragments"]) == len(fil) >= 1
        assert got[member]["open_error"] is None and got[member]["read_error"] is None


def test_non_empty_domains_equal_tiledb_py(capsys):
    report = _json(capsys, "fragments", SOMA, "--json", "--array", "ms/RNA/X/data")
    [m] = report["members"]
    uri = dict(TDB_ARRAYS)["ms/RNA/X/data"]
    [f] = tiledb.FragmentInfoList(uri)
    assert [tuple(d) for d in m["fragments"][0]["non_empty_domain"]] == list(f.nonempty_domain)
    assert m["member"] == "ms/RNA/X/data" and m["dimensions"] == ["soma_dim_0", "soma_dim_1"]


def test_array_option_picks_one_member_and_names_the_others(capsys):
    code, out = _cli(capsys, "fragments", SOMA, "--array", "ms/RNA/X/data")
    assert code == 0
    assert out.out.startswith("== ms/RNA/X/data ==\n")
    assert out.out.count("== ") == 1 and "a reader sees 1 of 1 fragment(s)" in out.out
    code, out = _cli(capsys, "fragments", SOMA, "--array", "ms/RNA/X/nope")
    assert code == 2 and "no array member 'ms/RNA/X/nope'" in out.err
    assert "ms/RNA/X/data" in out.err and "obs" in out.err
    code, out = _cli(capsys, "stats", SOMA, "--array", "ms/RNA")   # a group, not an array
    assert code == 2 and "no array member 'ms/RNA'" in out.err
    code, out = _cli(capsys, "fragments", os.path.join(SOMA, "obs"), "--array", "x")
    assert code == 2 and "this is an array" in out.err


def test_group_text_has_one_section_per_member(capsys):
    code, out = _cli(capsys, "fragments", SOMA)
    assert code == 0
    headers = [ln[3:-3] for ln in out.out.splitlines() if ln.startswith("== ")]
    assert headers == sorted(m for m, _u in TDB_ARRAYS)
    assert "group files: newest group details version 2: needs libtiledb 2.15 or later" \
        in out.out


@pytest.mark.parametrize("reader,refused", [("2.14", True), ("2.15", False), ("2.30", False)])
def test_reader_checks_the_group_files(capsys, reader, refused):
    v = _json(capsys, "fragments", SOMA, "--json", "--reader", reader)["versions"]
    details = [f for f in v["files"] if f["kind"] == "group details"]
    # one details file per group, each of details version 2 (tiledbsoma 2.3 / libtiledb 2.30)
    assert sorted(f["path"].rsplit("/__group/", 1)[0] if "/__group/" in f["path"] else ""
                  for f in details) == sorted(g.rstrip("/") for g in TDB_GROUPS)
    assert {f["format_version"] for f in details} == {2}
    assert all(f["refused"] is refused for f in details)
    assert v["readable"] is (not refused)
    markers = [f for f in v["files"] if f["kind"] == "group marker"]
    assert len(markers) == len(TDB_GROUPS) and not any(f["refused"] for f in markers)
    # the group metadata files are generic tiles of the array format libtiledb 2.30 writes
    meta = [f for f in v["files"] if f["kind"] == "group metadata"]
    assert len(meta) >= len(TDB_GROUPS) and {f["format_version"] for f in meta} == {22}


def test_bad_reader_on_a_group_is_a_message(capsys):
    code, out = _cli(capsys, "fragments", SOMA, "--reader", "two")
    assert code != 0 and "not a libtiledb version" in out.err


def _tree_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _ds, fs in os.walk(path) for f in fs)


def test_stats_on_the_group_counts_every_byte_of_every_member(capsys):
    report = _json(capsys, "stats", SOMA, "--json")
    got = {m["member"]: m for m in report["members"]}
    assert sorted(got) == sorted(m for m, _u in TDB_ARRAYS)
    for member, _uri in TDB_ARRAYS:
        folder = os.path.join(SOMA, *member.split("/"))
        assert got[member]["total_bytes"] == _tree_bytes(folder), member
        # the member section is what `stats` prints on the member's folder alone
        alone = _json(capsys, "stats", folder, "--json")
        assert {k: v for k, v in got[member].items() if k != "member"} == alone
    assert report["total_bytes"] == sum(_tree_bytes(os.path.join(SOMA, *m.split("/")))
                                        for m, _u in TDB_ARRAYS)
    x = got["ms/RNA/X/data"]
    # 60 cells x 40 genes of float32 values, int64 coordinates: 2400 cells decoded
    assert x["fragments"][0]["data_decoded"] == 2400 * (4 + 8 + 8)

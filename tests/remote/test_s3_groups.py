"""A SOMA experiment (a TileDB group of groups and arrays, tests/data/soma) on a real S3 API on
loopback: `values --array` over `s3://` prints what it prints for the local copy (dump and
verify: tests/remote/test_s3_datasets.py), an unknown member lists the arrays, and opening
reads only the experiment's own small files."""
from __future__ import annotations

import json
import os

import pytest

from arrayscope.explorer.cli import main
from tests.support.paths import DATA

SOMA = os.path.join(DATA, "soma", "pbmc68k")


@pytest.fixture(scope="module")
def soma(s3_server, tmp_path_factory):
    """(a local copy without empty folders, which an object store cannot hold; its URL)."""
    import shutil

    from tests.remote.test_s3_datasets import _prune_empty_dirs

    local = str(tmp_path_factory.mktemp("soma") / "pbmc68k")
    shutil.copytree(SOMA, local)
    _prune_empty_dirs(local)
    s3_server.bucket("groups")
    return local, s3_server.upload(local, "s3://groups/pbmc68k")


@pytest.fixture(scope="module")
def soma_url(soma):
    return soma[1]


def _cli(capsys, *argv):
    code = main(list(argv))
    return code, capsys.readouterr()


def _same(capsys, local_path, url, *argv):
    code_l, out_l = _cli(capsys, argv[0], local_path, *argv[1:])
    code_r, out_r = _cli(capsys, argv[0], url, *argv[1:])
    assert code_l == code_r == 0, (argv, out_l.err, out_r.err)
    local, remote = json.loads(out_l.out), json.loads(out_r.out)
    assert remote == local and local["fragments"], argv


def test_values_of_members_over_s3_equal_local(soma, capsys):
    # dump, verify and X/data: tests/remote/test_s3_datasets.py; here a var-size column
    _same(capsys, *soma, "values", "--array", "obs", "--field", "obs_id", "--json")
    _same(capsys, *soma, "values", "--array", "ms/RNA/var", "--field", "highly_variable",
          "--json")


def test_unknown_member_over_s3_lists_the_arrays(soma_url, capsys):
    code, out = _cli(capsys, "values", soma_url, "--array", "ms/RNA/X/nope", "--field", "x")
    assert code == 2 and "ms/RNA/X/data" in out.err and "obs" in out.err


def test_opening_reads_only_the_experiments_own_files(soma, s3_server, capsys):
    url = s3_server.upload(soma[0], "s3://groups/fresh")  # a store no other test has read
    (code, _out), seen = s3_server.count(lambda: _cli(capsys, "dump", url, "--max-depth", "1"))
    assert code == 0
    gets = sorted(p[len("/groups/fresh/"):] for m, p, _q, _r in seen
                  if m == "GET" and p.startswith("/groups/fresh/"))
    # the experiment's own details and metadata, and each member's metadata (its SOMA type
    # for the label); never a member's details, schema, fragment or commit
    assert gets and all(p.startswith(("__group/", "__meta/")) or
                        p.split("/")[-2] == "__meta" for p in gets), gets
    assert sorted(p.split("/")[0] for p in gets if "/" in p) == sorted(
        ["__group", "__meta", "ms", "obs", "obs"])   # obs has two metadata files


def _no_paths(x):
    """A report with every "path" dropped (a local path there, a URL here)."""
    if isinstance(x, dict):
        return {k: _no_paths(v) for k, v in x.items() if k != "path"}
    if isinstance(x, list):
        return [_no_paths(v) for v in x]
    return x


@pytest.mark.parametrize("argv", [("fragments", "--at", "1795550412600", "--reader", "2.14"),
                                  ("stats",),
                                  ("fragments", "--array", "ms/RNA/X/data", "--at",
                                   "1795550412600")])
def test_fragments_and_stats_of_the_group_over_s3_equal_local(soma, capsys, argv):
    local_path, url = soma
    code_l, out_l = _cli(capsys, argv[0], local_path, "--json", *argv[1:])
    code_r, out_r = _cli(capsys, argv[0], url, "--json", *argv[1:])
    assert code_l == code_r == 0, (out_l.err, out_r.err)
    local, remote = json.loads(out_l.out), json.loads(out_r.out)
    assert local["members"] and _no_paths(remote) == _no_paths(local)
    assert remote["path"] == url and all(m["path"].startswith(url + "/")
                                         for m in remote["members"])
    if "--array" not in argv:
        assert len(remote["members"]) == 9
    if argv[0] == "fragments":
        # at T between the writes: members written later are not seen yet
        seen = {m["member"]: sum(f["visible"] for f in m["fragments"])
                for m in remote["members"]}
        assert seen["ms/RNA/X/data"] == 1 and seen.get("ms/RNA/varm/PCs", 0) == 0


def test_fragments_of_the_group_over_s3_reads_no_data_file(soma, s3_server, capsys):
    url = s3_server.upload(soma[0], "s3://groups/fragments_fresh")  # nothing read yet
    (code, _out), seen = s3_server.count(lambda: _cli(capsys, "fragments", url, "--json"))
    assert code == 0
    gets = [p for m, p, _q, _r in seen if m == "GET" and "/fragments_fresh/" in p]
    names = [p.rsplit("/", 1)[-1] for p in gets]
    # schemas, fragment metadata, group and array metadata, commits: never a tile's file
    assert "__fragment_metadata.tdb" in names
    assert not [n for n in names if n.endswith(".tdb") and n != "__fragment_metadata.tdb"]
    print(f"\nfragments on the SOMA experiment over S3: {len(seen)} requests, "
          f"{len(gets)} object reads")

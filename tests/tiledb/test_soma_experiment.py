"""A SOMA experiment written by tiledbsoma 2.3 (`tiledbsoma.io.from_anndata` on scanpy's
pbmc68k_reduced, cut to 60 cells x 40 genes) opens as a group whose members are all clean,
and decodes to what tiledbsoma read back (tests/data/soma/expected.json, written by
tests/data/soma/make_fixture.py: no tiledbsoma needed here)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from arrayscope import formats
from arrayscope.formats.core import registry
from arrayscope.formats.core.verify import verify
from arrayscope.formats.tiledb.model.group_walk import array_member_paths, member_document
from arrayscope.formats.tiledb.parse.enumeration import Enumeration
from arrayscope.formats.tiledb.parse.group import MemberRef, TileDBGroup
from tests.support.groups import open_all
from tests.support.paths import DATA

SOMA = os.path.join(DATA, "soma", "pbmc68k")
with open(os.path.join(DATA, "soma", "expected.json")) as _fh:
    EXPECTED = json.load(_fh)
PLUGIN = registry.plugin_named("tiledb")


@pytest.fixture(scope="module")
def opened():
    doc = formats.open(SOMA)
    members = open_all(doc.root)
    yield doc, members
    doc.close()


def _files(path):
    return sorted(os.path.relpath(os.path.join(d, f), path).replace(os.sep, "/")
                  for d, _, fs in os.walk(path) for f in fs)


def test_opens_as_the_experiment_group():
    doc = formats.open(SOMA)
    assert doc.format == "tiledb"
    group = doc.model
    assert isinstance(group, TileDBGroup)
    assert group.metadata == EXPECTED["group_metadata"]
    assert group.soma_type == "SOMAExperiment"
    # members are not opened until asked for: the root lists them, pending
    kids = {c.name: c for c in doc.root.iter_children()}
    assert {"obs", "ms"} <= set(kids)
    assert kids["obs"].pending and kids["ms"].pending
    assert kids["obs"].display.startswith("SOMADataFrame · cell (observation) annotations")
    assert kids["ms"].display.startswith("SOMACollection · measurements")
    # only the experiment's own files were read
    assert {s.name for s in doc.sources} == {n for n in _files(SOMA) if "/" not in n
                                             or n.split("/")[0] in ("__group", "__meta")}


def test_every_member_in_the_tree_with_its_type(opened):
    doc, members = opened
    found = {n.data.member_path: n for n in members}
    assert set(found) == set(EXPECTED["members"])
    for path, exp in EXPECTED["members"].items():
        ref: MemberRef = found[path].data
        assert ref.member is not None, path
        assert ref.kind == exp["type"], path
        assert ref.soma_type == exp["soma_type"], path
        assert (ref.kind == "group") == isinstance(ref.model, TileDBGroup), path
    arrays = sorted(p for p, e in EXPECTED["members"].items() if e["type"] == "array")
    assert array_member_paths(doc.root) == arrays
    x = found["ms/RNA/X/data"]
    assert x.path() == "pbmc68k/ms/RNA/X/data"
    assert "SOMASparseNDArray · matrix layer · TileDB array, sparse, 1 fragment" in x.display


def test_every_member_clean_and_every_byte_covered(opened):
    doc, _members = opened
    problems = [(n.path(), n.message) for n in doc.diagnostics()]
    assert problems == []
    files = _files(SOMA)
    assert sorted(s.name for s in doc.sources) == files  # every file of every member parsed
    cov = doc.coverage()
    assert {name: c for name, c in cov.items() if c[0] != c[1]} == {}
    assert sum(size for _, size in cov.values()) == sum(
        os.path.getsize(os.path.join(SOMA, f)) for f in files)


def test_verify_walks_every_member_and_finds_nothing():
    doc = formats.open(SOMA)
    assert verify(doc) == []
    # verify opened each member and let it go again
    assert all(c.pending for c in doc.root.iter_children() if isinstance(c.data, MemberRef))


def _enumerations(member_root):
    return {n.data.name: n.data for n in member_root.walk(expand_lazy=False)
            if isinstance(n.data, Enumeration)}


@pytest.mark.parametrize("array, table", [("obs", "obs"), ("ms/RNA/var", "var")])
def test_dataframe_columns_equal_tiledbsoma(opened, array, table):
    doc, _ = opened
    view = member_document(doc, array)
    enums = _enumerations(view.root)
    schema = view.model.latest_schema
    columns = EXPECTED[table]
    assert sorted(PLUGIN.field_names(view)) == sorted(columns)
    for name, expected in columns.items():
        entries = PLUGIN.values(view, name)
        assert len(entries) == 1 and "error" not in entries[0], name
        got = entries[0]["values"]
        attr = next((a for a in schema.attributes if a.name == name), None)
        if attr is not None and attr.enumeration is not None:  # codes: labels from the enum
            labels = enums[attr.enumeration].values
            got = [labels[c] for c in got]
        assert got == expected, name


def test_x_data_equals_tiledbsoma(opened):
    doc, _ = opened
    view = member_document(doc, "ms/RNA/X/data")
    exp = EXPECTED["X_data"]
    cols = {}
    for f in ("soma_dim_0", "soma_dim_1", "soma_data"):
        entries = PLUGIN.values(view, f)
        assert len(entries) == 1 and "error" not in entries[0]
        cols[f] = entries[0]["values"]
    got = sorted(zip(cols["soma_dim_0"], cols["soma_dim_1"], cols["soma_data"]))
    want = sorted(zip(exp["soma_dim_0"], exp["soma_dim_1"], exp["soma_data"]))
    assert len(got) == exp["shape"][0] * exp["shape"][1] == 2400
    assert got == want


def test_obsm_equals_tiledbsoma(opened):
    doc, _ = opened
    for name, dense in EXPECTED["obsm"].items():
        view = member_document(doc, f"ms/RNA/obsm/{name}")
        i, j, v = (PLUGIN.values(view, f)[0]["values"]
                   for f in ("soma_dim_0", "soma_dim_1", "soma_data"))
        got = [[0.0] * len(dense[0]) for _ in dense]
        for a, b, x in zip(i, j, v):
            got[a][b] = x
        assert got == dense, name


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "arrayscope.explorer.cli", *args],
                          capture_output=True, text=True, timeout=300)


def test_cli_values_names_a_member_array():
    r = _cli("values", SOMA, "--array", "ms/RNA/X/data", "--field", "soma_data", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert len(out["fragments"]) == 1
    assert sorted(out["fragments"][0]["values"]) == sorted(EXPECTED["X_data"]["soma_data"])


def test_cli_values_unknown_member_lists_the_arrays():
    r = _cli("values", SOMA, "--array", "ms/RNA/X/counts", "--field", "soma_data")
    assert r.returncode == 2
    assert "no array member 'ms/RNA/X/counts'" in r.stderr
    assert "ms/RNA/X/data" in r.stderr and "obs" in r.stderr
    r = _cli("values", SOMA, "--array", "ms/RNA", "--field", "soma_data")
    assert r.returncode == 2 and "'ms/RNA' is a group, not an array" in r.stderr
    r = _cli("values", SOMA, "--field", "soma_data")
    assert r.returncode == 2 and "is a group: name a member array with --array" in r.stderr


def test_cli_verify_and_dump_walk_the_members():
    r = _cli("verify", SOMA, "--json")
    assert r.returncode == 0, r.stdout
    assert json.loads(r.stdout)["findings"] == []
    r = _cli("dump", SOMA, "--json")
    assert r.returncode == 0
    tree = json.loads(r.stdout)
    sources = set()

    def walk(n):
        sources.add(n["source"])
        for c in n["children"]:
            walk(c)
    walk(tree)
    assert set(_files(SOMA)) <= sources  # every file of every member is in the dump


def _group_files(root):
    """The group-level files of every group of the experiment (details, metadata)."""
    return [f for f in _files(root)
            if f.rsplit("/", 2)[-2:-1] in (["__group"], ["__meta"])
            and not any(os.path.exists(os.path.join(root, *f.split("/")[:i], "__schema"))
                        for i in range(1, f.count("/") + 1))]


@pytest.mark.parametrize("how", ["truncate", "flip"])
def test_damaged_group_files_are_reported_never_raised(tmp_path, how):
    import random
    import shutil

    rng = random.Random(11 if how == "flip" else 12)
    files = _group_files(SOMA)
    groups = 1 + sum(e["type"] == "group" for e in EXPECTED["members"].values())
    assert sum("/__group/" in f"/{f}" for f in files) == groups == 8  # one write each
    for rel in rng.sample(files, 3):
        dst = str(tmp_path / f"{how}-{rel.replace('/', '_')}")
        shutil.copytree(SOMA, dst)
        path = os.path.join(dst, rel)
        size = os.path.getsize(path)
        if how == "truncate":
            os.truncate(path, rng.randrange(1, size))
        else:
            with open(path, "r+b") as fh:
                at = rng.randrange(34, size)  # past the generic tile header: the tile
                fh.seek(at)
                b = fh.read(1)
                fh.seek(at)
                fh.write(bytes([b[0] ^ 0xA5]))
        doc = formats.open(dst)
        findings = verify(doc)
        open_all(doc.root)
        errors = [f for f in findings if f.status == "error"]
        assert errors, f"{how} {rel}: nothing reported"
        assert any(f.source.startswith(rel) for f in errors), (rel, [f.line() for f in errors])
        doc.close()


def test_fragments_of_a_group_are_its_arrays_own():
    r = _cli("fragments", SOMA, "--json")
    assert r.returncode == 0   # one section per member array (tests/tiledb/test_health_groups.py)
    members = json.loads(r.stdout)["members"]
    assert len(members) == 9 and not [f for m in members for f in m["fragments"]
                                      if f["state"] == "orphan"]   # no false orphans
    r = _cli("fragments", os.path.join(SOMA, "obs"), "--json")
    assert r.returncode == 0
    frags = json.loads(r.stdout)["fragments"]
    assert [(f["state"], f["visible"], f["cell_num"]) for f in frags] == [("committed", True, 60)]

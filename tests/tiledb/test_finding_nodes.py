"""Every verify finding names its node (formats/core/finding_nodes.py), inside a group's members
too: the path from the dataset's root through the members to the node whose bytes are
wrong, as `verify --json` gives it and `--select` / the window resolve it. Groups and arrays
written by tiledb-py, damaged after writing; tiledb-py's own reading of the damage beside."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.explorer.cli import main
from arrayscope.formats.core.findings import CHUNK_DECODE, TILE_STAT
from arrayscope.formats.core.verify import open_for_verify, verify_report
from tests.support.groups import group_with_damaged_member


def _frag(group: str) -> str:
    frags = os.path.join(group, "ms", "X", "__fragments")
    return os.listdir(frags)[0]


def test_chunk_finding_in_a_member_names_its_node(tmp_path, capsys):
    g = group_with_damaged_member(tmp_path, "zstd")
    with pytest.raises(tiledb.TileDBError):
        with tiledb.open(os.path.join(g, "ms", "X")) as a:
            a[:]
    assert main(["verify", g, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    [f] = [f for f in out["findings"] if f["code"] == CHUNK_DECODE]
    frag = _frag(g)
    assert f["source"] == f"ms/X/__fragments/{frag}/a0.tdb"
    assert f["node"] == f"g/ms/X/__fragments/{frag}/a0.tdb/Tile 1/Chunk 1/Chunk filtered data"
    # the path is a node of the tree, holding the finding's byte
    with formats.open(g) as doc:
        node = doc.root.resolve(f["node"])
        assert node is not None and node.kind == "payload"
        assert node.offset <= f["offset"] < node.end
        assert doc.source_name(node.source) == f["source"]


def test_tile_sum_finding_names_the_tile(tmp_path):
    g = group_with_damaged_member(tmp_path, "value")
    with tiledb.open(os.path.join(g, "ms", "X")) as a:   # read without complaint, one wrong
        values = a[:]["a"]
    assert np.flatnonzero(values != np.arange(1000)).tolist() == [990]
    with formats.open(g) as doc:
        found = verify_report(doc).findings
    [f] = [f for f in found if f.code == TILE_STAT]
    assert "sum to" in f.message
    assert f.node == f"g/ms/X/__fragments/{_frag(g)}/a0.tdb/Tile 1"   # not its `Num chunks`


def test_streamed_array_findings_name_the_same_nodes(tmp_path):
    g = group_with_damaged_member(tmp_path, "zstd")
    arr = os.path.join(g, "ms", "X")
    doc = open_for_verify(arr)
    try:
        assert doc.lazy
        streamed = verify_report(doc).findings
    finally:
        doc.close()
    with formats.open(arr) as whole:
        eager = verify_report(whole).findings
    assert [f.node for f in streamed] == [f.node for f in eager]
    assert all(f.node.startswith("X/__fragments/") for f in streamed)

"""Space per fragment, field and stage, and fragment extents, against the bytes tiledb-py wrote
and what it reports (`array_fragments`: cell counts, non-empty domains, MBRs); the two CLI
commands' JSON contract (DESIGN.md)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import tiledb

from arrayscope.explorer.cli import main
from arrayscope.formats.core import health as H
from arrayscope.formats.core.document import Document
from tests.support import health_arrays as HA
from tests.support import paths

DENSE_OLD = os.path.join(paths.DATA, "tiledb_versions", "16_2.13.1", "dense_filters")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("health_space")
    return lambda name: HA.build(name, str(root))


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


@pytest.mark.parametrize("name", ["three_writes", "consolidated", "deletes_consolidated"])
def test_space_matches_files_and_cells(built, name):
    uri = built(name)
    rep = H.space(Document(uri))
    infos = {os.path.basename(f.uri): f for f in tiledb.array_fragments(uri)}
    assert rep.total == sum(os.path.getsize(os.path.join(d, f))
                            for d, _s, fs in os.walk(uri) for f in fs)
    for fs in rep.fragments:
        fdir = os.path.join(uri, "__fragments", fs.fragment)
        assert fs.metadata_bytes == os.path.getsize(os.path.join(fdir, "__fragment_metadata.tdb"))
        for f in fs.fields:
            assert f.error is None
            assert f.stored == os.path.getsize(os.path.join(fdir, f.file))
            assert f.exact
            if f.filters:
                assert len(f.stages) == len(f.filters) and f.stages[-1].nbytes == f.decoded
            else:   # no filter: tile and chunk headers around the cells
                assert f.stages == [] and f.stored == f.decoded + f.overhead
            if fs.fragment in infos and f.name in ("v", "x"):   # int32: 4 bytes a cell
                assert f.decoded == 4 * infos[fs.fragment].cell_num


def test_dense_padding_and_stages_old_release():
    rep = H.space(Document(DENSE_OLD))
    exp = json.load(open(DENSE_OLD + ".expected.json", encoding="utf-8"))
    by = {f["name"]: f for f in exp["fragments"]}
    for fs in rep.fragments:
        e = by[fs.fragment]
        written = int(np.prod([hi - lo + 1 for lo, hi in e["nonempty_domain"]]))
        for f in fs.fields:
            assert f.padding_cells == e["cell_num"] - written
            assert [s.stage for s in f.stages] == \
                [f"after reversing {n}" for n in reversed(f.filters)]
            assert f.stages[-1].nbytes == f.decoded
    assert any(f.padding_cells for fs in rep.fragments for f in fs.fields)


@pytest.mark.parametrize("name", ["three_writes", "consolidated", "consolidated_partly"])
def test_extents_equal_tiledb_mbrs(built, name):
    uri = built(name)
    ext = H.extents(Document(uri))
    assert ext.dimensions == ["x"] and ext.domain == [[0, 99]]
    infos = tiledb.array_fragments(uri, include_mbrs=True)
    assert len(infos) > 0
    for info in infos:
        got = ext.boxes[os.path.basename(info.uri)]
        assert got == [[[_py(a), _py(b)] for a, b in mbr] for mbr in info.mbrs]


def test_fragments_cli_json_contract(built, capsys):
    uri = built("consolidated")
    assert main(["fragments", uri, "--at", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    keys = ["name", "timestamps", "format_version", "schema", "cell_num", "state", "visible",
            "reason"]
    for f in out["fragments"]:
        assert list(f)[:8] == keys
        assert f["state"] in H.STATES
    vis = [f["name"] for f in out["fragments"] if f["visible"]]
    assert len(vis) == 1 and vis[0].startswith("__1_3_")
    assert main(["fragments", uri, "--reader", "2.15"]) == 0
    text = capsys.readouterr().out
    assert "got 22; expected <= 18" in text and "vacuumable" in text
    assert main(["fragments", uri, "--reader", "two"]) == 2
    assert "not a libtiledb version" in capsys.readouterr().err


def test_stats_cli_json(built, capsys):
    uri = built("three_writes")
    assert main(["stats", uri, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["fragments"]) == 3 and out["total_bytes"] > 0
    x = [f for fs in out["fragments"] for f in fs["fields"] if f["name"] == "x"]
    assert len(x) == 3 and all(f["filters"] == ["ZSTD"] for f in x)
    assert all(f["stages"][0]["stage"] == "after reversing ZSTD" for f in x)
    assert main(["stats", uri]) == 0
    assert "d0.tdb" in capsys.readouterr().out


def test_not_an_array(tmp_path, capsys):
    (tmp_path / "f.txt").write_text("x")
    assert main(["fragments", str(tmp_path)]) == 2
    assert main(["stats", str(tmp_path / "nope")]) == 2

"""Zarr v2 struct arrays written by other zarr-python versions (committed fixtures).

tests/data/zarr/v2_<version>/<name>/ was written by that zarr-python itself
(tests/data/zarr/make_fixtures_zarr2.py, run in its own venv), and <name>.expected.json beside
it holds what that version reads. No zarr needed here: each fixture must open with no error
node (the planted traps: exactly their diagnostic), every byte of every file and derived
source covered, and `values` equal to the recorded reading for every leaf field, down to the
bits (sha256 of the little-endian C-order bytes)."""
from __future__ import annotations

import glob
import hashlib
import json
import math
import os

import pytest

from arrayscope import formats
from arrayscope.formats.core import engine
from arrayscope.formats.zarr import PLUGIN
from tests.support import paths

DATA = os.path.join(paths.DATA, "zarr")
FIXTURES = sorted(p[: -len(".expected.json")] for p in
                  glob.glob(os.path.join(DATA, "v2_*", "*.expected.json")))
IDS = [os.path.relpath(p, DATA) for p in FIXTURES]


def expected(path: str) -> dict:
    with open(path + ".expected.json") as fh:
        return json.load(fh)


def norm(v):
    """arrayscope's value conventions → the expected.json ones (NaN/±Infinity as strings)."""
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
    return v


def field_key(exp: dict, rel: str, name: str) -> str:
    """The name `values` knows a field by: bare for a fixture that is one array."""
    return name if rel == "." else f"{rel}/{name}"


@pytest.fixture(scope="module")
def opened():
    docs = {}

    def get(path):
        if path not in docs:
            docs[path] = formats.open(path)
        return docs[path]
    yield get
    for d in docs.values():
        d.close()


def test_fixtures_present():
    assert len(FIXTURES) >= 30
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(DATA) for f in fs)
    assert total < 1_500_000


@pytest.mark.parametrize("path", FIXTURES, ids=IDS)
def test_opens_without_error_and_covers_every_byte(path, opened):
    exp = expected(path)
    doc = opened(path)
    assert doc.format == "zarr"
    errors = [n for n in doc.diagnostics() if n.status == "error"]
    for n in doc.root.walk():
        assert "internal" not in n.name, (n.path(), n.message)
        assert n.kind != "unparsed", (n.path(), n.message)
    if "trap" in exp:
        assert errors, "the planted trap gave no diagnostic"
        chunk = exp["trap"]["chunk"]   # every error is inside that chunk file's node
        assert all(n.path().split("/")[1] == chunk for n in errors), \
            [(n.path(), n.message) for n in errors]
    else:
        assert not errors, [(n.path(), n.message) for n in errors]
    for s in list(doc.sources) + list(doc.derived):
        cov = engine.coverage(doc.root, s)
        assert cov[0] == cov[1], (s.name, cov)


@pytest.mark.parametrize("path", [p for p in FIXTURES if "trap" not in expected(p)],
                         ids=[i for p, i in zip(FIXTURES, IDS) if "trap" not in expected(p)])
def test_values_equal_what_zarr_read(path, opened):
    exp = expected(path)
    doc = opened(path)
    want_names = [field_key(exp, rel, f) for rel, a in exp["arrays"].items() for f in a["fields"]]
    assert sorted(PLUGIN.field_names(doc)) == sorted(want_names)
    for rel, arr in exp["arrays"].items():
        meta = doc.model.arrays[rel]
        assert list(meta.shape) == arr["shape"]
        assert list(meta.chunks) == arr["chunks"]
        for name, f in arr["fields"].items():
            [entry] = PLUGIN.values(doc, field_key(exp, rel, name))
            assert "error" not in entry, (name, entry.get("error"))
            assert norm(entry["values"]) == f["values"], name
            assert hashlib.sha256(entry["raw"]).hexdigest() == f["sha256"], name


@pytest.mark.parametrize("path", FIXTURES, ids=IDS)
def test_absent_chunks_reported(path, opened):
    """The chunk keys with no file (found on disk by the generator) are listed, each one."""
    exp = expected(path)
    doc = opened(path)
    for rel, arr in exp["arrays"].items():
        meta = doc.model.arrays[rel]
        src = doc.relname(meta.path)
        node = next((n for n in doc.root.walk() if n.name == "Absent chunks"
                     and n.source == src), None)
        want = arr["absent_chunks"]
        if not want:
            assert node is None, rel
            continue
        assert node is not None and node.value == len(want), rel
        assert [node.child(i).value for i in range(node.child_count())] == want


def test_trap_truncated_chunk_values_report_the_chunk(opened):
    path = os.path.join(DATA, "v2_2.18.7", "trap_truncated_chunk")
    doc = opened(path)
    [entry] = PLUGIN.values(doc, "age")
    assert "error" in entry and entry["error"].startswith("1:")
    exp = expected(path)["trap"]
    assert exp["zarr_error"] and "truncated" in exp["zarr_error"]   # zarr 2.18.7 fails too
    # chunks 0 and 2 still decode: records 0-2 and 6 hold what zarr read before the edit
    before = exp["before_edit"]["fields"]["age"]["values"]
    got = entry["values"]
    assert len(got) == 7 and got[:3] == before[:3] and got[6:] == before[6:]


def test_layout_as_zarr_2_18_7_writes_it():
    """FORMAT_NOTES: indent 4, sorted keys, no dimension_separator unless '/', no .zattrs."""
    base = os.path.join(DATA, "v2_2.18.7")
    with open(os.path.join(base, "flat_default", ".zarray")) as fh:
        text = fh.read()
    meta = json.loads(text)
    assert text == json.dumps(meta, indent=4, sort_keys=True)
    assert "dimension_separator" not in meta
    assert not os.path.exists(os.path.join(base, "flat_default", ".zattrs"))
    assert meta["compressor"] == {"blocksize": 0, "clevel": 5, "cname": "lz4", "id": "blosc",
                                  "shuffle": 1}
    with open(os.path.join(base, "nested_separator", ".zarray")) as fh:
        assert json.load(fh)["dimension_separator"] == "/"
    assert os.path.isfile(os.path.join(base, "nested_separator", "2", "1"))


def test_group_consolidated_tree(opened):
    doc = opened(os.path.join(DATA, "v2_2.18.7", "group_consolidated"))
    names = [c.name for c in doc.root.children]
    assert {".zgroup", ".zattrs", ".zmetadata", "people", "points", "sub"} <= set(names)
    assert sorted(doc.model.arrays) == ["people", "points", "sub/vecs"]
    zm = doc.root[".zmetadata"]
    assert zm.status == "ok" and zm.size == os.path.getsize(
        os.path.join(DATA, "v2_2.18.7", "group_consolidated", ".zmetadata"))


def test_struct_subarray_unrolled_per_element():
    """zarr 2.18.7's ["pts", [[…fields…]], [shape]]: one packed struct per element."""
    from arrayscope.formats.zarr.dtype import DtypeError, from_v2

    rt = from_v2([["id", "<u2"], ["pts", [["x", "<f4"], ["y", ">i2"]], [2, 2]], ["n", "|u1"]],
                 None)
    assert rt.itemsize == 2 + 4 * 6 + 1
    assert [(f.name, f.offset) for f in rt.leaves()] == [
        ("id", 0), ("pts[0,0].x", 2), ("pts[0,0].y", 6), ("pts[0,1].x", 8), ("pts[0,1].y", 12),
        ("pts[1,0].x", 14), ("pts[1,0].y", 18), ("pts[1,1].x", 20), ("pts[1,1].y", 24),
        ("n", 26)]
    import numpy as np
    want = np.dtype([("id", "<u2"), ("pts", [("x", "<f4"), ("y", ">i2")], (2, 2)), ("n", "u1")])
    assert rt.numpy_dtype().itemsize == want.itemsize
    rec = np.zeros(1, want)
    rec["pts"]["y"][0, 1, 0] = 7
    got = np.frombuffer(rec.tobytes(), rt.numpy_dtype())
    assert got["pts[1,0]"]["y"][0] == 7
    with pytest.raises(DtypeError, match="unrolls"):
        from_v2([["pts", [["x", "<f4"]], [100, 100]]], None)
    with pytest.raises(DtypeError, match="duplicate"):
        from_v2([["pts", [["x", "<f4"]], [2]], ["pts[1]", "<i4"]], None)

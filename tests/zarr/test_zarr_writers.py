"""Zarr stores written by other real writers (committed fixtures under
tests/data/zarr/<writer>_<version>/, made by tests/data/zarr/make_<writer>.py; expected.json
holds what that writer itself read back). No writer is needed here. Each array must open
and verify with no error and no warning, every byte of every file and derived source
explained, and `values` equal to the writer's reading, value by value and bit by bit."""
from __future__ import annotations

import glob
import hashlib
import json
import os

import pytest

from arrayscope import formats
from arrayscope.formats.core import engine
from arrayscope.formats.core.verify import verify
from arrayscope.formats.zarr import PLUGIN
from tests.support import paths
from tests.zarr.test_zarr_versions import norm  # one reading of expected.json's values

DATA = os.path.join(paths.DATA, "zarr")
WRITERS = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(DATA, "*", "expected.json")))


def load(base: str) -> dict:
    with open(os.path.join(base, "expected.json")) as fh:
        return json.load(fh)


def stores(base: str):
    """(path to open, {values name: field expectation}, {array rel: shape}) of a writer's
    fixture: one array per directory (tensorstore) or one store of arrays (anndata)."""
    exp = load(base)
    if "store" in exp:   # a group: fields are named `<array>/<field>`
        names = {f"{rel}/{f}": fe for rel, a in exp["arrays"].items()
                 for f, fe in a["fields"].items()}
        shapes = {rel: a["shape"] for rel, a in exp["arrays"].items()}
        return [(os.path.join(base, exp["store"]), names, shapes)]
    return [(os.path.join(base, name), a["fields"], {".": a["shape"]})
            for name, a in exp["arrays"].items()]


CASES = [c for base in WRITERS for c in stores(base)]
IDS = [os.path.relpath(c[0], DATA) for c in CASES]


def test_writers_present():
    names = {os.path.basename(b).split("_", 1)[0] for b in WRITERS}
    assert {"tensorstore", "anndata"} <= names
    ts = [c for c in IDS if c.startswith("tensorstore")]
    assert len(ts) >= 14 and sum("shard" in c for c in ts) >= 2
    assert {load(b)["zarr_format"] for b in WRITERS if "anndata" in b} == {2, 3}


@pytest.mark.parametrize("path,fields,shapes", CASES, ids=IDS)
def test_verify_clean_and_every_byte_explained(path, fields, shapes):
    doc = formats.open(path)
    try:
        assert doc.format == "zarr"
        found = verify(doc)
        assert [f for f in found if f.status in ("error", "warning")] == []
        for n in doc.root.walk():
            assert n.kind != "unparsed" and "internal" not in n.name, (n.path(), n.message)
        for s in list(doc.sources) + list(doc.derived):
            cov = engine.coverage(doc.root, s)
            assert cov[0] == cov[1], (s.name, cov)
    finally:
        doc.close()


@pytest.mark.parametrize("path,fields,shapes", CASES, ids=IDS)
def test_values_equal_the_writers_reading(path, fields, shapes):
    doc = formats.open(path)
    try:
        assert {rel: list(m.shape) for rel, m in doc.model.arrays.items()} == shapes
        assert sorted(PLUGIN.field_names(doc)) == sorted(fields)
        for name, f in fields.items():
            [entry] = PLUGIN.values(doc, name)
            assert "error" not in entry, (name, entry.get("error"))
            assert norm(entry["values"]) == f["values"], name
            if "sha256" in f:   # fixed-size values: pinned to the bit
                assert hashlib.sha256(entry["raw"]).hexdigest() == f["sha256"], name
    finally:
        doc.close()


@pytest.mark.parametrize("base", [b for b in WRITERS if "anndata" in b],
                         ids=lambda b: os.path.basename(b))
def test_anndata_store(base):
    """scanpy's rank_genes_groups record arrays keep field names with '/' and '+'; the
    sparse X is three arrays equal to anndata's own read (checked by the generator)."""
    exp = load(base)
    doc = formats.open(os.path.join(base, exp["store"]))
    try:
        names = PLUGIN.field_names(doc)
        assert "uns/rank_genes_groups/scores/CD4+/CD25 T Reg" in names
        [e] = PLUGIN.values(doc, "uns/rank_genes_groups/scores/CD4+/CD25 T Reg")
        assert e["values"] == exp["arrays"]["uns/rank_genes_groups/scores"]["fields"][
            "CD4+/CD25 T Reg"]["values"] and len(e["values"]) == 4
        indptr = PLUGIN.values(doc, "X/indptr/value")[0]["values"]
        data = PLUGIN.values(doc, "X/data/value")[0]["values"]
        assert len(indptr) == 13 and indptr[0] == 0 and indptr[-1] == len(data) > 0
        [cats] = PLUGIN.values(doc, "obs/cell_type/categories/value")
        assert sorted(cats["values"]) == sorted(["CD4+/CD25 T Reg", "B cells", "NK"])
    finally:
        doc.close()


def test_tensorstore_shard_index_and_missing_inner_chunks():
    """v3_shard_i4: shards of 4×6 in 2×3 inner chunks, index at the end with crc32c; the
    written region leaves inner chunks missing (2^64-1) and whole shards absent."""
    [base] = [b for b in WRITERS if os.path.basename(b).startswith("tensorstore")]
    doc = formats.open(os.path.join(base, "v3_shard_i4"))
    try:
        meta = doc.model.arrays["."]
        sp = meta.shard
        assert sp is not None and sp.per_shard == (2, 2) and sp.index_crc and sp.index_at_end
        assert sp.inner.chunks == (2, 3) and sp.inner.codecs[0].name == "zstd"
        shard = doc.root.resolve("c/0/0")
        index = shard["Shard index"]
        assert index.offset + index.size == shard.size == os.path.getsize(
            os.path.join(base, "v3_shard_i4", "c", "0", "0"))
        entries = index["Entries"]
        assert [entries.child(i).display_text().endswith("missing") for i in range(4)] == \
            [False, True, False, True]
        assert entries.child(0).value == (0, 33)
        inner = shard["Inner chunk [1, 0]"]
        assert inner.offset == 33 and inner["Records"].child_count() == 6
        assert [c.name for c in shard.children if c.name.startswith("Inner")] == \
            ["Inner chunk [0, 0]", "Inner chunk [1, 0]"]
        absent = doc.root["Absent chunks"]
        assert absent.value == 4
    finally:
        doc.close()


@pytest.mark.parametrize("rel", ["tensorstore_0.1.86/v3_shard_i4",
                                 "anndata_0.12.19_zarr3.1.6_v3/store",
                                 "anndata_0.12.19_zarr2.18.7_v2/store"])
def test_cli_verify_exits_0(capsys, rel):
    from arrayscope.explorer.cli import main

    assert main(["verify", os.path.join(DATA, rel)]) == 0
    cap = capsys.readouterr()
    assert ": 0 errors, 0 warnings" in cap.out + cap.err, (cap.out, cap.err)

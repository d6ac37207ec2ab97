"""The archives bionemo-scdl wrote (tests/data/scdl), against what its own reader returned."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from arrayscope import formats
from arrayscope.explorer.cli import main
from arrayscope.formats.core import engine
from arrayscope.formats.scdl import PLUGIN
from tests.support.scdl_builders import ARCHIVES, fixture


def expected(name: str) -> dict:
    with open(fixture(name + ".expected.json")) as fh:
        return json.load(fh)


@pytest.fixture(params=ARCHIVES)
def archive(request):
    doc = formats.open(fixture(request.param))
    yield request.param, doc
    doc.close()


def test_opens_as_scdl(archive):
    name, doc = archive
    assert doc.format == "scdl" and doc.root.type == "SCDL archive"


def test_every_byte_covered(archive):
    name, doc = archive
    assert doc.sources
    for src in doc.sources:
        assert engine.coverage(doc.root, src) == (src.size, src.size), src.name
    assert not any(n.kind == "unparsed" for n in doc.root.walk())


def test_no_error_except_the_stale_header(archive):
    name, doc = archive
    errs = [n for n in doc.diagnostics() if n.status == "error"]
    if name == "concat_stale":
        assert errs
    else:
        assert errs == [], [(n.path(), n.message) for n in errs]


def test_values_equal_the_library_reader(archive):
    name, doc = archive
    exp = expected(name)
    assert PLUGIN.field_names(doc)[:3] == ["DATA", "ROWPTR", "COLPTR"]
    got = {}
    for field in ("DATA", "ROWPTR", "COLPTR"):
        [entry] = PLUGIN.values(doc, field)
        assert entry["name"] == field
        assert entry["values"] == exp["arrays"][field]
        dt = np.dtype(exp["dtypes"][field]).newbyteorder("<")
        assert entry["raw"] == np.array(exp["arrays"][field], dt).tobytes()
        got[field] = entry["values"]
    assert len(got["ROWPTR"]) - 1 == exp["num_rows"]
    assert len(got["DATA"]) == exp["nnz"]
    for r, row in exp["rows"].items():
        if "error" in row:
            continue
        a, b = got["ROWPTR"][int(r)], got["ROWPTR"][int(r) + 1]
        assert got["DATA"][a:b] == row["values"]
        assert got["COLPTR"][a:b] == row["columns"]


def test_neighbour_files_typed_with_hard_coded_dtypes():
    doc = formats.open(fixture("basic"))
    exp = expected("basic")["neighbors"]
    for field, key in (("NEIGHBOR_INDICES_PTR", "INDPTR"), ("NEIGHBOR_INDICES", "INDICES"),
                       ("NEIGHBOR_VALUES", "VALUES")):
        assert field in PLUGIN.field_names(doc)
        assert PLUGIN.values(doc, field)[0]["values"] == exp[key]
    node = doc.root["neighbor_indptr.npy"]["NEIGHBOR_INDICES_PTR"]
    assert node.type == "uint64 le[21]" and "hard-coded" in node.display


def test_header_as_written_by_0_1_3():
    doc = formats.open(fixture("basic"))
    h = doc.root["header.sch"]
    assert h.size == 417
    assert [h[k].value for k in ("version_major", "version_minor", "version_point")] == [0, 1, 0]
    arrays = h["Array descriptors"]
    assert [arrays[f"Array {i}"]["name"].value for i in (1, 2, 3)] == ["DATA", "ROWPTR", "COLPTR"]
    assert arrays["Array 1"]["dtype"].display == "6 (FLOAT32_ARRAY)"
    fi = h["Feature indices"]["Feature index 1"]
    assert fi["name"].value == "var_features" and fi["length"].value == 20
    assert [fi["index_files"][f"Index file {i}"]["path"].value for i in (1, 2, 3, 4)] == [
        "var_features/cumulative_sum_index.npy", "var_features/labels.npy",
        "var_features/version.npy", "var_features/dataframe_0.parquet"]


def test_array_file_lazy_items():
    doc = formats.open(fixture("basic"))
    data = doc.root["data.npy"]["DATA"]
    assert data.is_lazy and data.child_count() == 32
    item = data.child(3)
    assert item.name == "[3]" and item.offset == 12 and item.size == 4
    assert item.value == expected("basic")["arrays"]["DATA"][3]
    assert data.type == "float32 le[32]"


def test_feature_folders():
    doc = formats.open(fixture("concat_blocks"))
    var = doc.root["var_features"]
    cs = var["cumulative_sum_index.npy"]
    assert [c.name for c in cs.children] == ["magic", "major_version", "minor_version",
                                             "HEADER_LEN", "header", "data"]
    assert cs["data"].value == [-1, 18, 24]
    assert "'descr': '<i8'" in cs["header"]["dict"].value
    pq = var["dataframe_1.parquet"]
    assert [c.name for c in pq.children] == ["magic", "Parquet body", "FileMetaData",
                                             "footer_length", "magic (end)"]
    assert pq["magic"].value == "PAR1" and pq["FileMetaData"].value == 10
    assert pq["footer_length"].value == pq["FileMetaData"].size
    assert var["version.npy"]["data"].display == "'0.1.3'"
    labels = var["labels.npy"]["data"]
    assert len(labels.value) == 2 and labels.value[0].endswith("part0.h5ad")


def test_json_files():
    doc = formats.open(fixture("concat_blocks"))
    meta = doc.root["metadata.json"]
    assert meta.value == '{"num_rows": 10}'
    nr = meta["num_rows"]
    assert nr.value == 10 and nr["key"].offset == 1 and nr["value"].offset == 13
    assert nr.status == "warning" and "24 rows" in nr.message   # stale after concat
    ver = doc.root["version.json"]
    assert ver["value"].value == "0.1.3" and ver["value"].size == 7


def test_stale_header_reported_in_both_files():
    doc = formats.open(fixture("concat_stale"))
    h = doc.root["header.sch"]["Array descriptors"]["Array 1"]["length"]
    assert h.status == "error" and "header.sch" in h.message and "data.npy" in h.message
    beyond = doc.root["data.npy"]["beyond header length"]
    assert beyond.status == "error" and beyond.offset == h.value
    assert beyond.child(0).name == f"[{h.value}]"
    assert "uint16" in doc.root["data.npy"].message   # the size that fits ROWPTR[-1]
    assert doc.root["row_ptr.npy"]["beyond header length"].status == "error"
    assert doc.root["header.sch"]["Feature indices"]["Feature index 1"]["length"].status \
        == "warning"
    [entry] = PLUGIN.values(doc, "DATA")
    assert "header.sch" in entry["error"]


def test_legacy_archive_opens_with_a_warning():
    doc = formats.open(fixture("legacy_008"))
    assert doc.root.status == "warning" and "no header.sch" in doc.root.message
    assert doc.root["row_ptr.npy"]["ROWPTR"].type.startswith("uint64")
    assert doc.root["col_ptr.npy"]["COLPTR"].type.startswith("uint32")
    assert doc.root["data.npy"]["DATA"].type.startswith("float32")
    assert "legacy default" in doc.root["data.npy"]["DATA"].display
    assert doc.root["features"]["dataframe_0.parquet"].status == "ok"


def test_archive_written_by_0_1_2():
    """0.1.2: row_ptr uint64 / col_ptr uint32 whatever the sizes (0.1.3 would pick uint8 for
    9 rows × 7 columns), one feature index `features` in a `features/` folder, no obs."""
    doc = formats.open(fixture("v012_basic"))
    exp = expected("v012_basic")
    assert exp["library"] == "bionemo-scdl 0.1.2"
    assert doc.root.status == "ok" and not list(doc.diagnostics())
    h = doc.root["header.sch"]
    assert h.size == 232
    assert [h[k].value for k in ("version_major", "version_minor", "version_point")] == [0, 1, 0]
    arrays = h["Array descriptors"]
    assert arrays["Array 2"]["dtype"].display == "4 (UINT64_ARRAY)"
    assert arrays["Array 3"]["dtype"].display == "3 (UINT32_ARRAY)"
    fis = h["Feature indices"]
    assert [c.name for c in fis.children if c.name.startswith("Feature index")] == \
        ["Feature index 1"]
    fi = fis["Feature index 1"]
    assert fi["name"].value == "features" and fi["length"].value == exp["num_rows"]
    assert fi["dtype"].display == "8 (STRING_ARRAY)"
    assert [fi["index_files"][f"Index file {i}"]["path"].value for i in (1, 2, 3, 4)] == [
        "features/cumulative_sum_index.npy", "features/labels.npy", "features/version.npy",
        "features/dataframe_0.parquet"]
    assert doc.root["row_ptr.npy"]["ROWPTR"].type == f"uint64 le[{exp['num_rows'] + 1}]"
    assert doc.root["col_ptr.npy"]["COLPTR"].type == f"uint32 le[{exp['nnz']}]"
    assert doc.root["version.json"]["value"].value == "0.1.2"
    assert doc.root["features"]["version.npy"]["data"].display == "'0.1.2'"
    assert doc.root["features"]["cumulative_sum_index.npy"]["data"].value == [-1, 9]


@pytest.mark.parametrize("name", ["shapes_and_dtypes.sch", "no_feature_indices.sch",
                                  "no_arrays.sch"])
def test_header_api_files(name):
    exp = expected("header_api")[name]
    doc = formats.open(fixture(f"header_api/{name}"))
    root = doc.root
    assert doc.format == "scdl"
    assert not [n for n in doc.diagnostics() if n.status == "error"]
    assert engine.coverage(root, doc.sources[0]) == (doc.sources[0].size,) * 2
    model = doc.model.header
    assert model.version == (exp["version"]["major"], exp["version"]["minor"],
                             exp["version"]["point"])
    assert root["backend"].display == f"1 ({exp['backend']})"
    assert len(model.arrays) == len(exp["arrays"])
    for i, (a, e) in enumerate(zip(model.arrays, exp["arrays"])):
        node = root["Array descriptors"][f"Array {i + 1}"]
        assert a.name == e["name"] and a.length == e["length"]
        assert node["dtype"].display.endswith(f"({e['dtype']})")
        assert (list(a.shape) if a.shape else None) == e["shape"]
    for i, (f, e) in enumerate(zip(model.feature_indices, exp["feature_indices"])):
        assert f.name == e["name"] and f.length == e["length"]
        assert f.files == e["index_files"]
        assert (list(f.shape) if f.shape else None) == e["shape"]
    assert PLUGIN.field_names(doc) == [a["name"] for a in exp["arrays"]]


def test_single_files_get_the_archive_context():
    doc = formats.open(os.path.join(fixture("uint_data"), "data.npy"))
    assert doc.format == "scdl"
    assert doc.root["DATA"].type == "uint16 le[42]"
    assert doc.root["DATA"].value == expected("uint_data")["arrays"]["DATA"]
    assert engine.coverage(doc.root, doc.sources[0])[0] == doc.sources[0].size
    doc = formats.open(os.path.join(fixture("uint_data"), "var_features", "labels.npy"))
    assert doc.format == "scdl" and doc.root["data"].value[0].endswith("uint.h5ad")
    doc = formats.open(os.path.join(fixture("uint_data"), "header.sch"))
    assert doc.root["magic"].value == "SCDL"
    assert PLUGIN.values(doc, "DATA")[0]["values"] == expected("uint_data")["arrays"]["DATA"]


# ---- through the command line ---------------------------------------------------------------
def test_cli_values_json(capsys):
    for name in ARCHIVES:
        exp = expected(name)
        for field in ("DATA", "ROWPTR", "COLPTR"):
            rc = main(["values", fixture(name), "--field", field, "--json"])
            out = json.loads(capsys.readouterr().out)
            assert out["fragments"] == [{"name": field, "values": exp["arrays"][field]}]
            if name == "concat_stale":   # every array disagrees with the stale header
                assert rc == 1 and out["errors"]
            else:
                assert rc == 0 and "errors" not in out


def test_cli_values_raw_and_unknown_field(tmp_path, capsys):
    out = tmp_path / "raw.bin"
    assert main(["values", fixture("basic"), "--field", "DATA", "--raw", str(out)]) == 0
    with open(os.path.join(fixture("basic"), "data.npy"), "rb") as fh:
        assert out.read_bytes() == fh.read()
    assert main(["values", fixture("basic"), "--field", "GENES", "--json"]) == 2
    err = capsys.readouterr().err
    assert "DATA, ROWPTR, COLPTR" in err


def test_cli_dump_json(capsys):
    assert main(["dump", fixture("basic"), "--json"]) == 0
    tree = json.loads(capsys.readouterr().out)
    kids = {c["name"]: c for c in tree["children"]}
    assert {"header.sch", "data.npy", "row_ptr.npy", "col_ptr.npy", "metadata.json",
            "version.json", "var_features", "obs_features"} <= set(kids)
    h = {c["name"]: c for c in kids["header.sch"]["children"]}
    assert h["magic"]["value"] == "SCDL" and h["endianness"]["display"] == "1 (NETWORK)"
    assert h["Array descriptors"]["children"][0]["children"][1]["value"] == "DATA"
    assert kids["header.sch"]["source"] == "header.sch"
    assert kids["var_features"]["children"][0]["source"] == "var_features/cumulative_sum_index.npy"
    data = kids["data.npy"]["children"][0]
    # a run of homogeneous elements is one leaf covering its bytes (its values in "value")
    assert data["value"] == expected("basic")["arrays"]["DATA"] and data["children"] == []
    assert (data["offset"], data["size"]) == (0, 32 * 4)
    assert main(["dump", fixture("basic"), "--json", "--max-depth", "1"]) == 0
    shallow = json.loads(capsys.readouterr().out)
    assert all(c["children"] == [] for c in shallow["children"])


def test_cli_verify(capsys):
    assert main(["verify", fixture("basic")]) == 0
    assert main(["verify", fixture("concat_stale")]) == 1
    out = capsys.readouterr().out
    assert "header.sch:24: DATA: header.sch says" in out
    assert "data.npy:" in out and "warning: metadata.json num_rows" in out

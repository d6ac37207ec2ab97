"""Zarr struct arrays end to end: written by zarr 3.1.6 (or by hand where zarr cannot), opened
by arrayscope; every fixture: no error node (except planted traps, which must give their
diagnostic), every byte of every file and derived source covered, and `values` equal to what
zarr (or numpy, for hand-written arrays) reads, field by field, floats by their bits."""
from __future__ import annotations

import io
import json
import math
import os
import warnings
from contextlib import redirect_stdout

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import ZstdCodec  # noqa: E402

from arrayscope import formats  # noqa: E402
from arrayscope.formats.core import engine  # noqa: E402
from arrayscope.formats.zarr import PLUGIN  # noqa: E402
from tests.support.zarr_arrays import (
    BIG,
    CASES,
    DEEP,
    FLAT,
    NESTED,
    SH,
    SUBARRAY,
    check_document,
    check_values,
    make,
    write_v2_by_hand,
    write_zarr,
    zarr_read,
)  # noqa: E402

warnings.filterwarnings("ignore", module="zarr")
warnings.filterwarnings("ignore", category=UserWarning)



def _build(tmp_path, name):
    fmt, dt, shape, chunks, kw = CASES[name]
    kw = dict(kw)
    data = make(dt, shape)
    if kw.get("fill_value") == "FILL":
        f = make(dt, (1,), seed=7)[0]
        kw["fill_value"] = f
    path = write_zarr(tmp_path / name, data, chunks, fmt, **kw)
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_zarr_written_fixture(tmp_path, name):
    path = _build(tmp_path, name)
    doc = check_document(path)
    truth = zarr_read(path)
    check_values(doc, truth)
    fmt, dt, shape, chunks, kw = CASES[name]
    if "write" in kw:
        absent = doc.root.find("Absent chunks")
        assert absent is not None and absent.value > 0
        assert "fill value" in absent.display_text()


def test_zarr_zstd_frame_annotated(tmp_path):
    path = _build(tmp_path, "v3_zstd_checksum")
    doc = check_document(path)
    chunk = doc.root.resolve("c/0")
    stage = chunk["Codec 1: zstd"]
    frame = stage["Zstandard frame"]
    assert frame["Magic_Number"].value == 0xFD2FB528
    fhd = frame["Frame_Header_Descriptor"]
    assert fhd.value == 0x24 and fhd["Content_Checksum_flag"].value == 1
    assert fhd["Single_Segment_flag"].value == 1
    assert frame["Frame_Content_Size"].value == 3 * FLAT.itemsize
    assert frame["Block 1"]["Block_Header"]["Last_Block"].value == 1
    assert frame["Content_Checksum"].size == 4
    recs = chunk["Records"]
    assert recs.child_count() == 3
    r0 = recs.child(0)
    assert r0["name"].value == "alice" and r0["ok"].kind == "flag"


def test_zarr_zstd_frame_without_checksum(tmp_path):
    path = _build(tmp_path, "v3_zstd_2d")
    doc = check_document(path)
    frame = doc.root.resolve("c/0/0")["Codec 1: zstd"]["Zstandard frame"]
    assert frame["Frame_Header_Descriptor"]["Content_Checksum_flag"].value == 0
    assert frame.find("Content_Checksum") is None


def test_zarr_blosc_header_and_shuffle_stage(tmp_path):
    path = _build(tmp_path, "v2_blosc_lz4_shuffle")
    doc = check_document(path)
    stage = doc.root.resolve("0")["Codec 1: blosc"]
    hdr = stage["Blosc header"]
    assert hdr["typesize"].value == FLAT.itemsize
    assert hdr["flags"]["byte-shuffle (0x01)"].value is True
    assert hdr["flags"]["compressor format"].value == 1
    assert hdr["nbytes"].value == 16 * FLAT.itemsize
    path = _build(tmp_path, "v2_zstd_shuffle")
    doc = check_document(path)
    node = doc.root.resolve("0")
    # filters then compressor: decoding runs the compressor (codec 2) first
    assert [c.name for c in node.iter_children()][:2] == ["Codec 2: zstd", "Codec 1: shuffle"]
    planes = node["Codec 1: shuffle"]["Byte planes"]
    assert planes.child_count() == FLAT.itemsize
    assert planes.child(0).size == 3


def test_zarr_edge_records_marked_and_F_order(tmp_path):
    path = _build(tmp_path, "v2_zlib_F_2d")
    doc = check_document(path)
    recs = doc.root.resolve("2.1")["Records"]
    assert recs.child_count() == 6
    outside = [recs.child(i) for i in range(6) if recs.child(i).message]
    assert outside and all("outside the array" in r.message for r in outside)
    # F order: storage record 1 of chunk (0,0) is array [1, 0]
    r = doc.root.resolve("0.0")["Records"].child(1)
    assert r.display_text().startswith("[1, 0]")


def test_zarr_fill_record_decoded(tmp_path):
    path = _build(tmp_path, "v2_fill_missing")
    doc = check_document(path)
    fill = doc.root.resolve(".zarray/fill_value/Fill record")
    truth = make(FLAT, (1,), seed=7)[0]
    assert fill["name"].value == truth["name"]
    assert fill["age"].value == int(truth["age"])


# ---- hand-written v2 arrays (zarr 3 cannot write or re-open these) -------------------------
def test_zarr_v2_nested_by_hand(tmp_path):
    data = make(DEEP, (7,))
    path = write_v2_by_hand(str(tmp_path / "deep"), data, (3,), [list(x) if not isinstance(x[1], list)
                            else x for x in json.loads(json.dumps(DEEP.descr))],
                            compressor=numcodecs.Zstd())
    doc = check_document(path)
    check_values(doc, data)
    rec = doc.root.resolve("0")["Records"].child(0)
    assert rec["a"]["b"]["c"].offset == 8
    assert rec["a"]["b"]["d"].value == str(data[0]["a"]["b"]["d"])


def test_zarr_v2_subarray_by_hand(tmp_path):
    data = make(SUBARRAY, (5,))
    fill = np.zeros((), SUBARRAY)
    fill["vec"] = [1.5, -1.0, 2.0]
    path = write_v2_by_hand(str(tmp_path / "sub"), data, (2,), json.loads(json.dumps(SUBARRAY.descr)),
                            compressor=numcodecs.Blosc("lz4", 5, SH), fill=fill)
    doc = check_document(path)
    check_values(doc, data)
    rec = doc.root.resolve("1")["Records"].child(0)
    vec = rec["vec"]
    assert vec.offset - rec.offset == 2 and vec.size == 12 and vec.child_count() == 3
    assert np.array(vec.value, "<f4").tobytes() == data[2]["vec"].tobytes()
    assert rec["code"].offset - rec.offset == 14
    [entry] = PLUGIN.values(doc, "vec")
    assert np.array(entry["values"][1], "<f4").tobytes() == data[1]["vec"].tobytes()
    assert len(entry["values"]) == 5 and len(entry["values"][0]) == 3


def test_zarr_v2_nested_F_order_by_hand(tmp_path):
    data = make(NESTED, (5, 3))
    path = write_v2_by_hand(str(tmp_path / "nf"), data, (2, 2), json.loads(json.dumps(NESTED.descr)),
                            compressor=numcodecs.GZip(), order="F")
    doc = check_document(path)
    check_values(doc, data)


def test_zarr_v3_struct_extension_by_hand(tmp_path):
    """The `struct` extension draft: field objects, explicit endian, a fill object."""
    d = tmp_path / "ext"
    d.mkdir()
    dt = np.dtype([("x", ">f4"), ("y", ">f4"), ("tag", [("k", ">i2"), ("s", ">U2")])])
    meta = {"zarr_format": 3, "node_type": "array", "shape": [5], "data_type": {
        "name": "struct", "configuration": {"fields": [
            {"name": "x", "data_type": "float32"}, {"name": "y", "data_type": "float32"},
            {"name": "tag", "data_type": {"name": "struct", "configuration": {"fields": [
                {"name": "k", "data_type": "int16"},
                {"name": "s", "data_type": {"name": "fixed_length_utf32",
                                            "configuration": {"length_bytes": 8}}}]}}}]}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": {"x": "NaN", "y": 1.5, "tag": {"k": -2, "s": "ab"}},
        "codecs": [{"name": "bytes", "configuration": {"endian": "big"}},
                   {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
        "attributes": {}}
    (d / "zarr.json").write_text(json.dumps(meta, indent=2))
    data = make(dt, (5,))
    (d / "c").mkdir()
    (d / "c" / "0").write_bytes(numcodecs.Zstd().encode(data[0:2].tobytes()))
    fill = np.zeros((), dt)
    fill["x"], fill["y"], fill["tag"]["k"], fill["tag"]["s"] = np.nan, 1.5, -2, "ab"
    truth = data.copy()
    truth[2:] = fill
    doc = check_document(str(d))
    check_values(doc, truth)
    assert doc.root.find("Absent chunks").value == 2
    fr = doc.root.resolve("zarr.json/fill_value/Fill record")
    assert fr["tag"]["s"].value == "ab" and fr["y"].value == 1.5


# ---- planted traps ---------------------------------------------------------------------------
def test_zarr_v3_big_endian_trap(tmp_path):
    data = make(BIG, (6,))
    path = write_zarr(tmp_path / "big3", data, (4,), 3, compressors=[ZstdCodec()])
    meta = json.loads(open(os.path.join(path, "zarr.json")).read())
    assert meta["codecs"][0] == {"name": "bytes"}  # the writer's quirk: no endian
    doc = check_document(path)
    warns = [n for n in doc.diagnostics() if "look big-endian" in (n.message or "")]
    assert warns, [n.message for n in doc.diagnostics()]
    assert "'a'" in warns[0].message and "'c'" not in warns[0].message
    rec = doc.root.resolve("c/0")["Records"].child(1)
    assert "big-endian reading: %d" % data[1]["a"] in rec["a"].display_text()
    # values agree with zarr (which reads the big-endian bytes little-endian)
    check_values(doc, zarr_read(path))


def test_zarr_length_mismatch(tmp_path):
    data = make(FLAT, (7,))
    path = write_zarr(tmp_path / "len", data, (3,), 2, compressors=None)
    with open(os.path.join(path, "1"), "ab") as fh:
        fh.write(b"\x01\x02\x03")
    with open(os.path.join(path, "0"), "r+b") as fh:
        fh.truncate(100)
    doc = formats.open(path)
    msgs = [n.message for n in doc.diagnostics() if n.status == "error"]
    assert any("decoded chunk has 162 bytes" in m and "3 bytes too many" in m for m in msgs), msgs
    assert any("decoded chunk has 100 bytes" in m and "59 bytes missing" in m for m in msgs), msgs
    err = [n for n in doc.diagnostics() if "162" in (n.message or "")][0]
    assert err.offset == 3 * FLAT.itemsize and err.size == 3
    for s in doc.sources:
        cov = engine.coverage(doc.root, s)
        assert cov[0] == cov[1]
    [entry] = PLUGIN.values(doc, "age")
    assert "error" in entry


def test_zarr_unknown_and_object_codecs(tmp_path):
    data = make(FLAT, (4,))
    path = write_zarr(tmp_path / "unk", data, (2,), 2, compressors=None)
    zpath = os.path.join(path, ".zarray")
    meta = json.load(open(zpath))
    meta["compressor"] = {"id": "frobnicate", "level": 3}
    meta["filters"] = [{"id": "pickle", "protocol": 5}]
    json.dump(meta, open(zpath, "w"), indent=2)
    marker = tmp_path / "pwned"
    import pickle

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))
    with open(os.path.join(path, "0"), "wb") as fh:
        fh.write(pickle.dumps(Evil()))
    doc = formats.open(path)
    msgs = [n.message or "" for n in doc.diagnostics()]
    assert any("'frobnicate' is not known" in m for m in msgs), msgs
    assert any("pickle" in m and "never unpickled" in m for m in msgs), msgs
    assert not [n for n in doc.diagnostics() if n.status == "error"]
    assert not marker.exists()
    for s in doc.sources:
        assert engine.coverage(doc.root, s)[0] == s.size


def test_zarr_corrupt_zstd_checksum(tmp_path):
    data = make(FLAT, (3,))
    path = write_zarr(tmp_path / "ck", data, (3,), 3, compressors=[ZstdCodec(checksum=True)])
    p = os.path.join(path, "c", "0")
    raw = bytearray(open(p, "rb").read())
    raw[-1] ^= 0xFF
    open(p, "wb").write(bytes(raw))
    doc = formats.open(path)
    errs = [n for n in doc.diagnostics() if n.status == "error"]
    assert errs and any(n.name == "Content_Checksum" for n in errs), [(n.name, n.message) for n in errs]


# ---- hierarchy, single files, CLI ------------------------------------------------------------
def test_zarr_group_hierarchy(tmp_path):
    g = zarr.open_group(str(tmp_path / "grp"), mode="w", zarr_format=3)
    a = g.create_array("inner/arr", shape=(4,), chunks=(2,), dtype=NESTED)
    data = make(NESTED, (4,))
    a[...] = data
    doc = check_document(str(tmp_path / "grp"))
    names = PLUGIN.field_names(doc)
    assert "inner/arr/pos.x" in names
    [entry] = PLUGIN.values(doc, "inner/arr/pos.x")
    assert entry["name"] == "arr"
    assert np.array(entry["values"], "<f4").tobytes() == data["pos"]["x"].tobytes()


def test_zarr_single_chunk_file_opens_with_context(tmp_path):
    path = _build(tmp_path, "v2_blosc_lz4_shuffle")
    doc = formats.open(os.path.join(path, "1"))
    assert doc.format == "zarr"
    assert doc.root["Records"].child_count() == 16
    assert not [n for n in doc.diagnostics() if n.status == "error"]
    doc = formats.open(os.path.join(path, ".zarray"))
    assert doc.root["dtype"].display_text().startswith(f"{FLAT.itemsize}-byte records")


def test_zarr_cli_values_json(tmp_path):
    from arrayscope.explorer.cli import main

    path = _build(tmp_path, "v3_nested_blosc")
    out = io.StringIO()
    with redirect_stdout(out):
        rc = main(["values", path, "--field", "pos.x", "--json"])
    assert rc == 0
    payload = json.loads(out.getvalue())
    [frag] = payload["fragments"]
    assert frag["name"] == "v3_nested_blosc"
    want = zarr_read(path)["pos"]["x"]
    got = [float(v) if not isinstance(v, str) else float(v) for v in frag["values"]]
    assert np.array(got, "<f4").tobytes() == want.tobytes() or \
        all((math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(got, want.tolist()))
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["values", path, "--field", "flag", "--json"]) == 0
    assert json.loads(out.getvalue())["fragments"][0]["values"] == zarr_read(path)["flag"].tolist()
    with redirect_stdout(io.StringIO()):
        assert main(["values", path, "--field", "nope", "--json"]) == 2

"""Zarr struct arrays end to end: written by zarr 3.1.6 (or by hand where zarr cannot), opened
by arrayscope; every fixture: no error node (except planted traps, which must give their
diagnostic), every byte of every file and derived source covered, and `values` equal to what
zarr (or numpy, for hand-written arrays) reads, field by field, floats by their bits."""
from __future__ import annotations

import base64
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
from zarr.codecs import BloscCodec, GzipCodec, ZstdCodec  # noqa: E402
from zarr.codecs.numcodecs import Shuffle as V3Shuffle  # noqa: E402

from arrayscope import formats  # noqa: E402
from arrayscope.formats import engine  # noqa: E402
from arrayscope.formats.zarr import PLUGIN  # noqa: E402

warnings.filterwarnings("ignore", module="zarr")
warnings.filterwarnings("ignore", category=UserWarning)

FLAT = np.dtype([("name", "U10"), ("age", "<i4"), ("weight", "<f4"), ("code", "S4"),
                 ("ok", "?")])
NESTED = np.dtype([("id", "<u2"), ("pos", [("x", "<f4"), ("y", "<f4")]), ("flag", "?")])
DEEP = np.dtype([("id", "<i8"), ("a", [("b", [("c", "<f8"), ("d", "U3")]), ("e", "<u1")])])
BIG = np.dtype([("a", ">i4"), ("b", ">f8"), ("c", "<i2")])
RAW = np.dtype([("id", "<i2"), ("blob", "V3"), ("t", "S2"), ("when", "<M8[s]")])
SUBARRAY = np.dtype([("id", "<u2"), ("vec", "<f4", (3,)), ("code", "S4")])


# ---- data ------------------------------------------------------------------------------------
def _fill_leaf(a: np.ndarray, rng) -> None:
    dt = a.dtype
    if dt.fields is not None:
        for name in dt.names:
            _fill_leaf(a[name], rng)
        return
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        flat = np.zeros(a.shape + shape, base)
        _fill_leaf(flat, rng)
        a[...] = flat
        return
    n = a.size
    k = dt.kind
    if k == "U":
        words = ["alice", "bob", "carol", "dé", "日本", "", "x" * (dt.itemsize // 4)]
        a[...] = np.array([words[i % len(words)][: dt.itemsize // 4] for i in range(n)]).reshape(a.shape)
    elif k == "S":
        words = [b"ab", b"\xff\x01", b"", b"zzzz", b"q"]
        a[...] = np.array([words[i % len(words)][: dt.itemsize] for i in range(n)],
                          dtype=dt).reshape(a.shape)
    elif k == "b":
        a[...] = (rng.integers(0, 2, n) == 1).reshape(a.shape)
    elif k in "Mm":
        ints = rng.integers(-10**9, 10**9, n).astype("<i8")
        a[...] = ints.view(dt.newbyteorder("<")).reshape(a.shape)
    elif k == "V":
        raw = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).tobytes()
        a[...] = np.frombuffer(raw, dtype=dt).reshape(a.shape)
    elif k in "iu":
        lo = 0 if k == "u" else -1000
        a[...] = rng.integers(lo, 1000, n).reshape(a.shape)
    elif k == "f":
        v = rng.normal(size=n) * 100
        specials = [np.nan, -0.0, np.inf, -np.inf]
        for i, s in enumerate(specials):
            if i * 3 < n:
                v[i * 3] = s
        a[...] = v.reshape(a.shape)


def make(dtype, shape, seed=1) -> np.ndarray:
    a = np.zeros(shape, dtype)
    _fill_leaf(a, np.random.default_rng(seed))
    return a


# ---- writers -----------------------------------------------------------------------------------
def write_zarr(path, data, chunks, fmt, compressors="auto", filters=None, order=None,
               fill_value=None, write=None, serializer="auto"):
    kw = {}
    if order:
        kw["order"] = order
    if fill_value is not None:
        kw["fill_value"] = fill_value
    if filters is not None:
        kw["filters"] = filters
    if serializer != "auto":
        kw["serializer"] = serializer
    z = zarr.create_array(str(path), shape=data.shape, chunks=chunks, dtype=data.dtype,
                          zarr_format=fmt, compressors=compressors, **kw)
    if write is None:
        z[...] = data
    else:
        z[write] = data[write]
    return str(path)


def write_v2_by_hand(path, data, chunks, descr, compressor=None, fill=None, order="C"):
    """A v2 array zarr 3 cannot write or re-open (nested / subarray dtypes)."""
    os.makedirs(path, exist_ok=True)
    meta = {"zarr_format": 2, "shape": list(data.shape), "chunks": list(chunks),
            "dtype": descr, "fill_value": None if fill is None else
            base64.b64encode(fill.tobytes()).decode(),
            "order": order, "filters": None, "compressor": None if compressor is None
            else compressor.get_config(), "dimension_separator": "."}
    with open(os.path.join(path, ".zarray"), "w") as fh:
        json.dump(meta, fh, indent=4, sort_keys=True)
    grid = [-(-s // c) for s, c in zip(data.shape, chunks)]
    for idx in np.ndindex(*grid):
        sl = tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, chunks))
        block = np.zeros(chunks, data.dtype)
        if fill is not None:
            block[...] = fill
        part = data[sl]
        block[tuple(slice(0, s) for s in part.shape)] = part
        raw = block.tobytes(order=order)
        if compressor is not None:
            raw = compressor.encode(raw)
        with open(os.path.join(path, ".".join(map(str, idx))), "wb") as fh:
            fh.write(bytes(raw))
    return str(path)


# ---- checks ---------------------------------------------------------------------------------
def leaf_names(dt, prefix=""):
    for name in dt.names:
        sub = dt.fields[name][0]
        full = f"{prefix}{name}"
        if sub.fields is not None:
            yield from leaf_names(sub, full + ".")
        else:
            yield full


def get_field(a, name):
    for part in name.split("."):
        a = a[part]
    return a


def expected_values(arr):
    """The JSON-able reading of a numpy field array, by arrayscope's conventions."""
    k = arr.dtype.kind
    if k == "S":
        return [[x.decode("latin-1") for x in np.asarray(v).reshape(-1)] if np.ndim(v)
                else v.decode("latin-1") for v in arr.reshape(arr.shape[0], *arr.shape[1:]).tolist()] \
            if arr.ndim == 1 else None
    return arr.tolist()


def check_document(path, allow=()):
    """Open `path`: returns the document after checking errors and coverage."""
    doc = formats.open(path)
    assert doc.format == "zarr"
    errors = [n for n in doc.diagnostics() if n.status == "error"]
    bad = [n for n in errors if not any(a in (n.message or "") for a in allow)]
    assert not bad, [(n.path(), n.message) for n in bad]
    for n in doc.root.walk():
        assert "internal" not in n.name, (n.path(), n.message)
    for s in list(doc.sources) + list(doc.derived):
        cov = engine.coverage(doc.root, s)
        assert cov[0] == cov[1], (s.name, cov)
    return doc


def check_values(doc, truth: np.ndarray, names=None):
    names = list(names or leaf_names(truth.dtype))
    assert sorted(PLUGIN.field_names(doc)) == sorted(names)
    for name in names:
        [entry] = PLUGIN.values(doc, name)
        assert "error" not in entry, entry.get("error")
        want = np.ascontiguousarray(get_field(truth, name)).reshape(
            (-1,) + get_field(truth, name).shape[truth.ndim:])
        # bits: raw little-endian bytes of the field in C order
        le = want.astype(want.dtype.newbyteorder("<")) if want.dtype.byteorder == ">" else want
        assert entry["raw"] == le.tobytes(), name
        got = entry["values"]
        assert len(got) == want.shape[0]
        k = want.dtype.kind
        for g, w in zip(got, want):
            if k == "S":
                assert g == w.tobytes().rstrip(b"\0").decode("latin-1") if w.ndim == 0 else True
            elif k == "f":
                ga, wa = np.asarray(g, dtype=want.dtype.newbyteorder("=")), np.asarray(w)
                assert ga.astype(wa.dtype).tobytes() == wa.tobytes() or \
                    (np.isnan(ga).all() and np.isnan(wa).all()), (name, g, w)
            elif k == "U":
                assert g == str(w)
            elif k == "b":
                assert g is bool(w) if w.ndim == 0 else g == w.tolist()
            elif k == "V":
                assert g == w.tobytes().hex()
            elif k in "Mm":
                assert g == int(w.view("<i8"))
            else:
                assert g == w.tolist()
    return names


def zarr_read(path):
    return zarr.open_array(str(path), mode="r")[...]


# ---- fixtures written by zarr 3.1.6 ------------------------------------------------------
SH = numcodecs.Blosc.SHUFFLE
BS = numcodecs.Blosc.BITSHUFFLE
NS = numcodecs.Blosc.NOSHUFFLE
CASES = {
    # name: (format, dtype, shape, chunks, kwargs)
    "v2_zstd_shuffle": (2, FLAT, (7,), (3,), dict(compressors=numcodecs.Zstd(level=1),
                                                  filters=[numcodecs.Shuffle(elementsize=FLAT.itemsize)])),
    "v2_zstd_checksum": (2, FLAT, (7,), (3,), dict(compressors=numcodecs.Zstd(level=3, checksum=True))),
    "v2_blosc_lz4_shuffle": (2, FLAT, (40,), (16,), dict(compressors=numcodecs.Blosc("lz4", 5, SH))),
    "v2_blosc_zstd_bitshuffle_2d": (2, FLAT, (5, 20), (2, 16),
                                    dict(compressors=numcodecs.Blosc("zstd", 5, BS))),
    "v2_blosc_blosclz_noshuffle": (2, FLAT, (300,), (128,),
                                   dict(compressors=numcodecs.Blosc("blosclz", 5, NS))),
    "v2_blosc_blosclz_shuffle_big": (2, BIG, (3000,), (3000,),
                                     dict(compressors=numcodecs.Blosc("blosclz", 9, SH, blocksize=4096))),
    "v2_blosc_zlib_bitshuffle": (2, BIG, (50,), (24,),
                                 dict(compressors=numcodecs.Blosc("zlib", 5, BS))),
    "v2_none": (2, FLAT, (7,), (3,), dict(compressors=None)),
    "v2_zlib_F_2d": (2, FLAT, (5, 4), (2, 3), dict(compressors=numcodecs.Zlib(level=5), order="F")),
    "v2_gzip_F_2d": (2, FLAT, (4, 5), (3, 2), dict(compressors=numcodecs.GZip(level=5), order="F")),
    "v2_lz4": (2, FLAT, (9,), (4,), dict(compressors=numcodecs.LZ4())),
    "v2_big_endian": (2, BIG, (6,), (4,), dict(compressors=numcodecs.Zstd())),
    "v2_fill_missing": (2, FLAT, (10,), (3,), dict(compressors=numcodecs.Zstd(),
                                                   fill_value="FILL", write=slice(0, 4))),
    "v3_zstd_checksum": (3, FLAT, (7,), (3,), dict(compressors=[ZstdCodec(level=3, checksum=True)])),
    "v3_zstd_2d": (3, FLAT, (5, 5), (2, 3), dict(compressors=[ZstdCodec(level=1, checksum=False)])),
    "v3_blosc_lz4_shuffle": (3, FLAT, (40,), (16,),
                             dict(compressors=[BloscCodec(cname="lz4", shuffle="shuffle")])),
    "v3_blosc_zstd_bitshuffle": (3, FLAT, (40,), (16,),
                                 dict(compressors=[BloscCodec(cname="zstd", shuffle="bitshuffle")])),
    "v3_blosc_noshuffle_2d": (3, FLAT, (6, 7), (4, 4),
                              dict(compressors=[BloscCodec(cname="blosclz", shuffle="noshuffle")])),
    "v3_shuffle_gzip": (3, FLAT, (7,), (3,),
                        dict(compressors=[V3Shuffle(elementsize=FLAT.itemsize),
                                          GzipCodec(level=5)])),
    "v3_nested_blosc": (3, NESTED, (9,), (4,),
                        dict(compressors=[BloscCodec(cname="lz4", shuffle="bitshuffle")])),
    "v3_deep_zstd": (3, DEEP, (5,), (2,), dict(compressors=[ZstdCodec()])),
    # zarr 3.1.6 cannot create a struct with a V field unless a fill value is given
    "v3_raw_bytes_datetime": (3, RAW, (6,), (4,), dict(compressors=[ZstdCodec()], fill_value="FILL")),
    "v2_raw_bytes_datetime": (2, RAW, (6,), (4,), dict(compressors=numcodecs.Zlib(),
                                                       fill_value="FILL")),
    "v3_none": (3, NESTED, (5,), (2,), dict(compressors=None)),
    "v3_fill_missing_2d": (3, FLAT, (6, 6), (4, 4), dict(compressors=[ZstdCodec()],
                                                         fill_value="FILL", write=(slice(0, 3), slice(0, 3)))),
}


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

"""Zarr codec stages against numcodecs (the oracle, used only here), the JSON tokenizer,
and robustness: random bytes as chunks or as metadata never raise."""
from __future__ import annotations

import itertools
import json
import os
import tempfile

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arrayscope import formats  # noqa: E402
from arrayscope.formats.core import engine, jsontree  # noqa: E402
from arrayscope.formats.core.engine import run_parser  # noqa: E402
from arrayscope.formats.core.node import Node  # noqa: E402
from arrayscope.formats.core.source import BytesSource  # noqa: E402
from arrayscope.formats.zarr.codecs import CodecSpec, blosc, blosclz, get, shuffle  # noqa: E402

FUZZ = float(os.environ.get("ARRAYSCOPE_FUZZ_SCALE", "1"))  # more examples on demand


def n_examples(n: int) -> int:
    return max(1, int(n * FUZZ))


REC = np.dtype([("name", "U3"), ("age", "<i4"), ("w", "<f8")])  # 24-byte records


def records(n, seed=0):
    rng = np.random.default_rng(seed)
    a = np.zeros(n, REC)
    a["name"] = [["ab", "c", "xyz"][i % 3] for i in range(n)]
    a["age"] = np.arange(n) % 37
    a["w"] = rng.normal(size=n).round(2)
    return a


def reverse(name, data, config=None, itemsize=REC.itemsize, limit=None):
    src = BytesSource(bytes(data), "chunk")
    out = {}
    spec = CodecSpec(name, config or {}, itemsize=itemsize)

    def fn(cur):
        out["data"] = get(name).reverse(spec, cur, limit or 1 << 24)
    root = run_parser("chunk", "file", src, fn)
    return root, src, out.get("data")


@pytest.mark.parametrize("cname,shuf", list(itertools.product(
    ["blosclz", "lz4", "lz4hc", "zlib", "zstd"], [0, 1, 2])))
def test_blosc_matrix(cname, shuf):
    for n, bs in ((1, 0), (5, 0), (300, 0), (2000, 1024), (777, 512)):
        a = records(n)
        enc = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuf, blocksize=bs).encode(a)
        root, src, dec = reverse("blosc", enc)
        assert dec == a.tobytes(), (cname, shuf, n, bs)
        assert engine.coverage(root, src) == (src.size, src.size)
        assert not engine.diagnostics(root), [d.message for d in engine.diagnostics(root)]
        assert get("blosc").decode(CodecSpec("blosc"), enc, 1 << 24) == a.tobytes()


@pytest.mark.parametrize("cname,shuf", list(itertools.product(
    ["blosclz", "lz4", "zstd"], [0, 1, 2])))
def test_blosc_many_blocks_of_float64(cname, shuf):
    """Typesize 8: split byte planes (blosclz, lz4: c-blosc keeps one block here) written
    strided into place; zstd's several full blocks and a short last one un-shuffled from
    the codec's bytes, or bit-shuffled blocks transposed together; all bit-exact."""
    a = np.round(np.random.default_rng(7).normal(size=4 * 2048 + 40) * 100, 2)
    enc = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuf, blocksize=16384).encode(a)
    lay = blosc.layout(enc, 1 << 24)
    assert lay.typesize == 8
    if cname == "zstd":
        assert [b.nbytes for b in lay.blocks] == [16384] * 4 + [320]
    else:
        assert [len(b.streams) for b in lay.blocks] == [8]
    assert get("blosc").decode(CodecSpec("blosc"), enc, 1 << 24) == a.tobytes()


@pytest.mark.parametrize("shuf", [1, 2])
def test_blosc_corrupt_block_keeps_the_blocks_before_it(shuf):
    """A stream that fails in block 3 gives blocks 1-2 decoded (un-shuffled) and the error
    located at that stream."""
    a = np.arange(4 * 2048, dtype="<f8") * 1.5
    enc = bytearray(numcodecs.Blosc("zstd", 5, shuf, blocksize=16384).encode(a))
    lay = blosc.layout(bytes(enc), 1 << 24)
    s = lay.blocks[2].streams[0]
    enc[s.data_at:s.data_at + 4] = b"\0\0\0\0"  # not a zstd frame magic any more
    out, err = blosc.decode_layout(bytes(enc), lay)
    assert bytes(out) == a.tobytes()[:2 * 16384]
    assert err is not None and err[1] == s.data_at


def test_blosc_typesize_1_for_wide_records():
    """numcodecs passes typesize 1 when the itemsize exceeds 255."""
    dt = np.dtype([("s", "U70"), ("x", "<i4")])
    a = np.zeros(20, dt)
    a["s"] = "hello"
    a["x"] = np.arange(20)
    enc = numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE).encode(a)
    assert enc[3] == 1
    root, src, dec = reverse("blosc", enc, itemsize=dt.itemsize)
    assert dec == a.tobytes()


def test_bitshuffle_matches_numcodecs_layout():
    a = records(64)
    raw = a.tobytes()
    enc = numcodecs.Blosc("lz4", 0, numcodecs.Blosc.BITSHUFFLE).encode(a)  # clevel 0: memcpy
    assert shuffle.bitunshuffle(shuffle.bitshuffle(raw, 24), 24) == raw
    assert shuffle.unshuffle(shuffle.shuffle(raw, 24), 24) == raw
    assert get("blosc").decode(CodecSpec("blosc"), enc, 1 << 20) == raw


def test_blosclz_against_numcodecs():
    rng = np.random.default_rng(3)
    for size in (16, 100, 5000, 70000):
        for kind in ("zeros", "text", "random", "runs"):
            if kind == "zeros":
                raw = bytes(size)
            elif kind == "text":
                raw = (b"the quick brown fox " * (size // 20 + 1))[:size]
            elif kind == "random":
                raw = rng.integers(0, 4, size, dtype=np.uint8).tobytes()
            else:
                raw = np.repeat(rng.integers(0, 255, size // 50 + 1, dtype=np.uint8), 50)[:size].tobytes()
            enc = numcodecs.Blosc("blosclz", 9, numcodecs.Blosc.NOSHUFFLE).encode(raw)
            assert get("blosc").decode(CodecSpec("blosc"), enc, 1 << 20) == raw, (size, kind)


@given(st.binary(max_size=300), st.integers(0, 4096))
@settings(max_examples=n_examples(300), deadline=None)
def test_blosclz_random_streams_never_raise_unexpectedly(data, maxout):
    try:
        out = blosclz.decompress(data, maxout)
    except blosclz.BloscLZError:
        return
    assert len(out) <= maxout


@pytest.mark.parametrize("codec,name,config", [
    (numcodecs.Zstd(level=1), "zstd", {}),
    (numcodecs.Zstd(level=5, checksum=True), "zstd", {}),
    (numcodecs.LZ4(), "lz4", {}),
    (numcodecs.Zlib(level=1), "zlib", {}),
    (numcodecs.GZip(level=9), "gzip", {}),
    (numcodecs.BZ2(), "bz2", {}),
    (numcodecs.LZMA(), "lzma", {}),
    (numcodecs.Shuffle(elementsize=24), "shuffle", {"elementsize": 24}),
    # numcodecs cannot delta a struct dtype; a numeric view of the records works (zarr 2.18.7)
    (numcodecs.Delta(dtype="<i4"), "delta", {"dtype": "<i4", "astype": "<i4"}),
    (numcodecs.Delta(dtype="<u8", astype="<u8"), "delta", {"dtype": "<u8", "astype": "<u8"}),
    (numcodecs.Delta(dtype=">i2"), "delta", {"dtype": ">i2"}),
])
def test_simple_codecs(codec, name, config):
    a = records(500)
    enc = bytes(codec.encode(a.tobytes()))
    root, src, dec = reverse(name, enc, config)
    assert dec == a.tobytes()
    assert engine.coverage(root, src) == (src.size, src.size)
    assert not engine.diagnostics(root)


def test_delta_bad_configs_are_codec_errors():
    from arrayscope.formats.zarr.codecs import CodecError
    for cfg, data in (({"dtype": "|O"}, b"1234"), ({"dtype": "<i4"}, b"12345"),
                      ({"dtype": "<i4", "astype": "U3"}, b"1234"), ({}, b"")):
        with pytest.raises(CodecError):
            get("delta").decode(CodecSpec("delta", cfg), data, 1 << 20)
    # astype narrower than dtype: numcodecs' cumsum into dtype
    a = np.array([5, 7, 6, 100, 90], "<i4")
    enc = bytes(numcodecs.Delta(dtype="<i4", astype="<i2").encode(a))
    assert get("delta").decode(CodecSpec("delta", {"dtype": "<i4", "astype": "<i2"}), enc,
                               1 << 20) == a.tobytes()


def test_zstd_multi_block_and_raw_blocks():
    rng = np.random.default_rng(5)
    raw = rng.integers(0, 256, 300_000, dtype=np.uint8).tobytes()  # incompressible: raw blocks
    enc = numcodecs.Zstd(level=1).encode(raw)
    root, src, dec = reverse("zstd", enc, limit=1 << 20)
    assert dec == raw
    frame = root["Zstandard frame"]
    blocks = [c for c in frame.iter_children() if c.name.startswith("Block ")]
    assert len(blocks) >= 3
    assert blocks[-1]["Block_Header"]["Last_Block"].value == 1
    assert engine.coverage(root, src) == (src.size, src.size)


def test_crc32c_codec():
    from arrayscope.formats.zarr.codecs.simple import crc32c
    assert crc32c(b"123456789") == 0xE3069283
    data = b"hello records"
    enc = data + crc32c(data).to_bytes(4, "little")
    root, src, dec = reverse("crc32c", enc)
    assert dec == data and not engine.diagnostics(root)
    root, src, dec = reverse("crc32c", enc[:-1] + b"\0")
    assert any("CRC32C" in (n.message or "") for n in engine.diagnostics(root))


# ---- JSON ----------------------------------------------------------------------------------
def _json_tree(text: bytes):
    src = BytesSource(text, "j")
    root = Node("j", "file", src, 0, src.size)
    return jsontree.parse(src, root), src


def test_jsontree_offsets():
    text = b'{\n  "shape": [7],\n  "dtype": [["name", "<U10"], ["age", "<i4"]],\n  "x": null\n}'
    jd, src = _json_tree(text)
    assert jd.ok and jd.value["shape"] == [7]
    shape = jsontree.member(jd.node, "shape")
    assert text[shape.offset:shape.end] == b'"shape": [7]'
    seven = jsontree.element(shape, 0)
    assert text[seven.offset:seven.end] == b"7" and seven.value == 7
    age = jsontree.element(jsontree.element(jsontree.member(jd.node, "dtype"), 1), 1)
    assert text[age.offset:age.end] == b'"<i4"' and age.value == "<i4"
    assert engine.coverage(jd.node, src) == (len(text), len(text))


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=8),
                    lambda ch: st.lists(ch, max_size=4) | st.dictionaries(st.text(max_size=5), ch,
                                                                           max_size=4),
                    max_leaves=20), st.sampled_from([None, 0, 2]))
@settings(max_examples=n_examples(150), deadline=None)
def test_jsontree_roundtrips_python_json(value, indent):
    text = json.dumps(value, indent=indent).encode()
    jd, src = _json_tree(text)
    assert jd.ok and jd.value == value
    assert engine.coverage(jd.node, src) == (len(text), len(text))


@given(st.binary(max_size=200))
@settings(max_examples=n_examples(300), deadline=None)
def test_jsontree_random_bytes_never_raise(data):
    jd, src = _json_tree(data)
    try:
        expect = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        expect = "invalid"
    if jd.ok:
        assert expect != "invalid"
    assert engine.coverage(jd.node, src) == (len(data), len(data))


# ---- random bytes in real arrays ----------------------------------------------------------
_ZARRAY = {"zarr_format": 2, "shape": [5], "chunks": [3], "dtype": [["a", "<i4"], ["b", "|S3"]],
           "fill_value": None, "order": "C", "filters": None, "compressor": None}
_COMPRESSORS = [None, {"id": "zstd", "level": 1}, {"id": "blosc", "cname": "lz4", "clevel": 5,
                                                   "shuffle": 1}, {"id": "zlib", "level": 1},
                {"id": "gzip", "level": 1}, {"id": "lz4"}, {"id": "bz2"}, {"id": "lzma"},
                {"id": "shuffle", "elementsize": 7}]


def _open_ok(path):
    doc = formats.open(path)
    for n in doc.root.walk():
        assert "internal" not in n.name and "internal error" not in (n.message or ""), \
            (n.path(), n.message)
    for s in doc.sources:
        assert engine.coverage(doc.root, s) == (s.size, s.size)
    from arrayscope.formats.zarr import PLUGIN
    for name in PLUGIN.field_names(doc):
        PLUGIN.values(doc, name)
    return doc


@given(st.binary(max_size=200), st.sampled_from(_COMPRESSORS))
@settings(max_examples=n_examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_chunk_bytes_never_raise(data, comp):
    with tempfile.TemporaryDirectory() as d:
        meta = dict(_ZARRAY, compressor=comp)
        with open(os.path.join(d, ".zarray"), "w") as fh:
            json.dump(meta, fh)
        with open(os.path.join(d, "0"), "wb") as fh:
            fh.write(data)
        with open(os.path.join(d, "1"), "wb") as fh:
            fh.write(b"\x02\x01\x21\x07" + data)  # blosc-looking
        _open_ok(d)


_JSONISH = st.recursive(st.none() | st.booleans() | st.integers(-5, 300) | st.text(max_size=6)
                        | st.sampled_from(["<i4", "|S3", ">f8", "int32", "structured", "struct",
                                           "bytes", "zstd", "blosc", "C", "F", "/", "."]),
                        lambda ch: st.lists(ch, max_size=4) | st.dictionaries(
                            st.sampled_from(["name", "configuration", "fields", "data_type",
                                             "endian", "id", "length_bytes", "chunk_shape",
                                             "x", "y"]), ch, max_size=4), max_leaves=16)


@given(st.one_of(st.binary(max_size=120), _JSONISH.map(lambda v: json.dumps(v).encode())),
       st.sampled_from(["shape", "chunks", "dtype", "fill_value", "compressor", "filters",
                        "data_type", "codecs", "chunk_grid", "chunk_key_encoding", None]),
       st.booleans())
@settings(max_examples=n_examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_metadata_never_raise(blob, key, v3):
    with tempfile.TemporaryDirectory() as d:
        if v3:
            meta = {"zarr_format": 3, "node_type": "array", "shape": [5],
                    "data_type": {"name": "structured", "configuration": {
                        "fields": [["a", "int32"], ["b", {"name": "null_terminated_bytes",
                                                           "configuration": {"length_bytes": 3}}]]}},
                    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
                    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                    "fill_value": "AAAAAAAAAA==", "codecs": [{"name": "bytes"}],
                    "attributes": {}}
            name, chunk = "zarr.json", os.path.join("c", "0")
            os.makedirs(os.path.join(d, "c"))
        else:
            meta, name, chunk = dict(_ZARRAY), ".zarray", "0"
        if key is None:
            text = blob
        else:
            try:
                meta[key] = json.loads(blob)
            except (ValueError, UnicodeDecodeError):
                meta[key] = blob.decode("latin-1")
            text = json.dumps(meta).encode()
        with open(os.path.join(d, name), "wb") as fh:
            fh.write(text)
        with open(os.path.join(d, chunk), "wb") as fh:
            fh.write(bytes(range(21)))
        _open_ok(d)


def test_codecs_register_themselves():
    """Every codec module registers its classes by name (v2 id = v3 name, `numcodecs.`
    stripped): `get` knows them without a list elsewhere, and a new class decorated with
    `register` is found at once."""
    from arrayscope.formats.zarr import codecs
    from arrayscope.formats.zarr.codecs import base

    for name in ("zlib", "gzip", "lz4", "bz2", "lzma", "shuffle", "delta", "crc32c", "blosc",
                 "zstd"):
        assert codecs.known(name) and type(codecs.get(name)).__name__ != "Undecodable", name
    assert not codecs.known("pickle") and not codecs.known("nosuch")
    assert isinstance(codecs.get("nosuch"), base.Undecodable)

    @codecs.register
    class Reverse(codecs.Codec):
        names = ("test-reverse",)

        def decode(self, spec, data, limit):
            return bytes(reversed(data))

    try:
        spec = CodecSpec("test-reverse")
        assert codecs.get("test-reverse").decode(spec, b"abc", 10) == b"cba"
        with pytest.raises(ValueError, match="twice"):
            codecs.register(type("Other", (codecs.Codec,), {"names": ("test-reverse",)}))
    finally:
        del base.REGISTRY["test-reverse"]


def test_checksum32_codecs_from_one_module(tmp_path):
    """numcodecs CRC32 / Adler32 (codecs/checksum32.py, registered by name, no other file
    touched): zarr writes them, arrayscope frames and checks them, a flipped byte is the
    checksum's error on the chunk's checksum node."""
    import shutil

    import zarr

    from arrayscope.formats.core.verify import verify
    from arrayscope.formats.zarr import PLUGIN

    path = str(tmp_path / "c")
    z = zarr.create_array(path, shape=(10,), chunks=(4,), dtype="<i4", zarr_format=2,
                          compressors=numcodecs.CRC32(location="end"),
                          filters=[numcodecs.Adler32()])
    z[:] = np.arange(10, dtype="<i4") * 7 - 3
    doc = formats.open(path)
    assert verify(doc) == []
    assert PLUGIN.values(doc, "value")[0]["values"] == (np.arange(10) * 7 - 3).tolist()
    chunk = doc.root["1"]
    crc = chunk["Codec 2: crc32"]["CRC32"]
    raw = open(os.path.join(path, "1"), "rb").read()
    assert crc.offset == len(raw) - 4 and crc.value == int.from_bytes(raw[-4:], "little")
    adler = chunk["Codec 1: adler32"]["ADLER32"]
    assert adler.offset == 0 and adler.size == 4
    spec = CodecSpec("crc32", {"location": "end"})
    assert get("crc32").encode(spec, b"hello world") == bytes(numcodecs.CRC32(
        location="end").encode(b"hello world"))
    damaged = str(tmp_path / "d")
    shutil.copytree(path, damaged)
    with open(os.path.join(damaged, "1"), "r+b") as fh:
        fh.seek(6)
        b = fh.read(1)
        fh.seek(6)
        fh.write(bytes([b[0] ^ 1]))
    doc = formats.open(damaged)
    [f] = [f for f in verify(doc) if f.status == "error"]
    assert f.source == "1" and f.offset == len(raw) - 4 and "crc32: stored" in f.message
    assert "error" in PLUGIN.values(doc, "value")[0]

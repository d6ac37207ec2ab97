"""Zarr struct-dtype arrays for the tests: dtypes, writers (zarr 3.1.6, or by hand where zarr
cannot), the catalogue of cases, and the checks every fixture passes (no unexpected error,
every byte covered, values equal to what zarr or numpy reads)."""
from __future__ import annotations

import base64
import json
import os

import numcodecs
import numpy as np
import zarr
from zarr.codecs import BloscCodec, GzipCodec, ZstdCodec
from zarr.codecs.numcodecs import Shuffle as V3Shuffle

from arrayscope import formats
from arrayscope.formats.core import engine
from arrayscope.formats.zarr import PLUGIN

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


def _bytes_text(w: np.ndarray):
    """A fixed-size bytes cell (or a subarray of them) as `values` gives it: text, NULs cut."""
    if w.ndim == 0:
        return w.tobytes().rstrip(b"\0").decode("latin-1")
    return [_bytes_text(x) for x in w]


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
                assert g == _bytes_text(w), (name, g, w)
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

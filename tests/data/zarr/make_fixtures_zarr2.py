"""Write the zarr v2 struct-array fixtures with zarr-python 2.18.7 itself, and record what it reads.

zarr 3 cannot write (or even re-open) several of these: nested and subarray struct dtypes,
struct subarrays. So this script runs in its own venv, never under the test suite:

    python -m venv /tmp/zarr2
    /tmp/zarr2/bin/pip install "zarr==2.18.7" "numcodecs<0.16" "numpy<2.3"
    /tmp/zarr2/bin/python tests/data/zarr/make_fixtures_zarr2.py

Output: `v2_2.18.7/<name>/` (an array, or a group of arrays) and beside it
`v2_2.18.7/<name>.expected.json` (beside, not inside: a file inside an array directory is
not part of the array). expected.json holds, per array (key = its path inside the fixture,
"." for a fixture that is one array), zarr's own reading of every leaf field, flattened in C
order, one entry per record:

- floats: their exact value (float32/float16 widened exactly); NaN / Infinity / -Infinity as
  the strings "NaN", "Infinity", "-Infinity"; complex as [re, im]
- U: str; S: the bytes without trailing NULs as a latin-1 str; V: hex str; bool: bool;
  datetime64/timedelta64: the integer count; subarray fields: nested lists
- a struct subarray field (`('pts', [('x','<f4'),('y','<f4')], (2,))`) is unrolled into one
  struct per element: leaves `pts[0].x`, `pts[0].y`, `pts[1].x`, … (index in C order)
- sha256: of the field's raw bytes, little-endian, C order (pins -0.0 and NaN payloads)

plus the metadata facts the tests check (shape, chunks, which chunk keys are absent, and the
planted traps with zarr's own error).
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import shutil
import sys
import warnings

import numcodecs
import numpy as np
import zarr

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "v2_" + zarr.__version__)

FLAT = np.dtype([("name", "U10"), ("age", "<i4"), ("weight", "<f4"), ("code", "S4"),
                 ("ok", "?")])
NESTED = np.dtype([("id", "<u2"), ("pos", [("x", "<f4"), ("y", "<f4")]), ("flag", "?")])
DEEP = np.dtype([("id", "<i8"), ("a", [("b", [("c", "<f8"), ("d", "U3")]), ("e", "<u1")])])
SUBARRAY = np.dtype([("id", "<u2"), ("vec", "<f4", (3,)), ("code", "S4")])
SUB2D = np.dtype([("m", "<i2", (2, 3)), ("s", "U2"), ("w", ">f8", (2,))])
NESTED_SUB = np.dtype([("id", "<u4"), ("p", [("xy", "<f8", (2,)), ("tag", "S3")]),
                       ("q", "<u1", (4,))])
STRUCT_SUB = np.dtype([("pts", [("x", "<f4"), ("y", ">i2")], (2,)), ("n", "<i2")])
BIG = np.dtype([("a", ">i4"), ("b", ">f8"), ("c", ">u2"), ("s", ">U3")])
MIXED = np.dtype([("a", ">i4"), ("b", "<f8"), ("c", ">i2"), ("d", "<u4"), ("e", ">f4")])
TYPES = np.dtype([("i1", "i1"), ("u8", "<u8"), ("f2", "<f2"), ("c8", "<c8"), ("c16", ">c16"),
                  ("t", "<M8[ms]"), ("dt", ">m8[s]"), ("raw", "V3"), ("b", "?")])
DELTA = np.dtype([("a", "<i4"), ("b", "<i4"), ("c", "<u4")])   # 12 B: Delta('<i4') applies
WIDE = np.dtype([("label", "U70"), ("v", "<f8")])             # 288 B > 255: blosc typesize 1


# ---- data ------------------------------------------------------------------------------------
def _fill_leaf(a: np.ndarray, rng) -> None:
    dt = a.dtype
    if dt.fields is not None:
        for name in dt.names:
            _fill_leaf(a[name], rng)
        return
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        tmp = np.zeros(a.shape + shape, base)
        _fill_leaf(tmp, rng)
        a[...] = tmp
        return
    n, k = a.size, dt.kind
    if k == "U":
        words = ["alice", "bob", "carol", "dé", "日本", "", "x" * 80, "Zoë", "q"]
        a[...] = np.array([words[i % len(words)][: dt.itemsize // 4] for i in range(n)]
                          ).reshape(a.shape)
    elif k == "S":
        words = [b"ab", b"\xff\x01", b"", b"zzzz", b"q", b"\x00x"]
        a[...] = np.array([words[i % len(words)][: dt.itemsize] for i in range(n)],
                          dtype=dt).reshape(a.shape)
    elif k == "b":
        a[...] = (rng.integers(0, 2, n) == 1).reshape(a.shape)
    elif k in "Mm":
        a[...] = rng.integers(-10**9, 10**9, n).astype("<i8").view(
            dt.newbyteorder("<")).reshape(a.shape)
    elif k == "V":
        raw = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).tobytes()
        a[...] = np.frombuffer(raw, dtype=dt).reshape(a.shape)
    elif k in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        v = rng.integers(lo, hi, n, endpoint=True).astype(dt)
        if n > 2:
            v[1], v[2] = info.min, info.max     # extremes of the type
        a[...] = v.reshape(a.shape)
    elif k == "f":
        v = rng.normal(size=n) * 100
        for i, s in enumerate([np.nan, -0.0, np.inf, -np.inf]):
            if i * 3 < n:
                v[i * 3] = s
        a[...] = v.reshape(a.shape)
    elif k == "c":
        v = rng.normal(size=n) + 1j * rng.normal(size=n)
        if n > 1:
            v[1] = complex(np.nan, -0.0)
        a[...] = v.reshape(a.shape)


def make(dtype, shape, seed=1) -> np.ndarray:
    a = np.zeros(shape, dtype)
    _fill_leaf(a, np.random.default_rng(seed))
    return a


def one(dtype, seed=7):
    return make(dtype, (1,), seed)[0]


# ---- expected values ---------------------------------------------------------------------------
def _float(x: float):
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def to_json(arr: np.ndarray):
    """A leaf field array (records on axis 0, then the subarray axes) as JSON values."""
    k = arr.dtype.kind
    if arr.ndim > 1:
        return [to_json(a) for a in arr]
    if arr.ndim == 0:
        return to_json(arr.reshape(1))[0]
    if k == "f":
        return [_float(x) for x in arr.tolist()]
    if k == "c":
        return [[_float(x.real), _float(x.imag)] for x in arr.tolist()]
    if k == "U":
        return [str(x) for x in arr.tolist()]
    if k == "S":
        return [x.decode("latin-1") for x in arr.tolist()]
    if k == "V":
        return [bytes(x.tobytes()).hex() for x in arr]
    if k in "Mm":
        return arr.astype(arr.dtype.newbyteorder("<")).view("<i8").tolist()
    if k == "b":
        return [bool(x) for x in arr.tolist()]
    return [int(x) for x in arr.tolist()]


def leaves(dt: np.dtype, prefix=""):
    """(name, getter) of each leaf field, the getter mapping the record array to the field."""
    for name in dt.names:
        sub = dt.fields[name][0]
        full = f"{prefix}{name}"
        if sub.subdtype is not None and sub.subdtype[0].fields is not None:
            base, shape = sub.subdtype           # a struct subarray: one struct per element
            for idx in np.ndindex(*shape):
                label = f"{full}[{','.join(map(str, idx))}]"
                for leaf, get in leaves(base, label + "."):
                    yield leaf, (lambda a, n=name, i=idx, g=get: g(a[n][(slice(None),) + i]))
        elif sub.fields is not None:
            for leaf, get in leaves(sub, full + "."):
                yield leaf, (lambda a, n=name, g=get: g(a[n]))
        else:
            yield full, (lambda a, n=name: a[n])


def absent_keys(z) -> list:
    root = z.store.path if hasattr(z.store, "path") else z.store.dir_path()
    out = []
    for idx in np.ndindex(*z.cdata_shape):
        key = z._chunk_key(idx)
        if not os.path.isfile(os.path.join(root, *key.split("/"))):
            out.append(key[len(z.path) + 1:] if z.path else key)
    return out


def expected_array(z) -> dict:
    # Read into zeroed memory: with fill_value null, zarr 2 leaves absent chunks untouched
    # (z[...] would show whatever np.empty held); arrayscope shows zero bytes there.
    data = np.zeros(z.shape, z.dtype)
    z.get_basic_selection(Ellipsis, out=data)
    flat = data.reshape(-1) if data.ndim else data.reshape(1)
    out = {"shape": list(z.shape), "chunks": list(z.chunks), "order": z.order,
           "dtype": json.loads(json.dumps(z.dtype.descr)) if z.dtype.fields else z.dtype.str,
           # absent chunk keys, found on disk (zarr 2.18.7's nchunks_initialized miscounts
           # with dimension_separator "/" (top-level entries only) and for 0-d arrays)
           "absent_chunks": absent_keys(z), "fields": {}}
    if z.dtype.fields is None:
        names = [("value", lambda a: a)]
    else:
        names = list(leaves(z.dtype))
    for name, get in names:
        f = np.ascontiguousarray(get(flat))
        le = f.astype(f.dtype.newbyteorder("<")) if f.dtype.byteorder == ">" else f
        out["fields"][name] = {"values": to_json(f),
                               "sha256": hashlib.sha256(le.tobytes()).hexdigest()}
    return out


# ---- writers -----------------------------------------------------------------------------------
FIXTURES = {}


def fixture(fn):
    FIXTURES[fn.__name__] = fn
    return fn


def arr(path, data, chunks, write=None, **kw):
    z = zarr.open_array(path, mode="w", shape=data.shape, chunks=chunks, dtype=data.dtype, **kw)
    if write is None:
        z[...] = data
    else:
        z[write] = data[write]
    return z


SH, BS, NS = numcodecs.Blosc.SHUFFLE, numcodecs.Blosc.BITSHUFFLE, numcodecs.Blosc.NOSHUFFLE


@fixture
def flat_default(p):          # zarr 2's defaults: Blosc(lz4, 5, shuffle), fill 0 ('0' in U/S)
    return arr(p, make(FLAT, (10,)), (4,))


@fixture
def flat_blosc_zstd_bitshuffle(p):
    return arr(p, make(FLAT, (10,)), (4,), compressor=numcodecs.Blosc("zstd", 3, BS))


@fixture
def flat_blosc_zlib_noshuffle(p):
    return arr(p, make(FLAT, (10,)), (4,), compressor=numcodecs.Blosc("zlib", 5, NS))


@fixture
def flat_blosc_blosclz_shuffle(p):
    return arr(p, make(FLAT, (200,)), (100,), compressor=numcodecs.Blosc("blosclz", 9, SH))


@fixture
def flat_blosc_lz4hc_bitshuffle(p):
    return arr(p, make(MIXED, (60,)), (32,), compressor=numcodecs.Blosc("lz4hc", 5, BS))


@fixture
def wide_blosc_shuffle(p):    # itemsize 288 > 255: numcodecs passes typesize 1 to blosc
    return arr(p, make(WIDE, (9,)), (4,), compressor=numcodecs.Blosc("lz4", 5, SH))


@fixture
def flat_zstd(p):
    return arr(p, make(FLAT, (7,)), (3,), compressor=numcodecs.Zstd(level=1))


@fixture
def flat_zstd_checksum(p):
    return arr(p, make(FLAT, (7,)), (3,), compressor=numcodecs.Zstd(level=5, checksum=True))


@fixture
def flat_zlib(p):
    return arr(p, make(FLAT, (7,)), (3,), compressor=numcodecs.Zlib(level=9))


@fixture
def flat_gzip(p):
    return arr(p, make(FLAT, (7,)), (3,), compressor=numcodecs.GZip(level=1))


@fixture
def flat_lz4(p):
    return arr(p, make(FLAT, (7,)), (3,), compressor=numcodecs.LZ4(acceleration=1))


@fixture
def flat_bz2(p):
    return arr(p, make(FLAT, (7,)), (3,), compressor=numcodecs.BZ2(level=9))


@fixture
def flat_lzma(p):
    return arr(p, make(FLAT, (7,)), (3,), compressor=numcodecs.LZMA())


@fixture
def flat_none(p):
    return arr(p, make(FLAT, (7,)), (3,), compressor=None)


@fixture
def filter_shuffle_zlib(p):
    return arr(p, make(FLAT, (7,)), (3,), compressor=numcodecs.Zlib(),
               filters=[numcodecs.Shuffle(elementsize=FLAT.itemsize)])


@fixture
def filter_delta_i4(p):       # Delta(dtype=struct) fails in numcodecs; a '<i4' view works
    data = make(DELTA, (11,))
    return arr(p, data, (5,), compressor=None, filters=[numcodecs.Delta(dtype="<i4")])


@fixture
def filter_delta_shuffle_zstd(p):
    data = make(DELTA, (11,))
    return arr(p, data, (5,), compressor=numcodecs.Zstd(),
               filters=[numcodecs.Delta(dtype="<u4", astype="<u4"),
                        numcodecs.Shuffle(elementsize=4)])


@fixture
def nested_zstd(p):
    return arr(p, make(NESTED, (9,)), (4,), compressor=numcodecs.Zstd())


@fixture
def deep_blosc(p):
    return arr(p, make(DEEP, (7,)), (3,), fill_value=one(DEEP))


@fixture
def subarray_lz4(p):
    f = one(SUBARRAY)
    return arr(p, make(SUBARRAY, (7,)), (3,), compressor=numcodecs.LZ4(), fill_value=f)


@fixture
def subarray_2d_fields(p):
    return arr(p, make(SUB2D, (5,)), (2,), compressor=numcodecs.Zlib())


@fixture
def nested_subarray(p):
    return arr(p, make(NESTED_SUB, (6,)), (4,), compressor=numcodecs.GZip())


@fixture
def struct_subarray(p):       # a subarray of structs: ["pts", [[x..],[y..]], [2]]
    return arr(p, make(STRUCT_SUB, (5,)), (2,), compressor=None)


@fixture
def big_endian(p):
    return arr(p, make(BIG, (6,)), (4,), compressor=numcodecs.Zstd(), fill_value=one(BIG))


@fixture
def mixed_endian_F_2d(p):
    return arr(p, make(MIXED, (5, 4)), (2, 3), compressor=numcodecs.Blosc("zstd", 1, SH),
               order="F")


@fixture
def types_zlib(p):
    return arr(p, make(TYPES, (6,)), (4,), compressor=numcodecs.Zlib(), fill_value=one(TYPES))


@fixture
def flat_C_2d_edges(p):
    return arr(p, make(FLAT, (5, 7)), (2, 3), compressor=numcodecs.Zstd())


@fixture
def nested_F_2d_edges(p):
    return arr(p, make(NESTED, (5, 7)), (2, 3), compressor=numcodecs.GZip(), order="F")


@fixture
def flat_3d_F(p):
    return arr(p, make(SUBARRAY, (3, 4, 5)), (2, 3, 2), compressor=numcodecs.Blosc("lz4", 5, BS),
               order="F")


@fixture
def fill_missing(p):          # chunks 2, 3 never written: fill records (with NaN in weight)
    f = one(FLAT)
    f["weight"] = np.nan
    return arr(p, make(FLAT, (12,)), (3,), write=slice(0, 5), fill_value=f)


@fixture
def fill_missing_2d(p):
    return arr(p, make(NESTED, (6, 6)), (4, 4), write=(slice(0, 3), slice(0, 3)),
               fill_value=one(NESTED), compressor=numcodecs.Zstd())


@fixture
def fill_null(p):             # fill_value null: zarr 2 reads absent chunks as zero bytes? see JSON
    z = arr(p, make(FLAT, (6,)), (3,), write=slice(0, 3), fill_value=None,
            compressor=numcodecs.Zlib())
    return z


@fixture
def fill_default_missing(p):  # default fill 0: U/S fields hold "0"
    return arr(p, make(FLAT, (6,)), (2,), write=slice(2, 4), compressor=None)


@fixture
def nested_separator(p):      # dimension_separator "/": chunk keys 0/1
    return arr(p, make(NESTED, (5, 4)), (2, 2), dimension_separator="/",
               compressor=numcodecs.Zstd())


@fixture
def zero_d(p):                # zarr 2.18.7 drops the compressor of a 0-d array: null on disk
    z = zarr.open_array(p, mode="w", shape=(), dtype=NESTED, compressor=numcodecs.Zlib())
    z[...] = make(NESTED, (1,))[0]
    return z


@fixture
def empty_shape(p):
    return arr(p, make(FLAT, (0,)), (3,))


@fixture
def plain_f8_nan_fill(p):     # not a struct: dtype "<f8", fill_value "NaN"
    z = zarr.open_array(p, mode="w", shape=(7,), chunks=(3,), dtype="<f8", fill_value=np.nan)
    z[:4] = [1.5, -0.0, np.inf, 2.25]
    return z


@fixture
def group_consolidated(p):
    g = zarr.open_group(p, mode="w")
    g.attrs.update({"title": "arrayscope fixture", "n": 3, "nested": {"a": [1, 2.5, None]}})
    a = g.create_dataset("points", shape=(6,), chunks=(4,), dtype=NESTED,
                         compressor=numcodecs.Zstd())
    a[...] = make(NESTED, (6,), seed=2)
    a.attrs["units"] = "m"
    b = g.create_dataset("people", shape=(5,), chunks=(2,), dtype=FLAT,
                         compressor=numcodecs.Blosc("zstd", 5, BS))
    b[...] = make(FLAT, (5,), seed=3)
    sub = g.create_group("sub")
    sub.attrs["kind"] = "subgroup"
    c = sub.create_dataset("vecs", shape=(4, 3), chunks=(3, 2), dtype=SUBARRAY, order="F",
                           compressor=None, dimension_separator="/")
    c[...] = make(SUBARRAY, (4, 3), seed=4)
    sub.create_group("empty")
    zarr.consolidate_metadata(p)
    return g


@fixture
def group_plain(p):           # a group with no .zmetadata, arrays of different dtypes
    g = zarr.open_group(p, mode="w")
    g.create_dataset("big", shape=(5,), chunks=(5,), dtype=BIG, compressor=numcodecs.LZ4())[...] = \
        make(BIG, (5,), seed=5)
    g.create_dataset("deep", shape=(3,), chunks=(2,), dtype=DEEP, compressor=None)[...] = \
        make(DEEP, (3,), seed=6)
    return g


# ---- planted traps (the bytes are edited after zarr wrote them) -------------------------------
TRAPS = {}


@fixture
def trap_truncated_chunk(p):
    z = arr(p, make(FLAT, (7,)), (3,), compressor=numcodecs.Zlib())
    before = expected_array(z)         # what zarr read before the edit
    path = os.path.join(p, "1")
    with open(path, "rb") as fh:
        raw = fh.read()
    with open(path, "wb") as fh:
        fh.write(raw[:-9])
    TRAPS["trap_truncated_chunk"] = {"chunk": "1", "edit": "last 9 bytes cut",
                                     "before_edit": before}
    return zarr.open_array(p, mode="r")


def arrays_of(node):
    if isinstance(node, zarr.Array):
        yield ".", node
        return

    def walk(g, prefix):
        for name, a in sorted(g.arrays()):
            yield prefix + name, a
        for name, sg in sorted(g.groups()):
            yield from walk(sg, prefix + name + "/")
    yield from walk(node, "")


def main(names=None):
    os.makedirs(OUT, exist_ok=True)
    for name, fn in FIXTURES.items():
        if names and name not in names:
            continue
        path = os.path.join(OUT, name)
        shutil.rmtree(path, ignore_errors=True)
        node = fn(path)
        exp = {"library": f"zarr {zarr.__version__}, numcodecs {numcodecs.__version__}, "
                          f"numpy {np.__version__}",
               "kind": "array" if isinstance(node, zarr.Array) else "group", "arrays": {}}
        if name in TRAPS:
            exp["trap"] = dict(TRAPS[name])
            z = zarr.open_array(path, mode="r")
            try:
                z[...]
                exp["trap"]["zarr_error"] = None
            except Exception as e:
                exp["trap"]["zarr_error"] = f"{type(e).__name__}: {e}"[:300]
        else:
            for rel, z in arrays_of(zarr.open(path, mode="r")):
                exp["arrays"][rel] = expected_array(z)
        with open(os.path.join(OUT, name + ".expected.json"), "w") as fh:
            json.dump(exp, fh, indent=1, ensure_ascii=False)
            fh.write("\n")
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(OUT) for f in fs)
    print(f"{len(os.listdir(OUT))} entries, {total} bytes in {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])

"""The Zarr differential generator: hypothesis draws stores, zarr-python writes them, and
arrayscope must read them as zarr does.

A drawn store is a root group (v2 or v3) holding arrays and a nested group of the other
format's arrays, each array with a drawn dtype (numbers of every width and both byte
orders, bool, complex, fixed bytes / unicode of several widths, datetime64 / timedelta64,
structured), fill value (default, null, empty, a value), chunking, v2 order, numcodecs
filters and compressor (v2) or codec chain and sharding (v3), then resized or appended
after the first write; the root's metadata is consolidated. `check_store` asserts what
issue 30 asks: `verify` clean (no error, no warning), every array's values equal zarr's
own read bit for bit, and one value per cell.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numcodecs
import numpy as np
import zarr
from hypothesis import strategies as st

from arrayscope import formats
from arrayscope.formats.core.verify import open_for_verify, verify_report
from arrayscope.formats.zarr import PLUGIN

INTS = ["|i1", "|u1", "<i2", ">i2", "<u2", "<i4", ">i4", "<u4", "<i8", ">i8", "<u8", ">u8"]
FLOATS = ["<f2", "<f4", ">f4", "<f8", ">f8"]
COMPLEX = ["<c8", ">c8", "<c16"]
TEXT = ["|S1", "|S5", "|S12", "<U1", "<U4", ">U3", "<U9"]
TIMES = ["<M8[s]", "<M8[ns]", ">M8[D]", "<m8[ms]", "<m8[us]", ">m8[s]"]
RAW = ["|V1", "|V4"]
STRUCTS = [
    [("a", "<i4"), ("b", "|S3")],
    [("x", ">f8"), ("flag", "|b1"), ("name", "<U2")],
    [("x", "<f8"), ("flag", "|b1"), ("name", "<U2")],
    [("t", "<M8[s]"), ("v", "<i2")],
]
# Left out, what zarr 3.1 cannot write (subarray fields, nested structs, a struct's fill
# given as a record, datetime fields in a v2 struct) or writes wrong (big-endian fields in
# a v3 struct: written big-endian, read back little-endian; arrayscope warns of it, see
# test_zarr_versions): v2 gets STRUCTS[:3], v3 every struct but the big-endian one.
V2_STRUCTS, V3_STRUCTS = (0, 1, 2), (0, 2, 3)
BLOSC_CNAMES = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]
WORDS = ["", "a", "zé", "日本", "hello", "x" * 9]


@dataclass
class ArraySpec:
    name: str
    fmt: int
    dtype: np.dtype
    shape: Tuple[int, ...]
    chunks: Tuple[int, ...]
    fill: object            # "default" → not given
    order: str = "C"
    filters: list = field(default_factory=list)
    compressor: object = None     # v2: a numcodecs codec or None; v3: list of codecs
    shards: Optional[Tuple[int, ...]] = None
    grow: Optional[str] = None    # "resize" / "append" after the first write
    seed: int = 0

    def script(self) -> str:
        """The line that writes this array (the kept fixture of a shrunk failure)."""
        return (f"create_array(fmt={self.fmt}, dtype={self.dtype.descr if self.dtype.names else self.dtype.str!r}, "
                f"shape={self.shape}, chunks={self.chunks}, shards={self.shards}, fill={self.fill!r}, "
                f"order={self.order!r}, filters={self.filters!r}, compressor={self.compressor!r}, "
                f"grow={self.grow!r}, seed={self.seed})")


# ---- strategies ----------------------------------------------------------------------------
def _dtypes(fmt: int) -> st.SearchStrategy:
    structs = [STRUCTS[i] for i in (V2_STRUCTS if fmt == 2 else V3_STRUCTS)]
    return st.one_of(st.sampled_from(INTS + FLOATS + COMPLEX + TEXT + TIMES + RAW + ["|b1"]),
                     st.sampled_from(structs)).map(np.dtype)


@st.composite
def _fill(draw, dt: np.dtype, fmt: int):
    # null (v2): where zarr 2.18 and 3.1 read absent records differently (zeros against
    # NaT / a struct's '0' text), arrayscope shows zeros: not drawn for those dtypes
    null_ok = fmt == 2 and not dt.names and dt.kind not in "Mm"
    kinds = ["default"] + ([] if dt.names else ["value"]) + (["null"] if null_ok else [])
    if dt.kind in "SU":
        kinds.append("empty")
    kind = draw(st.sampled_from(kinds))
    if kind == "default":
        return "default"
    if kind == "null":
        return None
    if kind == "empty":
        return b"" if dt.kind == "S" else ""
    k = dt.kind
    if k == "b":
        return draw(st.booleans())
    if k in "iu":
        info = np.iinfo(dt)
        return draw(st.sampled_from([0, 1, int(info.max), int(info.min)]))
    if k == "f":
        return draw(st.sampled_from([0.0, -1.5, float("nan"), float("inf"), float("-inf")]))
    if k == "c":
        return draw(st.sampled_from([0j, 1 - 2j]))
    if k in "Mm":
        return np.array(draw(st.sampled_from([0, 7, -3])), dtype=dt.newbyteorder("="))[()]
    if k == "S":
        return b"ab"[: dt.itemsize]
    if k == "V":
        return bytes(range(1, dt.itemsize + 1))
    return "zé"[: dt.itemsize // 4]


def _numeric(dt: np.dtype) -> bool:
    return dt.names is None and dt.kind in "iuf"


@st.composite
def _v2_filters(draw, dt: np.dtype) -> list:
    out = []
    if dt.kind == "b" and dt.names is None and draw(st.booleans()):
        out.append(numcodecs.PackBits())
    if dt.kind == "U" and dt.names is None and draw(st.booleans()):
        n = dt.itemsize // 4   # labels of the words _tame draws; the others read as ''
        labels = sorted({w[:n] for w in WORDS if w[:n]})[: draw(st.integers(1, 4))]
        out.append(numcodecs.Categorize(labels=labels, dtype=dt.str))
    if _numeric(dt) and draw(st.booleans()):
        k = draw(st.sampled_from(["delta", "scale", "quantize", "astype", "bitround"]))
        le = dt.newbyteorder("<").str if dt.itemsize > 1 else dt.str
        if k == "delta":
            out.append(numcodecs.Delta(dtype=dt.str))
        elif k == "scale" and dt.kind == "f":
            out.append(numcodecs.FixedScaleOffset(offset=draw(st.sampled_from([0, 1000, -2.5])),
                                                  scale=draw(st.sampled_from([1, 10, 100])),
                                                  dtype=le, astype=draw(st.sampled_from(["<i4", "<i8", "<u2"]))))
        elif k == "quantize" and dt.kind == "f" and dt.itemsize >= 4:
            out.append(numcodecs.Quantize(digits=draw(st.integers(1, 6)), dtype=le))
        elif k == "astype" and dt.kind in "iu":
            out.append(numcodecs.AsType(encode_dtype=dt.str, decode_dtype=dt.str))
        elif k == "astype" and dt.str == "<f8":   # stored narrower: lossy, read back widened
            out.append(numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8"))
        elif k == "bitround" and dt.kind == "f" and dt.itemsize >= 4 and dt.byteorder != ">":
            out.append(numcodecs.BitRound(keepbits=draw(st.integers(0, 10))))
    size = dt.itemsize   # a shuffle's elements: what the filter before it gives
    if out and isinstance(out[-1], (numcodecs.Categorize, numcodecs.FixedScaleOffset)):
        size = out[-1].astype.itemsize
    elif out and isinstance(out[-1], numcodecs.AsType):
        size = out[-1].encode_dtype.itemsize
    if size > 1 and draw(st.booleans()):
        out.append(numcodecs.Shuffle(elementsize=size))
    if draw(st.integers(0, 3)) == 0:
        out.append(draw(st.sampled_from([numcodecs.CRC32(), numcodecs.Adler32(),
                                         numcodecs.Fletcher32(), numcodecs.JenkinsLookup3()])))
    return out


@st.composite
def _v3_filters(draw, dt: np.dtype) -> list:
    """numcodecs filters as v3 array->array codecs (zarr.codecs.numcodecs), on
    little-endian types (zarr 3.1 reads them wrong under a big-endian bytes codec)."""
    from zarr.codecs import numcodecs as N
    if dt.names or (dt.byteorder == ">" and dt.itemsize > 1) or not draw(st.booleans()):
        return []
    if dt.kind == "b":
        return [N.PackBits()]
    if dt.kind in "iu":
        return [draw(st.sampled_from([N.Delta(dtype=dt.str),
                                      N.AsType(encode_dtype=dt.str, decode_dtype=dt.str)]))]
    if dt.kind == "f" and dt.itemsize >= 4:
        return [draw(st.sampled_from([
            N.FixedScaleOffset(offset=draw(st.sampled_from([0, 3.5])), scale=10, dtype=dt.str,
                               astype="<i8"),
            N.Quantize(digits=draw(st.integers(1, 5)), dtype=dt.str),
            N.BitRound(keepbits=draw(st.integers(1, 12))),
            N.Delta(dtype=dt.str)]))]
    return []


@st.composite
def _v2_compressor(draw):
    k = draw(st.sampled_from(["none", "blosc", "blosc", "zstd", "zlib", "gzip", "lz4", "bz2",
                              "lzma"]))
    if k == "none":
        return None
    if k == "blosc":
        return numcodecs.Blosc(cname=draw(st.sampled_from(BLOSC_CNAMES)),
                               clevel=draw(st.integers(0, 9)),
                               shuffle=draw(st.sampled_from([-1, 0, 1, 2])),
                               blocksize=draw(st.sampled_from([0, 0, 256])))
    if k == "zstd":
        return numcodecs.Zstd(level=draw(st.integers(-1, 5)), checksum=draw(st.booleans()))
    if k == "zlib":
        return numcodecs.Zlib(level=draw(st.integers(0, 9)))
    if k == "gzip":
        return numcodecs.GZip(level=draw(st.integers(0, 9)))
    if k == "lz4":
        return numcodecs.LZ4(acceleration=draw(st.integers(1, 3)))
    if k == "bz2":
        return numcodecs.BZ2(level=draw(st.integers(1, 9)))
    return numcodecs.LZMA()


@st.composite
def _v3_codecs(draw, dt: np.dtype):
    from zarr.codecs import BloscCodec, Crc32cCodec, GzipCodec, ZstdCodec
    from zarr.codecs import numcodecs as N
    k = draw(st.sampled_from(["none", "blosc", "zstd", "gzip", "crc", "numcodecs"]))
    if k == "none":
        return []
    if k == "numcodecs":
        out = [N.Shuffle(elementsize=dt.itemsize)] if dt.itemsize > 1 and draw(st.booleans()) \
            else []
        return out + [draw(st.sampled_from([N.Zlib(level=1), N.BZ2(level=2), N.LZ4(), N.LZMA(),
                                            N.Zstd(level=1), N.GZip(level=1),
                                            N.Blosc(cname="lz4", clevel=3, shuffle=2),
                                            N.CRC32(), N.Adler32(), N.Fletcher32(),
                                            N.JenkinsLookup3()]))]
    if k == "blosc":
        return [BloscCodec(cname=draw(st.sampled_from(BLOSC_CNAMES)), clevel=draw(st.integers(0, 9)),
                           shuffle=draw(st.sampled_from(["noshuffle", "shuffle", "bitshuffle"])),
                           typesize=max(1, dt.itemsize) if dt.itemsize <= 255 else 1)]
    if k == "zstd":
        return [ZstdCodec(level=draw(st.integers(0, 5)), checksum=draw(st.booleans()))]
    if k == "gzip":
        return [GzipCodec(level=draw(st.integers(0, 9)))]
    return [Crc32cCodec()]


@st.composite
def array_spec(draw, name: str, fmt: int) -> ArraySpec:
    dt = draw(_dtypes(fmt))
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, max(1, s + 1))) for s in shape)
    spec = ArraySpec(name, fmt, dt, shape, chunks, draw(_fill(dt, fmt)),
                     seed=draw(st.integers(0, 2**16)))
    if fmt == 2:
        spec.order = draw(st.sampled_from(["C", "F"]))
        spec.filters = draw(_v2_filters(dt))
        spec.compressor = draw(_v2_compressor())
    else:
        spec.compressor = draw(_v3_codecs(dt))
        spec.filters = draw(_v3_filters(dt))
        if ndim >= 2 and draw(st.integers(0, 3)) == 0:   # the v3 way to store F order
            from zarr.codecs import TransposeCodec
            perm = tuple(draw(st.permutations(range(ndim))))
            spec.filters = [TransposeCodec(order=perm)] + spec.filters
        elif ndim and dt.kind != "V" and draw(st.booleans()):   # zarr 3.1: no sharded V/structs
            spec.shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    if ndim and draw(st.integers(0, 3)) == 0:
        spec.grow = draw(st.sampled_from(["resize", "append"]))
    return spec


@st.composite
def store_spec(draw) -> Tuple[int, List[ArraySpec]]:
    root = draw(st.sampled_from([2, 3]))
    other = 5 - root
    arrays = [draw(array_spec(f"a{i}", root)) for i in range(draw(st.integers(1, 2)))]
    if draw(st.booleans()):
        arrays += [draw(array_spec(f"sub/b{i}", other)) for i in range(draw(st.integers(1, 2)))]
    return root, arrays


# ---- writing -------------------------------------------------------------------------------
def data_for(dt: np.dtype, shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, int(np.prod(shape, dtype=np.int64)) * dt.itemsize, dtype=np.uint8)
    a = np.frombuffer(raw.tobytes(), dtype=dt).reshape(shape).copy()
    _tame(a, rng)
    return a


def _tame(a: np.ndarray, rng) -> None:
    """Random bytes made into values every codec and zarr's read round-trip: booleans 0/1,
    text without NUL runs inside, finite small floats (lossy filters still see real ones)."""
    dt = a.dtype
    if dt.names:
        for n in dt.names:
            _tame(a[n], rng)
        return
    if dt.subdtype is not None:
        return
    k = dt.kind
    if k == "b":
        a[...] = rng.integers(0, 2, a.shape).astype(bool)
    elif k == "f":
        a[...] = np.round(rng.normal(0, 50, a.shape), 3)
    elif k == "c":
        a[...] = rng.normal(0, 5, a.shape) + 1j * rng.normal(0, 5, a.shape)
    elif k == "S":
        letters = np.frombuffer(b"abcxyz\xe9\x01", np.uint8)
        n = dt.itemsize
        lens = rng.integers(0, n + 1, a.shape)
        flat = np.zeros(a.shape + (n,), np.uint8)
        for idx in np.ndindex(*a.shape):
            flat[idx][: lens[idx]] = rng.choice(letters, lens[idx])
        a[...] = flat.view(dt).reshape(a.shape)
    elif k == "U":
        words = np.array(WORDS, dtype="<U9")
        a[...] = np.array([w[: dt.itemsize // 4] for w in rng.choice(words, a.size)],
                          dtype=dt.newbyteorder("=")).reshape(a.shape)
    elif k in "Mm":
        a[...] = rng.integers(-10**6, 10**6, a.shape).astype(dt.newbyteorder("="))


def write_array(group, spec: ArraySpec) -> np.ndarray:
    """Write `spec` under `group`; returns zarr's own read of the array afterwards."""
    kw: Dict[str, object] = dict(shape=spec.shape, chunks=spec.chunks, dtype=spec.dtype)
    if spec.fill != "default":
        kw["fill_value"] = spec.fill
    if spec.fmt == 2:
        kw["filters"] = spec.filters or None
        kw["compressors"] = spec.compressor
        kw["order"] = spec.order
    else:
        kw["compressors"] = spec.compressor
        if spec.filters:
            kw["filters"] = spec.filters
        if spec.shards:
            kw["shards"] = spec.shards
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arr = group.create_array(spec.name, **kw)
        data = data_for(spec.dtype, spec.shape, spec.seed)
        if data.size:
            # leave some chunks unwritten (absent: fill) by writing a leading block only
            sl = tuple(slice(0, max(1, (s + 1) // 2)) if i == 0 else slice(None)
                       for i, s in enumerate(spec.shape))
            if spec.seed % 3:
                arr[...] = data
            else:   # a leading block only: the other chunks stay absent (fill)
                arr[sl] = data[sl]
        if spec.grow == "resize":
            arr.resize(tuple(s + (i == 0) * 3 for i, s in enumerate(spec.shape)))
        elif spec.grow == "append":
            more = data_for(spec.dtype, (2,) + spec.shape[1:], spec.seed + 1)
            arr.append(more, axis=0)
        # a 0-d read is a numpy scalar ('a' of a <U4 is a <U1 scalar): back to the array's type
        return np.asarray(arr[...], dtype=arr.dtype)


def write_store(path: str, root_fmt: int, arrays: List[ArraySpec]) -> Dict[str, np.ndarray]:
    """Write the store; {array path: zarr's read}. The root is consolidated (the nested
    group of the other format is consolidated in its own format where zarr can)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_group(path, mode="w", zarr_format=root_fmt,
                               attributes={"made-by": "zarr_gen"})
        truth: Dict[str, np.ndarray] = {}
        subs: Dict[str, object] = {}
        for spec in arrays:
            g = root
            if "/" in spec.name:
                gname, _ = spec.name.split("/", 1)
                if gname not in subs:
                    subs[gname] = zarr.open_group(f"{path}/{gname}", mode="w",
                                                  zarr_format=spec.fmt)
                g = subs[gname]
                spec = ArraySpec(**{**spec.__dict__, "name": spec.name.split("/", 1)[1]})
                truth[f"{gname}/{spec.name}"] = write_array(g, spec)
            else:
                truth[spec.name] = write_array(root, spec)
        for gname in subs:
            zarr.consolidate_metadata(f"{path}/{gname}")
        zarr.consolidate_metadata(path)
    return truth


# ---- checking ------------------------------------------------------------------------------
def leaves(dt: np.dtype, prefix: str = ""):
    for n in dt.names:
        sub = dt.fields[n][0]
        if sub.names:
            yield from leaves(sub, f"{prefix}{n}.")
        else:
            yield f"{prefix}{n}"


def _field(a: np.ndarray, name: str) -> np.ndarray:
    for part in name.split("."):
        a = a[part]
    return a


def _le_bytes(a: np.ndarray) -> bytes:
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.tobytes()


def check_store(path: str, truth: Dict[str, np.ndarray]) -> None:
    truth = {k: np.asarray(v) for k, v in truth.items()}   # a 0-d read is a scalar
    vdoc = open_for_verify(path)   # as `arrayscope verify` opens it
    try:
        rep = verify_report(vdoc)
        found = [(f.status, f.code, f.node, f.message) for f in rep.findings
                 if f.status in ("error", "warning")]
        assert found == [] and rep.exit_code() == 0, (rep.exit_code(), found)
    finally:
        vdoc.close()
    doc = formats.open(path)
    try:
        assert doc.format == "zarr"
        names = set(PLUGIN.field_names(doc))
        for rel, want in truth.items():
            meta = doc.model.arrays[rel]
            assert tuple(meta.shape) == want.shape, (rel, meta.shape, want.shape)
            fields = list(leaves(want.dtype)) if want.dtype.names else [None]
            for f in fields:
                label = meta.rtype.field_names()[0] if f is None else f
                name = f"{rel}/{label}"
                assert name in names, (name, sorted(names))
                [entry] = PLUGIN.values(doc, name)
                assert "error" not in entry, (name, entry.get("error"))
                w = want if f is None else _field(want, f)
                assert len(entry["values"]) == want.size, (name, len(entry["values"]), want.size)
                assert entry["raw"] == _le_bytes(w), (name, entry["raw"][:64], _le_bytes(w)[:64])
    finally:
        doc.close()

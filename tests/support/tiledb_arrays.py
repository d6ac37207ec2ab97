"""A catalogue of TileDB arrays written by the real library (tiledb-py), for the tests.

`build(name, dest_dir)` creates one array and returns its path; `CATALOG` lists them.
Each builder writes deterministic cell values; fragment names carry fixed timestamps
where a test needs to read one fragment at a time (`tiledb.open(uri, timestamp=(t, t))`).
"""
from __future__ import annotations

import numpy as np
import tiledb

from tests.support.catalogue import Catalogue

KEY = "0123456789abcdeF0123456789abcdeF"  # 32 bytes: AES-256
_CATALOGUE = Catalogue()
CATALOG = _CATALOGUE.builders
array = _CATALOGUE.array
build = _CATALOGUE.build


def enc_ctx() -> tiledb.Ctx:
    return tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": KEY})


def _dense_1d(uri, attrs, n=100, tile=10, dtype=np.int32, **schema_kw):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=tile, dtype=dtype))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=False, **schema_kw))


def one_write_fragments(uri: str, n: int) -> str:
    """`n` dense fragments of 10 int64 cells each (attribute `a`, [Zstd]), one write each at
    timestamps 1..n: the many-fragment array of the health and latency tests."""
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 10 * n - 1), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    for i in range(n):
        with tiledb.open(uri, "w", timestamp=i + 1) as a:
            a[i * 10:(i + 1) * 10] = np.arange(10) + i
    return uri


# ---- dense layouts ---------------------------------------------------------------------
@array
def dense_1d(uri):
    _dense_1d(uri, [tiledb.Attr("a", dtype=np.int64)])
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = np.arange(100, dtype=np.int64) * 3 - 50


def _dense_2d(uri, tile_order, cell_order):
    dom = tiledb.Domain(tiledb.Dim("rows", domain=(1, 4), tile=2, dtype=np.int32),
                        tiledb.Dim("cols", domain=(1, 4), tile=2, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32)], sparse=False,
        tile_order=tile_order, cell_order=cell_order))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = np.arange(1, 17, dtype=np.int32).reshape(4, 4)


@array
def dense_2d_row_row(uri): _dense_2d(uri, "row-major", "row-major")
@array
def dense_2d_row_col(uri): _dense_2d(uri, "row-major", "col-major")
@array
def dense_2d_col_row(uri): _dense_2d(uri, "col-major", "row-major")
@array
def dense_2d_col_col(uri): _dense_2d(uri, "col-major", "col-major")


@array
def dense_partial(uri):
    """A write that does not cover whole tiles: unwritten cells are stored as zeros."""
    _dense_1d(uri, [tiledb.Attr("a", dtype=np.int32, fill=-7),
                    tiledb.Attr("s", dtype=str, var=True)])
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[3:17] = {"a": np.arange(14, dtype=np.int32), "s": np.array([f"s{i}" for i in range(14)], dtype=object)}


# ---- sparse ----------------------------------------------------------------------------
def _sparse_2d(uri, cell_order="row-major", allows_dups=False, capacity=4, tile_order="row-major"):
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64),
                        tiledb.Dim("y", domain=(0, 99), tile=10, dtype=np.int64))
    kw = {} if cell_order == "hilbert" else {"tile_order": tile_order}
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("v", dtype=np.float64)], sparse=True,
        cell_order=cell_order, capacity=capacity, allows_duplicates=allows_dups, **kw))
    rng = np.random.default_rng(7)
    x = rng.integers(0, 100, 23)
    y = rng.integers(0, 100, 23)
    if not allows_dups:
        xy = sorted(set(zip(x.tolist(), y.tolist())))
        x = np.array([p[0] for p in xy])
        y = np.array([p[1] for p in xy])
    v = np.linspace(-1.5, 2.5, len(x))
    v[0], v[1], v[2] = np.nan, np.inf, -0.0
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[x, y] = v


@array
def sparse_2d(uri): _sparse_2d(uri)
@array
def sparse_2d_col_col(uri): _sparse_2d(uri, cell_order="col-major", tile_order="col-major")
@array
def sparse_hilbert(uri): _sparse_2d(uri, cell_order="hilbert")
@array
def sparse_dups(uri): _sparse_2d(uri, allows_dups=True)


@array
def sparse_float_dim(uri):
    dom = tiledb.Domain(tiledb.Dim("f", domain=(-10.0, 10.0), tile=2.5, dtype=np.float64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=3,
                                                attrs=[tiledb.Attr("i", dtype=np.int16)]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.array([-9.5, -1.25, 0.0, 3.5, 7.75])] = np.array([1, 2, 3, 4, 5], dtype=np.int16)


@array
def string_dim(uri):
    dom = tiledb.Domain(tiledb.Dim("key", domain=(None, None), tile=None, dtype="ascii"))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=3,
                                                attrs=[tiledb.Attr("n", dtype=np.int32)]))
    keys = np.array(["apple", "b", "cherry", "date", "elderberry", "fig", "g"], dtype=object)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[keys] = np.arange(7, dtype=np.int32)


@array
def sparse_var_nullable_pipelines(uri):
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 1000), tile=100, dtype=np.uint32))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=5,
        attrs=[tiledb.Attr("s", dtype=str, var=True, nullable=True),
               tiledb.Attr("q", dtype=np.float32, nullable=True,
                           filters=[tiledb.ByteShuffleFilter(), tiledb.LZ4Filter()])],
        offsets_filters=[tiledb.PositiveDeltaFilter(), tiledb.ZstdFilter(level=5)],
        validity_filters=[tiledb.RleFilter(), tiledb.ChecksumMD5Filter()]))
    x = np.array([1, 5, 9, 100, 250, 251, 600, 999], dtype=np.uint32)
    s = np.array(["", "a", "bb", None, "dddd", "é€", "x" * 40, "z"], dtype=object)
    q = np.ma.masked_array(np.arange(8, dtype=np.float32) / 3, mask=[0, 1, 0, 0, 1, 0, 0, 0])
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[x] = {"s": s, "q": q}


# ---- datatypes -------------------------------------------------------------------------
FIXED_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                "float32", "float64", "bool"]


@array
def dtypes(uri):
    attrs = [tiledb.Attr(f"a_{t}", dtype=np.dtype(t)) for t in FIXED_DTYPES]
    attrs += [tiledb.Attr("a_complex64", dtype=np.complex64),
              tiledb.Attr("a_S4", dtype="S4"),
              tiledb.Attr("a_i4x3", dtype=np.dtype("i4,i4,i4"))]
    _dense_1d(uri, attrs, n=20, tile=8)
    data = {}
    for t in FIXED_DTYPES:
        dt = np.dtype(t)
        if dt.kind == "f":
            v = np.linspace(-3, 3, 20).astype(dt)
            v[:4] = [np.nan, np.inf, -np.inf, -0.0]
        elif dt.kind == "b":
            v = (np.arange(20) % 3 == 0)
        else:
            info = np.iinfo(dt)
            lo, hi = int(info.min), int(info.max)
            v = np.array([lo + (hi - lo) * k // 19 for k in range(20)], dtype=dt)
        data[f"a_{t}"] = v
    data["a_complex64"] = (np.arange(20) + 1j * np.arange(20)[::-1]).astype(np.complex64)
    data["a_S4"] = np.array([b"ab", b"cdef", b"", b"wxyz"] * 5, dtype="S4")
    data["a_i4x3"] = np.array([(i, -i, i * i) for i in range(20)], dtype="i4,i4,i4")
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = data


@array
def datetimes(uri):
    dom = tiledb.Domain(tiledb.Dim("day", domain=(np.datetime64("2024-01-01"), np.datetime64("2024-01-30")),
                                   tile=np.timedelta64(10, "D"), dtype="datetime64[D]"))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("ts", dtype="datetime64[s]"), tiledb.Attr("tns", dtype="datetime64[ns]"),
        tiledb.Attr("dur", dtype="timedelta64[ms]")]))
    base = np.datetime64("2024-01-01T00:00:00", "s")
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.datetime64("2024-01-01"):np.datetime64("2024-01-30")] = {
            "ts": base + np.arange(30) * 3600,
            "tns": np.datetime64("2024-01-01T00:00:00", "ns") + np.arange(30) * 17,
            "dur": np.arange(30).astype("timedelta64[ms]") * 250}


@array
def var_nullable(uri):
    _dense_1d(uri, [tiledb.Attr("s", dtype=str, var=True),
                    tiledb.Attr("b", dtype=bytes, var=True),
                    tiledb.Attr("n", dtype=np.int32, nullable=True),
                    tiledb.Attr("sn", dtype=str, var=True, nullable=True),
                    tiledb.Attr("f", dtype=np.float64, var=True)], n=12, tile=5)
    s = np.array(["", "a", "bc", "déf", "ghij", "k" * 30, "l", "m", "nop", "q", "r", "s"], dtype=object)
    b = np.array([bytes([i]) * i for i in range(12)], dtype=object)
    n = np.ma.masked_array(np.arange(12, dtype=np.int32), mask=[i % 4 == 1 for i in range(12)])
    sn = np.array(["x", None, "yy", "", None, "zzz", "w", "v", None, "u", "t", "s"], dtype=object)
    f = np.array([np.arange(i % 4, dtype=np.float64) + 0.5 for i in range(12)], dtype=object)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = {"s": s, "b": b, "n": n, "sn": sn, "f": f}


# ---- filters ---------------------------------------------------------------------------
def filter_lists():
    """Attribute name -> (dtype, filter list) for one attribute per filter type."""
    return {
        "none": (np.int32, [tiledb.NoOpFilter()]),
        "gzip": (np.int32, [tiledb.GzipFilter(level=5)]),
        "zstd": (np.int64, [tiledb.ZstdFilter(level=7)]),
        "lz4": (np.int32, [tiledb.LZ4Filter()]),
        "rle": (np.int16, [tiledb.RleFilter()]),
        "bzip2": (np.uint16, [tiledb.Bzip2Filter(level=3)]),
        "double_delta": (np.int64, [tiledb.DoubleDeltaFilter()]),
        "bwr": (np.uint32, [tiledb.BitWidthReductionFilter(window=32)]),
        "bitshuffle": (np.int32, [tiledb.BitShuffleFilter()]),
        "byteshuffle": (np.float64, [tiledb.ByteShuffleFilter()]),
        "positive_delta": (np.uint64, [tiledb.PositiveDeltaFilter(window=64)]),
        "md5": (np.int8, [tiledb.ChecksumMD5Filter()]),
        "sha256": (np.float32, [tiledb.ChecksumSHA256Filter()]),
        "float_scale": (np.float64, [tiledb.FloatScaleFilter(factor=0.5, offset=1.0, bytewidth=4)]),
        "xor": (np.float32, [tiledb.XORFilter()]),
        "delta": (np.int32, [tiledb.DeltaFilter()]),
        "delta_reinterpret": (np.float64, [tiledb.DeltaFilter(reinterp_dtype=np.int64)]),
        "double_delta_reinterpret": (np.float32, [tiledb.DoubleDeltaFilter(reinterp_dtype=np.int32)]),
    }


def filter_stacks():
    return {
        "shuffle_zstd": (np.int64, [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()]),
        "bwr_zstd_sha": (np.int32, [tiledb.BitWidthReductionFilter(), tiledb.ZstdFilter(),
                                    tiledb.ChecksumSHA256Filter()]),
        "pd_bits_lz4_md5": (np.uint32, [tiledb.PositiveDeltaFilter(), tiledb.BitShuffleFilter(),
                                        tiledb.LZ4Filter(), tiledb.ChecksumMD5Filter()]),
        "dd_bwr_zstd": (np.int64, [tiledb.DoubleDeltaFilter(), tiledb.BitWidthReductionFilter(),
                                   tiledb.ZstdFilter()]),
        "fs_xor_zstd": (np.float64, [tiledb.FloatScaleFilter(factor=0.25, offset=0.0, bytewidth=8),
                                     tiledb.XORFilter(), tiledb.ZstdFilter()]),
        "delta_gzip": (np.int32, [tiledb.DeltaFilter(), tiledb.GzipFilter()]),
    }


def _filter_values(dt, n):
    dt = np.dtype(dt)
    i = np.arange(n)
    if dt.kind == "f":
        return (np.sin(i / 7.0) * 100).round(2).astype(dt)
    if dt.kind == "u":
        return ((i // 3) * 5 + (i % 3)).astype(dt)
    return ((i // 4) * 3 - n // 2 + (i % 4)).astype(dt)


def _filters_array(uri, table, n=200, tile=100):
    attrs = [tiledb.Attr(name, dtype=dt, filters=tiledb.FilterList(fl)) for name, (dt, fl) in table.items()]
    _dense_1d(uri, attrs, n=n, tile=tile)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = {name: _filter_values(dt, n) for name, (dt, _fl) in table.items()}


@array
def filters(uri): _filters_array(uri, filter_lists())
@array
def filter_stacks_array(uri): _filters_array(uri, filter_stacks())


@array
def string_filters(uri):
    _dense_1d(uri, [
        tiledb.Attr("dict", dtype=str, var=True, filters=[tiledb.DictionaryFilter()]),
        tiledb.Attr("rle", dtype=str, var=True, filters=[tiledb.RleFilter()]),
        tiledb.Attr("plain", dtype=str, var=True, filters=[tiledb.ZstdFilter()])], n=30, tile=10)
    words = ["alpha", "beta", "gamma", "alpha", "alpha", "", "delta"]
    v = np.array([words[i % len(words)] for i in range(30)], dtype=object)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = {"dict": v, "rle": v, "plain": v}


@array
def chunked_large_tile(uri):
    """Tiles over 64 KiB: several chunks per tile (fixed and var)."""
    n = 20000
    _dense_1d(uri, [tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()]),
                    tiledb.Attr("s", dtype=str, var=True, filters=[tiledb.LZ4Filter()])],
              n=n, tile=n, dtype=np.int64)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = {"a": np.arange(n, dtype=np.int64) ** 2,
                "s": np.array([f"cell-{i}-" + "x" * (i % 7) for i in range(n)], dtype=object)}


@array
def encrypted(uri):
    ctx = enc_ctx()
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 49), tile=25, dtype=np.int32), ctx=ctx)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=np.int32, filters=[tiledb.ZstdFilter()], ctx=ctx),
        tiledb.Attr("s", dtype=str, var=True, ctx=ctx)]), ctx=ctx)
    with tiledb.open(uri, "w", timestamp=1, ctx=ctx) as A:
        A[:] = {"a": np.arange(50, dtype=np.int32) - 25,
                "s": np.array([f"secret{i}" for i in range(50)], dtype=object)}
        A.meta["owner"] = "arrayscope"


# ---- schema features -------------------------------------------------------------------
@array
def enumerations(uri):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=5, dtype=np.int32))
    enmrs = [tiledb.Enumeration("colors", False, ["red", "green", "blue"]),
             tiledb.Enumeration("sizes", True, np.array([10, 20, 30], dtype=np.int16))]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, enums=enmrs, attrs=[
        tiledb.Attr("color", dtype=np.uint8, enum_label="colors"),
        tiledb.Attr("size", dtype=np.int8, enum_label="sizes")]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = {"color": np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0], dtype=np.uint8),
                "size": np.array([2, 1, 0, 0, 1, 2, 2, 1, 0, 0], dtype=np.int8)}


@array
def metadata(uri):
    _dense_1d(uri, [tiledb.Attr("a", dtype=np.int32)], n=10, tile=10)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = np.arange(10, dtype=np.int32)
        A.meta["int"] = 42
        A.meta["float"] = 2.5
        A.meta["str"] = "hello"
        A.meta["ints"] = (1, 2, 3)
        A.meta["floats"] = (0.5, -1.5)
        A.meta["blob"] = b"\x00\x01\xff"
    with tiledb.open(uri, "w", timestamp=2) as A:
        del A.meta["float"]
        A.meta["later"] = 7


@array
def multi_fragment(uri):
    _dense_1d(uri, [tiledb.Attr("a", dtype=np.int32)], n=40, tile=10)
    for t, (lo, hi) in enumerate([(0, 20), (10, 30), (25, 40)], start=1):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[lo:hi] = np.arange(lo, hi, dtype=np.int32) * t


@array
def sparse_multi_fragment(uri):
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4,
                                                attrs=[tiledb.Attr("v", dtype=np.int32)]))
    for t in (1, 2, 3):
        with tiledb.open(uri, "w", timestamp=t) as A:
            x = np.arange(t, 60, 7, dtype=np.int32)
            A[x] = x * 10 + t


@array
def consolidated(uri):
    multi_fragment(uri)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.timestamp_start": 0}))
    tiledb.vacuum(uri)


@array
def consolidated_unvacuumed(uri):
    sparse_multi_fragment(uri)
    tiledb.consolidate(uri)


@array
def consolidated_fragment_meta(uri):
    sparse_multi_fragment(uri)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragment_meta"}))


@array
def consolidated_commits(uri):
    sparse_multi_fragment(uri)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "commits"}))


@array
def deletes(uri):
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=8,
                                                attrs=[tiledb.Attr("v", dtype=np.int32)]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        x = np.arange(0, 40, 2, dtype=np.int32)
        A[x] = x - 20
    with tiledb.open(uri, "d", timestamp=2) as A:
        A.query(cond="v < 0").submit()


@array
def dim_labels(uri):
    dim = tiledb.Dim("d", domain=(0, 9), tile=5, dtype=np.uint32)
    schema = tiledb.ArraySchema(
        domain=tiledb.Domain(dim), sparse=False, attrs=[tiledb.Attr("a", dtype=np.float32)],
        dim_labels={0: {"lab": dim.create_label_schema("increasing", np.int64)}})
    tiledb.Array.create(uri, schema)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = {"a": np.arange(10, dtype=np.float32) / 4, "lab": np.arange(10, dtype=np.int64) * 100}


@array
def current_domain(uri):
    ctx = tiledb.default_ctx()
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 999), tile=10, dtype=np.int64),
                        tiledb.Dim("y", domain=(-50, 50), tile=5, dtype=np.int32))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, attrs=[tiledb.Attr("v", dtype=np.uint8)])
    ndr = tiledb.NDRectangle(ctx, dom)
    ndr.set_range(0, 0, 99)
    ndr.set_range(1, -10, 10)
    cd = tiledb.CurrentDomain(ctx)
    cd.set_ndrectangle(ndr)
    schema.set_current_domain(cd)
    tiledb.Array.create(uri, schema)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.array([1, 50, 99]), np.array([-10, 0, 10], dtype=np.int32)] = np.array([1, 2, 3], dtype=np.uint8)


@array
def schema_evolution(uri):
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True,
                                                attrs=[tiledb.Attr("v", dtype=np.int32)]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.array([1, 2, 3], dtype=np.int32)] = np.array([10, 20, 30], dtype=np.int32)
    se = tiledb.ArraySchemaEvolution(tiledb.default_ctx())
    se.add_attribute(tiledb.Attr("w", dtype=np.float32, fill=1.5))
    se.array_evolve(uri)
    with tiledb.open(uri, "w") as A:
        A[np.array([4, 5], dtype=np.int32)] = {"v": np.array([40, 50], dtype=np.int32),
                                               "w": np.array([4.5, 5.5], dtype=np.float32)}


@array
def fill_values(uri):
    _dense_1d(uri, [tiledb.Attr("i", dtype=np.int32, fill=-1),
                    tiledb.Attr("f", dtype=np.float64, fill=3.25),
                    tiledb.Attr("u", dtype=np.uint8),
                    tiledb.Attr("c", dtype=np.complex64, fill=np.complex64(1 - 2j)),
                    tiledb.Attr("dt", dtype="datetime64[ms]")], n=10, tile=5)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[0:5] = {"i": np.arange(5, dtype=np.int32), "f": np.ones(5), "u": np.arange(5, dtype=np.uint8),
                  "c": np.zeros(5, dtype=np.complex64),
                  "dt": np.arange(5).astype("datetime64[ms]")}


@array
def sparse_coords_filters(uri):
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 1 << 20), tile=1024, dtype=np.uint64,
                                   filters=[tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter()]),
                        tiledb.Dim("y", domain=(0, 9), tile=10, dtype=np.uint8))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, capacity=50,
                                attrs=[tiledb.Attr("v", dtype=np.int64)])
    schema._coords_filters = tiledb.FilterList([tiledb.LZ4Filter()])
    tiledb.Array.create(uri, schema)
    x = np.arange(0, 200 * 37, 37, dtype=np.uint64)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[x, (x % 10).astype(np.uint8)] = np.arange(200, dtype=np.int64)

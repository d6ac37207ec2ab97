"""The filter stacks the decode benchmark compares with tiledb-py: each builder writes one
array with the real library and names the field to decode.

`build(name, dest, cells)` creates (once) and returns `(uri, field)`. Fixed-size stacks hold
`cells` cells in tiles of 1 Mi cells (as big arrays are tiled); var-sized strings hold
`cells // 4` strings; the fragment stacks split the cells over 100, 1 000 or 10 000 dense
fragments written one after the other."""
from __future__ import annotations

import os
from typing import Callable, Dict, Tuple

import numpy as np
import tiledb

KEY = "0123456789abcdeF0123456789abcdeF"
TILE = 1024 * 1024
STACKS: Dict[str, Callable[[str, int], str]] = {}


def stack(fn: Callable[[str, int], str]) -> Callable[[str, int], str]:
    STACKS[fn.__name__] = fn
    return fn


def enc_ctx() -> tiledb.Ctx:
    return tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": KEY})


def build(name: str, dest: str, cells: int) -> Tuple[str, str]:
    uri = os.path.join(dest, f"{name}_{cells}")
    marker = uri + ".field"
    if not os.path.exists(marker):
        field = STACKS[name](uri, cells)
        with open(marker, "w") as fh:
            fh.write(field)
    with open(marker) as fh:
        return uri, fh.read()


def _walk(n: int, dtype=np.int64) -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.cumsum(rng.integers(-50, 50, n)).astype(dtype)


def _dense(uri: str, n: int, attr: tiledb.Attr, data, ctx=None, tile: int = TILE) -> str:
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=min(tile, n), dtype=np.int64),
                        ctx=ctx)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[attr], ctx=ctx),
                        ctx=ctx)
    with tiledb.open(uri, "w", timestamp=1, ctx=ctx) as A:
        A[:] = data
    return attr.name


@stack
def int64_byteshuffle_zstd(uri, n):
    return _dense(uri, n, tiledb.Attr("a", dtype=np.int64, filters=[
        tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()]), _walk(n))


@stack
def int64_doubledelta_zstd(uri, n):
    return _dense(uri, n, tiledb.Attr("a", dtype=np.int64, filters=[
        tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter()]), _walk(n))


@stack
def int64_delta_zstd(uri, n):
    return _dense(uri, n, tiledb.Attr("a", dtype=np.int64, filters=[
        tiledb.DeltaFilter(), tiledb.ZstdFilter()]), _walk(n))


@stack
def int64_aes256gcm(uri, n):
    ctx = enc_ctx()
    return _dense(uri, n, tiledb.Attr("a", dtype=np.int64, ctx=ctx, filters=tiledb.FilterList(
        [tiledb.ZstdFilter()], ctx=ctx)), _walk(n), ctx=ctx)


@stack
def int32_nullable(uri, n):
    data = _walk(n, np.int32)
    valid = (np.arange(n) % 7 != 0)
    attr = tiledb.Attr("a", dtype=np.int32, nullable=True, filters=[tiledb.ZstdFilter()])
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=min(TILE, n), dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[attr]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = np.ma.array(data, mask=~valid)
    return "a"


def _strings(n: int) -> np.ndarray:
    words = np.array([f"gene_{i:05d}" for i in range(997)], dtype=object)
    runs = np.repeat(np.arange(n // 8 + 1) % 997, 8)[:n]  # runs of 8 for RLE, 997 words
    return words[runs]


def _strings_stack(uri, n, filt):
    m = max(1, n // 4)
    return _dense(uri, m, tiledb.Attr("s", dtype=str, var=True, filters=[filt]), _strings(m),
                  tile=TILE // 4)


@stack
def var_strings_zstd(uri, n):
    return _strings_stack(uri, n, tiledb.ZstdFilter())


@stack
def var_strings_rle(uri, n):
    return _strings_stack(uri, n, tiledb.RleFilter())


@stack
def var_strings_dictionary(uri, n):
    return _strings_stack(uri, n, tiledb.DictionaryFilter())


@stack
def float64_gzip(uri, n):
    return _dense(uri, n, tiledb.Attr("a", dtype=np.float64, filters=[tiledb.GzipFilter()]),
                  _walk(n).astype(np.float64) / 3)


@stack
def int64_bzip2(uri, n):
    return _dense(uri, n, tiledb.Attr("a", dtype=np.int64, filters=[tiledb.Bzip2Filter()]),
                  _walk(n))


@stack
def int32_bwr_lz4(uri, n):
    return _dense(uri, n, tiledb.Attr("a", dtype=np.int32, filters=[
        tiledb.BitWidthReductionFilter(), tiledb.LZ4Filter()]), _walk(n, np.int32))


@stack
def int64_bitshuffle_zstd(uri, n):
    return _dense(uri, n, tiledb.Attr("a", dtype=np.int64, filters=[
        tiledb.BitShuffleFilter(), tiledb.ZstdFilter()]), _walk(n))


@stack
def float32_floatscale_xor_zstd(uri, n):
    return _dense(uri, n, tiledb.Attr("a", dtype=np.float32, filters=[
        tiledb.FloatScaleFilter(0.5, 0.0, 4), tiledb.XORFilter(), tiledb.ZstdFilter()]),
        (_walk(n) * 0.5).astype(np.float32))


@stack
def sparse_coords(uri, n):
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 2 ** 40), tile=2 ** 20, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=100_000,
                                                attrs=[tiledb.Attr("a", dtype=np.int32)]))
    x = np.cumsum(np.random.default_rng(3).integers(1, 9, n)).astype(np.int64)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[x] = {"a": np.zeros(n, np.int32)}
    return "x"


def _fragments(uri, n, k):
    m = n // k
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, m * k - 1), tile=m, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ByteShuffleFilter(),
                                                  tiledb.ZstdFilter()])]))
    data = _walk(m * k)
    for i in range(k):
        with tiledb.open(uri, "w", timestamp=i + 1) as A:
            A[i * m:(i + 1) * m] = data[i * m:(i + 1) * m]
    return "a"


@stack
def fragments_100(uri, n):
    return _fragments(uri, n, 100)


@stack
def fragments_1000(uri, n):
    return _fragments(uri, n, 1000)


@stack
def fragments_10000(uri, n):
    return _fragments(uri, n, 10000)


def read_theirs(uri: str, field: str) -> np.ndarray:
    """What tiledb-py gives for the field, whole array: the cells (var strings: the data)."""
    ctx = enc_ctx() if "aes" in os.path.basename(uri) else None
    with tiledb.open(uri, ctx=ctx) as A:
        if A.schema.sparse and A.schema.domain.has_dim(field):
            return A.query(attrs=[], dims=[field])[:][field]
        if A.schema.sparse:
            return A.query(attrs=[field], dims=[])[:][field]
        return A.query(attrs=[field])[:][field]

"""tensorstore's zarr (v2) and zarr3 drivers as an oracle: random arrays with the codecs,
layouts and chunk keys tensorstore writes, each verified clean and byte-equal to
tensorstore's own read (README.md in this folder)."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

from .runner import run_examples
from .zarr_checks import check_lone_array

pytestmark = pytest.mark.slow
ts = pytest.importorskip("tensorstore", reason="the writer oracles need the `oracles` extra")

V3_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "bool", "complex64", "complex128"]
V2_TYPES = ["<i1", "<i2", ">i4", "<i8", "|u1", ">u2", "<u4", "<u8", "<f2", "<f4", ">f8",
            "|b1", "<c8"]


def _v2_compressor(rng):
    return [None, {"id": "zstd", "level": int(rng.integers(-3, 10))},
            {"id": "zlib", "level": int(rng.integers(0, 9))}, {"id": "gzip", "level": 3},
            {"id": "bz2", "level": 5},
            {"id": "blosc", "cname": str(rng.choice(["lz4", "lz4hc", "zstd", "zlib", "blosclz"])),
             "clevel": int(rng.integers(0, 9)), "shuffle": int(rng.integers(0, 3))}
            ][int(rng.integers(0, 6))]


def _v3_codecs(rng, ndim: int, dtype: str) -> list:
    out = []
    if ndim > 1 and rng.integers(0, 3) == 0:
        out.append({"name": "transpose",
                    "configuration": {"order": [int(x) for x in rng.permutation(ndim)]}})
    if np.dtype(dtype).itemsize == 1:
        out.append({"name": "bytes"})
    else:
        out.append({"name": "bytes",
                    "configuration": {"endian": str(rng.choice(["little", "big"]))}})
    kind = int(rng.integers(0, 5))
    if kind == 1:
        out.append({"name": "zstd", "configuration": {"level": int(rng.integers(0, 10))}})
    elif kind == 2:
        out.append({"name": "gzip", "configuration": {"level": int(rng.integers(0, 9))}})
    elif kind == 3:
        out.append({"name": "blosc", "configuration": {
            "cname": str(rng.choice(["lz4", "zstd", "zlib"])), "clevel": 5,
            "shuffle": str(rng.choice(["noshuffle", "shuffle", "bitshuffle"])),
            "typesize": 4, "blocksize": 0}})
    if rng.integers(0, 3) == 0:
        out.append({"name": "crc32c"})
    return out


def _metadata(rng, shape: list, chunks: list):
    ndim = len(shape)
    if rng.integers(0, 2):
        dtype = str(rng.choice(V3_TYPES))
        md = {"data_type": dtype, "shape": shape}
        if rng.integers(0, 2):   # sharded: inner chunks inside outer ones
            inner = [max(1, c // int(rng.integers(1, 3))) for c in chunks]
            outer = [i * int(rng.integers(1, 3)) for i in inner]
            index = [{"name": "bytes", "configuration": {"endian": "little"}}] + \
                ([{"name": "crc32c"}] if rng.integers(0, 2) else [])
            md["chunk_grid"] = {"name": "regular", "configuration": {"chunk_shape": outer}}
            md["codecs"] = [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": inner, "codecs": _v3_codecs(rng, ndim, dtype),
                "index_codecs": index,
                "index_location": str(rng.choice(["start", "end"]))}}]
        else:
            md["chunk_grid"] = {"name": "regular", "configuration": {"chunk_shape": chunks}}
            md["codecs"] = _v3_codecs(rng, ndim, dtype)
        if rng.integers(0, 2):
            md["chunk_key_encoding"] = {"name": str(rng.choice(["default", "v2"])),
                                        "configuration": {"separator": str(rng.choice([".", "/"]))}}
        return "zarr3", np.dtype(dtype), md
    dtype = str(rng.choice(V2_TYPES))
    md = {"dtype": dtype, "shape": shape, "chunks": chunks, "compressor": _v2_compressor(rng),
          "order": str(rng.choice(["C", "F"])) if ndim > 1 else "C"}   # 1-D F: tensorstore refuses
    if rng.integers(0, 2):
        md["dimension_separator"] = str(rng.choice([".", "/"]))
    return "zarr", np.dtype(dtype), md


def _values(dtype: np.dtype, shape: list, rng) -> np.ndarray:
    n = math.prod(shape)
    if dtype.kind == "f":
        return (rng.normal(size=n) * 100).astype(dtype).reshape(shape)
    if dtype.kind == "c":
        return (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype).reshape(shape)
    if dtype.kind == "b":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -10**6), min(info.max, 10**6), n,
                        endpoint=True).astype(dtype).reshape(shape)


def _write(rng, folder: str):
    shape = [int(rng.integers(1, 13)) for _ in range(int(rng.integers(1, 4)))]
    chunks = [int(rng.integers(1, s + 3)) for s in shape]
    driver, dtype, md = _metadata(rng, shape, chunks)
    spec = {"driver": driver, "kvstore": {"driver": "file", "path": os.path.join(folder, "arr")}}
    store = ts.open(dict(spec, metadata=md, create=True, delete_existing=True)).result()
    values = _values(dtype, shape, rng)
    if rng.integers(0, 2):   # a partial write: the chunks before it stay absent (fill)
        region = tuple(slice(int(rng.integers(0, s)), s) for s in shape)
        store[region].write(values[region]).result()
    else:
        store.write(values).result()
    return np.asarray(ts.open(spec).result().read().result())


def _check(folder: str, want: np.ndarray) -> None:
    check_lone_array(os.path.join(folder, "arr"), want)


def test_tensorstore_arrays_read_as_tensorstore_reads_them():
    run_examples("tensorstore", _write, _check)

"""Write small Zarr v2 and v3 arrays with tensorstore (not zarr-python) and record its reading.

    .venv/bin/pip install tensorstore
    .venv/bin/python tests/data/zarr/make_tensorstore.py

Output: `tensorstore_<version>/<name>/` (one array each) and `tensorstore_<version>/
expected.json`: per array, the metadata facts the tests check and tensorstore's own reading
of every field, flattened in C order (floats exact, NaN/±Infinity as strings; a struct array
one entry per field), plus sha256 of the field's little-endian C-order bytes.
"""
from __future__ import annotations

import json
import math
import os
import shutil
from importlib.metadata import version

import numpy as np
import tensorstore as ts
from fixture_json import field_entry

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tensorstore_" + version("tensorstore"))


def data(dtype, shape, seed=3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = math.prod(shape)
    if dt.names:
        a = np.zeros(n, dt)
        for f in dt.names:
            a[f] = data(dt[f], (n,), seed + 1)
        return a.reshape(shape)
    if dt.kind == "f":
        v = rng.normal(size=n) * 100
        v[:4] = [np.nan, -0.0, np.inf, -np.inf][: min(4, n)]
        return v.astype(dt).reshape(shape)
    if dt.kind == "c":
        return (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dt).reshape(shape)
    if dt.kind == "b":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    info = np.iinfo(dt)
    v = rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True).astype(dt)
    v[1], v[2] = info.min, info.max
    return v.reshape(shape)


def write(name: str, driver: str, metadata: dict, value: np.ndarray, region=None,
          schema=None) -> dict:
    path = os.path.join(OUT, name)
    spec = {"driver": driver, "kvstore": {"driver": "file", "path": path}}
    names = value.dtype.names or (None,)
    for i, f in enumerate(names):   # a struct array is written (and read) one field at a time
        extra = {"field": f} if f else {}
        create = {"metadata": metadata, "create": True, "delete_existing": True,
                  **({"schema": schema} if schema else {})} if i == 0 \
            else {"open": True}
        store = ts.open(dict(spec, **extra, **create)).result()
        v = value[f] if f else value
        if region is None:
            store.write(v).result()
        else:
            store[region].write(v[region]).result()
    fields = {}
    shape = None
    for f in names:   # tensorstore's own reading, from a fresh open
        back = ts.open(dict(spec, **({"field": f} if f else {}))).result()
        got = back.read().result()
        shape = list(got.shape)
        fields[f or "value"] = field_entry(got)
    return {"driver": driver, "shape": shape, "fields": fields}


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    out = {}
    blosc = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}
    # ---- zarr v2 driver ---------------------------------------------------------------------
    v2 = [
        ("v2_i4_blosc", {"dtype": "<i4", "compressor": blosc}, (9, 7), (4, 3)),
        ("v2_f8_zstd_F", {"dtype": "<f8", "compressor": {"id": "zstd", "level": 3},
                          "order": "F", "fill_value": "NaN"}, (6, 5), (4, 2)),
        ("v2_u2_zlib_slash", {"dtype": ">u2", "compressor": {"id": "zlib", "level": 4},
                              "dimension_separator": "/", "fill_value": 7}, (5, 6), (2, 4)),
        ("v2_f4_none", {"dtype": "<f4", "compressor": None, "fill_value": 1.5}, (10,), (4,)),
        ("v2_struct_blosc", {"dtype": [["a", "<i4"], ["b", "<f8"], ["c", "|u1"]],
                             "compressor": {"id": "blosc", "cname": "zstd", "clevel": 3,
                                            "shuffle": 2}}, (7,), (3,)),
        ("v2_bool_c8", {"dtype": "|b1", "compressor": {"id": "zstd", "level": 1}}, (4, 4),
         (4, 4)),
        ("v2_c16_gzip", {"dtype": "<c16", "compressor": {"id": "gzip", "level": 1}}, (5,),
         (2,)),
    ]
    for name, md, shape, chunks in v2:
        dt = md["dtype"]
        npdt = np.dtype([tuple(f) for f in dt]) if isinstance(dt, list) else np.dtype(dt)
        md = dict(md, shape=list(shape), chunks=list(chunks))
        # leave one chunk unwritten where the grid has several: an absent chunk
        region = np.s_[chunks[0]:] if len(shape) >= 1 and shape[0] > chunks[0] and \
            name.endswith("_F") else None
        out[name] = write(name, "zarr", md, data(npdt, shape), region)
    # ---- zarr3 driver -----------------------------------------------------------------------
    v3 = [
        ("v3_i2_default", {"data_type": "int16"}, (9, 5), (4, 2)),
        ("v3_f4_zstd_crc", {"data_type": "float32", "fill_value": "NaN",
                            "codecs": [{"name": "bytes", "configuration": {"endian": "big"}},
                                       {"name": "zstd", "configuration": {"level": 2}},
                                       {"name": "crc32c"}]}, (7, 3), (3, 3)),
        ("v3_u4_gzip_transpose", {"data_type": "uint32",
                                  "codecs": [{"name": "transpose",
                                              "configuration": {"order": [1, 0]}},
                                             {"name": "bytes",
                                              "configuration": {"endian": "little"}},
                                             {"name": "gzip", "configuration": {"level": 5}}]},
         (5, 6), (2, 4)),
        ("v3_u1_blosc_dot", {"data_type": "uint8",
                             "chunk_key_encoding": {"name": "default",
                                                    "configuration": {"separator": "."}},
                             "codecs": [{"name": "bytes"},
                                        {"name": "blosc", "configuration": {
                                            "cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                            "typesize": 1, "blocksize": 0}}]}, (20,), (6,)),
        ("v3_f8_v2keys", {"data_type": "float64", "fill_value": -1.0,
                          "chunk_key_encoding": {"name": "v2",
                                                 "configuration": {"separator": "."}}},
         (6,), (4,)),
        ("v3_shard_i4", {"data_type": "int32", "codecs": [{
            "name": "sharding_indexed", "configuration": {
                "chunk_shape": [2, 3],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "zstd", "configuration": {"level": 1}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}],
                "index_location": "end"}}]}, (10, 9), (4, 6)),
        ("v3_shard_start_f8", {"data_type": "float64", "fill_value": 0.25, "codecs": [{
            "name": "sharding_indexed", "configuration": {
                "chunk_shape": [3],
                "codecs": [{"name": "bytes", "configuration": {"endian": "big"}},
                           {"name": "gzip", "configuration": {"level": 1}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_location": "start"}}]}, (20,), (9,)),
    ]
    for name, md, shape, chunks in v3:
        md = dict(md, shape=list(shape),
                  chunk_grid={"name": "regular", "configuration": {"chunk_shape": list(chunks)}})
        npdt = np.dtype({"int16": "<i2", "float32": "<f4", "uint32": "<u4", "uint8": "u1",
                         "float64": "<f8", "int32": "<i4"}[md["data_type"]])
        value = data(npdt, shape)
        region = None
        if name == "v3_shard_i4":
            # inner chunks and whole shards left unwritten: missing index entries, absent shard
            region = np.s_[:7, :3]
        elif name == "v3_f8_v2keys":
            region = np.s_[:4]
        out[name] = write(name, "zarr3", md, value, region)
    # tensorstore's own choice: a write chunk larger than the read chunk makes it shard
    # (sharding_indexed, inner chunks = read chunk, index crc32c at the end)
    value = data(np.dtype("<f4"), (30, 20))
    out["v3_layout_sharded"] = write(
        "v3_layout_sharded", "zarr3", {"data_type": "float32"}, value, np.s_[:17, :],
        schema={"domain": {"shape": [30, 20]},
                "chunk_layout": {"write_chunk": {"shape": [16, 20]},
                                 "read_chunk": {"shape": [4, 5]}}})
    with open(os.path.join(OUT, "expected.json"), "w") as fh:
        json.dump({"writer": f"tensorstore {version('tensorstore')}", "arrays": out}, fh, indent=1)


if __name__ == "__main__":
    main()

"""Regenerate the bundled samples in resources/samples/ (needs tiledb-py; run from the repo root).

    python resources/make_samples.py            # every sample this script knows
    python resources/make_samples.py --only tiledb

The samples are small (< 1 MB together) and committed: the window's start page lists them
and `arrayscope --sample` opens `tiledb_dense`. Writes are given fixed timestamps so the
fragment names only differ by their random UUIDs.

- tiledb_dense/      dense 2-D array, one attribute per filter stack, two fragments, metadata
- tiledb_sparse/     sparse array: var-length strings, a nullable attribute, an enumeration
- tiledb_encrypted/  dense array encrypted with AES-256-GCM; the key is in tiledb_encrypted.key
- scdl/              a small SCDL single-cell archive (copied from tests/data/scdl/basic)
- zarr_struct/       Zarr v3 array of a nested struct dtype (with a fixed-length string),
                     zstd with checksum, 2-D chunk grid with edge chunks
- zarr_v2_blosc/     Zarr v2 array of a flat struct dtype, Blosc(lz4, byte shuffle)

    python resources/make_samples.py --only scdl     # no tiledb needed
    python resources/make_samples.py --only zarr     # needs zarr (3.x) and numcodecs
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "samples")
KEY = b"arrayscope-sample-key-0123456789"  # 32 bytes, a teaching key (not a secret)


def _fresh(name: str) -> str:
    path = os.path.join(OUT, name)
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)
    return path


def make_tiledb_dense() -> str:
    import tiledb

    path = _fresh("tiledb_dense")
    dom = tiledb.Domain(
        tiledb.Dim("row", domain=(0, 63), tile=32, dtype=np.int32),
        tiledb.Dim("col", domain=(0, 15), tile=16, dtype=np.int32),
    )
    attrs = [
        tiledb.Attr("counts", dtype=np.int64,
                    filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(level=5)])),
        tiledb.Attr("temperature", dtype=np.float64,
                    filters=tiledb.FilterList([tiledb.BitShuffleFilter(), tiledb.LZ4Filter()])),
        tiledb.Attr("ids", dtype=np.uint32,
                    filters=tiledb.FilterList([tiledb.PositiveDeltaFilter(),
                                               tiledb.BitWidthReductionFilter(),
                                               tiledb.GzipFilter(level=6)])),
        tiledb.Attr("flags", dtype=np.uint8,
                    filters=tiledb.FilterList([tiledb.RleFilter()])),
        tiledb.Attr("stamp", dtype="datetime64[s]",
                    filters=tiledb.FilterList([tiledb.DoubleDeltaFilter(),
                                               tiledb.Checksum32Filter() if hasattr(tiledb, "Checksum32Filter")
                                               else tiledb.ChecksumMD5Filter()])),
        tiledb.Attr("raw", dtype=np.int16),  # no filters at all
    ]
    schema = tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=False, cell_order="row-major",
                                tile_order="row-major")
    tiledb.Array.create(path, schema)
    rng = np.random.default_rng(7)
    rows, cols = 64, 16
    r = np.arange(rows * cols).reshape(rows, cols)
    data = {
        "counts": (r * 3 + rng.integers(0, 5, size=r.shape)).astype(np.int64),
        "temperature": np.round(20 + 5 * np.sin(r / 37.0) + rng.normal(0, 0.2, r.shape), 3),
        "ids": (1000 + r * 2).astype(np.uint32),
        "flags": (r // 40 % 3).astype(np.uint8),
        "stamp": (np.datetime64("2024-05-01T00:00:00") + r.astype("timedelta64[s]") * 60),
        "raw": (r % 500 - 250).astype(np.int16),
    }
    with tiledb.open(path, "w", timestamp=1_700_000_000_000) as A:
        A[:, :] = data
        A.meta["title"] = "arrayscope sample"
        A.meta["scale"] = 0.5
    # a second, smaller fragment overwriting rows 0..31 (one tile), written later
    upd = {k: v[:32].copy() for k, v in data.items()}
    upd["counts"] = upd["counts"] * 0 - 1
    with tiledb.open(path, "w", timestamp=1_700_000_100_000) as A:
        A[0:32, :] = upd
    return path


def make_tiledb_sparse() -> str:
    import tiledb

    path = _fresh("tiledb_sparse")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9999), tile=1000, dtype=np.uint64))
    enmr = tiledb.Enumeration("colours", True, ["red", "green", "blue"])
    attrs = [
        tiledb.Attr("name", dtype=str, var=True,
                    filters=tiledb.FilterList([tiledb.ZstdFilter()])),
        tiledb.Attr("score", dtype=np.float32, nullable=True,
                    filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()])),
        tiledb.Attr("colour", dtype=np.uint8, enum_label="colours"),
    ]
    schema = tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=True, capacity=64,
                                enums=[enmr], allows_duplicates=False)
    tiledb.Array.create(path, schema)
    n = 100
    x = np.arange(0, n * 37, 37, dtype=np.uint64)
    names = np.array([f"cell-{i}" * (1 + i % 3) for i in range(n)], dtype=object)
    # tiledb-py drops a masked array's mask in sparse writes; None in an object array is a null
    lin = np.linspace(0, 1, n, dtype=np.float32)
    score = np.array([None if i % 7 == 0 else lin[i] for i in range(n)], dtype=object)
    with tiledb.open(path, "w", timestamp=1_700_000_000_000) as A:
        A[x] = {"name": names, "score": score, "colour": (np.arange(n) % 3).astype(np.uint8)}
    return path


def make_tiledb_encrypted() -> str:
    import tiledb

    path = _fresh("tiledb_encrypted")
    keyfile = _fresh("tiledb_encrypted.key")
    with open(keyfile, "wb") as fh:
        fh.write(KEY + b"\n")
    cfg = tiledb.Config({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": KEY.decode()})
    ctx = tiledb.Ctx(cfg)
    dom = tiledb.Domain(tiledb.Dim("i", domain=(0, 255), tile=256, dtype=np.int32))
    attrs = [tiledb.Attr("v", dtype=np.int32,
                         filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()]))]
    schema = tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=False, ctx=ctx)
    tiledb.Array.create(path, schema, ctx=ctx)
    with tiledb.open(path, "w", timestamp=1_700_000_000_000, ctx=ctx) as A:
        A[:] = np.arange(256, dtype=np.int32) * 7
    return path


def make_scdl() -> str:
    """The `basic` fixture of the SCDL tests (written by bionemo-scdl's layout, see
    tests/data/scdl/make_fixtures.py): header.sch, the CSR arrays, metadata, features."""
    src = os.path.join(os.path.dirname(HERE), "tests", "data", "scdl", "basic")
    path = _fresh("scdl")
    shutil.copytree(src, path)
    return path


ZARR_NESTED = np.dtype([("id", "<u4"), ("pos", [("x", "<f4"), ("y", "<f4")]),
                        ("label", "<U6"), ("ok", "?")])
ZARR_FLAT = np.dtype([("id", "<i4"), ("weight", "<f8"), ("code", "S4")])


def _zarr_records(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    a = np.zeros(shape, dtype)
    n = a.size
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]
    flat = a.reshape(-1)
    flat["id"] = np.arange(n) + 100
    if "pos" in dtype.names:
        flat["pos"]["x"] = np.round(rng.normal(size=n), 3)
        flat["pos"]["y"] = np.arange(n, dtype=np.float32) / 4
        flat["label"] = [words[i % len(words)] for i in range(n)]
        flat["ok"] = np.arange(n) % 3 != 0
    else:
        flat["weight"] = np.round(rng.uniform(50, 90, n), 2)
        flat["code"] = [w[:4].upper().encode() for w in (words * n)[:n]]
    return a


def make_zarr_struct() -> str:
    import zarr
    from zarr.codecs import ZstdCodec

    path = _fresh("zarr_struct")
    data = _zarr_records(ZARR_NESTED, (6, 5), 11)
    z = zarr.create_array(path, shape=data.shape, chunks=(4, 4), dtype=ZARR_NESTED, zarr_format=3,
                          compressors=[ZstdCodec(level=3, checksum=True)])
    z[...] = data
    return path


def make_zarr_v2_blosc() -> str:
    import numcodecs
    import zarr

    path = _fresh("zarr_v2_blosc")
    data = _zarr_records(ZARR_FLAT, (40,), 5)
    z = zarr.create_array(path, shape=data.shape, chunks=(16,), dtype=ZARR_FLAT, zarr_format=2,
                          compressors=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE))
    z[...] = data
    return path


MAKERS = {
    "tiledb": [make_tiledb_dense, make_tiledb_sparse, make_tiledb_encrypted],
    "scdl": [make_scdl],
    "zarr": [make_zarr_struct, make_zarr_v2_blosc],
}


def _size(path: str) -> int:
    total = 0
    for dp, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(dp, f)) for f in files)
    return total


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=sorted(MAKERS), help="make only these samples")
    args = p.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    groups = [args.only] if args.only else list(MAKERS)
    for g in groups:
        for fn in MAKERS[g]:
            path = fn()
            print(f"{os.path.relpath(path, HERE)}: {_size(path)} bytes")
    print(f"samples total: {_size(OUT)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

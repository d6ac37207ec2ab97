"""Build a format 1 (TileDB 1.4) sparse array byte by byte: no installable writer makes one.

    python tests/data/tiledb_versions/make_format1.py [OUT_ROOT]            # the bytes
    python tests/data/tiledb_versions/make_format1.py --expected [OUT_ROOT] # tiledb-py 0.36
    python tests/data/tiledb_versions/make_format1.py --check [OUT_ROOT]    # tiledb-py 0.36

The bytes are NOT written by libtiledb: they follow TileDB's format history (format_spec,
`FragmentMetadata::load_v1_v2`, `V1V2PreloadedFragmentMetadata`, the 1.4-era `TileIO`) and
the layout libtiledb 1.5 (format 2) really writes (fixture 2_1.5.0), with what format 1 does
differently: version 1 everywhere and coordinates stored zipped (x0 y0 x1 y1 ..., format 2
splits them per tile). The content mirrors TileDB's own test input
`test/inputs/arrays/non_split_coords_v1_4_0` (its binary files could not be fetched here):
INT32 dimensions d1, d2 on [0, 10000], one INT32 attribute `a`, one fragment of 4 cells,
a = d1 = [1, 2, 3, 4], d2 = [10, 10, 10, 10].

`--expected` writes `sparse.expected.json` from what tiledb-py reads (libtiledb 2.30 still
reads format 1: the one real reader that vouches for these bytes); `--check` compares again."""
from __future__ import annotations

import json
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "1_1.4.0"
FRAGMENT = "__5dc2cc9cce204a189f825fd4919d0c55_1541540586869"  # `__uuid_t` (formats 1-2)
INT32, CHAR = 0, 4          # datatype codes
GZIP = 1                    # filter / compressor type
NO_FILTERS = struct.pack("<II", 65536, 0)          # max chunk size, no filters
GZIP_PIPELINE = struct.pack("<IIBIBi", 65536, 1, GZIP, 5, GZIP, 1)


def tile(data: bytes) -> bytes:
    """One unfiltered chunk: u64 chunks | u32 original, filtered, metadata length | data."""
    return struct.pack("<QIII", 1, len(data), len(data), 0) + data


def generic_tile(payload: bytes) -> bytes:
    """The 34-byte header (version 1, CHAR cells, no encryption), a GZIP pipeline, and the
    tile: one chunk whose GZIP metadata lists one data part (original, compressed length)."""
    comp = zlib.compress(payload, 1)
    md = struct.pack("<IIII", 0, 1, len(payload), len(comp))
    body = struct.pack("<QIII", 1, len(payload), len(comp), len(md)) + md + comp
    head = struct.pack("<IQQBQBI", 1, len(body), len(payload), CHAR, 1, 0, len(GZIP_PIPELINE))
    return head + GZIP_PIPELINE + body


def schema_payload() -> bytes:
    out = struct.pack("<IBBBQ", 1, 1, 0, 0, 10000)   # version, sparse, row/row, capacity
    out += NO_FILTERS + NO_FILTERS                    # coords, offsets filters
    out += struct.pack("<BI", INT32, 2)               # domain datatype, dimension count
    for name in (b"d1", b"d2"):
        out += struct.pack("<I", len(name)) + name + struct.pack("<iiBi", 0, 10000, 0, 100)
    out += struct.pack("<I", 1) + struct.pack("<I", 1) + b"a" + struct.pack("<BI", INT32, 1)
    return out + NO_FILTERS


def fragment_payload(a_size: int, coords_size: int) -> bytes:
    ned = struct.pack("<iiii", 1, 4, 10, 10)
    out = struct.pack("<I", 1) + struct.pack("<Q", len(ned)) + ned
    out += struct.pack("<Q", 1) + ned                              # one MBR
    out += struct.pack("<Q", 1) + struct.pack("<iiii", 1, 10, 4, 10)  # first, last coords
    out += struct.pack("<QQ", 1, 0) + struct.pack("<QQ", 1, 0)     # tile offsets: a, coords
    out += struct.pack("<Q", 0) + struct.pack("<Q", 0)             # var offsets, sizes: a
    out += struct.pack("<Q", 4)                                    # last tile cell num
    out += struct.pack("<QQ", a_size, coords_size) + struct.pack("<Q", 0)
    return out


def build(root: str) -> str:
    array = os.path.join(root, NAME, "sparse")
    frag = os.path.join(array, FRAGMENT)
    os.makedirs(frag, exist_ok=True)
    a = tile(struct.pack("<4i", 1, 2, 3, 4))
    coords = tile(struct.pack("<8i", 1, 10, 2, 10, 3, 10, 4, 10))   # zipped
    files = {os.path.join(array, "__array_schema.tdb"): generic_tile(schema_payload()),
             os.path.join(frag, "a.tdb"): a, os.path.join(frag, "__coords.tdb"): coords,
             os.path.join(frag, "__fragment_metadata.tdb"):
                 generic_tile(fragment_payload(len(a), len(coords)))}
    for path, data in files.items():
        with open(path, "wb") as f:
            f.write(data)
    return array


def write_expected(root: str) -> None:
    """expected.json from what tiledb-py (0.36: libtiledb 2.30) reads: no 1.4 reader runs here."""
    sys.path.insert(0, HERE)
    import make_fixtures as mf

    uri = os.path.join(root, NAME, "sparse")
    schema = mf.schema_facts(uri)
    fields = [a["name"] for a in schema["attrs"]] + [d["name"] for d in schema["dims"]]
    exp = {"tiledb_py": None, "libtiledb": "1.4.0",
           "built_by": "make_format1.py, from the format history (no libtiledb 1.4 runs here)",
           "schema": schema, "fragments": mf.fragment_facts(uri, fields),
           "metadata": mf.metadata_facts(uri), "format_version": 1,
           "oracle_notes": [f"bytes built from TileDB's format history, not written by "
                            f"libtiledb 1.4 (no wheel of it installs); values, schema and "
                            f"fragment facts read by tiledb-py {mf.PY} (libtiledb "
                            f"{mf.LIB[0]}.{mf.LIB[1]}.{mf.LIB[2]})"]}
    with open(uri + ".expected.json", "w") as f:
        json.dump(exp, f, indent=1, ensure_ascii=False)
        f.write("\n")


def check(root: str) -> None:
    import numpy as np
    import tiledb

    uri = os.path.join(root, NAME, "sparse")
    with open(uri + ".expected.json") as f:
        exp = json.load(f)
    with tiledb.open(uri) as A:
        got = A.query(order="G")[:]
        for k in ("a", "d1", "d2"):
            assert [int(v) for v in np.asarray(got[k])] == exp["fragments"][0]["values"][k], k
    fi = tiledb.FragmentInfoList(uri)[0]
    assert (int(fi.version), int(fi.cell_num)) == (1, 4), (fi.version, fi.cell_num)
    print(uri, f"read by tiledb-py {tiledb.__version__} as expected")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--check"]:
        check(args[1] if len(args) > 1 else HERE)
    elif args[:1] == ["--expected"]:
        write_expected(args[1] if len(args) > 1 else HERE)
    else:
        print(build(args[0] if args else HERE))

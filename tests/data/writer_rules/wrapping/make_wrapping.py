"""Arrays whose deltas or window ranges wrap around the value type, written by libtiledb
before 2.29 (TileDB PR 5506), which accepted them; run with the python of the tiledb-py to
record (the arrays land in `<libtiledb version>/` beside this file):

    /work/venvs/tdb-0.4.1/bin/python tests/data/writer_rules/wrapping/make_wrapping.py
    /work/venvs/verify-tdb025/bin/python tests/data/writer_rules/wrapping/make_wrapping.py

Committed: libtiledb 1.5.0 (tiledb-py 0.4.1, format 2) and 2.19.2 (tiledb-py 0.25.1, format
21). `expected.json` holds what that tiledb-py read back.

- `dd_int64_extremes`: DOUBLE_DELTA on int64 [INT64_MIN, INT64_MAX] x 20: every delta wraps
  (+-1), the deltas of deltas are +-2; libtiledb >= 2.29 refuses the tile, older ones store
  the wrapped deltas (bit size 2), and the values read back.
- `dd_uint64_extremes`: DOUBLE_DELTA on uint64 0, 2**64 - 1, 2**63, 2**63 - 1, 1.
- `bwr_int64_extremes`: BIT_WIDTH_REDUCTION on int64 [INT64_MIN, INT64_MAX] x 20: the range
  wraps to -1, so the window is reduced to 8 bits (offsets 0 and -1, which read back).
- `bwr_lost_padded`: BIT_WIDTH_REDUCTION, ZSTD on int64 INT64_MIN, INT64_MAX, 0, -1, 1,
  INT64_MIN + 1, INT64_MAX - 1 in tiles of 4 (the second one padded): both windows wrap to
  8 bits and lose values (0 reads back as INT64_MIN, 1 as INT64_MIN + 1); 2.19 pads with 0,
  so the second window's minimum as written (INT64_MIN + 1) is above a cell as read.
"""
from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np
import tiledb

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = ".".join(map(str, tiledb.libtiledb.version()))


def dense(uri, data, filters, tile=None):
    n = len(data)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=tile or n, dtype=np.uint64))
    attr = tiledb.Attr("a", dtype=data.dtype, filters=tiledb.FilterList(filters))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[attr], sparse=False))
    with tiledb.open(uri, mode="w") as A:
        A[:] = data
    with tiledb.open(uri) as A:
        return [int(v) for v in A[:]["a"]]


def _py_version():
    v = getattr(tiledb, "__version__", None)
    if v is None:   # tiledb-py 0.4 has none
        import pkg_resources
        v = pkg_resources.get_distribution("tiledb").version
    return v


def main(out_root):
    out = os.path.join(out_root, LIB)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    arrays = {}
    ext = np.array([-2 ** 63, 2 ** 63 - 1] * 20, dtype=np.int64)
    arrays["dd_int64_extremes"] = dense(os.path.join(out, "dd_int64_extremes"), ext,
                                        [tiledb.DoubleDeltaFilter()])
    arrays["dd_uint64_extremes"] = dense(
        os.path.join(out, "dd_uint64_extremes"),
        np.array([0, 2 ** 64 - 1, 2 ** 63, 2 ** 63 - 1, 1], dtype=np.uint64),
        [tiledb.DoubleDeltaFilter()])
    arrays["bwr_int64_extremes"] = dense(os.path.join(out, "bwr_int64_extremes"), ext,
                                         [tiledb.BitWidthReductionFilter()])
    arrays["bwr_lost_padded"] = dense(
        os.path.join(out, "bwr_lost_padded"),
        np.array([-(2**63), 2**63 - 1, 0, -1, 1, -(2**63) + 1, 2**63 - 2], dtype=np.int64),
        [tiledb.BitWidthReductionFilter(), tiledb.ZstdFilter()], tile=4)
    expected = {"libtiledb": LIB, "tiledb-py": _py_version(),
                "arrays": arrays}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)

"""Tiny TileDB arrays whose bytes tell the writer rules of one libtiledb apart (run with the
python of the tiledb-py to record; the arrays land in `<libtiledb version>/` beside this file).

    /root/.pyenv/versions/3.11.7/bin/python -m venv /work/venvs/verify-tdb025
    /work/venvs/verify-tdb025/bin/pip install "tiledb==0.25.*" "numpy<2"
    /work/venvs/verify-tdb025/bin/python tests/data/writer_rules/make_writer_rules.py
    .venv/bin/python tests/data/writer_rules/make_writer_rules.py      # tiledb-py 0.36.1

Committed: libtiledb 2.19.2 (tiledb-py 0.25.1, format 21), 2.25.0 (tiledb-py 0.31.1, format 22,
the same venv recipe with "tiledb==0.31.*") and 2.30.0 (tiledb-py 0.36.1,
format 22). Each array holds one fragment written at timestamp 1, and `expected.json` what
tiledb-py read back.

- `dd_steps`: DOUBLE_DELTA on int64 0, 1000, 2000, ...: every delta of deltas is 0 and the
  first delta 1000, so the stored bit size says which rule sized it (< 2.29: the deltas of
  deltas only; >= 2.29: the first delta too).
- `dd_bwr_offsets`: 3 var strings with offsets filters [DOUBLE_DELTA, BIT_WIDTH_REDUCTION,
  ZSTD] (tiledbsoma's): DOUBLE_DELTA makes 33 bytes of UINT64, so BIT_WIDTH_REDUCTION ends in
  a 1-byte window with no whole value (< 2.29: width 8, offset T max; >= 2.29: full width,
  offset 0).
- `bwr_full_range`: BIT_WIDTH_REDUCTION, ZSTD, SHA256 on int64 values spanning the whole
  type: the window offset is left uninitialised.
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


def dense(uri, data, filters, dtype=None, var=False, offsets_filters=None):
    n = len(data)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=n, dtype=np.uint64))
    attr = tiledb.Attr("a", dtype=dtype or data.dtype, var=var,
                       filters=tiledb.FilterList(filters))
    kw = {}
    if offsets_filters is not None:
        kw["offsets_filters"] = tiledb.FilterList(offsets_filters)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[attr], sparse=False, **kw))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = data
    with tiledb.open(uri) as A:
        got = A[:]["a"]
    return [v.decode() if isinstance(v, bytes) else (v if isinstance(v, str) else int(v))
            for v in got]


def main(out_root: str) -> None:
    out = os.path.join(out_root, LIB)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    expected = {"libtiledb": LIB, "tiledb-py": tiledb.__version__, "arrays": {}}
    arrays = expected["arrays"]
    arrays["dd_steps"] = dense(os.path.join(out, "dd_steps"),
                               np.arange(0, 64000, 1000, dtype=np.int64),
                               [tiledb.DoubleDeltaFilter()])
    arrays["dd_bwr_offsets"] = dense(
        os.path.join(out, "dd_bwr_offsets"), np.array(["a", "bb", "ccc"], dtype=object),
        [tiledb.ZstdFilter()], dtype=str, var=True,
        offsets_filters=[tiledb.DoubleDeltaFilter(), tiledb.BitWidthReductionFilter(),
                         tiledb.ZstdFilter()])
    arrays["bwr_full_range"] = dense(
        os.path.join(out, "bwr_full_range"),
        np.array([-2**63, 2**63 - 1, 3, -7] * 8, dtype=np.int64),
        [tiledb.BitWidthReductionFilter(), tiledb.ZstdFilter(), tiledb.ChecksumSHA256Filter()])
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)

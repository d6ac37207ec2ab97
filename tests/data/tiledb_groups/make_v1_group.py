"""Write a TileDB group with group details format version 1 (libtiledb 2.12 writes these;
tiledb-py 0.36 / libtiledb 2.30 writes version 2), and record what tiledb-py reads.

    python3.7 -m venv /work/venvs/groups-tdb018
    /work/venvs/groups-tdb018/bin/pip install "tiledb==0.18.3" "numpy<1.22"
    /work/venvs/groups-tdb018/bin/python tests/data/tiledb_groups/make_v1_group.py

Made with tiledb-py 0.18.3 (libtiledb 2.12.3). `v1_<libtiledb>/g` is a group with two writes:
the first adds `one` (relative → arr1), `two` (absolute file:// → arr2) and an unnamed
nested group `sub`; the second removes `two`. Version 1 files each hold the whole member list,
so only the second counts. `expected.json`: the members tiledb-py lists (name, URI relative
to the group, type) and the group metadata.
"""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import tiledb

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = ".".join(map(str, tiledb.libtiledb.version()))


def _array(uri: str, start: float) -> None:
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=5, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.float64)]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = np.arange(10.0) + start


def main() -> None:
    out = os.path.join(HERE, f"v1_{LIB}")
    if os.path.exists(out):
        shutil.rmtree(out)
    g = os.path.join(out, "g")
    os.makedirs(out)
    tiledb.Group.create(g)
    _array(os.path.join(g, "arr1"), 0)
    _array(os.path.join(g, "arr2"), 10)
    tiledb.Group.create(os.path.join(g, "sub"))
    w = tiledb.Group(g, "w")
    w.add("arr1", name="one", relative=True)
    w.add("file://" + os.path.join(g, "arr2"), name="two")
    w.add("sub", relative=True)
    w.meta["title"] = "v1 group"
    w.close()
    w = tiledb.Group(g, "w")
    w.remove("two")
    w.close()
    r = tiledb.Group(g)
    members = sorted(([m.name, os.path.relpath(m.uri[len("file://"):], g),
                      "group" if m.type is tiledb.Group else "array"] for m in r),
                     key=lambda x: x[1])
    meta = {k: r.meta[k] for k in r.meta.keys()}
    r.close()
    with open(os.path.join(out, "expected.json"), "w") as fh:
        json.dump({"tiledb": tiledb.__version__, "libtiledb": LIB, "members": members,
                   "metadata": meta}, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()

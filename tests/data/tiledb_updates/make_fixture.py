"""Write a sparse array with update commits (`.upd`) through libtiledb 2.30 itself.

tiledb-py has no update query; libtiledb has one behind `sm.allow_updates_experimental`
(`tiledb_query_add_update_value`, tiledb_experimental.h). This script calls it through ctypes
on the libtiledb that tiledb-py bundles, so the `.upd` bytes are libtiledb's own:

    python3.11 tests/data/tiledb_updates/make_fixture.py    # tiledb-py 0.36.1, libtiledb 2.30.0

`sparse_upd/` (x: int64 in [0, 99], tile 10; attributes a: int32, b: float64, s: var string):
- t=1: fragment, x = 0..49, a = x, b = x / 2, s = "c<x>";
- t=2: update commit: WHERE a < 10 SET b = 7.25;
- t=3: fragment, x = 50..59, a = x - 55 (-5..4), b = 0, s = "n<x>";
- t=4: update commit: WHERE x > 55 AND a < 3 SET a = -1, s = "hi"
  (matches x = 56, 57: a = 1, 2).
libtiledb 2.30 stores each update's condition negated (like a delete's) and, when reading,
applies it as a delete and not the values: tests/tiledb/test_health_updates.py holds the
model against what tiledb-py reads at each T.
"""
from __future__ import annotations

import ctypes
import glob
import os
import shutil
import sys

import numpy as np
import tiledb

HERE = os.path.dirname(os.path.abspath(__file__))
P = ctypes.c_void_p
LT, GT = 0, 2          # tiledb_query_condition_op_t
AND = 0                # tiledb_query_condition_combination_op_t
UPDATE = 3             # tiledb_query_type_t


def _lib() -> ctypes.CDLL:
    libs = glob.glob(os.path.join(os.path.dirname(tiledb.__file__), "..", "tiledb.libs",
                                  "libtiledb-*.so*"))
    lib = ctypes.CDLL(libs[0])
    lib.tiledb_array_set_open_timestamp_end.argtypes = [P, P, ctypes.c_uint64]
    lib.tiledb_query_condition_init.argtypes = [P, P, ctypes.c_char_p, P, ctypes.c_uint64,
                                                ctypes.c_int]
    lib.tiledb_query_condition_combine.argtypes = [P, P, P, ctypes.c_int, P]
    lib.tiledb_query_add_update_value.argtypes = [P, P, ctypes.c_char_p, P, ctypes.c_uint64]
    return lib


class Updater:
    def __init__(self):
        self.lib = _lib()
        cfg, err = P(), P()
        self.ok(self.lib.tiledb_config_alloc(ctypes.byref(cfg), ctypes.byref(err)), "config")
        self.ok(self.lib.tiledb_config_set(cfg, b"sm.allow_updates_experimental", b"true",
                                           ctypes.byref(err)), "config")
        self.ctx = P()
        self.ok(self.lib.tiledb_ctx_alloc(cfg, ctypes.byref(self.ctx)), "context")

    def ok(self, rc: int, what: str) -> None:
        if rc == 0:
            return
        msg = b""
        if getattr(self, "ctx", None):
            err, m = P(), ctypes.c_char_p()
            self.lib.tiledb_ctx_get_last_error(self.ctx, ctypes.byref(err))
            self.lib.tiledb_error_message(err, ctypes.byref(m))
            msg = m.value or b""
        raise RuntimeError(f"{what}: rc={rc} {msg.decode()}")

    def cond(self, field: str, value, op: int) -> P:
        c = P()
        self.ok(self.lib.tiledb_query_condition_alloc(self.ctx, ctypes.byref(c)), "condition")
        self.ok(self.lib.tiledb_query_condition_init(self.ctx, c, field.encode(),
                                                     ctypes.byref(value),
                                                     ctypes.sizeof(value), op), "condition")
        return c

    def both(self, left: P, right: P) -> P:
        c = P()
        self.ok(self.lib.tiledb_query_condition_combine(self.ctx, left, right, AND,
                                                        ctypes.byref(c)), "combine")
        return c

    def update(self, uri: str, t: int, cond: P, values) -> None:
        lib, ctx = self.lib, self.ctx
        arr, q = P(), P()
        self.ok(lib.tiledb_array_alloc(ctx, uri.encode(), ctypes.byref(arr)), "array")
        self.ok(lib.tiledb_array_set_open_timestamp_end(ctx, arr, t), "timestamp")
        self.ok(lib.tiledb_array_open(ctx, arr, UPDATE), "open")
        self.ok(lib.tiledb_query_alloc(ctx, arr, UPDATE, ctypes.byref(q)), "query")
        self.ok(lib.tiledb_query_set_condition(ctx, q, cond), "set condition")
        for name, raw in values:
            buf = ctypes.create_string_buffer(raw, len(raw))
            self.ok(lib.tiledb_query_add_update_value(ctx, q, name.encode(), buf, len(raw)),
                    f"update value {name}")
        self.ok(lib.tiledb_query_submit(ctx, q), "submit")
        self.ok(lib.tiledb_array_close(ctx, arr), "close")


def write(uri: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("a", dtype=np.int32), tiledb.Attr("b", dtype=np.float64),
        tiledb.Attr("s", dtype=str, var=True)])
    tiledb.Array.create(uri, schema)
    x = np.arange(50)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[x] = {"a": x.astype(np.int32), "b": x / 2, "s": np.array([f"c{i}" for i in x], "O")}
    u = Updater()
    u.update(uri, 2, u.cond("a", ctypes.c_int32(10), LT),
             [("b", np.float64(7.25).tobytes())])
    x = np.arange(50, 60)
    with tiledb.open(uri, "w", timestamp=3) as A:
        A[x] = {"a": (x - 55).astype(np.int32), "b": np.zeros(10),
                "s": np.array([f"n{i}" for i in x], "O")}
    u.update(uri, 4, u.both(u.cond("x", ctypes.c_int64(55), GT),
                            u.cond("a", ctypes.c_int32(3), LT)),
             [("a", np.int32(-1).tobytes()), ("s", b"hi")])


def main() -> int:
    out = os.path.join(HERE, "sparse_upd")
    shutil.rmtree(out, ignore_errors=True)
    write(out)
    print(f"wrote {out} with tiledb-py {tiledb.__version__}, libtiledb "
          f"{'.'.join(map(str, tiledb.libtiledb.version()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the TileDB fixtures of one tiledb-py version (run with that version's python).

    python -m venv /tmp/tdb-0.25 && /tmp/tdb-0.25/bin/pip install "tiledb==0.25.*" "numpy<2"
    /tmp/tdb-0.25/bin/python tests/data/tiledb_versions/make_fixtures.py [OUT_ROOT]
    python tests/data/tiledb_versions/make_fixtures.py --crosscheck [OUT_ROOT]   # tiledb 0.36

The committed set was made with tiledb-py 0.19.1, 0.20.0, 0.21.6, 0.22.3, 0.23.5, 0.25.1 and
0.31.1 (one libtiledb per format version 16-22; 0.17/0.18 have no Python 3.11 wheels), and,
under Python 3.7 (pyenv; one venv per version, `pip install tiledb==X "numpy<1.22"`), with
tiledb-py 0.4.1, 0.4.4, 0.5.9, 0.6.6, 0.7.7, 0.8.0, 0.8.11, 0.9.5, 0.10.5, 0.13.3, 0.14.5,
0.15.6, 0.16.5, 0.17.5 and 0.18.3 (libtiledb 1.5-2.12, formats 2-16: the `OLD_ARRAYS` below),
then cross-checked with 0.36.1. Format 1 (TileDB 1.4) has no wheel: make_format1.py builds it.

Each run writes `tests/data/tiledb_versions/<format version>_<libtiledb version>/`, holding a
few tiny arrays and, beside each, `<array>.expected.json`: what this tiledb-py reads (schema
facts, per fragment the non-empty domain, cell count and the values in stored order, the array
metadata). tests/test_tiledb_versions.py checks arrayscope against these without tiledb.

Works with tiledb-py 0.19 (libtiledb 2.13) to 0.36 (2.30); features are used where the
version has them (enumerations: libtiledb >= 2.17). Every write has an explicit timestamp,
so each fragment can be read alone with `tiledb.open(uri, timestamp=(t1, t2))`.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tiledb

HERE = os.path.dirname(os.path.abspath(__file__))
# Run in an old tiledb-py's own venv, where arrayscope is not installed: reach the oracle
# helper through the repository root.
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
from tests.support.tiledb_oracle import fragment_cells, global_perm  # noqa: E402

LIB = tuple(tiledb.libtiledb.version())
try:
    PY = tiledb.__version__
except AttributeError:  # tiledb-py 0.4.1
    import pkg_resources
    PY = pkg_resources.get_distribution("tiledb").version
HAS_ENUMS = hasattr(tiledb, "Enumeration") and LIB >= (2, 17)


# ---- JSON-able values -----------------------------------------------------------------------
def _py(v):
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, np.generic):
        if v.dtype.kind in "mM":
            return int(v.astype("int64"))
        if v.dtype.kind == "f" and not np.isfinite(v):
            return repr(float(v))   # "nan" / "inf" / "-inf" (JSON has none)
        return v.item()
    if isinstance(v, float) and not np.isfinite(v):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return [_py(x) for x in v]
    if isinstance(v, np.ndarray):
        return _py(v[()]) if v.ndim == 0 else [_py(x) for x in v]
    return v


def _cells(arr) -> list:
    """A (possibly masked) array of cells as a JSON list; null where masked."""
    mask = np.ma.getmaskarray(arr) if np.ma.isMaskedArray(arr) else None
    data = np.ma.getdata(arr)
    out = []
    for i, v in enumerate(data.reshape(-1) if data.dtype != object else data):
        out.append(None if mask is not None and mask.reshape(-1)[i] else _py(v))
    return out


def _filters(fl) -> list:
    if not fl:
        return []
    try:
        return [type(f).__name__ for f in fl]
    except UnboundLocalError:  # tiledb-py 0.17 cannot list filters that have no option
        return [fl.filter_type_cc_to_python[fl._filter(i)._type].__name__
                for i in range(len(fl))]


def _dtype_name(dt) -> str:
    return np.dtype(dt).str if not isinstance(dt, str) else dt


def schema_facts(uri: str) -> dict:
    with tiledb.open(uri) as A:
        s = A.schema
        dims = []
        for i in range(s.domain.ndim):
            d = s.domain.dim(i)
            isvar = bool(getattr(d, "isvar", False))
            dims.append({
                "name": d.name, "dtype": _dtype_name(d.dtype), "var": isvar,
                "domain": None if isvar else _py(list(d.domain)),
                "tile": None if isvar or d.tile is None else _py(d.tile),
                "filters": _filters(getattr(d, "filters", None))})
        attrs = []
        for i in range(s.nattr):
            a = s.attr(i)
            attrs.append({
                "name": a.name, "dtype": _dtype_name(a.dtype), "var": bool(a.isvar),
                "cell_val_num": 0xFFFFFFFF if a.isvar else int(getattr(a, "ncells", 1)),
                "nullable": bool(getattr(a, "isnullable", False)),
                "enum_label": getattr(a, "enum_label", None),
                "filters": _filters(a.filters)})
        enums = {}
        if HAS_ENUMS:
            for a in attrs:
                if a["enum_label"]:
                    e = A.enum(a["enum_label"])
                    enums[a["enum_label"]] = _py(list(e.values()))
        dups = bool(getattr(s, "allows_duplicates", False)) if s.sparse else False
        return {"sparse": bool(s.sparse), "allows_duplicates": dups,
                "capacity": int(s.capacity), "tile_order": s.tile_order,
                "cell_order": s.cell_order, "dims": dims, "attrs": attrs,
                "enumerations": enums,
                "offsets_filters": _filters(getattr(s, "offsets_filters", None)),
                # None: this tiledb-py cannot say (--crosscheck fills it in)
                "validity_filters": (_filters(s.validity_filters)
                                     if hasattr(s, "validity_filters") else None)}


def fragment_facts(uri: str, fields) -> list:
    out = []
    for f in tiledb.FragmentInfoList(uri):
        name = os.path.basename(f.uri.rstrip("/"))
        entry = {"name": name, "timestamp": list(f.timestamp_range), "version": int(f.version),
                 "sparse": bool(f.sparse), "cell_num": int(f.cell_num),
                 "nonempty_domain": _py([list(r) for r in f.nonempty_domain]), "values": {}}
        for fld in fields:
            cells, covered = fragment_cells(uri, f, fld)
            entry["values"][fld] = _cells(cells)
        out.append(entry)
    return out


def metadata_facts(uri: str) -> dict:
    with tiledb.open(uri) as A:
        if not hasattr(A, "meta"):  # libtiledb < 1.7: no array metadata
            return {}
        return {k: _py(A.meta[k]) for k in sorted(A.meta.keys())}


# ---- the arrays -----------------------------------------------------------------------------
def dense_filters(uri: str) -> None:
    """Dense 2-D, two filter stacks; t1 full, t2 one tile → consolidated + vacuumed; then t3
    and t4 partial writes (4 fragments left: __1_2 and __3_3, __4_4)."""
    dom = tiledb.Domain(tiledb.Dim("rows", domain=(1, 4), tile=2, dtype=np.int32),
                        tiledb.Dim("cols", domain=(1, 6), tile=3, dtype=np.int32))
    attrs = [tiledb.Attr("a", dtype=np.int32,
                         filters=tiledb.FilterList([tiledb.ByteShuffleFilter(),
                                                    tiledb.ZstdFilter(level=3)])),
             tiledb.Attr("b", dtype=np.int64,
                         filters=tiledb.FilterList([tiledb.BitWidthReductionFilter(),
                                                    tiledb.ZstdFilter(),
                                                    tiledb.ChecksumSHA256Filter()])),
             tiledb.Attr("f", dtype=np.float64, fill=-1.5,
                         filters=tiledb.FilterList([tiledb.GzipFilter(level=6)]))]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=False,
                                                cell_order="row-major", tile_order="col-major"))
    a = np.arange(24, dtype=np.int32).reshape(4, 6) * 7 - 30
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = {"a": a, "b": a.astype(np.int64) * 1000 + 5, "f": a / 4.0}
    with tiledb.open(uri, "w", timestamp=2) as A:
        A[1:3, 1:4] = {"a": np.full((2, 3), 9, np.int32), "b": np.full((2, 3), -2, np.int64),
                       "f": np.full((2, 3), 0.25)}
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragments"}))
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "fragments"}))
    with tiledb.open(uri, "w", timestamp=3) as A:
        A[3:5, 2:6] = {"a": np.arange(8, dtype=np.int32).reshape(2, 4),
                       "b": np.arange(8, dtype=np.int64).reshape(2, 4) << 40,
                       "f": np.linspace(0, 1, 8).reshape(2, 4)}
    with tiledb.open(uri, "w", timestamp=4) as A:
        A[2:3, 5:7] = {"a": np.array([[100, 200]], np.int32), "b": np.array([[1, 2]], np.int64),
                       "f": np.array([[np.nan, np.inf]])}
    with tiledb.open(uri, "w", timestamp=5) as A:
        A.meta["int"] = 42
        A.meta["float"] = 2.5
        A.meta["text"] = "héllo"
        A.meta["ints"] = (1, 2, 3)


def sparse_var(uri: str) -> None:
    """Sparse, an int64 and a string dimension, var-sized string, nullable and (libtiledb
    >= 2.17) enumerated attributes; t1 + t2 consolidated and vacuumed, then t3 and t4; array
    metadata written twice, consolidated and vacuumed; fragment metadata consolidated."""
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64),
                        tiledb.Dim("key", domain=(None, None), tile=None, dtype="ascii"))
    attrs = [tiledb.Attr("s", dtype=str, var=True,
                         filters=tiledb.FilterList([tiledb.ZstdFilter(level=1)])),
             tiledb.Attr("n", dtype=np.float32, nullable=True,
                         filters=tiledb.FilterList([tiledb.ByteShuffleFilter(),
                                                    tiledb.LZ4Filter()])),
             tiledb.Attr("ns", dtype=str, var=True, nullable=True)]
    kw = {}
    if HAS_ENUMS:
        attrs.append(tiledb.Attr("e", dtype=np.uint8, enum_label="color"))
        kw["enums"] = [tiledb.Enumeration("color", False, ["red", "green", "blue"])]
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=attrs, sparse=True, capacity=3,
        offsets_filters=tiledb.FilterList([tiledb.PositiveDeltaFilter(),
                                           tiledb.ZstdFilter(level=2)]),
        **kw))

    def write(t, x, keys, s, n, ns, e):
        # Nulls the way every tiledb-py version understands: NaN for a nullable float, None
        # for a nullable var string (masked arrays lose their mask in tiledb-py < 0.30).
        data = {"s": np.array(s, dtype=object),
                "n": np.array([np.nan if v is None else v for v in n], np.float32),
                "ns": np.array(ns, dtype=object)}
        if HAS_ENUMS:
            data["e"] = np.array(e, np.uint8)
        coords = (np.array(x, np.int64), np.array(keys, dtype=object))
        try:
            with tiledb.open(uri, "w", timestamp=t) as A:
                A[coords] = data
        except tiledb.TileDBError:
            # tiledb-py < 0.23 cannot convert None in a var attribute: write "" (valid)
            data["ns"] = np.array(["" if v is None else v for v in ns], dtype=object)
            with tiledb.open(uri, "w", timestamp=t) as A:
                A[coords] = data

    write(1, [1, 5, 9, 40], ["a", "bb", "ccc", "d"], ["", "α", "two", "x" * 20],
          [1.5, None, 3.0, -4.0], ["p", None, "", "qq"], [0, 1, 2, 1])
    write(2, [5, 70, 71], ["zz", "k", "kk"], ["m", "nn", "é€"],
          [None, 0.5, 7.25], [None, "r", "s"], [2, 2, 0])
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragments"}))
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "fragments"}))
    write(3, [0, 99], ["first", "last"], ["start", "end"], [0.0, None], ["t", None], [1, 0])
    write(4, [50, 50, 51, 52], ["a", "b", "a", "c"], ["u", "v", "w", "yy"],
          [1.0, 2.0, None, 4.0], ["", "x", "y", None], [0, 0, 1, 2])
    with tiledb.open(uri, "w", timestamp=5) as A:
        A.meta["name"] = "sparse"
        A.meta["pi"] = 3.14159
    with tiledb.open(uri, "w", timestamp=6) as A:
        A.meta["count"] = 7
        A.meta["floats"] = (0.5, -1.25)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "array_meta"}))
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "array_meta"}))
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragment_meta"}))


def sparse_deletes(uri: str) -> None:
    """Sparse 1-D with the less common filters (each where the version has it): strings under
    RLE and DICTIONARY (their offsets live in the var tile), DOUBLE_DELTA, BITSHUFFLE, BZIP2,
    XOR, DELTA. t1, t2 writes, a delete at t3 (a `.del` commit, libtiledb >= 2.12), the three
    consolidated with their delete metadata kept (dt/dci slots) and vacuumed, a write at t4,
    then the commits consolidated (a `.con` beside the `.wrt` markers, libtiledb >= 2.12)."""
    def opt(name, *a, **k):
        cls = getattr(tiledb, name, None)
        return [cls(*a, **k)] if cls is not None else []
    dom = tiledb.Domain(tiledb.Dim("i", domain=(0, 999), tile=100, dtype=np.uint32,
                                   filters=tiledb.FilterList([tiledb.DoubleDeltaFilter()])))
    attrs = [tiledb.Attr("rle", dtype=str, var=True,
                         filters=tiledb.FilterList([tiledb.RleFilter()])),
             tiledb.Attr("dict", dtype=str, var=True,
                         filters=tiledb.FilterList((LIB >= (2, 14) and opt("DictionaryFilter")) or
                                                   [tiledb.RleFilter()])),
             tiledb.Attr("dd", dtype=np.int64,
                         filters=tiledb.FilterList([tiledb.DoubleDeltaFilter(),
                                                    tiledb.Bzip2Filter()])),
             tiledb.Attr("bits", dtype=np.uint16,
                         filters=tiledb.FilterList([tiledb.BitShuffleFilter(),
                                                    tiledb.LZ4Filter()])),
             tiledb.Attr("xf", dtype=np.float32,
                         filters=tiledb.FilterList(opt("XORFilter") + [tiledb.ZstdFilter()])),
             tiledb.Attr("dl", dtype=np.int32,
                         filters=tiledb.FilterList(opt("DeltaFilter") or
                                                   [tiledb.PositiveDeltaFilter()]))]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=True,
                                                capacity=4, allows_duplicates=True))

    def write(t, idx):
        i = np.array(idx, np.uint32)
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[i] = {"rle": np.array(["aa" if v % 3 else "bbb" for v in idx], dtype=object),
                    "dict": np.array([["x", "yy", "zzz"][v % 3] for v in idx], dtype=object),
                    "dd": (i.astype(np.int64) * 37) - 1000,
                    "bits": (i * 3).astype(np.uint16),
                    "xf": i.astype(np.float32) / 8,
                    "dl": (i.astype(np.int32) ** 2) - 50}
    write(1, [3, 4, 10, 11, 200, 201, 202, 500, 999])
    write(2, [4, 5, 6, 300, 301])
    deleted = False
    if LIB >= (2, 13):
        try:
            with tiledb.open(uri, "d", timestamp=3) as A:
                A.query(cond="dd > 10000").submit()
            deleted = True
        except Exception as e:  # noqa: BLE001 (the tiledb-py version cannot delete)
            print("no delete:", e)
    tiledb.consolidate(uri, config=tiledb.Config({
        "sm.consolidation.mode": "fragments", "sm.consolidation.purge_deleted_cells": "false"}))
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "fragments"}))
    write(4, [7, 8])
    if LIB >= (2, 12):
        tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "commits"}))
    print("sparse_deletes:", "with" if deleted else "without", "a delete")


# ---- libtiledb < 2.13 (tiledb-py 0.4-0.18, Python 3.7) --------------------------------------
# These versions lack parts of the API used above (write timestamps before 2.?, var-sized
# dimensions and allows_duplicates before 2.0, nullable attributes before 2.2, array metadata
# before 1.7, FragmentInfoList, delete queries, enumerations): each feature is used where the
# version has it. Each fragment's values are read from a scratch copy of the array that holds
# that fragment alone, so no per-fragment timestamp read is needed.
OLD = LIB < (2, 13)
SPECIAL_DIRS = {"__meta", "__schema", "__commits", "__fragments", "__fragment_meta", "__labels"}


def _opt_filters(*specs):
    """FilterList of those (name, kwargs) this tiledb-py has."""
    out = []
    for name, kw in specs:
        cls = getattr(tiledb, name, None)
        if cls is not None:
            out.append(cls(**kw))
    return tiledb.FilterList(out)


_TICK = [0]


def _open_w(uri, t):
    """A write handle at timestamp t where the version allows one, else at the current time
    (then a short sleep keeps the fragments' timestamps apart)."""
    try:
        return tiledb.open(uri, mode="w", timestamp=t)
    except Exception:  # noqa: BLE001 (libtiledb < 2.?: timestamps only when reading)
        import time
        time.sleep(0.01)
        return tiledb.open(uri, mode="w")


def _attr(name, dtype, **kw):
    """An Attr, dropping the keywords (nullable, fill) this tiledb-py does not know."""
    for drop in ([], ["fill"], ["nullable", "fill"]):
        try:
            return tiledb.Attr(name, dtype=dtype, **{k: v for k, v in kw.items() if k not in drop})
        except TypeError:
            continue
    raise RuntimeError(name)


def _consolidate(uri, mode):
    """Consolidate (and vacuum) the way the version can; False if it cannot."""
    try:
        cfg = tiledb.Config({"sm.consolidation.mode": mode}) if LIB >= (2, 0) else None
        if cfg is None and mode != "fragments":
            return False
        tiledb.consolidate(uri=uri, config=cfg) if cfg is not None else tiledb.consolidate(uri=uri)
    except Exception as e:  # noqa: BLE001
        print("no consolidation", mode, e)
        return False
    if hasattr(tiledb, "vacuum"):
        try:
            tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": mode}))
        except Exception as e:  # noqa: BLE001
            print("no vacuum", mode, e)
    return True


def old_dense(uri: str) -> None:
    """Dense 2-D, three filter stacks; t1 full, t2 one tile, consolidated (and vacuumed where
    the version can), then t3 across four partial tiles; array metadata (libtiledb >= 1.7)."""
    dom = tiledb.Domain(tiledb.Dim("rows", domain=(1, 4), tile=2, dtype=np.int32),
                        tiledb.Dim("cols", domain=(1, 6), tile=3, dtype=np.int32))
    attrs = [_attr("a", np.int32, filters=tiledb.FilterList([tiledb.ByteShuffleFilter(),
                                                             tiledb.ZstdFilter(level=3)])),
             _attr("b", np.int64, filters=_opt_filters(("BitWidthReductionFilter", {}),
                                                      ("ZstdFilter", {}),
                                                      ("ChecksumSHA256Filter", {}))),
             _attr("f", np.float64, fill=-1.5, filters=tiledb.FilterList([tiledb.GzipFilter(level=6)]))]
    tiledb.DenseArray.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=attrs, sparse=False, cell_order="row-major", tile_order="col-major"))
    a = np.arange(24, dtype=np.int32).reshape(4, 6) * 7 - 30
    with _open_w(uri, 1) as A:
        A[:] = {"a": a, "b": a.astype(np.int64) * 1000 + 5, "f": a / 4.0}
    with _open_w(uri, 2) as A:
        A[1:3, 1:4] = {"a": np.full((2, 3), 9, np.int32), "b": np.full((2, 3), -2, np.int64),
                       "f": np.full((2, 3), 0.25)}
    _consolidate(uri, "fragments")
    with _open_w(uri, 3) as A:
        A[2:4, 2:6] = {"a": np.arange(8, dtype=np.int32).reshape(2, 4),
                       "b": np.arange(8, dtype=np.int64).reshape(2, 4) << 40,
                       "f": np.linspace(0, 1, 8).reshape(2, 4)}
    with _open_w(uri, 4) as A:
        if hasattr(A, "meta"):
            A.meta["int"] = 42
            A.meta["float"] = 2.5
            A.meta["text"] = "héllo"
            A.meta["ints"] = (1, 2, 3)


def old_sparse(uri: str) -> None:
    """Sparse 2-D (int64 + a string dimension from libtiledb 2.0, else int64 + int64),
    var-sized strings, nullable attributes (where the version has them); t1 + t2
    consolidated, then t3; array metadata written twice and consolidated (libtiledb >= 2.0)."""
    var_dim = LIB >= (2, 0)
    if var_dim:
        try:
            second = tiledb.Dim("key", domain=(None, None), tile=None, dtype="ascii")
        except TypeError:  # tiledb-py 0.9: bytes stand for ASCII
            second = tiledb.Dim("key", domain=(None, None), tile=None, dtype=np.bytes_)
    else:
        second = tiledb.Dim("y", domain=(0, 999), tile=100, dtype=np.int64)
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64), second)
    # tiledb-py 0.8-0.9 create nullable attributes but cannot write them
    can_null = tuple(int(x) for x in PY.split(".")[:2]) >= (0, 10)
    attrs = [_attr("s", str, var=True, filters=tiledb.FilterList([tiledb.ZstdFilter(level=1)])),
             _attr("n", np.float32, nullable=can_null,
                   filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.LZ4Filter()])),
             _attr("ns", str, var=True, nullable=can_null)]
    nullable = bool(getattr(attrs[1], "isnullable", False))
    kw = {"allows_duplicates": False} if LIB >= (2, 0) else {}
    tiledb.SparseArray.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=attrs, sparse=True, capacity=3,
        offsets_filters=tiledb.FilterList([tiledb.PositiveDeltaFilter(),
                                           tiledb.ZstdFilter(level=2)]), **kw))

    def write(t, x, keys, s, n, ns):
        if LIB < (2, 1):
            # no empty var cells before libtiledb 2.1: tiledb-py stores "" as one NUL byte
            # and reads it back as "" (numpy drops trailing NULs), so the reader cannot be
            # the oracle of that byte; write a visible character instead
            s = ["-" if v == "" else v for v in s]
            ns = ["-" if not v else v for v in ns]  # None included: no nullable then
        data = {"s": np.array(s, dtype=object),
                "n": np.array([np.nan if v is None else v for v in n], np.float32),
                "ns": np.array([("" if v is None and not nullable else v) for v in ns],
                               dtype=object)}
        second = (np.array(keys, dtype=object) if var_dim else
                  np.array([sum(map(ord, k)) % 1000 for k in keys], np.int64))
        try:
            with _open_w(uri, t) as A:
                A[np.array(x, np.int64), second] = data
        except Exception:  # noqa: BLE001 (no None in a var attribute; 0.4: no empty string)
            data["ns"] = np.array(["-" if not v else v for v in ns], dtype=object)
            data["s"] = np.array(["-" if not v else v for v in s], dtype=object)
            with _open_w(uri, t) as A:
                A[np.array(x, np.int64), second] = data

    write(1, [1, 5, 9, 40], ["a", "bb", "ccc", "d"], ["", "α", "two", "x" * 20],
          [1.5, None, 3.0, -4.0], ["p", None, "", "qq"])
    write(2, [5, 70, 71], ["zz", "k", "kk"], ["m", "nn", "é€"], [None, 0.5, 7.25],
          [None, "r", "s"])
    _consolidate(uri, "fragments")
    write(3, [0, 99, 50], ["first", "last", "mid"], ["start", "end", "m"], [0.0, None, 2.0],
          ["t", None, "u"])
    for t, kv in ((5, {"name": "sparse", "pi": 3.14159}), (6, {"count": 7, "floats": (0.5, -1.25)})):
        with _open_w(uri, t) as A:
            if not hasattr(A, "meta"):
                return
            for k, v in kv.items():
                A.meta[k] = v
    _consolidate(uri, "array_meta")


def old_filters(uri: str) -> None:
    """Sparse 1-D with the other filters of the time: strings under RLE, DOUBLE_DELTA on the
    coordinates, DOUBLE_DELTA + BZIP2, BITSHUFFLE + LZ4, POSITIVE_DELTA; two writes."""
    dom = tiledb.Domain(tiledb.Dim("i", domain=(0, 999), tile=100, dtype=np.uint32))
    attrs = [_attr("rle", str, var=True, filters=tiledb.FilterList([tiledb.RleFilter()])),
             _attr("dd", np.int64, filters=tiledb.FilterList([tiledb.DoubleDeltaFilter(),
                                                             tiledb.Bzip2Filter()])),
             _attr("bits", np.uint16, filters=tiledb.FilterList([tiledb.BitShuffleFilter(),
                                                                tiledb.LZ4Filter()])),
             _attr("pd", np.int32, filters=tiledb.FilterList([tiledb.PositiveDeltaFilter()]))]
    tiledb.SparseArray.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=attrs, sparse=True, capacity=4,
        coords_filters=tiledb.FilterList([tiledb.DoubleDeltaFilter()])))

    def write(t, idx):
        i = np.array(idx, np.uint32)
        with _open_w(uri, t) as A:
            A[i] = {"rle": np.array(["aa" if v % 3 else "bbb" for v in idx], dtype=object),
                    "dd": (i.astype(np.int64) * 37) - 1000, "bits": (i * 3).astype(np.uint16),
                    "pd": (i.astype(np.int32) ** 2) - 50}
    write(1, [3, 4, 10, 11, 200, 201, 202, 500, 999])
    write(2, [4, 5, 6, 300, 301])


OLD_ARRAYS = {"dense": old_dense, "sparse": old_sparse, "filters": old_filters}


def _fragment_names(uri: str) -> list:
    out = [d for d in os.listdir(uri) if d.startswith("__") and d not in SPECIAL_DIRS and
           os.path.isdir(os.path.join(uri, d))]
    fd = os.path.join(uri, "__fragments")
    if os.path.isdir(fd):
        out += os.listdir(fd)
    return sorted(out)


def _alone(uri: str, keep: str, tmp: str) -> str:
    """A scratch copy of the array holding only fragment `keep` (and its commit marker)."""
    dst = os.path.join(tmp, "alone")
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(uri, dst)
    for d, dirs, files in os.walk(dst, topdown=False):
        rel = os.path.relpath(d, dst)
        for f in files:
            stem = f.rsplit(".", 1)[0]
            if (f.endswith((".ok", ".wrt", ".vac", ".con", ".ign")) and stem != keep) or \
                    rel == "__fragment_meta":
                os.remove(os.path.join(d, f))
        if rel in (".", "__fragments"):
            for sub in dirs:
                if sub not in SPECIAL_DIRS and sub != keep:
                    shutil.rmtree(os.path.join(d, sub))
    return dst


def uncovered_cells(ned, dims, tile_order, cell_order) -> list:
    """Stored-order positions of the cells of a dense fragment's tiles that its write did not
    cover (`dims`: [(domain low, tile extent)]). What is stored there depends on the version
    (libtiledb < 2.3: the datatype's empty value, e.g. NaN or INT_MIN, whatever the fill;
    later: zeros), so the tests compare the covered cells only."""
    exts, tiles, region = [], [], []
    for (lo, hi), (dlo, ext) in zip(ned, dims):
        t0, t1 = (lo - dlo) // ext, (hi - dlo) // ext
        exts.append(ext)
        tiles.append(t1 - t0 + 1)
        region.append(slice(lo - dlo - t0 * ext, hi - dlo - t0 * ext + 1))
    covered = np.zeros(tuple(t * e for t, e in zip(tiles, exts)), dtype=bool)
    covered[tuple(region)] = True
    order = {"row-major": 0, "col-major": 1}
    perm = global_perm(tiles, exts, order.get(tile_order, 0), order.get(cell_order, 0))
    return [int(i) for i in np.flatnonzero(~covered.reshape(-1)[perm])]


def _old_values(uri: str, name: str, sparse: bool) -> list:
    """Every cell of `name` in a one-fragment array, in stored order (the cells of a dense
    fragment's tiles it did not write: as the reader gives them, see `uncovered_cells`)."""
    with tiledb.open(uri) as A:
        if sparse:
            try:
                r = A.query(order="G")[:]
            except TypeError:
                r = A[:]
            v = r[name] if name in r else r["coords"][name]
            return _cells(v)
        dom = A.schema.domain
        ned = A.nonempty_domain()
        exts, tiles, sel = [], [], []
        for d in range(dom.ndim):
            dim = dom.dim(d)
            lo, hi = int(ned[d][0]), int(ned[d][1])
            dlo, ext = int(dim.domain[0]), int(dim.tile)
            t0, t1 = (lo - dlo) // ext, (hi - dlo) // ext
            exts.append(ext)
            tiles.append(t1 - t0 + 1)
            # the whole tiles: the cells the fragment did not write read as the fill value,
            # which is what these versions store there
            sel.append(slice(dlo + t0 * ext, dlo + (t1 + 1) * ext))
        full = A.query(attrs=[name])[tuple(sel)][name]
        order = {"row-major": 0, "col-major": 1}
        perm = global_perm(tiles, exts, order.get(A.schema.tile_order, 0),
                           order.get(A.schema.cell_order, 0))
        return _cells(full.reshape(-1)[perm])


def old_fragment_facts(uri: str, fields, sparse: bool) -> list:
    """Per fragment: name and values in stored order (from a one-fragment copy); timestamps,
    version and cell count from FragmentInfoList where this tiledb-py has it (else None:
    `--crosscheck` fills them from tiledb-py 0.36 and says so)."""
    info = {}
    if hasattr(tiledb, "FragmentInfoList"):
        for f in tiledb.FragmentInfoList(uri):
            info[os.path.basename(f.uri.rstrip("/"))] = f
    tmp = tempfile.mkdtemp(prefix="tdbalone-")
    out = []
    for name in _fragment_names(uri):
        one = _alone(uri, name, tmp)
        with tiledb.open(one) as A:
            ned = A.nonempty_domain()
        entry = {"name": name, "timestamp": None, "version": None, "sparse": sparse,
                 "cell_num": None, "nonempty_domain": _py([list(r) for r in ned]),
                 "values": {fld: _old_values(one, fld, sparse) for fld in fields}}
        if not sparse:
            with tiledb.open(one) as A:
                dom = A.schema.domain
                dims = [(int(dom.dim(d).domain[0]), int(dom.dim(d).tile)) for d in range(dom.ndim)]
                entry["uncovered"] = uncovered_cells([(int(lo), int(hi)) for lo, hi in ned], dims,
                                                     A.schema.tile_order, A.schema.cell_order)
        f = info.get(name)
        if f is not None:
            entry.update(timestamp=list(f.timestamp_range), version=int(f.version),
                         cell_num=int(f.cell_num))
        out.append(entry)
    shutil.rmtree(tmp)
    return out


def written_format_version(uri: str) -> int:
    """The format version this libtiledb writes: the first u32 of the schema's generic tile
    header (for versions without FragmentInfoList)."""
    for path in (os.path.join(uri, "__array_schema.tdb"),):
        if os.path.exists(path):
            with open(path, "rb") as f:
                return int(np.frombuffer(f.read(4), "<u4")[0])
    sd = os.path.join(uri, "__schema")
    with open(os.path.join(sd, sorted(os.listdir(sd))[0]), "rb") as f:
        return int(np.frombuffer(f.read(4), "<u4")[0])


ARRAYS = {"dense_filters": dense_filters, "sparse_var": sparse_var,
          "sparse_deletes": sparse_deletes}


def crosscheck(root: str) -> None:
    """With a newer tiledb-py (the tests' 0.36): re-read every fixture under `root` and
    compare with the values its writing version read. Where they differ, the newer read is
    kept (the bytes on disk are right: old tiledb-py versions read some cells wrongly, e.g.
    0.19-0.29 invert the validity of nullable attributes) and `oracle_notes` says so."""
    for d in sorted(os.listdir(root)):
        if not os.path.isdir(os.path.join(root, d)) or d.startswith("__"):
            continue
        for fn in sorted(os.listdir(os.path.join(root, d))):
            if not fn.endswith(".expected.json"):
                continue
            path = os.path.join(root, d, fn)
            with open(path) as f:
                exp = json.load(f)
            uri = os.path.join(root, d, fn[:-len(".expected.json")])
            notes = exp.get("oracle_notes", [])
            now = schema_facts(uri)
            for old_a, new_a in zip(exp["schema"]["attrs"], now["attrs"]):
                if old_a["filters"] != new_a["filters"]:
                    notes.append(f"schema attribute {old_a['name']} filters: tiledb-py "
                                 f"{exp['tiledb_py']} lists {old_a['filters']}, tiledb-py {PY} "
                                 f"{new_a['filters']}; {PY}'s are kept")
                    old_a["filters"] = new_a["filters"]
            if exp["schema"].get("validity_filters") is None:
                with tiledb.open(uri) as A:
                    exp["schema"]["validity_filters"] = _filters(A.schema.validity_filters)
                notes.append(f"schema validity_filters: read by tiledb-py {PY} (tiledb-py "
                             f"{exp['tiledb_py']} cannot list them)")
            for fi in tiledb.FragmentInfoList(uri):
                name = os.path.basename(fi.uri.rstrip("/"))
                fr = next(x for x in exp["fragments"] if x["name"] == name)
                # fragment facts a tiledb-py without FragmentInfoList could not give
                facts = {"timestamp": list(fi.timestamp_range), "version": int(fi.version),
                         "cell_num": int(fi.cell_num)}
                for k, v in facts.items():
                    if fr.get(k) is None:
                        fr[k] = v
                        notes.append(f"{name} {k}: read by tiledb-py {PY} (tiledb-py "
                                     f"{exp['tiledb_py']} has no fragment info)")
                    elif fr[k] != v:
                        notes.append(f"{name} {k}: tiledb-py {exp['tiledb_py']} says "
                                     f"{fr[k]}, tiledb-py {PY} {v}; {PY}'s is kept")
                        fr[k] = v
                for fld, old in fr["values"].items():
                    cells, covered = fragment_cells(uri, fi, fld)
                    new = _cells(cells)
                    if covered is not None and len(new) == len(old):
                        # cells a dense fragment did not write: fragment_cells cannot read
                        # them (it gives zeros); the writer's whole-tile read is kept
                        new = [n if c else o for n, o, c in zip(new, old, covered)]
                    if new != old:
                        fr.setdefault("values_read_by_writer", {})[fld] = old
                        fr["values"][fld] = new
                        notes.append(f"{name} {fld}: tiledb-py {exp['tiledb_py']} reads other "
                                     f"values than tiledb-py {PY}; {PY}'s are kept")
            if notes:
                exp["oracle_notes"] = notes
                with open(path, "w") as f:
                    json.dump(exp, f, indent=1, ensure_ascii=False)
                    f.write("\n")
                print(path, len(notes), "difference(s)")


def main(root: str = HERE) -> None:
    tmp = tempfile.mkdtemp(prefix="tdbfix-")
    results = {}
    for name, fn in (OLD_ARRAYS if OLD else ARRAYS).items():
        uri = os.path.join(tmp, name)
        fn(uri)
        schema = schema_facts(uri)
        fields = [a["name"] for a in schema["attrs"]]
        if schema["sparse"]:
            fields += [d["name"] for d in schema["dims"]]
        if OLD:
            frags = old_fragment_facts(uri, fields, schema["sparse"])
            for f in frags:
                if f["version"] is None:
                    f["version"] = written_format_version(uri)
        else:
            frags = fragment_facts(uri, fields)
        results[name] = {"tiledb_py": PY, "libtiledb": ".".join(map(str, LIB)),
                         "schema": schema, "fragments": frags, "metadata": metadata_facts(uri)}
    fv = max(f["version"] for r in results.values() for f in r["fragments"])
    out = os.path.join(root, f"{fv}_{'.'.join(map(str, LIB))}")
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for name, r in results.items():
        r["format_version"] = fv
        shutil.copytree(os.path.join(tmp, name), os.path.join(out, name))
        with open(os.path.join(out, name + ".expected.json"), "w") as f:
            json.dump(r, f, indent=1, ensure_ascii=False)
            f.write("\n")
    shutil.rmtree(tmp)
    print(out)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--crosscheck"]:
        crosscheck(sys.argv[2] if len(sys.argv) > 2 else HERE)
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else HERE)

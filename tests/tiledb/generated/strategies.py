"""Hypothesis strategies for the TileDB differential generator: each example is a tiledb-py
script (text) that creates one array and writes its history, so that a failing example
prints the exact lines that wrote it (issue 30).

A script runs with `uri` bound to an empty directory and nothing else: it imports tiledb and
numpy itself. Values are literals drawn here (from a drawn seed), never computed in the
script, so the script alone reproduces the bytes. What the differential check needs besides
the array (the key, the write timestamps, the deletes' timestamps) rides beside the text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np
from hypothesis import strategies as st

KEY = "0123456789abcdeF0123456789abcdeF"   # AES-256: 32 bytes

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]
DATES = ["datetime64[D]", "datetime64[s]", "datetime64[ms]", "datetime64[ns]"]


@dataclass
class GenScript:
    """One generated array: the script and what the checks need to know about it."""
    text: str
    key: Optional[str] = None
    write_times: List[int] = field(default_factory=list)
    delete_times: List[int] = field(default_factory=list)
    last_time: int = 0

    def _repr_pretty_(self, p, cycle) -> None:   # hypothesis prints a failing one so
        p.text(repr(self))

    def __repr__(self) -> str:   # what hypothesis prints for a failing example
        return "GenScript(key=%r, write_times=%r, delete_times=%r, text='''\n%s''')" % (
            self.key, self.write_times, self.delete_times, self.text)


@dataclass
class _Dim:
    name: str
    dtype: str
    lo: object            # domain bounds (python values; strings: None)
    hi: object
    tile: object          # extent (None: string dims)


@dataclass
class _Attr:
    name: str
    dtype: str            # numpy dtype text, "str" (utf-8), "ascii", "blob"
    var: bool = False
    nullable: bool = False
    filters: str = "[]"
    enum: Optional[str] = None
    enum_size: int = 0


def _lit(a: np.ndarray) -> str:
    """A numpy literal that rebuilds `a` exactly (floats by repr, datetimes by counts)."""
    if a.dtype.kind == "M":
        return f"np.array({a.astype('int64').tolist()!r}, dtype='int64').astype('{a.dtype}')"
    if a.dtype.kind == "f":
        return f"np.array({[float(x) for x in a]!r}, dtype='{a.dtype}')"
    return f"np.array({a.tolist()!r}, dtype='{a.dtype}')"


# ---- values ---------------------------------------------------------------------------------
def _fixed_values(rng: np.random.Generator, dtype: str, n: int) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pick = rng.integers(0, 4)
        if pick == 0:     # small values (runs for RLE, dictionaries)
            return rng.integers(max(info.min, -3), min(info.max, 4), n, endpoint=True).astype(dt)
        if pick == 1:     # the extremes too (sums that overflow, min/max at the bounds)
            v = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
            v[: max(1, n // 4)] = info.max
            return v
        return rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
    if dt.kind == "f":
        v = rng.normal(0, 1e3, n).astype(dt)
        if rng.integers(0, 3) == 0 and n:
            v[rng.integers(0, n)] = -0.0
        return v
    if dt.kind == "M":
        return rng.integers(-10**6, 10**6, n).astype("int64").astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    raise ValueError(dtype)


def _var_values(rng: np.random.Generator, a: _Attr, n: int) -> str:
    """A literal of `n` var-sized cells: strings (some empty, repeated), bytes or lists; a
    null is None (tiledb-py's way for var cells: a masked object array crashes its dense
    write)."""
    nulls = rng.integers(0, 4, n) == 0 if a.nullable else np.zeros(n, bool)
    words = ["", "a", "bb", "ccc", "héllo", "zz" * 5, "x"]
    if a.dtype == "ascii":
        words = ["", "a", "bb", "ccc", "dddd", "e" * 9]
    if a.dtype in ("str", "ascii"):
        cells = [None if z else words[int(i)]
                 for i, z in zip(rng.integers(0, len(words), n), nulls)]
        return f"np.array({cells!r}, dtype=object)"
    if a.dtype == "blob":
        cells = [None if z else bytes(rng.integers(0, 256, int(rng.integers(0, 5)))
                                      .astype(np.uint8)) for z in nulls]
        return f"np.array({cells!r}, dtype=object)"
    # a var-sized list of numbers per cell
    parts = ["None" if z else _lit(_fixed_values(rng, a.dtype, int(rng.integers(1, 4))))
             for z in nulls]
    return "np.array([" + ", ".join(parts) + "] + [None], dtype=object)[:-1]"


def _attr_values(rng: np.random.Generator, a: _Attr, n: int) -> str:
    if a.enum is not None:
        v = rng.integers(0, a.enum_size, n).astype(a.dtype)
        text = _lit(v)
    elif a.var:
        text = _var_values(rng, a, n)
    else:
        text = _lit(_fixed_values(rng, a.dtype, n))
    if a.nullable and not a.var:
        valid = rng.integers(0, 4, n) > 0
        text = f"np.ma.masked_array({text}, mask={(~valid).tolist()!r})"
    return text


# ---- filters -------------------------------------------------------------------------------
_COMPRESSORS = ["tiledb.GzipFilter({lvl})", "tiledb.ZstdFilter({lvl})", "tiledb.LZ4Filter()",
                "tiledb.Bzip2Filter()"]
_ANY = ["tiledb.NoOpFilter()", "tiledb.ChecksumMD5Filter()", "tiledb.ChecksumSHA256Filter()",
        "tiledb.ByteShuffleFilter()", "tiledb.BitShuffleFilter()"] + _COMPRESSORS


def _filter_choices(kind: str) -> List[str]:
    """Filters libtiledb accepts for cells of this kind (first in the pipeline)."""
    if kind in ("str", "ascii"):   # deltas too: libtiledb takes the bytes as uint8
        return _ANY + ["tiledb.RleFilter()", "tiledb.DictionaryFilter()",
                       "tiledb.DeltaFilter()", "tiledb.DoubleDeltaFilter()"]
    if kind in ("int", "date"):
        return _ANY + ["tiledb.DoubleDeltaFilter()", "tiledb.DeltaFilter()",
                       "tiledb.BitWidthReductionFilter()",
                       "tiledb.RleFilter()", "tiledb.XORFilter()"]
    if kind == "float":
        return _ANY + ["tiledb.XORFilter()", "tiledb.FloatScaleFilter(0.5, 1.0, 4)"]
    return _ANY


@st.composite
def pipelines(draw, kind: str, max_len: int = 3) -> str:
    n = draw(st.integers(0, max_len))
    out = []
    for i in range(n):
        # the filters that need typed cells go first: after a compressor the cells are bytes
        choices = _filter_choices(kind) if i == 0 else _ANY
        f = draw(st.sampled_from(choices))
        out.append(f.format(lvl=draw(st.integers(-1, 9))))
    return "[" + ", ".join(out) + "]"


def _kind(dtype: str) -> str:
    if dtype in ("str", "ascii"):
        return dtype
    if dtype == "blob":
        return "blob"
    k = np.dtype(dtype).kind
    return {"i": "int", "u": "int", "f": "float", "M": "date"}.get(k, "other")


# ---- schema --------------------------------------------------------------------------------
@st.composite
def _dims(draw, sparse: bool) -> List[_Dim]:
    nd = draw(st.integers(1, 3 if sparse else 2))
    if sparse:
        kinds = draw(st.lists(st.sampled_from(INTS + FLOATS + DATES[:2] + ["ascii"]),
                              min_size=nd, max_size=nd))
    else:    # dense: one integer or datetime type for every dimension
        kinds = [draw(st.sampled_from(INTS + DATES[:2]))] * nd
    dims = []
    for i, dt in enumerate(kinds):
        name = f"d{i}"
        if dt == "ascii":
            dims.append(_Dim(name, dt, None, None, None))
            continue
        if np.dtype(dt).kind == "f":
            lo = draw(st.sampled_from([-1.0, 0.0, -100.0]))
            span = draw(st.sampled_from([2.0, 10.0, 1000.0]))
            tile = span / draw(st.sampled_from([1, 2, 3, 4]))
            dims.append(_Dim(name, dt, lo, lo + span, tile))
            continue
        # tiledb-py's FragmentInfoList fails on negative datetime domains (OverflowError)
        signed = np.dtype(dt).kind == "i"
        n = draw(st.integers(2, 12 if nd > 1 else 24))
        # dense: tiledb-py reads a negative slice bound as counted from the end (numpy)
        lo = draw(st.sampled_from([0, 1, -5] if signed and sparse else [0, 1, 7]))
        if np.dtype(dt).kind == "i" and np.dtype(dt).itemsize == 1 and lo + n > 127:
            lo = 0
        tile = draw(st.integers(1, n))            # divides the domain or not
        dims.append(_Dim(name, dt, lo, lo + n - 1, tile))
    return dims


def _dim_line(d: _Dim) -> str:
    if d.dtype == "ascii":
        return f"tiledb.Dim(name={d.name!r}, domain=(None, None), tile=None, dtype='ascii')"
    if np.dtype(d.dtype).kind == "M":
        lo, hi = (f"np.datetime64({v}, '{np.datetime_data(d.dtype)[0]}')" for v in (d.lo, d.hi))
        return (f"tiledb.Dim(name={d.name!r}, domain=({lo}, {hi}), "
                f"tile=np.timedelta64({d.tile}, '{np.datetime_data(d.dtype)[0]}'), "
                f"dtype='{d.dtype}')")
    return f"tiledb.Dim(name={d.name!r}, domain=({d.lo!r}, {d.hi!r}), tile={d.tile!r}, " \
           f"dtype='{d.dtype}')"


ATTR_TYPES = INTS + FLOATS + ["bool", "datetime64[ms]", "datetime64[ns]", "str", "ascii",
                              "blob", "int32-list", "float64-list"]


@st.composite
def _attrs(draw, n_min: int, sparse: bool, var_nulls: bool) -> Tuple[List[_Attr], List[str]]:
    n = draw(st.integers(n_min, 3))
    attrs, enums = [], []
    for i in range(n):
        # tiledb-py 0.36 crashes (SIGSEGV) on some dense writes of blobs and var-sized
        # number lists (object arrays of bytes / arrays): sparse only
        # and a dense write of three attributes, one of them a var ascii, crashes it
        # (SIGSEGV; two attributes write fine): no ascii beside two others in dense arrays
        t = draw(st.sampled_from([t for t in ATTR_TYPES
                                  if sparse or not (t.endswith("-list") or t == "blob" or
                                                    (t == "ascii" and n == 3))]))
        a = _Attr(f"a{i}", t)
        if t.endswith("-list"):
            a.dtype, a.var = t[:-5], True
        elif t in ("str", "ascii", "blob"):
            a.var = True
        if t == "bool":
            a.filters = draw(pipelines("other", 2))
        else:
            a.filters = draw(pipelines(_kind(a.dtype) if not a.var or a.dtype in
                                       ("str", "ascii") else "other"))
        # nullable var cells: utf-8 only (tiledb-py 0.36 fails to convert None among bytes,
        # ascii or numeric lists, and crashes on masked object arrays)
        a.nullable = draw(st.booleans()) and t != "bool" and \
            (not a.var or (var_nulls and t == "str"))
        if t in ("uint8", "int16", "uint32") and not a.nullable and draw(st.integers(0, 4)) == 0:
            a.enum, a.enum_size = f"e{i}", draw(st.integers(1, 5))
            if draw(st.booleans()):
                vals = [f"v{j}" * (j % 3) + "x" for j in range(a.enum_size)]
                enums.append(f"tiledb.Enumeration({a.enum!r}, False, {vals!r})")
            else:
                vals = [10 * j - 7 for j in range(a.enum_size)]
                enums.append(f"tiledb.Enumeration({a.enum!r}, True, "
                             f"np.array({vals!r}, dtype='int16'))")
        attrs.append(a)
    return attrs, enums


def _attr_line(a: _Attr) -> str:
    dtype = {"str": "str", "ascii": "'ascii'", "blob": "bytes"}.get(a.dtype, f"'{a.dtype}'")
    extra = ", var=True" if a.var else ""
    extra += ", nullable=True" if a.nullable else ""
    extra += f", enum_label={a.enum!r}" if a.enum else ""
    return f"tiledb.Attr({a.name!r}, dtype={dtype}{extra}, filters={a.filters})"


# ---- history -------------------------------------------------------------------------------
def _coords(rng: np.random.Generator, d: _Dim, n: int) -> np.ndarray:
    if d.dtype == "ascii":
        words = ["", "a", "ab", "b", "ba", "zz", "k" * 7, "m"]
        return np.array([words[int(i)] for i in rng.integers(1, len(words), n)], dtype=object)
    dt = np.dtype(d.dtype)
    if dt.kind == "f":
        grid = np.linspace(d.lo, d.hi, 9)
        return grid[rng.integers(0, 9, n)].astype(dt)
    v = rng.integers(int(d.lo), int(d.hi), n, endpoint=True)
    return v.astype("int64").astype(dt) if dt.kind == "M" else v.astype(dt)


def _coord_lit(d: _Dim, c: np.ndarray) -> str:
    if d.dtype == "ascii":
        return f"np.array({[x.encode() for x in c]!r}, dtype=object)"
    return _lit(c)


@st.composite
def scripts(draw) -> GenScript:
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    sparse = draw(st.booleans())
    dims = draw(_dims(sparse))
    orders = ["row-major", "col-major"] + (["hilbert"] if sparse else [])
    cell_order = draw(st.sampled_from(orders))
    tile_order = draw(st.sampled_from(["row-major", "col-major"]))
    # tiledb-py cannot write nullable var cells to a dense array of 2+ dimensions
    attrs, enums = draw(_attrs(0 if sparse else 1, sparse, sparse or len(dims) == 1))
    dups = sparse and draw(st.booleans())
    capacity = draw(st.sampled_from([1, 2, 3, 5, 10000])) if sparse else None
    key = KEY if draw(st.integers(0, 9)) == 0 else None
    labels = None    # the label order, when the array has a dimension label
    if (not sparse and len(dims) == 1 and key is None and np.dtype(dims[0].dtype).kind in "iu"
            and draw(st.integers(0, 5)) == 0):
        labels = draw(st.sampled_from(["increasing", "decreasing"]))

    L = ["import numpy as np", "import tiledb", ""]
    if key:
        L.append(f"ctx = tiledb.Ctx({{'sm.encryption_type': 'AES_256_GCM', "
                 f"'sm.encryption_key': {key!r}}})")
    else:
        L.append("ctx = tiledb.Ctx()")
    L.append("dom = tiledb.Domain(" + ", ".join(_dim_line(d) for d in dims) + ", ctx=ctx)")
    L.append("attrs = [" + ",\n         ".join(_attr_line(a) for a in attrs) + "]")
    opts = [f"domain=dom, sparse={sparse}, attrs=attrs, cell_order={cell_order!r}"]
    if cell_order != "hilbert":
        opts.append(f"tile_order={tile_order!r}")
    if sparse:
        opts.append(f"capacity={capacity}, allows_duplicates={dups}")
    if enums:
        opts.append("enums=[" + ", ".join(enums) + "]")
    if draw(st.integers(0, 3)) == 0:
        opts.append(f"offsets_filters={draw(pipelines('int', 2))}")
    if draw(st.integers(0, 3)) == 0:
        opts.append(f"validity_filters={draw(pipelines('int', 2))}")
    if sparse and draw(st.integers(0, 3)) == 0:
        opts.append(f"coords_filters={draw(pipelines('other', 2))}")
    if labels:
        lab_type = draw(st.sampled_from(["int64", "float64", "uint16"]))
        L.append(f"lab = dom.dim(0).create_label_schema({labels!r}, np.{lab_type})")
        opts.append("dim_labels={0: {'lab': lab}}")
    L.append("schema = tiledb.ArraySchema(" + ", ".join(opts) + ", ctx=ctx)")
    L.append("tiledb.Array.create(uri, schema, ctx=ctx)")

    out = GenScript("", key)
    t = 0
    nwrites = draw(st.integers(1, 4))
    evolved = False
    for w in range(nwrites):
        t += draw(st.integers(1, 3))
        if sparse and attrs and w and draw(st.integers(0, 4)) == 0:
            # a delete: on a numeric fixed attribute (not nullable) or a numeric dimension
            cands = [a.name for a in attrs if not a.var and not a.nullable and a.enum is None
                     and _kind(a.dtype) in ("int", "float")]
            cands += [d.name for d in dims if d.dtype != "ascii" and
                      np.dtype(d.dtype).kind in "iuf"]
            if cands:
                name = draw(st.sampled_from(cands))
                cond = f"{name} < 0" if draw(st.booleans()) else f"{name} > 2"
                L.append(f"with tiledb.open(uri, 'd', timestamp={t}, ctx=ctx) as A:")
                L.append(f"    A.query(cond={cond!r}).submit()")
                out.delete_times.append(t)
                t += 1
        ascii_dense = not sparse and any(a.dtype == "ascii" for a in attrs)   # (the SIGSEGV)
        if not evolved and w and key is None and not labels and not ascii_dense and \
                draw(st.integers(0, 5)) == 0:
            # schema evolution at its own timestamp: the writes after it use the new schema
            evolved = True
            new = _Attr(f"n{w}", draw(st.sampled_from(["int32", "float64", "str"])))
            new.var = new.dtype == "str"
            drop = [a for a in attrs if a.enum is None]
            L.append("se = tiledb.ArraySchemaEvolution(ctx)")
            L.append(f"se.add_attribute({_attr_line(new)})")
            if drop and len(attrs) > 1 and draw(st.booleans()):
                gone = draw(st.sampled_from(drop))
                attrs = [a for a in attrs if a is not gone]
                L.append(f"se.drop_attribute({gone.name!r})")
            L.append(f"se.timestamp({t})")
            L.append("se.array_evolve(uri)")
            attrs = attrs + [new]
            t += 1
        L.extend(_write(draw, rng, dims, attrs, sparse, dups, t, labels))
        out.write_times.append(t)
        if draw(st.integers(0, 4)) == 0:
            L.append(f"with tiledb.open(uri, 'w', timestamp={t}, ctx=ctx) as A:")
            L.append(f"    A.meta['k{w}'] = {int(rng.integers(0, 100))}")
    out.last_time = max(out.write_times + out.delete_times + [0])

    ncons = draw(st.integers(0, 2))
    for _ in range(ncons):
        mode = draw(st.sampled_from(["fragments", "fragment_meta", "commits", "array_meta"]))
        # a memory budget of 64 MiB: the default (10 GiB) makes each consolidation spend
        # seconds on its buffers; the bytes written are the same
        cfg = {"sm.consolidation.mode": mode, "sm.mem.total_budget": str(64 << 20)}
        if mode == "fragments" and draw(st.booleans()) and out.write_times:
            a = draw(st.sampled_from(out.write_times))
            b = draw(st.sampled_from([x for x in out.write_times if x >= a]))
            cfg["sm.consolidation.timestamp_start"] = str(a)
            cfg["sm.consolidation.timestamp_end"] = str(b)
        if key:
            cfg.update({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key})
        L.append(f"tiledb.consolidate(uri, config=tiledb.Config({cfg!r}), ctx=ctx)")
        if draw(st.booleans()):
            vmode = mode if mode != "fragment_meta" else "fragment_meta"
            vcfg = {"sm.vacuum.mode": vmode}
            if key:
                vcfg.update({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key})
            L.append(f"tiledb.vacuum(uri, config=tiledb.Config({vcfg!r}), ctx=ctx)")
    out.text = "\n".join(L) + "\n"
    return out


def _write(draw, rng, dims, attrs, sparse, dups, t, labels) -> List[str]:
    L = [f"with tiledb.open(uri, 'w', timestamp={t}, ctx=ctx) as A:"]
    if sparse:
        n = draw(st.integers(1, 12))
        coords = [_coords(rng, d, n) for d in dims]
        if not dups:    # unique coordinates within one write
            keys, keep = set(), []
            for i in range(n):
                k = tuple(str(c[i]) for c in coords)
                if k not in keys:
                    keys.add(k)
                    keep.append(i)
            coords = [c[keep] for c in coords]
            n = len(keep)
        # unordered: tiledb-py's public API writes sparse cells unordered only (libtiledb
        # sorts them); global-order fragments come from consolidation
        data = "{" + ", ".join(f"{a.name!r}: {_attr_values(rng, a, n)}" for a in attrs) + "}"
        idx = ", ".join(_coord_lit(d, c) for d, c in zip(dims, coords))
        L.append(f"    A[{idx}] = {data}" if attrs else f"    A[{idx}] = {{}}")
        return L
    # dense: one box (part of the domain, overlapping earlier writes or not); with a
    # dimension label, the whole domain with its labels (a label must be monotonic)
    sl, shape = [], []
    for d in dims:
        size = int(d.hi) - int(d.lo) + 1
        a = 0 if labels else draw(st.integers(0, size - 1))
        b = size - 1 if labels else draw(st.integers(a, size - 1))
        shape.append(b - a + 1)
        if np.dtype(d.dtype).kind == "M":
            unit = np.datetime_data(d.dtype)[0]
            # tiledb-py: a datetime slice includes its stop
            sl.append(f"np.datetime64({int(d.lo) + a}, '{unit}'):"
                      f"np.datetime64({int(d.lo) + b}, '{unit}')")
        else:
            sl.append(f"{int(d.lo) + a}:{int(d.lo) + b + 1}")
    n = int(np.prod(shape))
    fields = [f"{a.name!r}: ({_attr_values(rng, a, n)}).reshape({tuple(shape)!r})"
              for a in attrs]
    if labels:
        lab = np.cumsum(rng.integers(1, 5, n))
        fields.append(f"'lab': {_lit(lab if labels == 'increasing' else lab[::-1])}"
                      f".astype(A.schema.dim_label('lab').dtype)")
    L.append(f"    A[{', '.join(sl)}] = {{{', '.join(fields)}}}")
    return L

"""The zero-false-alarm sweep's arrays: run with any tiledb-py (0.4.1 / libtiledb 1.5 to
0.36.1 / 2.30; Python 3.7 venvs included) to write, under DEST, one dense array per (filter
stack, data set) on attributes, offsets and validity, and sparse arrays with the stacks on
the coordinates: 1 cell, 33-byte inputs, values at INT64 / UINT64 / INT32 min and max, NaN,
inf, -0.0, denormals, NaT, empty strings, all-null tiles. Prints what the writer refused.

    python3 tests/data/writer_rules/sweep/fresh.py /tmp/sweep/036
    QUICK=1 /work/venvs/tdb-0.4.1/bin/python tests/data/writer_rules/sweep/fresh.py /tmp/sweep/15
    .venv/bin/python tests/data/writer_rules/sweep/verify_all.py /tmp/sweep/036 tests/data

`verify_all.py` prints every error and warning (infos counted). Nothing is committed from a
run: the arrays that showed a false alarm became fixtures and tests (test_writer_rules_sweep)."""

import os
import sys

import numpy as np
import tiledb

DEST = sys.argv[1]
os.makedirs(DEST, exist_ok=True)
I64 = np.iinfo(np.int64)
F = tiledb


def has(name):
    return hasattr(F, name)


YT = np.int32 if hasattr(tiledb, "DictionaryFilter") else np.int64  # old: one dim dtype
QUICK = os.environ.get("QUICK") == "1"


class _Mk:
    def __getattr__(self, name):
        cls = getattr(tiledb, name, None)

        def make(*a, **kw):
            if cls is None:
                return None
            try:
                return cls(*a, **kw)
            except Exception:
                return None

        return make


def ok(stacks):
    return [s for s in stacks if all(f is not None for f in s)]


def stacks_numeric(kind):
    F = _Mk()
    s = [
        [F.NoOpFilter()],
        [F.GzipFilter()],
        [F.ZstdFilter()],
        [F.LZ4Filter()],
        [F.RleFilter()],
        [F.Bzip2Filter()],
        [F.DoubleDeltaFilter()],
        [F.BitWidthReductionFilter()],
        [F.BitWidthReductionFilter(window=8)],
        [F.BitShuffleFilter()],
        [F.ByteShuffleFilter()],
        [F.PositiveDeltaFilter()],
        [F.ChecksumMD5Filter()],
        [F.ChecksumSHA256Filter()],
        [F.DoubleDeltaFilter(), F.BitWidthReductionFilter(), F.ZstdFilter()],
        [F.BitWidthReductionFilter(), F.ZstdFilter(), F.ChecksumSHA256Filter()],
        [F.ByteShuffleFilter(), F.LZ4Filter()],
        [F.BitShuffleFilter(), F.ZstdFilter()],
        [F.DoubleDeltaFilter(), F.ByteShuffleFilter(), F.GzipFilter()],
    ]
    if has("XORFilter"):
        s.append([F.XORFilter(), F.ZstdFilter()])
    if has("DeltaFilter"):
        s += [[F.DeltaFilter()], [F.DeltaFilter(), F.BitWidthReductionFilter(), F.ZstdFilter()]]
    if kind == "f" and has("FloatScaleFilter"):
        s.append([F.FloatScaleFilter(0.5, 1.0, 8), F.ZstdFilter()])
        s.append([F.FloatScaleFilter(1.0, 0.0, 4)])
    return ok(s)


def stacks_strings():
    F = _Mk()
    s = [[F.ZstdFilter()], [F.RleFilter()], [F.GzipFilter()], [F.NoOpFilter()]]
    if has("DictionaryFilter"):
        s.append([F.DictionaryFilter()])
    s.append([F.RleFilter(), F.ZstdFilter()])
    return ok(s)


def offsets_stacks():
    F = _Mk()
    return ok(
        [
            [F.DoubleDeltaFilter(), F.BitWidthReductionFilter(), F.ZstdFilter()],
            [F.BitWidthReductionFilter(window=8)],
            [F.PositiveDeltaFilter()],
            [F.DoubleDeltaFilter()],
            [F.ByteShuffleFilter(), F.LZ4Filter()],
            [F.ChecksumMD5Filter()],
            [F.RleFilter()],
        ]
        + ([[F.DeltaFilter(), F.ZstdFilter()]] if has("DeltaFilter") else [])
    )


DATA = {
    "i64_one": np.array([5], np.int64),
    "i64_extremes": np.array([I64.min, I64.max, 0, -1, 1, I64.min + 1, I64.max - 1], np.int64),
    "i64_minmax": np.array([I64.min, I64.max] * 20, np.int64),
    "i64_nearmax": (I64.max - np.arange(50)).astype(np.int64),
    "i64_nearmin": (I64.min + np.arange(50)).astype(np.int64),
    "i64_walk": np.cumsum(np.random.default_rng(1).integers(-50, 50, 5000)).astype(np.int64),
    "i64_big": np.random.default_rng(2).integers(I64.min, I64.max, 40000, dtype=np.int64),
    "u64_extremes": np.array([0, 2**64 - 1, 2**63, 2**63 - 1, 1], np.uint64),
    "i32_extremes": np.array([-(2**31), 2**31 - 1, 0, 7] * 5, np.int32),
    "u32_extremes": np.array([0, 2**32 - 1, 5], np.uint32),
    "i16_extremes": np.array([-(2**15), 2**15 - 1, 3], np.int16),
    "u16_one": np.array([65535], np.uint16),
    "i8_extremes": np.array([-128, 127, 0, 1], np.int8),
    "u8_ramp": np.arange(33, dtype=np.uint8),
    "f64_special": np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, 1.7976931348623157e308, -1.5], np.float64),
    "f32_special": np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4e38, 2.5], np.float32),
    "f64_one": np.array([np.nan], np.float64),
    "dt_ns": None
    if QUICK
    else np.array(
        [np.datetime64("NaT"), np.datetime64("2020-01-01T00:00:00", "ns"), np.datetime64(-(2**63) + 1, "ns")],
        "datetime64[ns]",
    ),
}
STR = {
    "s_empty_mix": np.array(["", "", "a", "", "xyz" * 100, ""], dtype=object),
    "s_all_empty": np.array([""] * 10, dtype=object),
    "s_one_empty": np.array([""], dtype=object),
    "s_unicode": np.array(["é", "日本語", "", "ab", "ab", "ab"], dtype=object),
    "s_three": np.array(["a", "bb", "ccc"], dtype=object),
    "s_many": np.array(["x" * (i % 41) for i in range(3000)], dtype=object),
}

made, refused = [], []


def dense(name, data, attr_kw, schema_kw=None, tile=None):
    uri = os.path.join(DEST, name)
    if os.path.exists(uri):
        made.append(uri)
        return
    n = len(data)
    try:
        dom = F.Domain(F.Dim("d", domain=(0, n - 1), tile=tile or n, dtype=np.uint64))
        F.Array.create(
            uri, F.ArraySchema(domain=dom, attrs=[F.Attr("a", **attr_kw)], sparse=False, **(schema_kw or {}))
        )
        with F.open(uri, mode="w") as A:
            A[:] = data
        made.append(uri)
    except Exception as e:
        refused.append((name, str(e)[:120]))


if QUICK:
    DATA = {
        k: v
        for k, v in DATA.items()
        if k in ("i64_one", "i64_extremes", "i64_minmax", "i64_walk", "u64_extremes", "i32_extremes", "f64_special")
    }
    STR = {k: v for k, v in STR.items() if k in ("s_empty_mix", "s_three", "s_many")}
DATA = {k: v for k, v in DATA.items() if v is not None}
for dname, data in DATA.items():
    kind = "f" if data.dtype.kind == "f" else "i"
    for si, st in enumerate(stacks_numeric(kind)):
        dense(f"n_{dname}_{si}", data, dict(dtype=data.dtype, filters=F.FilterList(st)))
# two tiles, second partial write coverage: dense padding
for dname in ("i64_extremes", "i64_minmax", "f64_special"):
    data = DATA[dname]
    dense(
        f"n2tile_{dname}",
        data,
        dict(
            dtype=data.dtype,
            filters=F.FilterList(
                [F.BitWidthReductionFilter(), F.ZstdFilter()] if data.dtype.kind != "f" else [F.ZstdFilter()]
            ),
        ),
        tile=max(1, len(data) // 2 + 1),
    )
for dname, data in STR.items():
    for si, st in enumerate(stacks_strings()):
        dense(f"s_{dname}_{si}", data, dict(dtype=str, var=True, filters=F.FilterList(st)))
    for oi, ost in enumerate(offsets_stacks()):
        dense(
            f"o_{dname}_{oi}",
            data,
            dict(dtype=str, var=True, filters=F.FilterList([F.ZstdFilter()])),
            dict(offsets_filters=F.FilterList(ost)),
        )
# nullable: an all-null tile, mixed, single null
_M = _Mk()
for vi, vst in enumerate(
    ok(
        [
            [_M.RleFilter()],
            [_M.ZstdFilter()],
            [_M.BitWidthReductionFilter()],
            [_M.NoOpFilter()],
            [_M.GzipFilter(), _M.ChecksumMD5Filter()],
        ]
    )
):
    for nm, data, mask in (
        ("allnull", np.zeros(20, np.int64), np.zeros(20, bool)),
        ("mixed", np.arange(20, dtype=np.int64), np.arange(20) % 3 != 0),
        ("one", np.array([I64.max], np.int64), np.array([False])),
    ):
        uri = os.path.join(DEST, f"v_{nm}_{vi}")
        if os.path.exists(uri):
            made.append(uri)
            continue
        try:
            n = len(data)
            dom = F.Domain(F.Dim("d", domain=(0, n - 1), tile=max(1, n // 2), dtype=np.uint64))
            F.Array.create(
                uri,
                F.ArraySchema(
                    domain=dom,
                    attrs=[
                        F.Attr(
                            "a",
                            dtype=np.int64,
                            nullable=True,
                            filters=F.FilterList([F.BitWidthReductionFilter(), F.ZstdFilter()]),
                        )
                    ],
                    validity_filters=F.FilterList(vst),
                ),
            )
            with F.open(uri, mode="w") as A:
                A[:] = np.ma.array(data, mask=~mask)
            made.append(uri)
        except Exception as e:
            refused.append((uri, str(e)[:120]))
        uri = os.path.join(DEST, f"vs_{nm}_{vi}")
        if os.path.exists(uri):
            made.append(uri)
            continue
        try:
            n = len(data)
            dom = F.Domain(F.Dim("d", domain=(0, n - 1), tile=max(1, n // 2), dtype=np.uint64))
            F.Array.create(
                uri,
                F.ArraySchema(
                    domain=dom,
                    attrs=[F.Attr("a", dtype=str, var=True, nullable=True, filters=F.FilterList([F.ZstdFilter()]))],
                    validity_filters=F.FilterList(vst),
                    offsets_filters=F.FilterList([F.DoubleDeltaFilter(), F.BitWidthReductionFilter(), F.ZstdFilter()]),
                ),
            )
            strs = np.array(["" if i % 2 else "v%d" % i for i in range(n)], dtype=object)
            with F.open(uri, mode="w") as A:
                A[:] = np.ma.array(strs, mask=~mask)
            made.append(uri)
        except Exception as e:
            refused.append((uri, str(e)[:120]))
# coordinates: sparse, every numeric stack on the dims
cst = stacks_numeric("i")
for ci, st in enumerate(cst):
    for cname, xs in (
        ("ext", np.array([-(2**62), 2**62, 0, -1, 1, 2**62 - 1], np.int64)),
        ("one", np.array([7], np.int64)),
        ("walk", np.unique(np.cumsum(np.random.default_rng(3).integers(1, 1000, 3000))).astype(np.int64)),
    ):
        uri = os.path.join(DEST, f"c_{cname}_{ci}")
        if os.path.exists(uri):
            made.append(uri)
            continue
        try:
            fl = F.FilterList(st)
            try:
                dom = F.Domain(
                    F.Dim("x", domain=(-(2**62), 2**62), tile=2**20, dtype=np.int64, filters=fl),
                    F.Dim("y", domain=(-1000, 1000), tile=100, dtype=YT, filters=fl),
                )
                kw = {}
            except TypeError:  # before per-dimension filters: the coords filters
                dom = F.Domain(
                    F.Dim("x", domain=(-(2**62), 2**62), tile=2**20, dtype=np.int64),
                    F.Dim("y", domain=(-1000, 1000), tile=100, dtype=YT),
                )
                kw = {"coords_filters": fl}
            F.Array.create(
                uri,
                F.ArraySchema(
                    domain=dom,
                    sparse=True,
                    capacity=1000,
                    attrs=[F.Attr("a", dtype=np.float64, filters=F.FilterList([F.ZstdFilter()]))],
                    **kw,
                ),
            )
            ys = (np.arange(len(xs)) % 2001 - 1000).astype(YT)
            with F.open(uri, mode="w") as A:
                A[xs, ys] = {"a": np.linspace(0, 1, len(xs))}
            made.append(uri)
        except Exception as e:
            refused.append((uri, str(e)[:120]))
# float and string dims
for ci, st in enumerate(ok([[_M.ZstdFilter()], [_M.ByteShuffleFilter(), _M.LZ4Filter()], [_M.ChecksumSHA256Filter()]])):
    uri = os.path.join(DEST, f"cf_{ci}")
    if not os.path.exists(uri):
        try:
            dom = F.Domain(
                F.Dim("x", domain=(-1e300, 1e300), tile=1e299, dtype=np.float64, filters=F.FilterList(st)),
                F.Dim("s", domain=(None, None), tile=None, dtype="ascii", filters=F.FilterList(st)),
            )
            F.Array.create(uri, F.ArraySchema(domain=dom, sparse=True, capacity=4, attrs=[F.Attr("a", dtype=np.int64)]))
            with F.open(uri, mode="w") as A:
                A[
                    np.array([-1e300, 0.0, -0.0 + 1e-300, 5e-324, 1e300]),
                    np.array([b"", b"a", b"", b"zz", b"b"], dtype=object),
                ] = {"a": np.arange(5)}
            made.append(uri)
        except Exception as e:
            refused.append((uri, str(e)[:120]))
    else:
        made.append(uri)
print("made", len(made), "refused", len(refused))
for r in refused:
    print("REFUSED", r)

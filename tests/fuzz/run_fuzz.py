"""On-demand fuzz campaign over real fixtures (not part of the default test run).

    python -m tests.fuzz.run_fuzz --count 100000 [--arrays dense_1d,encrypted,...]
    python -m tests.fuzz.run_fuzz --surfaces --count 20000 [--only shard,sparse_upd]

Prints, per fixture and in total: mutations run, crashes, hangs, peak resident memory."""
import argparse
import os
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

from tests.support import tiledb_arrays  # noqa: E402
from tests.support.mutations import run_campaign  # noqa: E402

DEFAULT = ["dense_1d", "filter_stacks_array", "filters", "sparse_var_nullable_pipelines",
           "encrypted", "string_filters", "var_nullable", "deletes", "enumerations", "metadata",
           "consolidated_fragment_meta", "dim_labels", "current_domain"]


def extra_fixtures():
    """Committed fixtures under tests/data: SCDL archives, Zarr arrays, and TileDB arrays
    written by older libtiledb versions (tiledb_versions/<version>/<array>)."""
    out = []
    data = os.path.join(os.path.dirname(HERE), "data")
    vdir = os.path.join(data, "tiledb_versions")
    if os.path.isdir(vdir):
        for ver in sorted(os.listdir(vdir)):
            vpath = os.path.join(vdir, ver)
            if os.path.isdir(vpath):
                out += [os.path.join(vpath, a) for a in sorted(os.listdir(vpath))
                        if os.path.isdir(os.path.join(vpath, a, "__schema"))]
    for sub in ("scdl", "zarr"):
        d = os.path.join(data, sub)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                p = os.path.join(d, name)
                if os.path.isdir(p):
                    out.append(p)
    zdir = os.path.join(data, "zarr", "v2_2.18.7")
    if os.path.isdir(zdir):
        out += [os.path.join(zdir, a) for a in sorted(os.listdir(zdir))
                if os.path.isdir(os.path.join(zdir, a))][:12]
    return out


def zarr_fixtures(work: str):
    """A few struct-dtype Zarr arrays written by zarr (v2 blosc + shuffle, v3 zstd nested)."""
    try:
        import numpy as np
        import zarr
        from numcodecs import Blosc
    except ImportError:
        return []
    flat = np.dtype([("name", "U6"), ("age", "<i4"), ("w", "<f4")])
    rec = np.array([("ann", 1, 1.5), ("bob", 2, -0.0), ("cy", 3, np.nan), ("dee", 4, 4.0),
                    ("eve", 5, 5.5)], dtype=flat)
    out = []
    p2 = os.path.join(work, "zarr_v2_blosc")
    a = zarr.create_array(p2, shape=(5,), chunks=(2,), dtype=flat, zarr_format=2,
                          compressors=Blosc(cname="lz4", shuffle=Blosc.SHUFFLE),
                          fill_value=np.zeros(1, dtype=flat)[0])
    a[:] = rec
    out.append(p2)
    nested = np.dtype([("id", "<u2"), ("pos", [("x", "<f4"), ("y", "<f4")]), ("ok", "?")])
    p3 = os.path.join(work, "zarr_v3_nested")
    b = zarr.create_array(p3, shape=(7,), chunks=(3,), dtype=nested, zarr_format=3,
                          fill_value=np.zeros(1, dtype=nested)[0])
    b[:] = np.array([(i, (i / 2, -i), i % 2 == 0) for i in range(7)], dtype=nested)
    out.append(p3)
    return out


# costly targets get this share of an ordinary target's count: a whole SOMA experiment is ~5 s a
# mutant, an anndata store ~0.7 s (copying ~100 files)
HEAVY = {"pbmc68k": 0.05, "store": 0.3}   # "store": the anndata stores (~100 files)


def surfaces_main(args) -> int:
    from tests.fuzz.surfaces import run_surface_campaign, surface_fixtures

    data = os.path.join(os.path.dirname(HERE), "data")
    targets = [p for p in surface_fixtures()
               if not args.only or any(w in p for w in args.only.split(","))]
    work = tempfile.mkdtemp(prefix="arrayscope-fuzz-")
    per = max(1, args.count // len(targets))
    total = crashes = hangs = 0
    peak = 0
    t0 = time.time()
    for path in targets:
        name = os.path.relpath(path, data)
        n = max(1, int(per * HEAVY.get(os.path.basename(path), 1.0)))
        t = time.time()
        runs, c, h, p, slow = run_surface_campaign(path, work, n, seed=args.seed,
                                                   budget=args.budget)
        total += runs
        crashes += len(c)
        hangs += len(h)
        peak = max(peak, p)
        print(f"{name}: {runs} mutations, {len(c)} crashes, {len(h)} hangs, slowest "
              f"{slow:.1f} s, {time.time() - t:.0f} s, peak RSS so far {p / 2**20:.0f} MiB",
              flush=True)
    print(f"TOTAL: {total} mutations, {crashes} crashes, {hangs} hangs, "
          f"peak RSS {peak / 2**20:.0f} MiB, {time.time() - t0:.0f} s")
    return 1 if crashes or hangs else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100000, help="total mutations")
    ap.add_argument("--arrays", default=",".join(DEFAULT))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=float, default=30.0, help="seconds before a run is a hang")
    ap.add_argument("--extras", choices=("all", "none", "only"), default="all",
                    help="the SCDL and Zarr fixtures: with the TileDB arrays, not at all, or alone")
    ap.add_argument("--surfaces", action="store_true",
                    help="this session's fixtures (sharded/crc Zarr, anndata, .upd commits, the "
                         "SOMA group, writer rules) through open, verify, values, health, "
                         "summary and every chunk view")
    ap.add_argument("--only", default="", help="with --surfaces: comma-separated name filter")
    args = ap.parse_args()
    if args.surfaces:
        return surfaces_main(args)
    work = tempfile.mkdtemp(prefix="arrayscope-fuzz-")
    targets = [] if args.extras == "only" else [
        (n, tiledb_arrays.build(n, work), tiledb_arrays.KEY.encode() if n == "encrypted" else None)
        for n in args.arrays.split(",") if n]
    if args.extras != "none":
        targets += [(os.path.basename(p), p, None) for p in extra_fixtures()]
        targets += [(os.path.basename(p), p, None) for p in zarr_fixtures(work)]
    per = max(1, args.count // len(targets))
    total = crashes = hangs = 0
    peak = 0
    t0 = time.time()
    for name, path, key in targets:
        runs, c, h, p = run_campaign(path, work, per, seed=args.seed, key=key, budget=args.budget)
        total += runs
        crashes += len(c)
        hangs += len(h)
        peak = max(peak, p)
        print(f"{name}: {runs} mutations, {len(c)} crashes, {len(h)} hangs", flush=True)
    print(f"TOTAL: {total} mutations, {crashes} crashes, {hangs} hangs, "
          f"peak RSS {peak / 2**20:.0f} MiB, {time.time() - t0:.0f} s")
    return 1 if crashes or hangs else 0


if __name__ == "__main__":
    raise SystemExit(main())

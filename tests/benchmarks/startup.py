"""What a command costs as a whole process on a small dataset, beside `python -c "import
numpy"` (issue 26: a command on the bundled samples should cost little more than numpy).

Run on demand (not collected by pytest):

    python tests/benchmarks/startup.py [ROUNDS]

Each command of `COMMANDS` and the numpy baseline run `ROUNDS` times (default 7), the
rounds interleaved so every side sees the same load; printed per command: the median
process CPU seconds (user + system of the child, `os.wait4`), the median wall, and both
beside numpy's. On a busy machine the CPU column is the one to compare.

    python tests/benchmarks/startup.py --kernels DIR [STACK ...]

    python tests/benchmarks/startup.py --ab A B [ROUNDS]

    python tests/benchmarks/startup.py --sidebyside DIR [--cells N] [--rounds R] [STACK ...]

The same, for two checkouts side by side (A and B: folders holding an `arrayscope/` tree,
e.g. `git archive` of two commits), their rounds interleaved: CPU seconds of each and B/A.

The first run after install: for each stack of `stacks.py` (8 Mi cells written by tiledb-py
into DIR once), `arrayscope values --raw` with an empty kernel cache (the cache follows
`compiled.user_cache_dir()`, so the child gets a fresh XDG_CACHE_HOME; numba's own
NUMBA_CACHE_DIR is removed from its environment) and then again with that cache warm:
first-run minus warm CPU seconds is the compile the user waits for.

Side by side, what users run (issue 26): for each stack of `SIDE_STACKS` (64 Mi cells by
default, written by tiledb-py into DIR once), the whole process `arrayscope values --raw OUT`
beside a python process reading the same field with tiledb-py (`stacks.read_theirs`), a
warm-up of each (page cache, kernel cache) and then `--rounds` (default 3) interleaved
rounds; printed per stack: median wall and CPU seconds (user + system, every thread), peak
resident memory (`ru_maxrss`) of both, the wall and CPU ratios, the cores. The warm-up's
output is compared with tiledb-py's cells first (a differing output stops the run)."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "resources" / "samples"
DENSE = str(SAMPLES / "tiledb_dense")
SPARSE = str(SAMPLES / "tiledb_sparse")
ZARR = str(SAMPLES / "zarr_v2_blosc")
CLI = [sys.executable, "-m", "arrayscope.explorer.cli"]

BASELINE = ("import numpy", [sys.executable, "-c", "import numpy"])
COMMANDS: List[Tuple[str, List[str]]] = [
    ("values dense", ["values", DENSE, "--field", "counts", "--json"]),
    ("dump dense", ["dump", DENSE]),
    ("verify dense", ["verify", DENSE]),
    ("fragments dense", ["fragments", DENSE]),
    ("stats dense", ["stats", DENSE]),
    ("values sparse", ["values", SPARSE, "--field", "score", "--json"]),
    ("verify sparse", ["verify", SPARSE]),
    ("values zarr", ["values", ZARR, "--field", "weight", "--json"]),
    ("verify zarr", ["verify", ZARR]),
]

# every fixed-size stack of stacks.py whose decode has a compiled route
DEFAULT_STACKS = ["int64_byteshuffle_zstd", "int64_doubledelta_zstd", "int64_delta_zstd",
                  "int32_bwr_lz4", "int64_bitshuffle_zstd", "float64_gzip", "int64_bzip2",
                  "float32_floatscale_xor_zstd", "int64_aes256gcm", "int32_nullable"]


def run_once(argv: Sequence[str], env: Optional[Dict[str, str]] = None
             ) -> Tuple[float, float, str]:
    """(CPU seconds, wall seconds, stderr) of one whole child process."""
    cpu, wall, _rss, err = run_measured(argv, env)
    return cpu, wall, err


def run_measured(argv: Sequence[str], env: Optional[Dict[str, str]] = None
                 ) -> Tuple[float, float, int, str]:
    """(CPU seconds, wall seconds, peak resident bytes, stderr) of one whole child."""
    t0 = time.perf_counter()
    p = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env, cwd=str(REPO))
    _pid, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if p.stderr:
        p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):   # 1: findings (verify), not a failure
        raise SystemExit(f"{argv}: exit {p.returncode}\n{err[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss * 1024, err


def _bytecode_env(prefix: str) -> Dict[str, str]:
    """The environment with compiled bytecode kept (in `prefix`), as an installed program
    runs: a PYTHONDONTWRITEBYTECODE left set would compile every module on every run."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = prefix
    return env


def startup(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as prefix:
        _startup(rounds, _bytecode_env(prefix))


def _startup(rounds: int, env: Dict[str, str]) -> None:
    cases = [BASELINE] + [(name, CLI + argv) for name, argv in COMMANDS]
    for _name, argv in cases:   # a first round writes the bytecode
        run_once(argv, env)
    cpu: Dict[str, List[float]] = {n: [] for n, _ in cases}
    wall: Dict[str, List[float]] = {n: [] for n, _ in cases}
    for _ in range(rounds):
        for name, argv in cases:
            c, w, _err = run_once(argv, env)
            cpu[name].append(c)
            wall[name].append(w)
    base_c = statistics.median(cpu[BASELINE[0]])
    base_w = statistics.median(wall[BASELINE[0]])
    print(f"{os.cpu_count()} cores, {rounds} rounds, medians; Python {sys.version.split()[0]}")
    print(f"{'command':18} {'CPU s':>7} {'CPU-numpy':>10} {'xnumpy':>7} {'wall s':>7} "
          f"{'xnumpy':>7}")
    for name, _argv in cases:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        print(f"{name:18} {c:7.3f} {c - base_c:10.3f} {c / base_c:7.2f} {w:7.3f} "
              f"{w / base_w:7.2f}")


def kernels(dest: str, names: Sequence[str], cells: int = 8 << 20) -> None:
    sys.path.insert(0, str(REPO))
    from tests.benchmarks import stacks

    names = list(names) or DEFAULT_STACKS
    prefix = tempfile.mkdtemp()
    env0 = {k: v for k, v in _bytecode_env(prefix).items()
            if k not in ("NUMBA_CACHE_DIR", "ARRAYSCOPE_NO_JIT", "XDG_CACHE_HOME")}
    # bytecode of numba and of the kernel modules written first, outside the measurements
    # (an installed numba has it; the first cold run would otherwise compile it)
    subprocess.run([sys.executable, "-c", "import numba, arrayscope.formats.accel.nativekernels"],
                   env=dict(env0, ARRAYSCOPE_NO_JIT=""), check=True, cwd=str(REPO))
    print(f"{os.cpu_count()} cores; values --raw of {cells} cells, kernel cache cold, then warm")
    print(f"{'stack':28} {'cold CPU s':>10} {'warm CPU s':>10} {'cold-warm':>10}  note")
    for name in names:
        if name not in stacks.STACKS:
            print(f"{name:28} (no such stack; known: {', '.join(sorted(stacks.STACKS))})")
            continue
        uri, field = stacks.build(name, dest, cells)
        key = ["--key-file", _key_file(dest)] if "aes" in name else []
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
            env = dict(env0, XDG_CACHE_HOME=cache)
            argv = CLI + ["values", uri, "--field", field, "--raw",
                          os.path.join(out, "o.bin")] + key
            cold, _w, err = run_once(argv, env)
            warm = [run_once(argv, env)[0] for _ in range(3)]
        note = "compile announced" if "compiling" in err else "no compile note"
        w = statistics.median(warm)
        print(f"{name:28} {cold:10.2f} {w:10.2f} {cold - w:10.2f}  {note}")


def _key_file(dest: str) -> str:
    from tests.benchmarks import stacks

    path = os.path.join(dest, "key.bin")
    Path(path).write_bytes(stacks.KEY.encode())
    return path


def ab(a: str, b: str, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as prefix:
        env = _bytecode_env(prefix)
        sides = {"A": dict(env, PYTHONPATH=a), "B": dict(env, PYTHONPATH=b)}
        cases = [BASELINE] + [(name, CLI + argv) for name, argv in COMMANDS]
        cpu: Dict[Tuple[str, str], List[float]] = {}
        for _ in range(rounds + 1):   # the first round writes the bytecode: not counted
            for name, argv in cases:
                for side, side_env in sides.items():
                    c, _w, _err = run_once(argv, side_env)
                    cpu.setdefault((side, name), []).append(c)
    print(f"{os.cpu_count()} cores, {rounds} rounds, median CPU s; A={a} B={b}")
    print(f"{'command':18} {'A':>7} {'B':>7} {'B/A':>6} {'A-numpy':>8} {'B-numpy':>8}")
    med = {k: statistics.median(v[1:]) for k, v in cpu.items()}
    for name, _argv in cases:
        x, y = med[("A", name)], med[("B", name)]
        print(f"{name:18} {x:7.3f} {y:7.3f} {y / x:6.2f} {x - med[('A', BASELINE[0])]:8.3f} "
              f"{y - med[('B', BASELINE[0])]:8.3f}")


# the stacks of the whole-process side by side: one per kind of stage (stacks.py)
SIDE_STACKS = ["int64_byteshuffle_zstd", "int64_doubledelta_zstd", "int64_aes256gcm",
               "int32_nullable", "float64_gzip", "var_strings_rle", "var_strings_dictionary",
               "var_strings_zstd", "sparse_coords", "int64_bitshuffle_zstd",
               "int64_delta_zstd", "int32_bwr_lz4", "float32_floatscale_xor_zstd"]

# the python process tiledb-py's side runs: the field, read whole (`stacks.read_theirs`)
THEIRS = ("import sys; sys.path.insert(0, {repo!r}); "
          "from tests.benchmarks.stacks import read_theirs; read_theirs({uri!r}, {field!r})")


def sidebyside(dest: str, names: Sequence[str], cells: int, rounds: int) -> None:
    """(This process imports neither numpy nor tiledb and holds nothing large: a child's
    `ru_maxrss` starts from what the process that forked it held.)"""
    env = _bytecode_env(tempfile.mkdtemp())
    env.pop("ARRAYSCOPE_NO_JIT", None)
    print(f"{os.cpu_count()} cores (affinity {len(os.sched_getaffinity(0))}), {cells} cells, "
          f"{rounds} rounds, medians; load {os.getloadavg()[0]:.1f}")
    print(f"{'stack':28} {'ours s':>7} {'CPU s':>6} {'MiB':>5} | {'tdb s':>6} {'CPU s':>6} "
          f"{'MiB':>5} | {'wall x':>6} {'CPU x':>6}")
    for name in names or SIDE_STACKS:
        uri, field = _helper("build", dest, name, str(cells)).split("\t")
        key = ["--key-file", _helper("key", dest)] if "aes" in name else []
        with tempfile.TemporaryDirectory(dir=dest) as out_dir:
            out = os.path.join(out_dir, "o.raw")
            ours = CLI + ["values", uri, "--field", field, "--raw", out] + key
            theirs = [sys.executable, "-c", THEIRS.format(repo=str(REPO), uri=uri, field=field)]
            run_measured(ours, env)
            _helper("check", out, uri, field)
            run_measured(theirs, env)
            got: Dict[str, List[Tuple[float, float, int, str]]] = {"ours": [], "theirs": []}
            for k in range(rounds):   # alternating: neither side always runs second
                for side, argv in ((("ours", ours), ("theirs", theirs)) if k % 2 == 0
                                   else (("theirs", theirs), ("ours", ours))):
                    got[side].append(run_measured(argv, env))
        (oc, ow, orss), (tc, tw, trss) = (
            tuple(statistics.median(r[i] for r in got[s]) for i in range(3))
            for s in ("ours", "theirs"))
        print(f"{name:28} {ow:7.2f} {oc:6.2f} {orss / 2**20:5.0f} | {tw:6.2f} {tc:6.2f} "
              f"{trss / 2**20:5.0f} | {ow / tw:6.2f} {oc / tc:6.2f}", flush=True)


def _helper(*args: str) -> str:
    """Run `startup.py --helper ARGS` in a child (what needs numpy and tiledb); its output."""
    return subprocess.run([sys.executable, __file__, "--helper", *args], check=True,
                          capture_output=True, text=True, cwd=str(REPO)).stdout.strip()


def _helper_main(args: List[str]) -> None:
    sys.path.insert(0, str(REPO))
    from tests.benchmarks import sidebyside as side
    from tests.benchmarks import stacks

    if args[0] == "key":   # DEST -> the key file written there
        print(_key_file(args[1]))
    elif args[0] == "build":   # DEST STACK CELLS -> URI \t FIELD
        print("\t".join(stacks.build(args[2], args[1], int(args[3]))))
    elif args[0] == "check":   # OUT URI FIELD: the bytes `values --raw` wrote, as tiledb-py reads
        with open(args[1], "rb") as fh:
            mine = fh.read()
        if mine != side.theirs_bytes(stacks.read_theirs(args[2], args[3])):
            raise SystemExit(f"{args[2]}: `values --raw` wrote other bytes than tiledb-py reads")


def main(argv: List[str]) -> None:
    if argv[:1] == ["--helper"]:
        _helper_main(argv[1:])
    elif argv[:1] == ["--sidebyside"]:
        rest = list(argv[2:])
        opts = {"--cells": 64 << 20, "--rounds": 3}
        for flag in opts:
            if flag in rest:
                i = rest.index(flag)
                opts[flag] = int(rest[i + 1])
                del rest[i:i + 2]
        sidebyside(argv[1], rest, opts["--cells"], opts["--rounds"])
    elif argv[:1] == ["--kernels"]:
        kernels(argv[1], argv[2:])
    elif argv[:1] == ["--ab"]:
        ab(argv[1], argv[2], int(argv[3]) if len(argv) > 3 else 7)
    else:
        startup(int(argv[0]) if argv else 7)


if __name__ == "__main__":
    main(sys.argv[1:])

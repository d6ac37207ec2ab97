"""`arrayscope verify --json` of every dataset, by this checkout and by another, compared byte
for byte (on demand, not a test: a change to verify's speed must not change one finding).

    python tests/benchmarks/verify_json_ab.py BASE [FOLDER...]

BASE is a folder holding the other code as installed (`BASE/arrayscope/formats`, ...: say
`git archive main formats explorer resources` unpacked, with a symlink for each of the three
under BASE/arrayscope). The datasets: every dataset under tests/data (a folder holding a
TileDB schema, group or Zarr marker, or an SCDL / Zarr fixture folder) and every folder
given. Each side runs in its own process (PYTHONPATH picks the code), one JSON file per
dataset; the counts are printed and the datasets whose output differs named. Exit 1 when
any differs."""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
MARKERS = {"__schema", "__array_schema.tdb", "__tiledb_group.tdb", "__group", "zarr.json",
           ".zgroup", ".zarray"}


def datasets(root: str = DATA) -> List[str]:
    out = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root).split(os.sep)
        if d != root and ((set(dirs) | set(files)) & MARKERS or
                          (len(rel) == 2 and rel[0] in ("scdl", "zarr"))):
            out.append(os.path.abspath(d))
            dirs[:] = []
    return sorted(out)


def dump(paths: List[str], dest: str) -> None:
    """This process's `verify --json` of each path into `dest` (run by each side)."""
    from arrayscope.explorer.cli import main

    for p in paths:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            try:
                code = main(["verify", "--json", p])
            except SystemExit as e:
                code = e.code
        with open(os.path.join(dest, p.replace(os.sep, "_")), "w") as fh:
            fh.write(f"exit={code}\n{buf.getvalue()}")


def main(base: str, extra: List[str]) -> int:
    paths = datasets() + [os.path.abspath(os.path.join(f, p)) for f in extra
                          for p in sorted(os.listdir(f)) if os.path.isdir(os.path.join(f, p))]
    with tempfile.TemporaryDirectory() as tmp:
        sides = {}
        # ours: this process's PYTHONPATH (a worktree run through a shim sets it; empty
        # gives the installed package)
        for side, pythonpath in (("base", base), ("ours", os.environ.get("PYTHONPATH", ""))):
            dest = sides[side] = os.path.join(tmp, side)
            os.makedirs(dest)
            env = dict(os.environ, PYTHONPATH=pythonpath)
            subprocess.run([sys.executable, __file__, "--dump", dest] + paths, env=env,
                           check=True)
        differ = [p for p in paths if open(os.path.join(sides["base"], p.replace(os.sep, "_"))
                                           ).read() !=
                  open(os.path.join(sides["ours"], p.replace(os.sep, "_"))).read()]
        with_findings = sum('"findings": []' not in open(os.path.join(
            sides["ours"], p.replace(os.sep, "_"))).read() for p in paths)
    print(f"{len(paths)} datasets compared ({with_findings} with findings): "
          f"{len(differ)} differ")
    for p in differ:
        print(f"  differs: {p}")
    return 1 if differ else 0


if __name__ == "__main__":
    if sys.argv[1] == "--dump":
        dump(sys.argv[3:], sys.argv[2])
    else:
        sys.exit(main(sys.argv[1], sys.argv[2:]))

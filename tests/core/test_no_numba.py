"""numba is optional and loaded only when it pays (formats/core/compiled.py, issue 26):

- importing the library sets nothing in the process (no environment variable) and imports
  no numba; the filter registry never walks the modules that import it;
- a command on a small dataset (`values`, `dump`, `verify`, `fragments`, `stats` on a
  1 000-cell tiledb-py array and a small zarr store) never imports numba nor scipy;
- with numba's import blocked, or with `ARRAYSCOPE_NO_JIT=1`, values and verify give what
  tiledb-py reads and the same findings, on the numpy paths, and numba is never imported.

Each case runs in a fresh interpreter: what a process imported cannot be undone."""
from __future__ import annotations

import ast
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tiledb
import zarr

import arrayscope.formats.filters as filters_pkg
from arrayscope.formats import filters

REPO = Path(__file__).resolve().parents[2]

# installed first in the child: any import of numba (or what only numba pulls in) fails
BLOCK = """
import sys
class _NoNumba:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numba", "llvmlite"):
            raise ImportError(f"{name} blocked (tests/core/test_no_numba.py)")
        return None
sys.meta_path.insert(0, _NoNumba())
"""

# after the child's work: what it imported
REPORT = """
import json as _json
print("IMPORTED=" + _json.dumps(sorted(m for m in ("numba", "scipy", "llvmlite")
                                       if m in sys.modules)))
"""


def _child(code: str, block: bool = False, **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "ARRAYSCOPE_NO_JIT")}
    env.update(env_extra)
    script = (BLOCK if block else "import sys\n") + code + REPORT
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, cwd=str(REPO), timeout=600)


def _imported(r: subprocess.CompletedProcess) -> list:
    assert r.returncode == 0, r.stderr[-3000:]
    line = [x for x in r.stdout.splitlines() if x.startswith("IMPORTED=")][-1]
    return json.loads(line[len("IMPORTED="):])


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A 1 000-cell tiledb-py array (BYTESHUFFLE + ZSTD, two fragments) and a zarr store."""
    root = tmp_path_factory.mktemp("small")
    tdb, zs = str(root / "tdb"), str(root / "zs")
    dom = tiledb.Domain(tiledb.Dim(name="d", domain=(0, 999), tile=100, dtype=np.int64))
    fl = tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()])
    tiledb.Array.create(tdb, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr(name="a", dtype=np.float64, filters=fl)]))
    with tiledb.open(tdb, "w") as A:
        A[:] = np.arange(1000.0)
    with tiledb.open(tdb, "w") as A:
        A[0:10] = -np.arange(10.0)
    z = zarr.create_array(zs, shape=(1000,), chunks=(100,), dtype="f8")
    z[:] = np.arange(1000.0)
    return tdb, zs


def test_importing_the_library_sets_nothing_and_loads_no_numba():
    r = _child("import os\n"
               "env = dict(os.environ)\n"
               "import arrayscope.formats, arrayscope.formats.tiledb, arrayscope.formats.zarr\n"
               "from arrayscope.formats import filters\n"
               "filters.get(0)\n"            # the whole filter registry loaded
               "from arrayscope.explorer import cli\n"
               "assert dict(os.environ) == env, set(os.environ.items()) ^ set(env.items())\n")
    assert _imported(r) == []


def test_no_filter_module_imports_numba_at_its_top():
    """The filter registry imports a filter's module on first use (`filters.MODULE_OF`):
    none of the package's modules may import numba at its top (the compiled accelerators
    live in formats/accel/, reached only through `compiled.py`'s decision), or decoding a
    small tile would load numba, and without numba a filter would not load."""
    top = set()
    for m in pkgutil.iter_modules(filters_pkg.__path__):
        tree = ast.parse((Path(filters_pkg.__path__[0]) / f"{m.name}.py").read_text())
        for node in tree.body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n.split(".")[0] in ("numba", "llvmlite") for n in names):
                top.add(m.name)
    assert top == set()
    assert set(filters.MODULE_OF.values()) <= {m.name for m in pkgutil.iter_modules(
        filters_pkg.__path__)}


def _commands(tdb: str, zs: str) -> list:
    return [["values", tdb, "--field", "a", "--json"], ["dump", tdb], ["verify", tdb],
            ["fragments", tdb], ["stats", tdb], ["values", zs, "--field", "value", "--json"],
            ["dump", zs], ["verify", zs]]


RUN_COMMANDS = """
import contextlib, io, json
from arrayscope.explorer.cli import main
outs = []
for argv in {argv!r}:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(argv)
    outs.append((argv[0], rc, buf.getvalue()))
print("OUT=" + json.dumps(outs))
"""


def _run_commands(argv: list, **kw) -> tuple:
    r = _child(RUN_COMMANDS.format(argv=argv), **kw)
    imported = _imported(r)
    line = [x for x in r.stdout.splitlines() if x.startswith("OUT=")][-1]
    return json.loads(line[len("OUT="):]), imported, r.stderr


def test_small_dataset_commands_never_import_numba(small):
    outs, imported, stderr = _run_commands(_commands(*small))
    assert [rc for _c, rc, _o in outs] == [0] * len(outs), stderr[-3000:]
    assert imported == []
    assert "compiling" not in stderr   # nothing compiled, nothing announced


def _stable(out: tuple) -> tuple:
    """A command's (name, status, output) without what changes from run to run: verify's
    seconds, the time `fragments` reads at."""
    name, rc, text = out
    keep = [x for x in text.splitlines() if not x.startswith("at T = ")
            and not (name == "verify" and " in " in x)]
    return name, rc, keep


@pytest.mark.parametrize("how", ["blocked", "no_jit"])
def test_without_numba_commands_give_the_same_output(small, how):
    """Every command's output equal with numba loadable, blocked, or switched off; the
    values equal what tiledb-py and zarr read."""
    argv = _commands(*small)
    usual, _imp, _err = _run_commands(argv)
    kw = {"block": True} if how == "blocked" else {"ARRAYSCOPE_NO_JIT": "1"}
    without, imported, stderr = _run_commands(argv, **kw)
    assert imported == [] and "numba" not in stderr
    assert [_stable(o) for o in without] == [_stable(o) for o in usual]
    frags = json.loads(without[0][2])["fragments"]
    # the first write's cells, then the second's (its tile's other cells are fill)
    assert frags[0]["values"] == np.arange(1000.0).tolist()
    assert frags[1]["values"][:10] == (-np.arange(10.0)).tolist()
    with tiledb.open(small[0]) as A:   # the reader's view: the newer cells win
        assert A[:]["a"].tolist() == frags[1]["values"][:10] + frags[0]["values"][10:]
    assert [v for f in json.loads(without[5][2])["fragments"] for v in f["values"]] == \
        zarr.open_array(small[1])[:].tolist()


@pytest.mark.parametrize("how", ["blocked", "no_jit"])
def test_a_job_past_the_threshold_without_numba(tmp_path, how):
    """Past `TUNING.min_bytes` the rule wants the kernels: blocked, numba's absence gives
    the numpy paths; `ARRAYSCOPE_NO_JIT=1` never even tries the import. The cells are
    tiledb-py's, verify finds nothing."""
    from arrayscope.formats.core import compiled

    uri, out = str(tmp_path / "big"), str(tmp_path / "out.bin")
    n = compiled.TUNING.min_bytes // 8 + 4096
    dom = tiledb.Domain(tiledb.Dim(name="d", domain=(0, n - 1), tile=n // 4, dtype=np.int64))
    fl = tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()])
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr(name="a", dtype=np.float64, filters=fl)]))
    with tiledb.open(uri, "w") as A:
        A[:] = np.linspace(-1.0, 1.0, n)
    kw = {"block": True} if how == "blocked" else {"ARRAYSCOPE_NO_JIT": "1"}
    outs, imported, stderr = _run_commands([["values", uri, "--field", "a", "--raw", out],
                                            ["verify", uri]], **kw)
    assert [rc for _c, rc, _o in outs] == [0, 0], stderr[-3000:]
    assert imported == [] and "compiling" not in stderr
    assert "0 errors, 0 warnings" in outs[1][2] + stderr
    with tiledb.open(uri) as A:
        assert Path(out).read_bytes() == A[:]["a"].tobytes()


@pytest.mark.parametrize("stack", ["byteshuffle_zstd", "gzip", "doubledelta_zstd"])
def test_values_past_the_threshold_loads_numba_only_for_bit_level_stages(tmp_path, stack):
    """`values --raw` of a 2 MiB field (past `min_bytes`): [BYTESHUFFLE, ZSTD] and [GZIP]
    are byte-wise (compiled.py rule 4: codecs and numpy at codec speed) and never import
    numba; [DOUBLE_DELTA, ZSTD] is bit-level and loads it. The cells are tiledb-py's."""
    from arrayscope.formats.core import compiled

    uri, out = str(tmp_path / stack), str(tmp_path / "out.bin")
    n = compiled.TUNING.min_bytes // 8 * 2
    filters = {"byteshuffle_zstd": [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()],
               "gzip": [tiledb.GzipFilter()],
               "doubledelta_zstd": [tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter()]}[stack]
    dom = tiledb.Domain(tiledb.Dim(name="d", domain=(0, n - 1), tile=n // 4, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr(name="a", dtype=np.int64, filters=tiledb.FilterList(filters))]))
    with tiledb.open(uri, "w") as A:
        A[:] = np.cumsum(np.arange(n) % 13 - 6)
    outs, imported, stderr = _run_commands([["values", uri, "--field", "a", "--raw", out]])
    assert [rc for _c, rc, _o in outs] == [0], stderr[-3000:]
    assert ("numba" in imported) == (stack == "doubledelta_zstd"), imported
    with tiledb.open(uri) as A:
        assert Path(out).read_bytes() == A[:]["a"].tobytes()


# a representative selection of the values and verify tests: values against tiledb-py on
# the catalogue's filter stacks, verify silent on what real libraries wrote, planted damage
# giving the same findings (the numpy parametrisation: the other asserts numba loads)
SELECTION = ["tests/tiledb/test_tiledb_values.py",
             "tests/core/test_verify_clean.py::test_tiledb_py_catalogue",
             "tests/core/test_verify_clean.py::test_zarr_python_stores",
             "tests/tiledb/test_verify_batch.py::test_planted_damage_same_findings"]


def test_values_and_verify_tests_pass_with_numba_blocked():
    r = _child("import pytest\n"
               f"code = pytest.main(['-x', '-q', '-n', '0', '-p', 'no:cacheprovider', '-k', 'not jit', "
               f"*{SELECTION!r}])\n"
               "assert code == 0, code\n", block=True)
    assert _imported(r) == [], r.stdout[-3000:]
    assert " passed" in r.stdout and " failed" not in r.stdout, r.stdout[-3000:]

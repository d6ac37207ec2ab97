"""A command on a small dataset imports only what that dataset needs (issue 26).

Each command (`values`, `dump`, `verify`, `fragments`, `stats`) runs on the bundled samples
(each under 1 MiB stored) in a fresh interpreter, which reports the modules it imported by
its exit: never numba (nor llvmlite, scipy, dask, fsspec, the test oracles, Qt), never
`numpy.ma` (np.unique imports it); the AES filter and its library (`cryptography`) only
for the encrypted sample; the filter registry imports a filter's module only for a filter
the dataset's schemas name (`filters.MODULE_OF`); finding a C library (`ctypes.util`, a subprocess)
only past the numba decision, so never here.

What each import costs is measured by tests/benchmarks/startup.py, not here (no timings in
tests)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "resources" / "samples"

# never imported by a command on a small dataset
NEVER = ("numba", "llvmlite", "scipy", "dask", "distributed", "fsspec", "tiledb", "zarr",
         "PySide6", "numpy.ma", "ctypes.util")
# reported by the child (beside NEVER): imported only where the dataset needs them
WATCHED = NEVER + ("cryptography", "arrayscope.formats.filters.encryption",
                   "arrayscope.formats.filters.webp", "arrayscope.formats.filters.dictionary",
                   "arrayscope.formats.filters.rle", "arrayscope.formats.accel.native")

CHILD = """
import contextlib, io, json, sys
from arrayscope.explorer.cli import main
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    rc = main({argv!r})
print("RC=" + str(rc))
print("IMPORTED=" + json.dumps(sorted(m for m in {watched!r} if m in sys.modules)))
"""


def _imported(argv: List[str]) -> List[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ARRAYSCOPE_NO_JIT",)}
    r = subprocess.run([sys.executable, "-c", CHILD.format(argv=argv, watched=WATCHED)],
                       env=env, capture_output=True, text=True, cwd=str(REPO), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    rc = int([x for x in lines if x.startswith("RC=")][-1][3:])
    assert rc == 0, (argv, r.stderr[-3000:])
    assert "compiling" not in r.stderr   # nothing compiled, nothing announced
    return json.loads([x for x in lines if x.startswith("IMPORTED=")][-1][len("IMPORTED="):])


def _stored(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


KEY = ["--key-file", str(SAMPLES / "tiledb_encrypted.key")]
# sample -> (the `values` field, extra arguments every command takes)
DATASETS: Dict[str, tuple] = {
    "tiledb_dense": ("counts", []),
    "tiledb_sparse": ("score", []),
    "tiledb_encrypted": ("v", KEY),
    "zarr_v2_blosc": ("weight", []),
    "scdl": ("DATA", []),
}
TILEDB_ONLY = ("fragments", "stats")


def _cases() -> List[tuple]:
    out = []
    for name, (field, extra) in DATASETS.items():
        for command in ("values", "dump", "verify", "fragments", "stats"):
            if command in TILEDB_ONLY and not name.startswith("tiledb"):
                continue
            out.append((name, command))
    return out


@pytest.mark.parametrize("name,command", _cases())
def test_a_command_on_a_sample_imports_only_what_it_needs(name, command):
    path = SAMPLES / name
    assert _stored(path) <= 1 << 20   # a small dataset
    field, extra = DATASETS[name]
    argv = [command, str(path)] + (["--field", field, "--json"] if command == "values" else [])
    imported = set(_imported(argv + extra))
    assert not imported & set(NEVER), imported
    # an encrypted array's schema and fragment metadata are encrypted: every command
    # decrypts; no other sample loads the AES filter
    encrypted = name == "tiledb_encrypted"
    assert ("cryptography" in imported) == encrypted, imported
    assert ("arrayscope.formats.filters.encryption" in imported) == encrypted, imported
    # RLE is in every TileDB schema (the default validity pipeline); no sample uses WEBP or
    # DICTIONARY: their modules stay unimported, and a Zarr or SCDL command loads no
    # TileDB filter
    filters = {m for m in imported if m.startswith("arrayscope.formats.filters.")}
    assert filters <= ({"arrayscope.formats.filters.rle",
                        "arrayscope.formats.filters.encryption"}
                       if name.startswith("tiledb") else set()), imported


def test_the_check_fails_when_numba_is_imported():
    """The child's report sees a module the command's process imported (here numba, as a
    command that took a compiled route would): the assertions above can fail."""
    code = CHILD.format(argv=["dump", str(SAMPLES / "tiledb_dense")], watched=WATCHED)
    r = subprocess.run([sys.executable, "-c", "import numba\n" + code],
                       capture_output=True, text=True, cwd=str(REPO), timeout=300)
    line = [x for x in r.stdout.splitlines() if x.startswith("IMPORTED=")][-1]
    assert "numba" in json.loads(line[len("IMPORTED="):])

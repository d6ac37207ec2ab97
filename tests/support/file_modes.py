"""Checks run as a user whom file modes stop. The tests run as root, and root reads a mode
000 file or lists a mode 000 folder regardless (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH). A
child process started without those two capabilities in its bounding set (capabilities(7))
obeys file modes as anyone else does — and so do the libraries it runs (libtiledb, zarr):
both sides of a test see the same unreadable entry, for real, with no patched `os`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from typing import Iterator, List, Tuple

_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH, _PR_CAPBSET_DROP = 1, 2, 24


def _obey_file_modes() -> None:
    """(preexec_fn) Drop the capabilities that let root read anything."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run(args: List[str]) -> subprocess.CompletedProcess:
    """`args` run in a child that obeys file modes (as root: without the two capabilities)."""
    preexec = _obey_file_modes if os.geteuid() == 0 else None
    return subprocess.run(args, capture_output=True, text=True, preexec_fn=preexec)


def python(code: str, *argv: str) -> subprocess.CompletedProcess:
    """`code` run by this Python in such a child (the library's own read)."""
    return run([sys.executable, "-c", code, *argv])


def verify(path: str) -> Tuple[int, List[dict]]:
    """(exit code, findings) of `arrayscope verify PATH --json` in such a child."""
    done = run([sys.executable, "-m", "arrayscope.explorer.cli", "verify", path, "--json"])
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)["findings"]


@contextmanager
def unreadable(path: str) -> Iterator[str]:
    """`path` (a file or a folder) at mode 000 for the block; its mode given back after, so
    pytest can remove tmp_path."""
    mode = os.stat(path).st_mode & 0o7777
    os.chmod(path, 0)
    try:
        yield path
    finally:
        os.chmod(path, mode)

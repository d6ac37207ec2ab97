"""Nothing from the opened dataset ever runs (issue 31, item 1): a valid Zarr v3 store that
also holds files named like Python modules, opened with the store as the working directory,
by every path that starts a child process: the window's background verify, `verify
--workers 2`, and a Dask cluster. Each planted module writes a canary file when imported."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import zarr

from arrayscope.formats.core import childproc
from tests.support.waits import WAIT_MS

# stdlib and third-party names a child imports at start (multiprocessing's bootstrap imports
# threading, pickle and socket; the worker json and numpy), and the name site imports itself
PLANTED = ("json", "numpy", "sitecustomize", "threading", "pickle", "socket", "runpy", "zarr")


@pytest.fixture()
def booby_trapped(tmp_path):
    """(store, canaries folder): a Zarr v3 array of 3 chunks with PLANTED modules beside it."""
    store = tmp_path / "store"
    z = zarr.create_array(str(store), shape=(12,), chunks=(4,), dtype="int32", zarr_format=3)
    z[:] = np.arange(12, dtype="int32")
    canaries = tmp_path / "canaries"
    canaries.mkdir()
    for name in PLANTED:
        (store / f"{name}.py").write_text(
            f"open({str(canaries / name)!r}, 'w').close()\n"
            "raise ImportError('planted')\n")
    return store, canaries


def _arrayscope() -> str:
    """The installed console script, as a user runs it."""
    return os.path.join(os.path.dirname(sys.executable), "arrayscope")


def test_the_child_command_is_isolated(booby_trapped, monkeypatch):
    store, canaries = booby_trapped
    monkeypatch.chdir(store)
    cmd = childproc.python_module_command("arrayscope.formats.core.childproc")
    assert cmd[1] == "-I"
    assert str(store) not in childproc.import_path() and "" not in childproc.import_path()
    monkeypatch.setenv("PYTHONPATH", str(store))   # a variable the child must not heed
    assert "PYTHONPATH" not in childproc.child_env()
    # `python -m site` prints the child's sys.path
    probe = subprocess.run(childproc.python_module_command("site"), cwd=childproc.SAFE_CWD,
                           env=childproc.child_env(), capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    assert "site-packages" in probe.stdout and str(store) not in probe.stdout
    assert sorted(os.listdir(canaries)) == []


def test_cli_verify_with_workers_runs_nothing_from_the_store(booby_trapped):
    store, canaries = booby_trapped
    summaries = []
    for extra in ([], ["--workers", "2"]):
        r = subprocess.run([_arrayscope(), "verify", ".", *extra], cwd=store,
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        assert "3 tiles" in r.stderr, r.stderr   # the store was verified, by the workers too
        assert sorted(os.listdir(canaries)) == [], extra
        summaries.append(r.stderr.strip().splitlines()[-1].rsplit(" in ", 1)[0])
    assert summaries[0] == summaries[1]   # the same tiles and bytes (item 12)


def test_dask_verify_runs_nothing_from_the_store(booby_trapped, monkeypatch):
    distributed = pytest.importorskip("distributed")
    from arrayscope import formats
    from arrayscope.formats.core.executors import DaskCluster
    from arrayscope.formats.core.verify import verify

    store, canaries = booby_trapped
    monkeypatch.chdir(store)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        ex = DaskCluster(cluster.scheduler_address)
        try:
            got = verify(formats.open("."), ex)
            assert got == verify(formats.open("."))   # as this process finds it
            assert {f.code for f in got} == {"zarr-not-a-chunk-key"}   # the planted files
        finally:
            ex.close()
    assert sorted(os.listdir(canaries)) == []


def test_window_background_verify_runs_nothing_from_the_store(booby_trapped, monkeypatch, qtbot):
    from arrayscope.explorer.verifier import Verifier

    store, canaries = booby_trapped
    monkeypatch.chdir(store)
    v = Verifier()
    got, failed = [], []
    v.done.connect(got.append)
    v.failed.connect(failed.append)
    v.start(".", delay_ms=0)
    try:
        qtbot.waitUntil(lambda: bool(got or failed), timeout=WAIT_MS)   # polls: a limit only
    finally:
        v.cancel()
        # deleted by Qt's loop, as the window's is, not by Python's collector at some later
        # event (a run segfaulted in pytest-qt's event processing after this test)
        with qtbot.waitSignal(v.destroyed, timeout=WAIT_MS):
            v.deleteLater()
    assert failed == [] and len(got) == 1
    assert {f.source for f in got[0]} == {f"{name}.py" for name in PLANTED}   # seen, not run
    assert sorted(os.listdir(canaries)) == []


def test_the_import_path_drops_only_the_working_directory(tmp_path, monkeypatch):
    import json

    stdlib = os.path.dirname(os.path.dirname(json.__file__))
    monkeypatch.chdir(childproc.SAFE_CWD)   # everything is below the root: all kept
    assert stdlib in childproc.import_path()
    below = tmp_path / "venv"
    below.mkdir()
    monkeypatch.syspath_prepend(str(below))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    got = childproc.import_path()
    assert str(tmp_path) not in got and str(below) in got and stdlib in got

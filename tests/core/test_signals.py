"""Ctrl+C, SIGTERM and a closed terminal (SIGHUP) end the program and its children (issue 31,
item 9): the window ends without a traceback and its background verify process goes with
it; a child whose parent is killed outright ends by itself."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import zarr

from arrayscope.formats.core import childproc
from tests.support.waits import WAIT_MS

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, POSIX signals")


def _children(pid: int):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _poll(cond, limit_s: float = WAIT_MS / 1000) -> bool:
    end = time.monotonic() + limit_s   # a limit on waiting, not a budget the test measures
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def _as_from_a_terminal() -> None:
    """The signal dispositions of a terminal's foreground command: a test run started in the
    background (a CI job, `pytest &`) passes SIGINT and SIGQUIT on ignored, and an ignored
    signal stays ignored in the program (as `nohup` asks)."""
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("signals") / "store"
    z = zarr.create_array(str(path), shape=(4096,), chunks=(64,), dtype="int32", zarr_format=3)
    z[:] = np.arange(4096, dtype="int32")
    return str(path)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_the_window_ends_with_its_verify_on_a_signal(store, sig, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path))
    arrayscope = os.path.join(os.path.dirname(sys.executable), "arrayscope")
    proc = subprocess.Popen([arrayscope, store], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_as_from_a_terminal)
    try:
        # the background verify starts a moment after the array is shown
        seen = []
        assert _poll(lambda: seen.extend(_children(proc.pid)) or seen), "no verify started"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=WAIT_MS / 1000)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err, err
    assert _poll(lambda: not any(_alive(c) for c in seen), 10), "a child outlived the window"


def test_a_child_ends_when_its_parent_is_killed():
    # the parent starts a task worker (it waits on its stdin forever), then is killed outright
    parent = subprocess.Popen(
        [sys.executable, "-c",
         "import subprocess, sys, time\n"
         "from arrayscope.formats.core import childproc\n"
         "c = subprocess.Popen(childproc.python_module_command('arrayscope.formats.core.taskworker'),"
         " stdin=subprocess.PIPE, cwd=childproc.SAFE_CWD, env=childproc.child_env())\n"
         "print(c.pid, flush=True)\n"
         "time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True, cwd=childproc.SAFE_CWD)
    try:
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=60)
        assert _poll(lambda: not _alive(child), 30), "the worker outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_ctrl_c_ends_the_local_workers_and_the_command_quietly():
    """Ctrl+C reaches the whole process group (the terminal sends it so): the task workers
    end at once, the caller's KeyboardInterrupt ends the command with 130, no traceback."""
    code = ("import sys, time\n"
            "from arrayscope.explorer import cli\n"
            "from arrayscope.explorer.commands import verify\n"
            "from arrayscope.formats.core.executors import LocalProcesses\n"
            "def run(args):\n"
            "    ex = LocalProcesses(2)\n"
            "    try:\n"
            "        ex.map(time.sleep, [0])\n"
            "        print(*(p.pid for p in ex._procs), flush=True)\n"
            "        ex.map(time.sleep, [600, 600])\n"
            "    finally:\n"
            "        ex.close()\n"
            "verify.run = run\n"
            "sys.exit(cli.main(['verify', '.']))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=childproc.SAFE_CWD,
                            start_new_session=True, preexec_fn=_as_from_a_terminal)
    try:
        workers = [int(p) for p in proc.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(w) for w in workers)
        os.killpg(proc.pid, signal.SIGINT)
        _out, err = proc.communicate(timeout=WAIT_MS / 1000)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert _poll(lambda: not any(_alive(w) for w in workers), 10)


def test_a_signal_the_program_was_started_ignoring_stays_ignored(qapp):
    """`nohup arrayscope PATH &`: a closed terminal must not close the window."""
    from arrayscope.explorer.app import ENDING_SIGNALS, end_on_signals

    sigs = [getattr(signal, name) for name in ENDING_SIGNALS]
    before = {sig: signal.getsignal(sig) for sig in sigs}
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        timer = end_on_signals(qapp, win=None)
        timer.stop()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert callable(signal.getsignal(signal.SIGTERM))   # the others end the window
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)

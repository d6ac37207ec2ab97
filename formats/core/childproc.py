"""How every Python child process of arrayscope starts: isolated from the dataset.

A dataset folder may hold files named like Python modules (`json.py`, `numpy.py`,
`sitecustomize.py`); the program's working directory is often that folder (`cd ds &&
arrayscope .`). A child started as `python -m ...` or through multiprocessing's spawn puts
the working directory first on `sys.path` and would import them. So each child here is
`python -I` (no working directory, user site or PYTHON* variables on its path), runs in a
working directory chosen here (SAFE_CWD, never the dataset's), with an environment without
PYTHON* variables, and gets the parent's own import path minus the working directory.

A child also ends when its parent does (`exit_with_parent`): a killed or hung-up window
leaves no verify running."""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Dict, List, Sequence

# the filesystem root: owned by the administrator, never a dataset, holds no modules
SAFE_CWD = os.path.abspath(os.sep)

_BOOT = ("import json, runpy, sys; sys.path[:] = json.loads(sys.argv[1]); "
         "mod = sys.argv[2]; del sys.argv[1:3]; "
         "runpy.run_module(mod, run_name='__main__', alter_sys=True)")


def import_path() -> List[str]:
    """This process's `sys.path` without the working directory ('', a relative entry, the
    directory's own absolute name; folders below it stay: a virtual environment under the
    home folder is no dataset). Entries that name no folder (an editable install's
    path-hook marker) are kept as they are."""
    here = os.path.realpath(os.getcwd()) if _has_cwd() else None
    out = []
    for entry in sys.path:
        if not entry or (not os.path.isabs(entry) and os.path.exists(entry)):
            continue
        if here is not None and os.path.isabs(entry) and os.path.realpath(entry) == here:
            continue
        out.append(entry)
    return out


def _has_cwd() -> bool:
    try:
        os.getcwd()
        return True
    except OSError:   # removed meanwhile
        return False


def python_module_command(module: str, args: Sequence[str] = ()) -> List[str]:
    """argv running `python -m module args...`, isolated (see the module's doc). Paths in
    `args` must be absolute: the child runs in SAFE_CWD."""
    return [sys.executable, "-I", "-c", _BOOT, json.dumps(import_path()), module, *args]


PARENT_VAR = "ARRAYSCOPE_PARENT_PID"   # set for our own children only (child_env)


def child_env() -> Dict[str, str]:
    """This process's environment without the variables that steer a Python interpreter,
    naming this process as the child's parent (`exit_with_parent`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env[PARENT_VAR] = str(os.getpid())
    return env


def exit_with_parent(poll_s: float = 0.5) -> None:
    """In a child: end this process as soon as its parent is gone (killed by a signal,
    a closed terminal), whatever the child is doing; Ctrl+C in the terminal (sent to the
    whole process group) ends it at once, without a traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    # the parent that started us (child_env names it): one killed while this interpreter was
    # still starting has already left us to init, and getppid() alone would not see it go
    said = os.environ.get(PARENT_VAR, "")
    parent = int(said) if said.isdigit() else os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()

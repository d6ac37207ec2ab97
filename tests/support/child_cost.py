"""What one `arrayscope` command costs, measured in a process of its own: CPU seconds (user
+ system) and peak resident memory, as the kernel counts them for that process alone (no
wall clock: a busy machine slows a command, it does not make it use more CPU or memory)."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import List, Tuple

_CHILD = """
import json, os, resource, sys
from arrayscope.explorer.cli import main
out = open(os.devnull, "w")
sys.stdout = out
rc = main(sys.argv[2:])
r = resource.getrusage(resource.RUSAGE_SELF)
# VmHWM: this program's own peak (ru_maxrss also counts the parent's memory when the
# parent that started it was larger: the kernel carries it over the fork and exec)
with open("/proc/self/status") as st:
    peak_kb = next(int(line.split()[1]) for line in st if line.startswith("VmHWM:"))
with open(sys.argv[1], "w") as fh:
    json.dump({"rc": rc, "cpu": r.ru_utime + r.ru_stime, "peak_kb": peak_kb}, fh)
"""


def command_cost(args: List[str], report: str) -> Tuple[int, float, float]:
    """(exit status, CPU seconds, peak MB) of `arrayscope ARGS` (its output discarded);
    `report` is a scratch file the child writes its figures to."""
    subprocess.run([sys.executable, "-c", _CHILD, report, *args], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(report) as fh:
        r = json.load(fh)
    return r["rc"], r["cpu"], r["peak_kb"] / 1024

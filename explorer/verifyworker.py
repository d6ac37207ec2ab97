"""The window's background verify, in a process of its own (no Qt):

    python -m arrayscope.explorer.verifyworker PATH [FORMAT] [WINDOW_PID]

The key, if any, comes as hex on the first line of stdin (never on the command line, which
other users can read). The findings go to stdout as one JSON list. The process lowers its
own priority (the window's painting comes first) and stops itself, exit status
OVER_MEMORY, when its resident memory passes MAX_MIB (ARRAYSCOPE_VERIFY_MAX_MIB, default a
quarter of the machine's memory): the window says verify stopped, it never swaps the
machine to death. Being a process, it is killed at once when the window cancels it (a
thread in the middle of a decode cannot be), and its memory goes back with it; it also ends
itself when the window's process is gone (killed, crashed): no orphan runs on."""
from __future__ import annotations

import json
import os
import sys
import threading
import time

OVER_MEMORY = 75
NICE = 10


def _page_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def max_mib() -> int:
    env = os.environ.get("ARRAYSCOPE_VERIFY_MAX_MIB")
    if env:
        return int(env)
    try:
        total = os.sysconf("SC_PHYS_PAGES") * _page_bytes()
    except (ValueError, OSError, AttributeError):
        return 4096
    return max(1024, total // 4 // 2 ** 20)


def _rss_mib() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * _page_bytes() / 2 ** 20
    except OSError:
        return 0.0


def _watch(limit: int) -> None:
    while True:   # the parent's end is watched by childproc.exit_with_parent
        if _rss_mib() > limit:
            sys.stderr.write(f"verify stopped: it needed more than {limit} MiB "
                             f"(ARRAYSCOPE_VERIFY_MAX_MIB); run `arrayscope verify` instead\n")
            sys.stderr.flush()
            os._exit(OVER_MEMORY)
        time.sleep(0.2)


def main(argv) -> int:
    if hasattr(os, "nice"):
        try:
            os.nice(NICE)
        except OSError:
            pass
    threading.Thread(target=_watch, args=(max_mib(),), daemon=True).start()
    from arrayscope.formats.core import compiled
    from arrayscope.formats.core.childproc import exit_with_parent

    exit_with_parent()   # a killed or hung-up window leaves no verify running
    compiled.own_process()   # our worker: numba's cache in the user's cache folder
    path = argv[0]
    fmt = argv[1] if len(argv) > 1 and argv[1] else None
    line = sys.stdin.readline().strip()
    key = bytes.fromhex(line) if line else None
    from arrayscope.formats.core.verify import open_for_verify, verify

    try:
        doc = open_for_verify(path, key=key, as_format=fmt)   # one fragment's tree at a time
    except Exception as e:  # noqa: BLE001 - the window reports it
        sys.stderr.write(f"{type(e).__name__}: {e}\n")
        return 2
    try:
        found = verify(doc)
    except Exception as e:  # noqa: BLE001
        sys.stderr.write(f"{type(e).__name__}: {e}\n")
        return 2
    finally:
        doc.close()
    json.dump([f.to_json() for f in found], sys.stdout)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)   # no teardown of a large tree: the window waits for the exit status

"""`arrayscope verify PATH`: every finding, one line each, a summary, and an exit code that
says how it went: 0 verified and clean, 1 problems found, 2 nothing verifiable (PATH cannot
be opened, no format recognised, an empty folder, an encrypted array with no key), 3 no
problem found but some parts could not be checked."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Optional

from arrayscope.formats.core.printable import printable
from arrayscope.formats.core.status import Status

from .common import add_key_file, count, fail, key_of

HELP = "check everything that can be checked and report each problem with its place"
SLOW = 1.0   # seconds before progress is shown


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    add_key_file(p)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=count, metavar="N",
                       help="decode on N local processes (0: one per core); same output")
    where.add_argument("--dask", metavar="ADDRESS",
                       help="decode on the workers of this dask.distributed scheduler "
                            "(tcp://host:8786); same output. An encrypted dataset's key is "
                            "never sent to the workers: start them with ARRAYSCOPE_KEY set "
                            "(else this process checks what they cannot)")


class _Progress:
    """Progress on stderr for runs over a second: a bar on a terminal, else a line at most
    once a second (a log is not a terminal), and the last report when the run ends."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.last = 0.0
        self.tty = sys.stderr.isatty()
        self.shown = False
        self.pending: Optional[tuple] = None   # the latest report not drawn (a line's throttle)

    def __call__(self, done: int, total: int, what: str) -> None:
        now = time.monotonic()
        end = self.tty and self.shown and total and done >= total   # a bar ends drawn full
        if not end and (now - self.t0 < SLOW or now - self.last < (0.1 if self.tty else 1.0)):
            self.pending = (done, total, what) if self.shown else None
            return
        self.last = now
        self._draw(done, total, what)

    def _draw(self, done: int, total: int, what: str) -> None:
        frac = done / total if total else 1.0
        if self.tty:
            width = 30
            bar = "#" * int(frac * width)
            sys.stderr.write(f"\rverifying [{bar:<{width}}] {frac:4.0%} {printable(what[-40:]):<40}")
        else:
            sys.stderr.write(f"verifying: {frac:.0%} ({printable(what)})\n")
        sys.stderr.flush()
        self.shown = True
        self.pending = None

    def close(self) -> None:
        if self.pending is not None and not self.tty:
            self._draw(*self.pending)   # where the run ended
        if self.shown and self.tty:
            sys.stderr.write("\r" + " " * 80 + "\r")
            sys.stderr.flush()


def _open_error(path: str) -> Optional[str]:
    if "://" in path:
        return None
    if not os.path.exists(path):
        return f"{path}: no such file or directory"
    if not os.access(path, os.R_OK):
        return f"{path}: cannot be read (permission denied)"
    return None


def run(args: argparse.Namespace) -> int:
    from arrayscope.formats import OpenError
    from arrayscope.formats.core.context import KeyError_
    from arrayscope.formats.core.verify import open_for_verify, verify_report

    why = _open_error(args.path)
    if why:
        return fail(why)
    try:
        key = key_of(args)
    except (OSError, KeyError_) as e:
        return fail(f"key: {e}")
    try:
        # one fragment at a time where the format can (--workers/--dask: one a worker)
        doc = open_for_verify(args.path, key)
    except OpenError as e:   # says what and why already
        return fail(str(e))
    except Exception as e:  # noqa: BLE001 - the command reports, never raises
        return fail(f"{args.path} cannot be opened: {type(e).__name__}: {e}")
    try:
        executor = _executor(args)
    except (ImportError, RuntimeError, OSError, ValueError) as e:
        return fail(f"cannot start the verify workers: {e}")
    progress = _Progress()
    try:
        report = verify_report(doc, progress, executor)
    finally:
        progress.close()
        if executor is not None:
            executor.close()
    findings = report.findings
    code = report.exit_code()
    if args.json:
        # the same bytes whatever the run (local or --workers, time): the summary, which
        # says how long it took, goes to stderr
        json.dump({"path": args.path, "errors": report.count(Status.ERROR),
                   "warnings": report.count(Status.WARNING), "infos": report.count(Status.INFO),
                   "exit": code, "verifiable": report.verifiable,
                   "unchecked": report.unchecked,
                   "findings": [f.to_json() for f in findings]},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for f in findings:
            print(f.line())
    if not report.verifiable:
        print(printable(f"arrayscope: {args.path}: nothing verifiable: {report.why_not}"),
              file=sys.stderr)
    else:
        print(report.summary(), file=sys.stderr)
    return code


def _executor(args: argparse.Namespace):
    """None (this process), local processes (--workers) or a Dask cluster (--dask)."""
    workers, dask = getattr(args, "workers", None), getattr(args, "dask", None)
    if workers is None and dask is None:
        return None
    from arrayscope.formats.core.executors import executor_for

    return executor_for(workers, dask)

"""`arrayscope verify PATH`: every finding, one line each, and an exit code that says how it went."""
from __future__ import annotations

import argparse
import json
import sys

from .common import add_key_file, fail, key_of, open_path

HELP = "check everything that can be checked and report each problem with its place"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    add_key_file(p)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N",
                       help="decode on N local processes (0: one per core); same output")
    where.add_argument("--dask", metavar="ADDRESS",
                       help="decode on the workers of this dask.distributed scheduler "
                            "(tcp://host:8786); same output")


def run(args: argparse.Namespace) -> int:
    doc = open_path(args.path, key_of(args))
    try:
        executor = _executor(args)
    except (ImportError, RuntimeError, OSError, ValueError) as e:
        return fail(f"cannot start the verify workers: {e}")
    findings = _verify(doc, executor)
    errors = [f for f in findings if f.is_error]
    if args.json:
        json.dump({"path": args.path, "errors": len(errors),
                   "warnings": len(findings) - len(errors),
                   "findings": [f.to_json() for f in findings]},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for f in findings:
            print(f.line())
        print(f"{len(errors)} errors, {len(findings) - len(errors)} warnings", file=sys.stderr)
    return 1 if errors else 0


def _executor(args: argparse.Namespace):
    """None (this process), local processes (--workers) or a Dask cluster (--dask)."""
    workers, dask = getattr(args, "workers", None), getattr(args, "dask", None)
    if workers is None and dask is None:
        return None
    from arrayscope.formats.executors import executor_for

    return executor_for(workers, dask)


def _verify(doc, executor):
    from arrayscope.formats.verify import verify

    if executor is None:
        return verify(doc)
    try:
        return verify(doc, executor)
    finally:
        executor.close()

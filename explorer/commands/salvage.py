"""`arrayscope salvage PATH OUT`: write a new dataset at OUT holding every part of PATH that
verifies clean (what a reader at T sees), and say per part what was lost and why. Exit 0:
nothing lost; 3: something lost; 2: nothing could be written. PATH is only read."""
from __future__ import annotations

import argparse
import json
import sys

from .common import add_key_file, fail, key_of
from .fragments import parse_time

HELP = "copy what verifies clean into a new dataset and report what was lost and why"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="the damaged dataset (only read)")
    p.add_argument("out", help="where to write the salvaged copy (must not exist)")
    p.add_argument("--at", metavar="T", help="the reader's timestamp: ms since 1970 (or an ISO "
                                             "date, UTC); default: now")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--dry-run", action="store_true",
                   help="print the report only: nothing is written (OUT is still checked)")
    add_key_file(p)


def run(args: argparse.Namespace) -> int:
    from arrayscope.formats.salvage import salvage

    at = parse_time(args.at) if args.at else None
    try:
        key = key_of(args)
    except (OSError, ValueError) as e:
        return fail(f"key: {e}")
    report = salvage(args.path, args.out, at=at, key=key, dry=args.dry_run)
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for line in report.lines():
            print(line)
    if not report.written:
        return fail(f"{args.path}: nothing written: {report.failure}")
    print(("dry run, nothing written: " if args.dry_run else "") + report.summary(),
          file=sys.stderr)
    return report.exit_code()

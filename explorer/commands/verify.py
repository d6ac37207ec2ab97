"""`arrayscope verify PATH`: every finding, one line each, and an exit code that says how it went."""
from __future__ import annotations

import argparse
import json
import sys

from .common import add_key_file, key_of, open_path

HELP = "check everything that can be checked and report each problem with its place"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    add_key_file(p)


def run(args: argparse.Namespace) -> int:
    from arrayscope.formats.verify import verify

    doc = open_path(args.path, key_of(args))
    findings = verify(doc)
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



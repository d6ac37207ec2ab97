"""What every subcommand shares: the key, opening a path, failing with a message."""
from __future__ import annotations

import argparse
import sys
from typing import Iterable, Optional


def add_key_file(p: argparse.ArgumentParser) -> None:
    p.add_argument("--key-file", help="file holding the 32-byte AES-256 key (or set ARRAYSCOPE_KEY)")


def count(text: str) -> int:
    """argparse type: a whole number, 0 or more (a negative depth or worker count is a
    mistake, said at once)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative: give 0 or more")
    return n


def key_of(args: argparse.Namespace) -> Optional[bytes]:
    from arrayscope.formats.context import load_key

    return load_key(getattr(args, "key_file", None))


def open_path(path: str, key: Optional[bytes], tree: bool = True, lazy: bool = False):
    from arrayscope import formats

    return formats.open(path, key=key, tree=tree, lazy=lazy)


def fail(msg: str, code: int = 2) -> int:
    print(f"arrayscope: {msg}", file=sys.stderr)
    return code


def emit(report, lines: Iterable[str], as_json: bool, default=None) -> int:
    """Print `report.to_json()` (with --json) or its text `lines`; exit code 0."""
    if as_json:
        import json

        json.dump(report.to_json(), sys.stdout, indent=1, default=default)
        sys.stdout.write("\n")
    else:
        for line in lines:
            print(line)
    return 0

"""What every subcommand shares: the key, opening a path, failing with a message."""
from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from typing import Iterable, Iterator, Optional


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


def _seconds(text: str) -> float:
    v = float(text)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"{text}: a number of seconds above 0")
    return v


def add_remote_arguments(p: argparse.ArgumentParser) -> None:
    """The timeouts of a dataset on an object store (formats/core/remote.py `Timeouts`)."""
    from arrayscope.formats.core.remote import Timeouts

    d = Timeouts()
    g = p.add_argument_group("object stores (s3://, gs://, az://, https://...)")
    g.add_argument("--connect-timeout", type=_seconds, default=d.connect, metavar="S",
                   help=f"seconds to wait for a connection (default {d.connect:g})")
    g.add_argument("--read-timeout", type=_seconds, default=d.read, metavar="S",
                   help=f"seconds to wait for the next byte of an answer (default {d.read:g})")
    g.add_argument("--timeout", type=_seconds, default=d.total, metavar="S",
                   help=f"seconds one request may take in all, retries included; a server "
                        f"over it ends the command, naming the object (default {d.total:g})")


@contextmanager
def remote_session(args: argparse.Namespace) -> Iterator[None]:
    """Apply the timeouts of `add_remote_arguments`, report waits on stderr, and say at the
    end what went wrong with a remote dataset (a stalled server, a changed object, Range
    ignored) when parsers could only see short reads."""
    from arrayscope.formats.core import remote

    before = remote.set_timeouts(remote.Timeouts(args.connect_timeout, args.read_timeout,
                                                 args.timeout))
    remote.report_waits(lambda line: print(f"arrayscope: {line}", file=sys.stderr, flush=True))
    mark = len(remote.problems())
    try:
        yield
    finally:
        remote.set_timeouts(before)
        remote.report_waits(None)
        for line in remote.problems(mark):
            print(f"arrayscope: {line}", file=sys.stderr)


def key_of(args: argparse.Namespace) -> Optional[bytes]:
    from arrayscope.formats.core.context import load_key

    return load_key(getattr(args, "key_file", None))


def open_path(path: str, key: Optional[bytes], tree: bool = True, lazy: bool = False):
    from arrayscope import formats

    return formats.open(path, key=key, tree=tree, lazy=lazy)


def fail(msg: str, code: int = 2) -> int:
    from arrayscope.formats.core.printable import printable
    print(printable(f"arrayscope: {msg}"), file=sys.stderr)
    return code


def emit(report, lines: Iterable[str], as_json: bool, default=None) -> int:
    """Print `report.to_json()` (with --json) or its text `lines`; exit code 0."""
    if as_json:
        import json

        json.dump(report.to_json(), sys.stdout, indent=1, default=default)
        sys.stdout.write("\n")
    else:
        from arrayscope.formats.core.printable import printable
        for line in lines:
            print(printable(line))   # names and values come from the dataset
    return 0

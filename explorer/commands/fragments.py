"""`arrayscope fragments PATH`: every fragment, its state, and whether a reader at T sees it.
On a group: one section per member array (recursively; `--array` picks one), then the
verdict on the group's own files."""
from __future__ import annotations

import argparse
from typing import List

from arrayscope.formats.core.printable import printable_member_path

from .common import add_key_file, emit, fail, key_of

HELP = "list the fragments a reader sees at time T, why not the others, and version verdicts"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path")
    add_array_option(p)
    p.add_argument("--at", metavar="T", help="the reader's timestamp: ms since 1970 (or an ISO "
                                             "date, UTC); default: now")
    p.add_argument("--reader", metavar="VERSION",
                   help="a libtiledb version (e.g. 2.15): what it would do with this array")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_key_file(p)


def add_array_option(p: argparse.ArgumentParser) -> None:
    """`--array`: the same option as `values` (a member of a group by its member path)."""
    p.add_argument("--array", metavar="MEMBER",
                   help="a member array of a TileDB group, by its path of member names "
                        "(e.g. ms/RNA/X/data); default: every member array")


def parse_time(text: str) -> int:
    """ms since the epoch from digits, or from an ISO date/time (UTC when no zone)."""
    import datetime as dt

    t = text.strip()
    if t.lstrip("-").isdigit():
        return int(t)
    try:
        d = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"--at {text!r}: give milliseconds since 1970 or an ISO date")
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    return int(d.timestamp() * 1000)


def open_light(path: str, key):
    """A document for the health model: nothing parsed (it reads only what it needs)."""
    import os

    from arrayscope import formats
    from arrayscope.formats.core.document import Document
    from arrayscope.formats.core.remote import is_url

    if is_url(path):
        from arrayscope.formats.core.dataset_fs import MISSING
        from arrayscope.formats.core.remote import store_for

        try:
            store = store_for(path)   # held until the Document holds it (one listing)
            missing = store.stat(path).kind == MISSING
        except (ImportError, OSError) as e:
            raise formats.OpenError(f"{path}: {e}") from e
        if missing:
            raise formats.OpenError(f"{path}: no such object or prefix")
        return Document(path, formats.Context(key=key))
    if not os.path.exists(path):
        raise formats.OpenError(f"{path}: no such file or directory")
    return Document(path, formats.Context(key=key))


def run(args: argparse.Namespace) -> int:
    from arrayscope.formats.core import health as H

    at = parse_time(args.at) if args.at else None
    doc = open_light(args.path, key_of(args))
    report = H.health(doc, at, args.reader)
    if report is not None and args.array:
        return fail(f"{args.path}: --array names a member of a group; this is an array")
    if report is None:
        try:
            group = H.group_health(doc, at, args.reader, args.array)
        except LookupError as e:
            return fail(f"{args.path}: {e.args[0] if e.args else e}")
        if group is None:
            return fail(f"{args.path}: not an array with fragments (a TileDB array directory "
                        f"or group)")
        return emit(group, group_lines(group), args.json, str)
    return emit(report, text_lines(report), args.json, str)


def group_lines(group) -> List[str]:
    """One section per member array (its path as the header), then the group's files."""
    out: List[str] = []
    for member, report in group.members:
        out.append(f"== {printable_member_path(member)} ==")
        out.extend(text_lines(report))
        out.append("")
    if not group.members:
        out.append("the group has no member arrays")
    for n in group.notes:
        out.append(f"note: {n}")
    v = group.versions
    if v is not None:
        out.append(f"group files: {v.summary}")
        for f in v.files:
            if f.refused:
                out.append(f"  refuses {f.path}: {f.message}")
    return out


def text_lines(report) -> List[str]:
    rows = [("NAME", "T1", "T2", "V", "CELLS", "STATE", "SEEN", "REASON")]
    for f in report.fragments:
        t1, t2 = f.timestamps
        rows.append((f.name, "" if t1 is None else str(t1), "" if t2 is None else str(t2),
                     "" if f.format_version is None else str(f.format_version),
                     "" if f.cell_num is None else str(f.cell_num), f.state,
                     "yes" if f.visible else "no", f.reason))
    widths = [max(len(r[i]) for r in rows) for i in range(7)]
    out = ["  ".join(c.ljust(w) for c, w in zip(r[:7], widths)) + "  " + r[7] for r in rows]
    out.append(f"at T = {report.at}: a reader sees {len(report.visible)} of "
               f"{sum(1 for f in report.fragments if f.state != 'orphan')} fragment(s)")
    for c in report.conditions:
        out.append(f"{c.kind} {c.name}: {c.text}; {c.reason}"
                   + (f"; applies to {', '.join(c.applies_to)}" if c.applies_to else ""))
    if report.open_error:
        out.append(f"opening the array at T fails: {report.open_error}")
    elif report.read_error:
        out.append(f"reading the array at T fails: {report.read_error}")
    for n in report.notes:
        out.append(f"note: {n}")
    if report.versions is not None:
        out.append(f"versions: {report.versions.summary}")
        if report.versions.reader:
            for f in report.versions.files:
                if f.refused:
                    out.append(f"  refuses {f.path}: {f.message}")
    return out

"""`arrayscope stats PATH`: where the bytes go — per fragment, field and filter stage (on a
group: per member array, `--array` picks one)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import List

from arrayscope.formats.core.printable import printable, printable_member_path

from .common import add_key_file, emit, fail, key_of
from .fragments import add_array_option, open_light

HELP = "space per fragment, field and filter stage: stored, each reverse stage, decoded"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path")
    add_array_option(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    add_key_file(p)


def run(args: argparse.Namespace) -> int:
    from arrayscope.formats.core import health as H

    doc = open_light(args.path, key_of(args))
    report = H.space(doc)
    if report is not None and args.array:
        return fail(f"{args.path}: --array names a member of a group; this is an array")
    if report is None:
        try:
            group = H.group_space(doc, args.array)
        except LookupError as e:
            return fail(f"{args.path}: {e.args[0] if e.args else e}")
        if group is None:
            return fail(f"{args.path}: no space breakdown for this format (a TileDB array "
                        f"directory or group)")
        if args.json:
            json.dump(group.to_json(), sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            for member, r in group.members:
                print(f"== {printable_member_path(member)} ==")
                for line in text_lines(r):
                    print(printable(line))
                print()
            for n in group.notes:
                print(printable(f"note: {n}"))
            print(f"group total {group.total} B in {len(group.members)} member array(s)")
        return 0
    return emit(report, text_lines(report), args.json)


def _ratio(decoded: int, stored: int) -> str:
    return f"{decoded / stored:.2f}x" if stored else "-"


def text_lines(report) -> List[str]:
    out = []
    for f in report.fragments:
        out.append(f"{f.fragment}: metadata {f.metadata_bytes} B, data {f.data_stored} B stored "
                   f"-> {f.data_decoded} B decoded ({_ratio(f.data_decoded, f.data_stored)})")
        for fs in f.fields:
            stages = " -> ".join(f"{s.nbytes}" for s in fs.stages)
            line = (f"  {fs.file:<16} {fs.name} ({fs.part}) [{', '.join(fs.filters)}] "
                    f"{fs.tiles} tile(s): {fs.stored} B" + (f" -> {stages}" if stages else "")
                    + f" ; decoded {fs.decoded} B ({_ratio(fs.decoded, fs.stored)}), "
                    f"headers+filter metadata {fs.overhead} B")
            if fs.padding_cells:
                line += f", padding {fs.padding_cells} cells ({fs.padding_bytes} B decoded)"
            if not fs.exact:
                line += " (stages from a sample of tiles)"
            if fs.error:
                line += f" ; error: {fs.error}"
            out.append(line)
    out.append("other: " + ", ".join(f"{k} {v} B" for k, v in report.other.items()))
    out.append(f"total {report.total} B")
    for n in report.notes:
        out.append(f"note: {n}")
    return out

"""`arrayscope dump PATH`: the annotation tree as text or JSON."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Optional

from arrayscope.formats.core.printable import printable
from arrayscope.formats.core.status import Status

from .common import add_key_file, count, key_of, open_path

HELP = "print the annotation tree of a file, array, archive or store"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path")
    p.add_argument("--json", action="store_true", help="print the tree as one JSON object")
    p.add_argument("--max-depth", type=count, default=None, help="stop at this depth")
    add_key_file(p)


def _dump_text(root, out, depth: int, max_depth: Optional[int], indent: str = "") -> None:
    """Print `root` and what is under it, with a work stack (a dataset nests as deep as it
    likes: 1 500 nested groups must not need 1 500 frames)."""
    stack: list = [(root, depth, indent)]
    while stack:
        node, depth, indent = stack.pop()
        if depth < 0:   # after its children: release what was built for this dump only
            node.release_deferred()
            continue
        pending = getattr(node, "pending", False)   # built for this dump only: released after it
        if pending and getattr(node.children, "owner_fields", False):
            node.ensure_built()   # its own fields come with its children (a lazily opened file)
        src = getattr(node.source, "name", node.source) or ""
        status = "" if node.status == Status.OK else f"  [{node.status}: {node.message}]"
        disp = node.display_text()
        disp = f" = {disp}" if disp else ""
        line = f"{node.name} <{node.kind}> {src}@{node.offset}+{node.size}{disp}{status}"
        out.write(f"{indent}{printable(line)}\n")   # names and values come from the dataset
        if pending:   # a chunk decoded, a fragment parsed for this dump only: the dump keeps none
            stack.append((node, -1, indent))
        # a run of homogeneous elements is one leaf (its values: `values`)
        if not ((max_depth is not None and depth >= max_depth) or getattr(node, "is_run", False)):
            kids = list(node.iter_children())
            stack.extend((c, depth + 1, indent + "  ") for c in reversed(kids))


def run(args: argparse.Namespace) -> int:
    from arrayscope.formats.core.node import to_json

    doc = open_path(args.path, key_of(args), lazy=True)   # each part built as it is printed
    if args.json:
        json.dump(to_json(doc.root, doc.source_name, args.max_depth), sys.stdout,
                  separators=(",", ":"))
        sys.stdout.write("\n")
    else:
        _dump_text(doc.root, sys.stdout, 0, args.max_depth)
    return 0



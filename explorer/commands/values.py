"""`arrayscope values PATH --field NAME`: decode one field by reversing every filter."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict

from arrayscope.formats.core.printable import printable, printable_name
from arrayscope.formats.core.status import Status

from .common import add_key_file, fail, key_of, open_path

HELP = "decode one attribute, dimension, SCDL array or Zarr field (JSON or raw bytes)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path")
    p.add_argument("--array", metavar="MEMBER",
                   help="a member array of a TileDB group, by its path of member names "
                        "(e.g. ms/RNA/X/data)")
    p.add_argument("--field", required=True, help="attribute, dimension, array or struct field")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="print the values as JSON")
    g.add_argument("--raw", metavar="OUT", help="write the decoded cells as raw bytes to OUT")
    add_key_file(p)


def run(args: argparse.Namespace) -> int:
    from arrayscope.formats.core import registry

    key = key_of(args)
    doc = open_path(args.path, key, tree=False)  # decoding needs the model, not the tree
    plugin = registry.plugin_named(doc.format) if doc.format else None
    if plugin is None or not hasattr(plugin, "values"):
        return fail(f"{args.path}: no decodable fields (format: {doc.format or 'unknown'})")
    members = getattr(plugin, "member_names", None)
    if args.array:
        if members is None:
            return fail(f"{args.path}: --array names a member of a group; this is not one")
        try:
            doc = getattr(plugin, "member_document")(doc, args.array)
        except LookupError as e:
            return fail(f"{args.path}: {e}")
    elif members is not None and members(doc):
        return fail(f"{args.path} is a group: name a member array with --array; arrays: "
                    f"{', '.join(members(doc))}")
    names = plugin.field_names(doc)
    if not names and doc.root is not None and not doc.root.child_count():
        doc = open_path(args.path, key)  # the whole tree, to say what stops the decoding
        names = plugin.field_names(doc)
    if not names:
        # nothing to decode: say why (an undecryptable schema, a damaged file...)
        why = next((n.message for n in doc.diagnostics() if n.status == Status.ERROR), None) or \
            next((n.message for n in doc.diagnostics()), None) or "no fields found"
        return fail(f"{args.path}: no field can be decoded: {why}")
    if args.field not in names:
        return fail(f"unknown field {args.field!r}; fields: {', '.join(names) or '(none)'}")
    output = None   # `--raw`: the file the cells are decoded into (raw_output.py), if any
    try:
        try:
            import inspect

            takes = inspect.signature(plugin.values).parameters
            if args.raw and "buffers" in takes:
                from .raw_output import OutputFile

                output = OutputFile.create(args.raw)
            if output is not None:
                takes_buffers: Any = plugin.values   # (not every plugin's: plugin.py)
                entries = takes_buffers(doc, args.field, with_values=False,
                                        buffers=output.buffer)
            elif args.raw and "with_values" in takes:
                entries = plugin.values(doc, args.field, with_values=False)
            else:
                entries = plugin.values(doc, args.field)
        except Exception as e:  # noqa: BLE001 - a message, never a traceback
            return fail(f"cannot decode {args.field!r}: {type(e).__name__}: {e}", 1)
        if not entries:
            why = _unread(args.path, key)
            if why:  # never an empty answer with exit 0 where bytes were left unread
                return fail(f"{args.path}: no fragment of {args.field!r} could be read, but "
                            f"the array holds bytes arrayscope did not read: {why}", 1)
        if args.raw:
            try:
                _write_raw(args.raw, output, [ent.get("raw", b"") for ent in entries])
            except OSError as e:
                return fail(f"cannot write {args.raw}: {e.strerror or e}", 1)
            output = None
    finally:
        if output is not None:   # stopped on the way: no partial file left behind
            output.discard()
    if args.raw:
        errs = [f"{ent['name']}: {ent['error']}" for ent in entries if ent.get("error")]
        for err in errs:  # the bytes written are what could be decoded; say what could not
            print(printable(f"arrayscope: {err}"), file=sys.stderr)
        return 1 if errs else 0
    if args.json:
        from arrayscope.formats.core.node import json_value

        payload: Dict[str, Any] = {"fragments": [
            {"name": ent["name"], "values": json_value(ent["values"])} for ent in entries]}
        errs = [ent["error"] for ent in entries if ent.get("error")]
        if errs:
            payload["errors"] = errs
        json.dump(payload, sys.stdout, separators=(",", ":"))
        sys.stdout.write("\n")
    else:
        for ent in entries:
            vals = ent["values"]
            print(f"{printable_name(ent['name'])}: {len(vals)} values")
            for v in vals[:1000]:
                print(f"  {v!r}")
            if len(vals) > 1000:
                print(f"  … {len(vals) - 1000} more")
            if ent.get("error"):
                print(printable(f"  error: {ent['error']}"))
    return 1 if any(ent.get("error") for ent in entries) else 0


def _write_raw(path: str, output, parts: list) -> None:
    """OUT: the cells of every fragment, one after the other (what could be decoded)."""
    if output is not None:
        output.finish(parts)
    else:
        from .raw_output import write_parts

        write_parts(path, parts)


def _unread(path: str, key) -> str:
    """Why an array that gave no fragment may still hold data: the first diagnostic or
    unexplained bytes of its whole tree ("" when there is none: the array is empty)."""
    doc = open_path(path, key)
    for n in doc.diagnostics():
        return f"{n.path()}: {n.message}"
    for n in doc.root.walk() if doc.root is not None else ():
        if n.kind == "unparsed":
            return f"{n.path()}: {n.size} bytes not read"
    return ""

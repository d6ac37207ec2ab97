"""The `arrayscope` command: the window, and the display-free `dump`, `values`, `verify`."""
from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

COMMANDS = ("dump", "values", "verify")


def _key(args) -> Optional[bytes]:
    from arrayscope.formats.context import load_key

    return load_key(getattr(args, "key_file", None))


def _open(path: str, key: Optional[bytes]):
    from arrayscope import formats
    return formats.open(path, key=key)


def _fail(msg: str, code: int = 2) -> int:
    print(f"arrayscope: {msg}", file=sys.stderr)
    return code


# ---- dump ------------------------------------------------------------------------------
def _dump_text(node, out, depth: int, max_depth: Optional[int], indent: str = "") -> None:
    src = getattr(node.source, "name", node.source) or ""
    status = "" if node.status == "ok" else f"  [{node.status}: {node.message}]"
    disp = node.display_text()
    disp = f" = {disp}" if disp else ""
    out.write(f"{indent}{node.name} <{node.kind}> {src}@{node.offset}+{node.size}{disp}{status}\n")
    if max_depth is not None and depth >= max_depth:
        return
    pending = getattr(node, "pending", False)
    for c in node.iter_children():
        _dump_text(c, out, depth + 1, max_depth, indent + "  ")
    if pending:   # a chunk decoded for this dump only: the dump keeps none
        node.release_deferred()


def cmd_dump(args) -> int:
    from arrayscope.formats.node import to_json

    doc = _open(args.path, _key(args))
    if args.json:
        json.dump(to_json(doc.root, doc.source_name, args.max_depth), sys.stdout,
                  separators=(",", ":"))
        sys.stdout.write("\n")
    else:
        _dump_text(doc.root, sys.stdout, 0, args.max_depth)
    return 0


# ---- values ----------------------------------------------------------------------------
def cmd_values(args) -> int:
    from arrayscope.formats import registry

    doc = _open(args.path, _key(args))
    plugin = registry.plugin_named(doc.format) if doc.format else None
    if plugin is None or not hasattr(plugin, "values"):
        return _fail(f"{args.path}: no decodable fields (format: {doc.format or 'unknown'})")
    names = plugin.field_names(doc)
    if not names:
        # nothing to decode: say why (an undecryptable schema, a damaged file...)
        why = next((n.message for n in doc.diagnostics() if n.status == "error"), None) or \
            next((n.message for n in doc.diagnostics()), None) or "no fields found"
        return _fail(f"{args.path}: no field can be decoded: {why}")
    if args.field not in names:
        return _fail(f"unknown field {args.field!r}; fields: {', '.join(names) or '(none)'}")
    try:
        import inspect

        raw_only = bool(args.raw) and "with_values" in inspect.signature(plugin.values).parameters
        entries = plugin.values(doc, args.field, with_values=False) if raw_only \
            else plugin.values(doc, args.field)
    except Exception as e:  # noqa: BLE001 - a message, never a traceback
        return _fail(f"cannot decode {args.field!r}: {type(e).__name__}: {e}", 1)
    if args.raw:
        with open(args.raw, "wb") as fh:
            for e in entries:
                fh.write(e.get("raw", b""))
        return 0
    if args.json:
        from arrayscope.formats.node import json_value

        payload = {"fragments": [{"name": e["name"], "values": json_value(e["values"])}
                                 for e in entries]}
        errs = [e["error"] for e in entries if e.get("error")]
        if errs:
            payload["errors"] = errs
        json.dump(payload, sys.stdout, separators=(",", ":"))
        sys.stdout.write("\n")
    else:
        for e in entries:
            vals = e["values"]
            print(f"{e['name']}: {len(vals)} values")
            for v in vals[:1000]:
                print(f"  {v!r}")
            if len(vals) > 1000:
                print(f"  … {len(vals) - 1000} more")
            if e.get("error"):
                print(f"  error: {e['error']}")
    return 1 if any(e.get("error") for e in entries) else 0


# ---- verify ----------------------------------------------------------------------------
def cmd_verify(args) -> int:
    from arrayscope.formats.verify import verify

    doc = _open(args.path, _key(args))
    findings = verify(doc)
    errors = [f for f in findings if f["status"] == "error"]
    if args.json:
        json.dump({"path": args.path, "errors": len(errors),
                   "warnings": len(findings) - len(errors), "findings": findings},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for f in findings:
            prefix = "warning: " if f["status"] == "warning" else ""
            print(f"{f['source']}:{f['offset']}: {prefix}{f['message']}")
        print(f"{len(errors)} errors, {len(findings) - len(errors)} warnings", file=sys.stderr)
    return 1 if errors else 0


def _sub_parser(cmd: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"arrayscope {cmd}")
    p.add_argument("path")
    if cmd == "dump":
        p.add_argument("--json", action="store_true", help="print the tree as JSON")
        p.add_argument("--max-depth", type=int, default=None)
        p.add_argument("--key-file", help="file holding the 32-byte AES-256 key")
    elif cmd == "values":
        p.add_argument("--field", required=True)
        g = p.add_mutually_exclusive_group()
        g.add_argument("--json", action="store_true")
        g.add_argument("--raw", metavar="OUT", help="write decoded cells as raw bytes")
        p.add_argument("--key-file", help="file holding the 32-byte AES-256 key")
    elif cmd == "verify":
        p.add_argument("--json", action="store_true")
        p.add_argument("--key-file", help="file holding the 32-byte AES-256 key")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        cmd = argv[0]
        args = _sub_parser(cmd).parse_args(argv[1:])
        from arrayscope import formats
        try:
            return {"dump": cmd_dump, "values": cmd_values, "verify": cmd_verify}[cmd](args)
        except formats.OpenError as e:
            return _fail(str(e))
        except BrokenPipeError:  # output piped into `head` and the like
            sys.stderr.close()
            return 0
        except (OSError, ValueError) as e:  # key file problems and the like
            return _fail(str(e))
    p = argparse.ArgumentParser(prog="arrayscope",
                                description="Hex/structure explorer for array storage formats. "
                                            "Subcommands: dump, values, verify.")
    p.add_argument("path", nargs="?", help="file or array/archive directory to open")
    p.add_argument("--sample", action="store_true", help="open a bundled sample TileDB array")
    p.add_argument("--screenshot", metavar="OUT.png", help="render offscreen, save, exit")
    p.add_argument("--select", metavar="NODE/PATH", help="node to select (with --screenshot)")
    p.add_argument("--key-file", help="file holding the 32-byte AES-256 key")
    args = p.parse_args(argv)
    try:
        from .app import run_gui
    except ImportError as e:
        return _fail(f"the window needs PySide6: {e}")
    return run_gui(args)


if __name__ == "__main__":
    raise SystemExit(main())

"""The array model without the annotation tree: what `values` needs to decode a field.

`formats.open` annotates every byte of every file (a thousand fragments make a million
nodes). Decoding needs only the schemas, the fragment list and each fragment's metadata
model, whose footer is read when the fragment is first decoded and whose tile offsets are
decoded from their sections on first use (fragment_model.SectionLoader). So `values` on an
array of 1 000 fragments reads 1 000 footers and the offsets of one field, and builds no
node per tile, chunk or field."""
from __future__ import annotations

import os

from ...core.context import Context
from ...core.filesystems import fs_of
from ...core.node import Node
from ..parse.array import _Scratch, parse_schema_file
from . import layout
from .array_model import Fragment, TileDBArray, tiledb_context
from .listing import fragment_entries
from .names import parse_name


def load_array_model(document, array_dir: str, ctx: Context) -> TileDBArray:
    """Schemas parsed, fragments listed (their metadata read later, on first use)."""
    array = TileDBArray(array_dir)
    tiledb_context(ctx).array = array
    fs = fs_of(document, array_dir)
    for entry in fragment_entries(fs, array_dir):
        name = entry.name
        try:
            info = parse_name(name) or {}
        except Exception:  # noqa: BLE001 - a damaged name is shown undecoded, never fatal
            info = {}
        array.fragments.append(Fragment(name, entry.path, info.get("t1"), info.get("t2"),
                                        info.get("uuid"), info.get("version"), entry=entry))
    scratch = _Scratch(document)
    paths = []
    legacy = os.path.join(array_dir, layout.LEGACY_SCHEMA_FILE)
    if fs.stat(legacy).is_file:
        paths.append(legacy)
    sdir = os.path.join(array_dir, layout.SCHEMA_DIR)
    if fs.stat(sdir).is_dir:
        try:
            paths += sorted(e.path for e in fs.list(sdir) if e.is_file)
        except OSError:
            pass  # an unlistable schema folder: the tree says so
    for p in paths:
        try:
            _node, schema = parse_schema_file(scratch, scratch.open_source(p), ctx.derive())
        except Exception:  # noqa: BLE001 - an unreadable schema is simply not there
            schema = None
        if schema is not None:
            array.schemas[schema.name] = schema
    if array.schemas:
        array.latest_schema = array.schemas[max(array.schemas)]
    return array


def open_array_model(document, path: str) -> Node:
    """Give `document` the array model of `path` and a root node with no children."""
    array = load_array_model(document, path, document.ctx)
    document.model = array
    s = array.latest_schema
    kind = ("dense" if s.dense else "sparse") if s else "schema unreadable"
    return Node(os.path.basename(path.rstrip(os.sep)) or path, "dir", document.relname(path), 0,
                0, display=f"TileDB array, {kind}, {len(array.fragments)} fragment(s) "
                           f"(model only: no annotation tree)", data=array)

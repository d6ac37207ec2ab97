"""A TileDB file found outside its array: parsed with what needs no context."""
from __future__ import annotations

import os

from ...core.context import Context
from ...core.cursor import Cursor
from ...core.engine import run_parser
from ..model.layout import FRAGMENT_METADATA_FILE
from .tile import parse_generic_tile


def open_stray_file(document, path: str):
    src = document.open_source(path)
    name = os.path.basename(path)
    ctx: Context = document.ctx
    if name == FRAGMENT_METADATA_FILE:
        from .fragment_metadata import parse_fragment_metadata_file

        node, _fm = parse_fragment_metadata_file(document, src, ctx)
        return node
    # A generic tile whose payload kind is unknown: try the schema parser, then none.
    from .array import parse_schema_file

    node, schema = parse_schema_file(document, src, ctx)
    if schema is None:
        def body(cur: Cursor):
            while not cur.at_end():
                parse_generic_tile(cur, document, "Generic tile", None, ctx=ctx)
        node = run_parser(name, "file", src, body, ctx)
    return node

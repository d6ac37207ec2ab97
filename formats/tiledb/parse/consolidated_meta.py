"""`__fragment_meta/<timestamped name>.meta`: consolidated fragment metadata
(format_spec/consolidated_fragment_metadata_file.md, checked on 2.30 bytes).

The file is one generic tile. Its payload is `u32 count`, then per fragment `u64 name length,
name, u64 footer offset` (offsets into the payload), then the fragments' footers back to back
(each exactly as at the end of that fragment's `__fragment_metadata.tdb`, without the trailing
footer length). The footers' section offsets point into each fragment's own metadata file.
"""
from __future__ import annotations

import os
import struct
from typing import List, Tuple

from ...core.cursor import Cursor, ParseStop
from ...core.engine import run_parser
from ...core.fielddoc import doc
from ...core.node import ERROR, WARNING, Node
from .fragment_metadata import _schema_for, parse_footer
from .tile import parse_generic_tile

SPEC = "consolidated_fragment_metadata_file.md"
D_FILE = doc("Consolidated fragment metadata: the footers of several fragments in one generic "
             "tile, so opening the array reads one file instead of one per fragment", spec=SPEC)
D_COUNT = doc("Number of fragments whose footers follow", spec=SPEC,
              note="Not in the spec, which starts with the first URI length; 2.30 writes a u32 "
                   "count first (FORMAT_NOTES 7)")
D_URI_LEN = doc("URI length: bytes of the fragment name", spec=SPEC)
D_URI = doc("URI: the fragment's directory name", spec=SPEC)
D_URI_OFF = doc("URI offset: where this fragment's footer begins, counted from the start of the "
                "payload", spec=SPEC)
D_FOOTER = doc("The fragment's footer (see fragment.md Footer)", spec=SPEC)


def parse_consolidated_meta_file(document, source, ctx) -> Node:
    """Parse a `.meta` file: its generic tile, the fragment table and every footer (with the
    schema the footer names, via the TileDB context's array model, else its schema). Never raises."""
    name = os.path.basename(getattr(source, "name", "fragment.meta"))

    def parse(cur: Cursor):
        gt = parse_generic_tile(cur, document, "Generic tile", _payload(ctx),
                                f"{getattr(source, 'name', name)} payload", ctx)
        gt.node.doc = D_FILE

    root = run_parser(name, "file", source, parse, ctx)
    root.doc = D_FILE
    return root


def _payload(ctx):
    def parse(c: Cursor):
        n = c.length("u32", "Num fragments", 17, D_COUNT, "fragments").value
        entries: List[Tuple[str, int]] = []
        for i in range(n):
            def one(ec: Cursor):
                k = ec.length("u64", "URI length", 1, D_URI_LEN, "bytes").value
                uri = ec.string("URI", k, D_URI).value
                off = ec.u64("URI offset", D_URI_OFF)
                entries.append((uri, off.value))
                ec.node.display = f"{uri} → footer at {off.value}"
                ec.node.value = uri
            c.group(f"Fragment {i + 1}", one)
        size = c.end
        order = sorted(range(len(entries)), key=lambda i: entries[i][1])
        for rank, i in enumerate(order):
            uri, off = entries[i]
            nxt = entries[order[rank + 1]][1] if rank + 1 < len(order) else size
            if off < c.pos or off > size or nxt < off:
                c.node.add(Node(f"Footer of {uri}", "error", c.source, min(off, size), 0,
                                status=ERROR, message=f"footer offset {off} is outside the "
                                                      f"footer area [{c.pos}, {size}]"))
                continue
            schema_name = _peek_schema_name(c.source, off, nxt)
            schema = _schema_for(ctx, schema_name)
            sub = Cursor(c.source, off, nxt, c.node, ctx=ctx)
            try:
                ft = parse_footer(sub, schema, f"Footer of {uri}", size=nxt - off,
                                  sections_here=False)
            except ParseStop:
                continue
            g = c.node.children[-1]
            g.doc = D_FOOTER
            if ft.complete and ft.size != nxt - off:
                g.mark(WARNING, f"footer has {ft.size} bytes; the next one starts {nxt - off} "
                                f"bytes after it")
        c.pos = size
    return parse


def _peek_schema_name(src, off: int, end: int):
    if off + 12 > end:
        return None
    version = struct.unpack("<I", src.read(off, 4))[0]
    if version < 10:
        return None
    k = struct.unpack("<Q", src.read(off + 4, 8))[0]
    if off + 12 + k > end:
        return None
    return src.read(off + 12, k).decode("utf-8", "replace")

"""Parquet files of SCDL feature indices, framed without a parquet dependency.

Layout (Apache Parquet, "File Format"): 'PAR1', column chunks, FileMetaData (Thrift compact),
4-byte little-endian FileMetaData length, 'PAR1'. The column chunks are one "Parquet body"
leaf; FileMetaData is one leaf whose display gives its num_rows (read with a minimal Thrift
compact decoder), which the archive checks use as the block's feature count.
"""
from __future__ import annotations

import os
from typing import Optional

from ..core.cursor import Cursor
from ..core.engine import run_parser
from ..core.fielddoc import doc
from ..core.node import ERROR, WARNING, Node
from . import thrift_compact

MAGIC = b"PAR1"
SPEC = "Apache Parquet format, File Format"
MAGIC_DOC = doc("Parquet magic number 'PAR1' (at the start and at the end of the file).",
                spec=SPEC)
BODY_DOC = doc("Row groups and their column chunks (pages); not decoded here.", spec=SPEC,
               note="SCDL writes one parquet file per feature block with pyarrow "
                    "(pq.write_table): the var table (genes) or the obs table (cells).")
FOOTER_DOC = doc("FileMetaData, Thrift compact protocol: version, schema, num_rows, "
                 "row groups, key/value metadata, created_by.", spec=SPEC)
FOOTER_LEN_DOC = doc("Length of the FileMetaData in bytes (uint32, little-endian).", spec=SPEC)


def parse_parquet_source(source, name: Optional[str] = None) -> Node:
    root = run_parser(name or source.name, "file", source, _parse)
    root.type = "Parquet"
    return root


def open_parquet(document, path: str) -> Node:
    return parse_parquet_source(document.open_source(path), os.path.basename(path))


def num_rows(node: Node) -> Optional[int]:
    """The num_rows a parsed parquet file node's FileMetaData gives (None if unknown)."""
    f = node.find("FileMetaData")
    return f.data.get("num_rows") if f is not None and isinstance(f.data, dict) else None


def _parse(cur: Cursor) -> None:
    size = cur.source.size
    cur.need("magic", 4, "the Parquet magic 'PAR1'")
    m = cur.raw("magic", 4, MAGIC_DOC, kind="string")
    head = cur.source.read(0, 4)
    m.value, m.display = head.decode("latin-1"), repr(head.decode("latin-1"))
    if head != MAGIC:
        m.mark(ERROR, f"magic: expected 'PAR1', found {head!r}")
    if size < 12:
        cur.fail("truncated", f"Parquet: {size} bytes cannot hold 'PAR1', a footer length and "
                              f"'PAR1' (12 bytes at least)")
    flen = cur.peek_prim("u32", at=size - 8)
    body_end = size - 8 - flen if flen is not None and flen <= size - 12 else None
    if body_end is None:
        cur.raw("Parquet body", size - 8 - cur.pos, BODY_DOC, kind="payload")
    else:
        if body_end > cur.pos:
            cur.raw("Parquet body", body_end - cur.pos, BODY_DOC, kind="payload")
        meta = cur.raw("FileMetaData", flen, FOOTER_DOC, kind="metadata")
        info = thrift_compact.read_struct(cur.source.read(meta.offset, flen),
                                          want=(1, 3, 6), names={1: "version", 3: "num_rows",
                                                                 6: "created_by"})
        meta.data = info
        if "error" in info:
            meta.mark(WARNING, f"FileMetaData: {info['error']}")
        else:
            parts = [f"num_rows={info.get('num_rows')}"]
            if isinstance(info.get("created_by"), str):
                parts.append(f"created_by={info['created_by']!r}")
            meta.display = ", ".join(parts)
            meta.value = info.get("num_rows")
    fl = cur.u32("footer_length", FOOTER_LEN_DOC)
    if body_end is None:
        fl.mark(ERROR, f"footer_length: {fl.value} bytes of FileMetaData cannot fit in a "
                       f"{size}-byte file")
    tail = cur.raw("magic (end)", 4, MAGIC_DOC, kind="string")
    tb = cur.source.read(size - 4, 4)
    tail.value, tail.display = tb.decode("latin-1"), repr(tb.decode("latin-1"))
    if tb != MAGIC:
        tail.mark(ERROR, f"magic (end): expected 'PAR1', found {tb!r}")

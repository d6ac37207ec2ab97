"""One chunk file: its codec chain reversed stage by stage, then its records.

Each stage is a node named `Codec k: NAME` over that stage's input bytes (the file for the
last codec, a derived source for the others) with the nodes of its framing; its output is
a derived source (`<key> ← NAME`) that the next stage, or the records, explain.
"""
from __future__ import annotations

import os
import traceback
from typing import Optional, Tuple

from ..cursor import Cursor, ParseStop
from ..engine import fill_gaps
from ..fielddoc import doc
from ..node import ERROR, WARNING, Node, hex_preview
from .codecs import CodecError, CodecSpec, get
from .meta import ArrayMeta
from .records import records_into

D_CHUNK = doc("A chunk file: the chunk's records after the codec chain (stored bytes)",
              spec="zarr v2/v3 chunk storage")
D_STAGE = doc("A codec stage: the encoded bytes this codec produced; reversing it gives the "
              "previous stage's bytes (shown as their own source)")


def stage_limit(meta: ArrayMeta) -> int:
    """Most bytes a decoder may produce for one chunk (twice the expected size, so a wrong
    length is reported by the records check rather than as a codec failure)."""
    return 2 * meta.records_per_chunk * meta.itemsize + 4096


def run_stage(spec: CodecSpec, src, node: Node, limit: int) -> Optional[bytes]:
    cur = Cursor(src, 0, src.size, node)
    try:
        return get(spec.name).reverse(spec, cur, limit)
    except ParseStop:
        return None
    except CodecError as e:
        if e.status != "marked":
            where = e.where if e.where is not None else cur.pos
            where = max(0, min(where, src.size))
            node.add(Node("decode error" if e.status == ERROR else "not decoded", "error", src,
                          where, 0, status=ERROR if e.status == ERROR else WARNING,
                          message=str(e)))
        return None
    except Exception as exc:  # a codec bug must not hide the rest of the tree
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        node.add(Node("internal codec error", "error", src, cur.pos, 0, status=ERROR,
                      message=f"{type(exc).__name__}: {exc} ({tb.filename.rsplit('/', 1)[-1]}:"
                              f"{tb.lineno})"))
        return None
    finally:
        fill_gaps(node)


def decode_stages(document, meta: ArrayMeta, parent: Node, src, label: str) -> Optional[object]:
    """Reverse every codec of `meta` on `src`, adding stage nodes to `parent`; returns the
    source holding the decoded records (or None)."""
    limit = stage_limit(meta)
    cur_src = src
    for k in range(len(meta.codecs) - 1, -1, -1):
        spec = meta.codecs[k]
        stage = Node(f"Codec {k + 1}: {spec.label}", "filter", cur_src, 0, cur_src.size,
                     doc=D_STAGE)
        parent.add(stage)
        data = run_stage(spec, cur_src, stage, limit)
        if data is None:
            return None
        stage.display = f"{cur_src.size} B → {len(data)} B"
        name = f"{label} ← {spec.label}"
        if document is not None:
            cur_src = document.add_derived(data, name, origin=f"{spec.label} decoded",
                                           origin_node=stage, parent=cur_src)
        else:
            from ..source import BytesSource
            cur_src = BytesSource(data, name, origin_node=stage, parent=cur_src)
    return cur_src


def chunk_file_node(document, meta: ArrayMeta, path: str, coords: Optional[Tuple[int, ...]],
                    key: str) -> Node:
    src = document.open_source(path)
    node = Node(os.path.basename(path), "file", src, 0, src.size, doc=D_CHUNK)
    where = f"chunk {list(coords)}" if coords is not None else "chunk"
    node.display = f"{where}: {src.size} B stored"
    node.value = key
    if meta.rtype is None or not meta.usable:
        if src.size:
            node.add(Node("chunk data", "payload", src, 0, src.size,
                          display=hex_preview(src.read(0, 16)), status=WARNING,
                          message=f"not decoded: {meta.problem or 'the metadata has no usable dtype'}"))
        return node
    out = decode_stages(document, meta, node, src, document.relname(path))
    if out is not None:
        records_into(node, meta, out, coords)
    fill_gaps(node)
    return node

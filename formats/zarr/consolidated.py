"""Consolidated metadata against each array's own: a reader that opens the store through
`.zmetadata` (v2) or a group zarr.json's inline `consolidated_metadata` (v3) never reads the
array's own metadata, so where the two disagree on shape, dtype or chunks it sees another
array than the one on disk (a store resized or rewritten after consolidation)."""
from __future__ import annotations

import json
import os
from typing import Optional, Tuple

from ..core import jsontree
from ..core.dataset_fs import DatasetFS
from ..core.findings import ZARR_CONSOLIDATED
from ..core.node import WARNING, Node

# the keys whose disagreement changes what a reader sees, per format
V2_KEYS: Tuple[str, ...] = ("shape", "dtype", "chunks", "order", "dimension_separator")
V3_KEYS: Tuple[str, ...] = ("shape", "data_type", "chunk_grid", "chunk_key_encoding")


def check(fs: DatasetFS, group: str, name: str, file_node: Node, doc: jsontree.JsonDoc) -> None:
    """Mark each array entry of group `group`'s consolidated metadata (file `name`: .zmetadata
    or zarr.json, parsed as `doc` under `file_node`) that disagrees with that array's own
    metadata file, naming both values."""
    if not doc.ok or not isinstance(doc.value, dict):
        return
    if name == ".zmetadata":
        entries = doc.value.get("metadata")
        holder = jsontree.value_node(jsontree.member(doc.node, "metadata"))
        arrays = {k[: -len(".zarray")].rstrip("/"): (k, v) for k, v in entries.items()
                  if k.endswith(".zarray")} if isinstance(entries, dict) else {}
        own, keys = ".zarray", V2_KEYS
    else:
        cm = doc.value.get("consolidated_metadata")
        entries = cm.get("metadata") if isinstance(cm, dict) else None
        holder = jsontree.value_node(jsontree.member(jsontree.value_node(
            jsontree.member(doc.node, "consolidated_metadata")), "metadata"))
        arrays = {k: (k, v) for k, v in entries.items()
                  if isinstance(v, dict) and v.get("node_type") == "array"} \
            if isinstance(entries, dict) else {}
        own, keys = "zarr.json", V3_KEYS
    for rel, (key, said) in arrays.items():
        if not isinstance(said, dict) or not rel:
            continue
        target = jsontree.member(holder, key) or file_node
        path = os.path.join(group, *rel.split("/"), own)
        actual = _read(fs, path)
        where = f"{name} entry {key!r}"
        if actual is None:
            target.mark(WARNING, f"{where} describes an array whose own {rel}/{own} is missing or "
                                 f"unreadable: a reader trusting the consolidated metadata sees "
                                 f"an array that is not there")
            target.code = ZARR_CONSOLIDATED
            continue
        diff = [k for k in keys if said.get(k) != actual.get(k)]
        if diff:
            parts = "; ".join(f"{k}: consolidated {_text(said.get(k))}, own {_text(actual.get(k))}"
                              for k in diff)
            target.mark(WARNING, f"{where} disagrees with {rel}/{own} ({parts}): a reader that "
                                 f"trusts the consolidated metadata sees another array than "
                                 f"the one stored")
            target.code = ZARR_CONSOLIDATED


def _read(fs: DatasetFS, path: str) -> Optional[dict]:
    if not fs.stat(path).is_file:
        return None
    try:
        text, over = fs.read_bytes(path, jsontree.MAX_DOCUMENT_BYTES)
        v = None if over else json.loads(text)
    except (OSError, ValueError, RecursionError):
        return None
    return v if isinstance(v, dict) else None


def _text(v) -> str:
    return json.dumps(v)[:120] if v is not None else "(absent)"

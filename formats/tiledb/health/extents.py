"""Fragment extents for the extent plot: the MBR of every data tile of a sparse fragment (the
leaf level of its R-tree, format_spec/fragment.md "R-Tree") and the non-empty domain of a
dense one. Read straight from the R-tree section's payload (no nodes built), bounded."""
from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional

from ..model.array_model import ArraySchema, FragmentMetadata
from ..parse.fragment_values import python_value
from .snapshot import Snapshot

MAX_BOXES = 20000   # per fragment: the plot needs no more


def _leaves(payload: bytes, schema: ArraySchema, version: int, limit: int) -> List[List[Any]]:
    dims = schema.dimensions
    pos = 0

    def take(n: int) -> bytes:
        nonlocal pos
        if pos + n > len(payload):
            raise ValueError("R-tree payload cut short")
        b = payload[pos:pos + n]
        pos += n
        return b

    if version < 5:
        take(4)             # dimension number
    take(4)                 # fanout
    if version < 5:
        take(1)             # datatype
    levels = struct.unpack("<I", take(4))[0]
    leaves: List[List[Any]] = []
    for level in range(levels):
        n = struct.unpack("<Q", take(8))[0]
        last = level == levels - 1
        fixed = all(not d.var for d in dims) or version < 5
        if fixed and not last:
            take(n * sum(2 * d.cell_size for d in dims))
            continue
        for i in range(n):
            box = []
            for d in dims:
                if d.var and version >= 5:
                    total, start = struct.unpack("<QQ", take(16))
                    if start > total:
                        raise ValueError("bad var range")
                    raw = take(total)
                    box.append([python_value(d.datatype, raw[:start]),
                                python_value(d.datatype, raw[start:])])
                else:
                    raw = take(2 * d.cell_size)
                    box.append([python_value(d.datatype, raw[:d.cell_size]),
                                python_value(d.datatype, raw[d.cell_size:])])
            if last and len(leaves) < limit:
                leaves.append(box)
    return leaves


def fragment_boxes(snap: Snapshot, name: str, limit: int = MAX_BOXES) -> Optional[List[List[Any]]]:
    """Per tile [[lo, hi] per dimension] (sparse), or the non-empty domain as one box (dense);
    None when the fragment metadata cannot tell."""
    fm: Optional[FragmentMetadata] = snap.metadata.get(name)
    if fm is None:
        return None
    schema = fm.schema or snap.schema_for(fm.schema_name)
    ned = [[python_plain(lo), python_plain(hi)] for lo, hi in fm.non_empty_domain or []]
    if fm.dense or schema is None:
        return [ned] if ned else None
    footer = fm.footer
    loader = fm.loader
    if footer is None or loader is None or footer.rtree is None:
        return [ned] if ned else None
    try:
        payload = loader.payload(footer.rtree)
        boxes = _leaves(payload, schema, fm.version, limit)
    except Exception:  # an unreadable R-tree: fall back to the fragment's box
        return [ned] if ned else None
    return boxes or ([ned] if ned else None)


def python_plain(v):
    if hasattr(v, "item"):
        return v.item()
    return v


def array_boxes(snap: Snapshot) -> Dict[str, List[List[Any]]]:
    out = {}
    for name in snap.listing.fragments:
        boxes = fragment_boxes(snap, name)
        if boxes:
            out[name] = boxes
    return out

"""Filter stages of one chunk, for the pipeline panel (no Qt).

Reversing stage k of a chunk gives the bytes as they were after filters 0..k-1; each reached
stage becomes a derived source of the document with nodes: the stage's metadata split per
filter (`formats.filters.split_metadata`) and its data (typed cells for stage 0).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np

from arrayscope.formats import filters as F
from arrayscope.formats.cursor import Cursor
from arrayscope.formats.engine import fill_gaps
from arrayscope.formats.node import LazyChildren, Node, hex_preview
from arrayscope.formats.tiledb.enums import (
    DATATYPE_NAMES,
    DATETIME_UNITS,
    FILTER_TYPES,
    datatype_size,
    format_value,
    numpy_dtype,
)
from arrayscope.formats.tiledb.tile import ChunkInfo, TileInfo


@dataclass
class StageMark:
    """`data` of a stage root node: which chunk and stage it shows."""

    chunk: ChunkInfo
    k: int


def find_chunk_context(node) -> Tuple[Optional[Node], Optional[ChunkInfo], Optional[Node], Optional[TileInfo]]:
    """(chunk node, ChunkInfo, tile node, TileInfo) for `node` or its nearest ancestors."""
    chunk_node = ci = tile_node = ti = None
    n = node
    while n is not None:
        d = n.data
        if isinstance(d, StageMark) and ci is None:
            ci = d.chunk
            chunk_node = n.parent
        elif isinstance(d, ChunkInfo) and ci is None:
            ci, chunk_node = d, n
        elif isinstance(d, TileInfo) and ti is None:
            ti, tile_node = d, n
            break
        n = n.parent
    if ci is None and ti is not None and ti.chunks:
        ci = ti.chunks[0]
        chunk_node = tile_node.find("Chunk 1") if tile_node is not None else None
    return chunk_node, ci, tile_node, ti


def describe_spec(spec) -> str:
    o = spec.options
    if "level" in o:
        return f"{spec.name}({o['level']})"
    if "max_window" in o:
        return f"{spec.name}(window={o['max_window']})"
    if "scale" in o:
        return f"{spec.name}(scale={o['scale']}, offset={o['offset']}, width={o['byte_width']})"
    return spec.name


def stage_title(specs, k: int) -> str:
    n = len(specs)
    if k == n:
        return "On disk" if n else "On disk (no filters)"
    if k == 0:
        return "Cells"
    return f"After {', '.join(s.name for s in specs[:k])}"


def stage_bytes(stage) -> bytes:
    return stage.metadata_bytes + stage.data_bytes


def cell_array(data: bytes, info) -> np.ndarray:
    """The cell bytes as a numpy array of the datatype (rows of cell_val_num when fixed > 1)."""
    dt = numpy_dtype(info.datatype)
    n = len(data) // dt.itemsize
    arr = np.frombuffer(data[: n * dt.itemsize], dtype=dt)
    cvn = info.cell_val_num
    if not info.var and cvn not in (0, 1, 0xFFFFFFFF) and n % cvn == 0:
        arr = arr.reshape(-1, cvn)
    return arr


def build_stage_nodes(src, specs, k: int, stage, info, chunk: ChunkInfo) -> Node:
    """The nodes of stage k's bytes in derived source `src`."""
    md = stage.metadata_bytes
    total = src.size
    title = stage_title(specs, k)
    kind = "cells" if k == 0 else "payload"
    root = Node(f"Stage {k}: {title}", kind, src, 0, total, data=StageMark(chunk, k),
                display=f"{total:,} B")
    if md:
        mdn = Node("Stage metadata", "metadata", src, 0, len(md))
        root.add(mdn)
        cur = Cursor(src, 0, len(md), mdn)
        try:
            F.split_metadata(specs[:k], cur, info)
        except Exception:  # ParseStop or a codec's own error: already marked or shown raw
            pass
        fill_gaps(mdn)
    dlen = total - len(md)
    if k == 0:
        root.add(cells_node(src, len(md), dlen, info))
    elif dlen:
        root.add(Node("Stage data", "payload", src, len(md), dlen,
                      display=hex_preview(src.read(len(md), 16)), type=f"uint8[{dlen}]"))
    return root


def cells_node(src, offset: int, size: int, info) -> Node:
    dt = info.datatype
    isz = datatype_size(dt)
    name = DATATYPE_NAMES.get(dt, str(dt))
    cvn = info.cell_val_num
    per = isz if (info.var or cvn in (0, 1, 0xFFFFFFFF)) else isz * cvn
    count = size // per if per else 0

    def make(i: int) -> Node:
        raw = src.read(offset + i * per, per)
        v, text = format_value(dt, raw)
        return Node(f"Cell {i}", "field", src, offset + i * per, per, value=v, display=text,
                    type=name if per == isz else f"{name}[{cvn}]")

    arr = cell_array(src.read(offset, size), info)
    head = format_value(dt, src.read(offset, min(size, per * 6)))[1]
    node = Node("Cells", "cells", src, offset, size, display=f"{count:,} × {name}: {head}",
                type=f"{name}[{count}]", data=arr)
    node.set_lazy(LazyChildren(count, make, elements=True))
    if count * per < size:
        node.mark("warning", f"{size - count * per} trailing bytes are not a whole cell")
    return node


@dataclass
class ForwardCheck:
    k: int            # filter index (0-based): filter k applied to stage k gives stage k+1
    status: str       # identical / re-encoded / different / failed
    text: str


def forward_checks(specs, stages, info, key=None, original_length=None,
                   offsets=None) -> List[ForwardCheck]:
    """Apply each filter forward to the reversed stage before it and compare with the stage
    after it (the on-disk bytes for the last filter): the core's one forward check."""
    from arrayscope.formats.forward_check import check_forward

    status = {"identical": "identical", "tolerated": "identical", "re-encoded": "re-encoded",
              "different": "different", "failed": "failed"}
    return [ForwardCheck(c.k, status[c.status], c.message)
            for c in check_forward(specs, stages, info,
                                   F.RunContext(key, original_length, offsets=offsets))]


@dataclass
class Experiment:
    """Applying an edited pipeline to the decoded cells (teaching)."""

    specs: List[object]
    stages: List[object] = field(default_factory=list)
    seconds: List[float] = field(default_factory=list)
    error: Optional[str] = None
    failed_at: Optional[int] = None
    round_trip: Optional[bool] = None


def run_experiment(specs, cells: bytes, info, key=None) -> Experiment:
    ex = Experiment(list(specs))
    infos = F.stage_infos(specs, info)
    run = F.RunContext(key, len(cells))
    stage = F.Stage([], [cells])
    ex.stages.append(stage)
    for k, spec in enumerate(specs):
        t0 = time.perf_counter()
        try:
            stage = F.get(spec.type).forward(spec, stage, infos[k], run)
        except Exception as e:
            ex.error, ex.failed_at = f"{spec.name}: {type(e).__name__}: {e}", k
            return ex
        ex.seconds.append(time.perf_counter() - t0)
        ex.stages.append(stage)
    try:
        last = ex.stages[-1]
        back = F.reverse_chunk(specs, last.metadata_bytes, last.data_bytes, info,
                               F.RunContext(key, len(cells)))
        ex.round_trip = back.error is None and back.cells == cells
    except Exception:
        ex.round_trip = False
    return ex


def default_spec(filter_type: int):
    """A FilterSpec with TileDB's default options for `filter_type`."""
    from arrayscope.formats.tiledb.enums import COMPRESSOR_OF_FILTER

    opts = {}
    if filter_type in COMPRESSOR_OF_FILTER:
        opts = {"compressor": COMPRESSOR_OF_FILTER[filter_type], "level": -1}
        if filter_type in (6, 19):
            opts["reinterpret"] = 17
    elif filter_type in (7, 10):
        opts = {"max_window": 256}
    elif filter_type == 15:
        opts = {"scale": 1.0, "offset": 0.0, "byte_width": 8}
    return F.FilterSpec(filter_type, opts)


def available_filters() -> List[Tuple[int, str]]:
    """Filter types this build can apply forward (for the editor's Add menu)."""
    out = []
    for t, name in FILTER_TYPES.items():
        if t in (0, 17):
            continue
        f = F.get(t)
        if type(f).__name__ == "_Unknown":
            continue
        if type(f).forward is F.Filter.forward:
            continue
        out.append((t, name))
    return out


def datetime_unit(info) -> Optional[str]:
    return DATETIME_UNITS.get(getattr(info, "datatype", None))

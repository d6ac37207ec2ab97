"""A TileDB chunk as a `plugin.ChunkView`: its filter stages, reversed step by step.

Reversing stage k of a chunk gives the bytes as they were after filters 0..k-1; each reached
stage becomes a derived source of the document with nodes: the stage's metadata split per
filter (`formats.filters.split_metadata`) and its data (typed cells for stage 0). The view
keeps what was done with its chunk (stages reached, forward checks), so the window can come
back to it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from ... import filters as F
from ...core.cursor import Cursor
from ...core.engine import fill_gaps
from ...core.node import LazyChildren, Node, hex_preview
from ...core.plugin import CheckStatus, ForwardCheck, ForwardResult, StageRow
from ...core.source import ByteSource
from ...core.status import Status
from ...filters.enums import DATATYPE_NAMES, DATETIME_UNITS, datatype_size, format_value, numpy_dtype
from ..parse.tile import ChunkInfo, TileInfo
from . import tile_cells as TC
from .cell_coords import TileCoords, tile_coords
from .cellstable import PairedCells, TypedCells
from .lab import TileDBLab, describe_spec

CHECK_TEXT = {"identical": "✓ identical", "re-encoded": "≈ re-encoded", "different": "✗ different",
              "failed": "✗ failed"}
CHECK_STATUS = {"identical": "ok", "re-encoded": "warning", "different": "error", "failed": "error"}


@dataclass
class StageMark:
    """`data` of a stage root node: which chunk and stage it shows."""

    chunk: ChunkInfo
    k: int
    forward: bool = False    # the cells re-encoded by "Apply forward" (shows stage n)


def find_chunk_context(node: Optional[Node]) -> Tuple[Optional[Node], Optional[ChunkInfo],
                                                       Optional[Node], Optional[TileInfo]]:
    """(chunk node, ChunkInfo, tile node, TileInfo) for `node` or its nearest ancestors."""
    chunk_node: Optional[Node] = None
    tile_node: Optional[Node] = None
    ci: Optional[ChunkInfo] = None
    ti: Optional[TileInfo] = None
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


def stage_title(specs, k: int) -> str:
    n = len(specs)
    if k == n:
        return "On disk" if n else "On disk (no filters)"
    if k == 0:
        return "Cells"
    return f"After {', '.join(s.name for s in specs[:k])}"


def stage_bytes(stage: F.Stage) -> bytes:
    return stage.metadata_bytes + stage.data_bytes


def cell_array(data: bytes, info: F.DataInfo) -> np.ndarray:
    """The cell bytes as a numpy array of the datatype (rows of cell_val_num when fixed > 1)."""
    dt = numpy_dtype(info.datatype)
    n = len(data) // dt.itemsize
    arr = np.frombuffer(data[: n * dt.itemsize], dtype=dt)
    cvn = info.cell_val_num
    if not info.var and cvn not in (0, 1, 0xFFFFFFFF) and n % cvn == 0:
        arr = arr.reshape(-1, cvn)
    return arr


def build_stage_nodes(src: ByteSource, specs, k: int, stage: F.Stage, info: F.DataInfo,
                      chunk: ChunkInfo) -> Node:
    """The nodes of stage k's bytes in derived source `src`."""
    md = stage.metadata_bytes
    total = src.size
    kind = "cells" if k == 0 else "payload"
    root = Node(f"Stage {k}: {stage_title(specs, k)}", kind, src, 0, total,
                data=StageMark(chunk, k), display=f"{total:,} B")
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


def cells_node(src: ByteSource, offset: int, size: int, info: F.DataInfo) -> Node:
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
        node.mark(Status.WARNING, f"{size - count * per} trailing bytes are not a whole cell")
    return node


def stage_checks(specs, stages, info: F.DataInfo, key: Optional[bytes] = None,
                 original_length: Optional[int] = None, offsets: Optional[bytes] = None):
    """Apply each filter forward to the reversed stage before it and compare with the stage
    after it (the on-disk bytes for the last filter): the core's one forward check
    (forward_check.py), which knows each released writer's rules."""
    from ..verify.forward_check import check_forward

    return check_forward(specs, stages, info, F.RunContext(key, original_length, offsets=offsets))


_STATUS: Dict[str, CheckStatus] = {"identical": "identical", "tolerated": "identical",
                                   "re-encoded": "re-encoded", "different": "different",
                                   "failed": "failed"}


def forward_verdict(checks, stored_size: int) -> Tuple[Status, str]:
    """(status, one line) for a chunk's stage checks: damage only when a deterministic
    filter does not reproduce its stage; re-encoding codecs and writer quirks are info."""
    bad = [c for c in checks if not c.ok]
    if bad:
        return Status.ERROR, f"✗ differs from the stored bytes: {bad[0].message}"
    recoded = [c for c in checks if c.status == "re-encoded"]
    if recoded:
        return Status.WARNING, (f"≈ re-encoded differently ({recoded[0].message}) — not damage: "
                                f"the stored bytes decode to these cells")
    quirks = [c for c in checks if c.quirk]
    if quirks:
        return Status.OK, f"✓ matches the stored {stored_size:,} B (writer quirk: {quirks[0].message})"
    return Status.OK, f"✓ forward reproduces the stored {stored_size:,} B exactly"


class TileDBChunkView:
    """One chunk of a TileDB tile (see `plugin.ChunkView`)."""

    def __init__(self, document, chunk_node: Optional[Node], ci: ChunkInfo,
                 tile_node: Optional[Node], tile: Optional[TileInfo]):
        self.document = document
        self.node = chunk_node
        self.ci = ci
        self.tile_node, self.tile = tile_node, tile
        self.identity: object = ("tiledb", id(ci))
        self.keeps_state = True
        self.reached = len(ci.specs)   # lowest stage index reversed so far
        self.run: Optional[F.ChunkRun] = None
        self.checks: List[ForwardCheck] = []
        self.stage_checks: list = []               # forward_check.StageCheck per filter
        self.fwd_source: Optional[ByteSource] = None   # "Apply forward": re-encoded bytes
        self.fwd_node: Optional[Node] = None
        self.coords: Optional[TileCoords] = None   # the tile's cell coordinates, once asked
        self.sources: Dict[int, ByteSource] = {}   # k -> derived source
        self.nodes: Dict[int, Node] = {}           # k -> stage root node
        self.where = self._locate()
        self.paired: Optional[TC.TileCells] = None
        info = ci.info
        src = getattr(ci.source, "name", "")
        dt = DATATYPE_NAMES.get(info.datatype, str(info.datatype))
        short = src.rsplit("/", 1)[-1]
        self.heading = self.where.describe() if self.where is not None else ""
        self.title = (f"Chunk {ci.index + 1} of {short} @ 0x{ci.metadata_offset - 12:X}: "
                      f"{ci.filtered_length:,} B on disk (+{ci.metadata_length:,} B metadata) → "
                      f"{ci.original_length:,} B of {dt} ({info.role})")
        self.subtitle = "pipeline: " + (" → ".join(describe_spec(s) for s in ci.specs) or "no filters")
        self.tooltip = src

    def _locate(self) -> Optional[TC.FieldTile]:
        """The attribute / dimension, part and tile of a data file's chunk (None for other
        tiles: generic tiles, label arrays, files without readable fragment metadata)."""
        try:
            return TC.locate(self.document, self.ci.source, self.ci.metadata_offset,
                             self.node or self.tile_node)
        except Exception:  # noqa: BLE001 - a title is not worth an exception
            return None

    # ---- siblings ----------------------------------------------------------------------
    def siblings(self) -> List[Tuple[str, Optional[Node]]]:
        ti = self.tile
        if ti is None or len(ti.chunks) <= 1:
            return []
        tn = self.tile_node
        return [(f"Chunk {c.index + 1}: {c.original_length:,} B → {c.filtered_length:,} B",
                 tn.find(f"Chunk {c.index + 1}") if tn is not None else None) for c in ti.chunks]

    def sibling_index(self) -> int:
        return self.ci.index

    def sibling_view(self, i: int) -> Optional["TileDBChunkView"]:
        if self.tile is None or not 0 <= i < len(self.tile.chunks):
            return None
        node = self.tile_node.find(f"Chunk {i + 1}") if self.tile_node is not None else None
        return TileDBChunkView(self.document, node, self.tile.chunks[i], self.tile_node, self.tile)

    # ---- stages ------------------------------------------------------------------------
    def open(self, key: Optional[bytes]) -> List[int]:
        """Reverse every filter (the rule for every format: a chunk shows its cells)."""
        if self.run is not None and (self.reached == 0 or self.run.error is not None):
            return []
        return self.reverse_to(0, key)

    def stage_count(self) -> int:
        return len(self.ci.specs)

    def stage_of(self, node: Optional[Node]) -> Optional[int]:
        n = node
        while n is not None:
            d = n.data
            if isinstance(d, StageMark) and d.chunk is self.ci:
                return len(self.ci.specs) if d.forward else d.k
            if n is self.node:
                return len(self.ci.specs)
            n = n.parent
        return None

    def lowest(self) -> int:
        return self.reached

    def reverse_to(self, k: int, key: Optional[bytes]) -> List[int]:
        run = self.ci.reverse(key, k)
        self.run = run
        n = len(self.ci.specs)
        lowest = n
        made = []
        for j in range(n - 1, k - 1, -1):
            if run.stages[j] is None:
                break
            lowest = j
            if self._make_stage(j):
                made.append(j)
        self.reached = min(self.reached, lowest)
        if self.reached == 0 and run.error is None:
            self.forward_check(key)
        return made

    def _make_stage(self, k: int) -> bool:
        stage = self.run.stages[k] if self.run is not None else None
        if k in self.sources or stage is None:
            return False
        ci = self.ci
        base = getattr(ci.source, "name", "chunk").rsplit("/", 1)[-1]
        label = "cells" if k == 0 else f"stage {k}"
        name = f"{base} @0x{ci.metadata_offset - 12:X} chunk {ci.index + 1} {label}"
        origin = (f"{stage_title(ci.specs, k)} of chunk {ci.index + 1} of "
                  f"{getattr(ci.source, 'name', '')} (reversed "
                  f"{', '.join(s.name for s in reversed(ci.specs[k:]))})")
        src = self.document.add_derived(stage_bytes(stage), name, origin=origin,
                                        origin_node=self.node, parent=ci.source)
        self.sources[k] = src
        self.nodes[k] = build_stage_nodes(src, ci.specs, k, stage, ci.info, ci)
        return True

    def remake_stage(self, k: int) -> bool:
        return self._make_stage(k)

    def stage_node(self, k: int) -> Optional[Node]:
        return self.nodes.get(k)

    def stage_source(self, k: int) -> Optional[ByteSource]:
        return self.sources.get(k)

    def owns_source(self, source: object) -> bool:
        return source is self.fwd_source or any(s is source for s in self.sources.values())

    def held_sources(self) -> List[ByteSource]:
        held = [self.sources[k] for k in sorted(self.sources)]
        return held + ([self.fwd_source] if self.fwd_source is not None else [])

    def forget_source(self, source: object) -> Optional[Node]:
        if source is self.fwd_source and source is not None:
            node, self.fwd_source, self.fwd_node = self.fwd_node, None, None
            return node
        for k, s in list(self.sources.items()):
            if s is source:
                del self.sources[k]
                return self.nodes.pop(k, None)
        return None

    def value_unit(self) -> Optional[str]:
        """The numpy datetime unit of the cells (the inspector reads them as dates)."""
        return DATETIME_UNITS.get(self.ci.info.datatype)

    def forward_check(self, key: Optional[bytes]) -> List[ForwardCheck]:
        if self.run is None:
            return []
        self.stage_checks = stage_checks(self.ci.specs, self.run.stages, self.ci.info, key,
                                         self.ci.original_length, self.run.offsets)
        self.checks = [ForwardCheck(c.k, _STATUS[c.status], c.message) for c in self.stage_checks]
        return self.checks

    def forward_result(self, key: Optional[bytes]) -> Optional[ForwardResult]:
        """The cells re-encoded by the pipeline (a derived source: the last filter's forward
        output, metadata then data, as the chunk stores them) and the verdict."""
        ci = self.ci
        stored = ci.metadata_length + ci.filtered_length
        if not ci.specs:
            return ForwardResult(None, Status.OK, "no filters: the stored bytes are the cells")
        self.open(key)
        run = self.run
        if run is None or run.error is not None or run.stages[0] is None:
            return ForwardResult(None, Status.ERROR, f"✗ cannot apply forward: {self.cells_message()}")
        self.forward_check(key)
        checks = self.stage_checks
        status, verdict = forward_verdict(checks, stored)
        detail = "\n".join(c.message for c in checks)
        last = checks[-1] if checks else None
        if last is None or not last.made:
            return ForwardResult(None, status, verdict, detail)
        if self.fwd_source is None:
            base = getattr(ci.source, "name", "chunk").rsplit("/", 1)[-1]
            src = self.document.add_derived(
                last.made, f"{base} @0x{ci.metadata_offset - 12:X} chunk {ci.index + 1} re-encoded",
                origin=f"the cells of chunk {ci.index + 1} with every filter applied forward "
                       f"({', '.join(s.name for s in ci.specs)})",
                origin_node=self.node, parent=ci.source)
            root = Node("Re-encoded (apply forward)", "payload", src, 0, src.size,
                        data=StageMark(ci, len(ci.specs), forward=True),
                        display=f"{src.size:,} B; stored {stored:,} B: {verdict}")
            md = last.metadata_size if last.made_size == last.stored_size else 0
            if 0 < md < src.size:
                root.add(Node("Stage metadata", "metadata", src, 0, md))
                root.add(Node("Stage data", "payload", src, md, src.size - md))
            self.fwd_source, self.fwd_node = src, root
        return ForwardResult(self.fwd_node, status, verdict, detail)

    # ---- rows --------------------------------------------------------------------------
    def rows(self) -> List[StageRow]:
        """The stored chunk, then its filters from the disk side, as far as it has gone."""
        ci = self.ci
        specs = ci.specs
        n = len(specs)
        run = self.run
        checks = {c.k: c for c in self.checks}
        md_nodes = self.metadata_nodes()
        out = [StageRow(stage_title(specs, n), ci.metadata_length + ci.filtered_length, "stored",
                        kind="payload", node=self.node)]
        for k in range(n - 1, -1, -1):
            spec = specs[k]
            stage = run.stages[k] if run is not None else None
            failed = stage is None and run is not None and run.failed_at == k
            row = StageRow(f"⟲ {k + 1}. {describe_spec(spec)}",
                           stage.nbytes if stage is not None else None,
                           "reversed" if stage is not None else "failed" if failed else "pending",
                           k=k, tooltip=f"reverse filter {k + 1} ({spec.name}): gives "
                                        f"{stage_title(specs, k).lower()}",
                           error=str(run.error) if failed and run is not None else None,
                           details=md_nodes.get(k, []))
            chk = checks.get(k)
            if chk is not None:
                row.note, row.note_tooltip = CHECK_TEXT[chk.status], chk.text
                row.note_status = CHECK_STATUS[chk.status]  # type: ignore[assignment]
            row.expanded = bool(row.details) and not failed and k == n - 1
            out.append(row)
        return out

    def metadata_nodes(self) -> Dict[int, List[Node]]:
        """On-disk chunk metadata nodes by filter index, plus those of reversed stages."""
        out: Dict[int, List[Node]] = {}
        specs = self.ci.specs
        groups = []
        if self.node is not None:
            md = self.node.find("Chunk metadata")
            if md is not None:
                groups.append(md)
        for node in self.nodes.values():
            m = node.find("Stage metadata")
            if m is not None:
                groups.append(m)
        for g in groups:
            for c in g.iter_children():
                parts = c.name.split(" ")
                if len(parts) > 2 and parts[0] == "Filter" and parts[1].isdigit():
                    k = int(parts[1]) - 1
                    if 0 <= k < len(specs):
                        out.setdefault(k, []).append(c)
        return out

    # ---- cells -------------------------------------------------------------------------
    def cells(self) -> Optional[bytes]:
        run = self.run
        if run is None or run.error is not None or run.stages[0] is None:
            return None
        return run.stages[0].data_bytes

    def cells_message(self) -> str:
        run = self.run
        if run is None or run.error is None:
            return "Not reversed yet: a chunk is reversed when it is selected (open)."
        return f"Cannot reach the cells: {run.error}"

    def cell_table(self, key: Optional[bytes]):
        data = self.cells()
        if data is None:
            return None
        w = self.where
        if w is not None and w.paired:
            if self.paired is None:
                self.paired = TC.tile_cells(self.document, w, key)
            tc = self.paired
            if not (tc.error is not None and tc.count == 0):
                return PairedCells(tc, w, self._coords(key), self._buffers(key))
        stage0 = self.nodes.get(0)
        cells = stage0.find("Cells") if stage0 is not None else None
        src = self.sources.get(0)
        arr = cell_array(data, self.ci.info)
        ci = self.ci
        buf: Optional[Tuple[object, int]]
        if ci.specs:
            where = f" (tab “{src.name}”)" if src is not None else ""
            buf = (src, src.size - len(data)) if src is not None else None
        else:
            where = " (unfiltered: the stored bytes)"
            buf = (ci.source, ci.data_offset)
        caption = (f"{arr.shape[0]:,} cells of {DATATYPE_NAMES.get(ci.info.datatype, '?')} — "
                   f"{len(data):,} B{where}")
        table = TypedCells(arr, ci.info.datatype, caption, cells, self._coords(key),
                           self._first_cell(arr), buf)
        return table

    def _coords(self, key: Optional[bytes]):
        """The tile's cell coordinates, when the chunk is a field's tile (once per view)."""
        w = self.where
        if self.coords is None and w is not None and w.field_kind in ("attribute", "dimension"):
            try:
                self.coords = tile_coords(self.document, w, key)
            except Exception:  # noqa: BLE001 - coordinates are not worth an exception
                self.coords = None
        return self.coords

    def _first_cell(self, arr: np.ndarray) -> int:
        """The index in its tile of this chunk's first cell (chunks split a tile in order)."""
        ti = self.tile
        if ti is None or self.ci.index == 0 or not len(arr):
            return 0
        per = arr.itemsize * (1 if arr.ndim == 1 else int(arr.shape[1]))
        return sum(c.original_length for c in ti.chunks[: self.ci.index]) // max(1, per)

    def _buffers(self, key: Optional[bytes]):
        """part -> (source, base) of that part's decoded tile: this chunk's stage-0 tab when
        the tile is this one chunk, else the file (unfiltered) or a derived decoded tile."""
        w = self.where
        assert w is not None

        def buf(part: str):
            ti = self.tile
            if part == w.part and ti is not None and len(ti.chunks) == 1:
                if not self.ci.specs:
                    return self.ci.source, self.ci.data_offset
                src = self.sources.get(0)
                data = self.cells()
                if src is not None and data is not None:
                    return src, src.size - len(data)
            try:
                return TC.part_buffer(self.document, w, part, key)
            except Exception:  # noqa: BLE001 - a missing part highlights nothing
                return None
        return buf

    def lab(self) -> TileDBLab:
        return TileDBLab(self.ci.specs, self.ci.info)


def chunk_view(document, node: Node) -> Optional[TileDBChunkView]:
    chunk_node, ci, tile_node, ti = find_chunk_context(node)
    if ci is None:
        return None
    return TileDBChunkView(document, chunk_node, ci, tile_node, ti)

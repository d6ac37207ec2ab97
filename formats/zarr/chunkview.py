"""A Zarr chunk file as a `plugin.ChunkView`: its codec chain (reversed when the array was
opened, or — a large array — when the chunk is first selected; each stage a node over its
input bytes) and its records as a table, one column per leaf field (`pos.x`), one row per
record; records of an edge chunk that lie outside the array are greyed.

The chunk's structure comes from the nodes' typed data (`chunk.ChunkFile`, `CodecStage`,
`records.RecordView`), never from node names."""
from __future__ import annotations

import os
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from ..core.cursor import format_scalar
from ..core.node import Node
from ..core.plugin import CellRange, Column, ForwardCheck, ForwardResult, StageRow
from .chunk import ChunkFile, CodecStage
from .dtype import to_python
from .meta import ArrayMeta
from .records import RecordView, chunk_coords, inside_mask


def chunk_file_of(node: Optional[Node]) -> Optional[Node]:
    n = node
    while n is not None and not isinstance(n.data, ChunkFile):
        n = n.parent
    return n


class ZarrChunkView:
    """One chunk file (see `plugin.ChunkView`); every stage is reversed already."""

    def __init__(self, document, file_node: Node, chunk: ChunkFile, stages: List[Node],
                 records: Optional[Node]):
        self.document = document
        self.node: Optional[Node] = file_node
        self.file_node = file_node
        self.meta: ArrayMeta = chunk.meta
        self.coords = chunk.coords
        self.stages = stages        # stage nodes, last codec first (as in the tree)
        self.records = records      # the "Records" node (on the decoded source) or None
        self.identity: object = ("zarr", id(file_node))
        self.keeps_state = False
        meta = self.meta
        where = f" {list(chunk.coords)}" if chunk.coords is not None else ""
        arr = os.path.basename(meta.path.rstrip("/")) or meta.path
        codecs = " → ".join(c.label for c in meta.codecs) or "no codecs"
        lazy = any(c.name == "decoded" and c.deferred for c in file_node.iter_children())
        self.heading = ""
        self.title = (f"Zarr v{meta.zarr_format} chunk{where} of array {arr}: "
                      f"{file_node.value or file_node.name}, {file_node.size:,} B stored")
        self.subtitle = (f"codecs: {codecs} — {'decoded on demand' if lazy else 'reversed at open'}; "
                         f"click a stage for its bytes")
        self.tooltip = getattr(file_node.source, "name", "")

    def rows(self) -> List[StageRow]:
        fn = self.file_node
        out = [StageRow("Stored chunk", fn.size, "stored", node=fn, kind="payload")]
        for st in self.stages:
            bad = any(n.status == "error" for n in st.walk())
            note = st.display_text()
            j = st.data.k   # reversing codec j gives stage j (its framing is in its input)
            out.append(StageRow(f"⟲ {st.name}", st.size, "failed" if bad else "reversed", k=j,
                                node=st, note=note,
                                tooltip=f"{st.name}: reversed from its input bytes "
                                        f"({getattr(st.source, 'name', '')}); {note}",
                                details=list(st.iter_children())))
        rec = self.records
        if rec is not None:
            out.append(StageRow("Records", rec.size, "decoded", node=rec, kind="cells",
                                note=rec.display_text()))
        return out

    # every stage is reversed when the view exists: nothing to do
    def siblings(self) -> List[Tuple[str, Optional[Node]]]:
        return []

    def sibling_index(self) -> int:
        return 0

    def sibling_view(self, i: int) -> None:
        return None

    def reverse_to(self, k: int, key: Optional[bytes]) -> List[int]:
        return []

    def open(self, key: Optional[bytes]) -> List[int]:
        return []   # reversed when the array was opened, or by `chunk_view` (a large array)

    def stage_count(self) -> int:
        return len(self.meta.codecs)

    def lowest(self) -> int:
        return 0

    def _codec_node(self, j: int) -> Optional[Node]:
        return next((st for st in self.stages if st.data.k == j), None)

    def stage_node(self, k: int) -> Optional[Node]:
        """Stage n: the chunk file; stage k: the input of codec k - 1 (its node spans it);
        stage 0: the records."""
        n = self.stage_count()
        if k >= n:
            return self.file_node
        if k == 0:
            return self.records if self.records is not None else self._codec_node(-1)
        return self._codec_node(k - 1)

    def stage_of(self, node: Optional[Node]) -> Optional[int]:
        n = node
        while n is not None:
            if n is self.records:
                return 0
            d = n.data
            if isinstance(d, CodecStage) and n.parent is not None:
                return min(d.k + 1, self.stage_count())
            if n is self.file_node:
                return self.stage_count()
            n = n.parent
        return None

    def forward_result(self, key: Optional[bytes]) -> Optional[ForwardResult]:
        return None

    def stage_source(self, k: int) -> None:
        return None

    def remake_stage(self, k: int) -> bool:
        return False

    def forget_source(self, source: object) -> Optional[Node]:
        return None

    def owns_source(self, source: object) -> bool:
        return False

    def held_sources(self) -> Sequence[object]:
        return []   # decoded records live in the decoder, not in derived sources

    def value_unit(self) -> Optional[str]:
        return None

    def forward_check(self, key: Optional[bytes]) -> List[ForwardCheck]:
        return []

    def cells(self) -> Optional[bytes]:
        return None

    def cells_message(self) -> str:
        return "The chunk could not be decoded: see Diagnostics."

    def cell_table(self, key: Optional[bytes]) -> Optional["RecordsTable"]:
        rec = self.records
        if rec is None or self.meta.rtype is None:
            return None
        return RecordsTable(self.meta, rec, self.coords)

    def lab(self) -> None:
        return None


class RecordsTable:
    """The records of one decoded chunk (numpy views; rows formatted when painted)."""

    def __init__(self, meta: ArrayMeta, rec: Node, coords: Optional[Tuple[int, ...]]):
        rt = meta.rtype
        assert rt is not None
        self.rec = rec
        self.itemsize = rt.itemsize
        size = rt.itemsize
        n = rec.size // size if size else 0
        buf = rec.source.read(rec.offset, n * size) if n else b""
        self.leaves = list(rt.leaves())
        self.cols: List[np.ndarray] = []
        for f in self.leaves:
            inner: List[int] = []
            step = f.base.itemsize
            for d in reversed(f.shape):
                inner.insert(0, step)
                step *= d
            if not n:   # no whole record (a short decoded chunk): a field's offset is past b""
                self.cols.append(np.empty((0,) + tuple(f.shape), dtype=f.base))
                continue
            self.cols.append(np.ndarray((n,) + tuple(f.shape), dtype=f.base, buffer=buf,
                                        offset=f.offset, strides=(size,) + tuple(inner)))
        self.n = n
        self.inside: Optional[np.ndarray] = None
        self.coords_fn: Optional[Callable] = None
        if coords is not None:
            try:
                self.inside = inside_mask(meta, coords, n)
                self.coords_fn = chunk_coords(meta, coords)
            except Exception:  # noqa: BLE001
                self.inside = self.coords_fn = None
        self.columns: List[Column] = [Column("Array index", mono=True)] + [
            Column(f.name, f"{f.name}: {f.type_text()} at byte {f.offset} of the record",
                   numeric=f.base.kind in "iufb") for f in self.leaves]
        n_out = 0 if self.inside is None else int((~self.inside).sum())
        self.caption = (f"{n:,} records × {size} B ({len(self.leaves)} fields) from tab "
                        f"“{getattr(rec.source, 'name', '')}”"
                        + (f"; {n_out} outside the array (edge padding, greyed)" if n_out else ""))

    def row_count(self) -> int:
        return self.n

    def text(self, row: int, col: int) -> str:
        if col == 0:
            if self.coords_fn is None:
                return ""
            coords, _inside = self.coords_fn(row)
            return "[" + ", ".join(map(str, coords)) + "]"
        x = self.cols[col - 1][row]
        if isinstance(x, np.floating):
            return str(x)  # the shortest text of the field's own width (float32 stays short)
        return _text(to_python(x))

    def _outside(self, row: int) -> bool:
        return self.inside is not None and row < len(self.inside) and not self.inside[row]

    def muted(self, row: int, col: int) -> bool:
        return self._outside(row)

    def tooltip(self, row: int, col: int) -> Optional[str]:
        if self._outside(row):
            return "outside the array: padding of an edge chunk (not part of the array's values)"
        return None

    def node_of_row(self, row: int) -> Optional[Node]:
        rec = self.rec
        return rec.child(row) if row < rec.child_count() else None

    def cell_ranges(self, row: int) -> List[CellRange]:
        if not 0 <= row < self.n:
            return []
        return [CellRange(self.rec.source, self.rec.offset + row * self.itemsize, self.itemsize)]

    def row_of_node(self, node: Node) -> Optional[int]:
        rec = self.rec
        n: Optional[Node] = node
        while n is not None and n.parent is not rec:
            n = n.parent
        if n is None or n.source is not rec.source or not rec.size:
            return None
        return (n.offset - rec.offset) // max(1, self.itemsize)


def _text(v) -> str:
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, list):
        inner = ", ".join(_text(x) for x in v[:8])
        return f"[{inner}{', …' if len(v) > 8 else ''}]"
    if isinstance(v, bool):
        return "true" if v else "false"
    return format_scalar(v)


def chunk_view(document, node: Node) -> Optional[ZarrChunkView]:
    """The chunk file `node` belongs to, decoded now if it was not yet (a large array)."""
    fn = chunk_file_of(node)
    if fn is None or fn.is_lazy:
        return None
    chunk = fn.data
    assert isinstance(chunk, ChunkFile)
    if chunk.meta.rtype is None:
        return None
    kids = list(fn.iter_children())
    # a large array's chunk (or a shard's inner chunk): its "decoded" node, decoded now
    dn = next((c for c in kids if c.name == "decoded" and c.deferred), None)
    if dn is not None:
        dn.ensure_built()
        kids = [c for c in kids if c is not dn] + list(dn.iter_children())
    stages = [c for c in kids if isinstance(c.data, CodecStage)]
    records = next((c for c in kids if isinstance(c.data, RecordView)), None)
    if not stages and records is None:
        return None
    return ZarrChunkView(document, fn, chunk, stages, records)

"""Zarr chunks in the pipeline panel: the codec chain of a chunk file (reversed when the
array was opened, or — a large array — when the chunk is first selected: each stage is a node
over a derived source) and its decoded records as
a numpy-backed table, one column per leaf field (`pos.x`), one row per record; records of an
edge chunk that lie outside the array are greyed."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Optional

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from arrayscope.formats.cursor import format_scalar

from . import theme

_DISPLAYROLE = int(Qt.DisplayRole.value)
_FOREGROUNDROLE = int(Qt.ForegroundRole.value)
_FONTROLE = int(Qt.FontRole.value)
_TOOLTIPROLE = int(Qt.ToolTipRole.value)
_TEXTALIGNMENTROLE = int(Qt.TextAlignmentRole.value)


@dataclass
class ZarrChunk:
    """A Zarr chunk file node, its array's metadata, its stage nodes and its records."""

    file_node: object
    meta: object
    stages: List[object]           # "Codec k: NAME" nodes, last codec first (as in the tree)
    records: Optional[object]      # the "Records" node (on the decoded source) or None
    coords: Optional[tuple]


def _meta_for(document, path: str):
    model = getattr(document, "model", None)
    arrays = getattr(model, "arrays", None)
    if not arrays or path is None:
        return None
    path = os.path.abspath(path)
    best = None
    for meta in arrays.values():
        mp = os.path.abspath(getattr(meta, "path", "") or "")
        if path.startswith(mp + os.sep) and (best is None or len(mp) > len(best.path)):
            best = meta
    return best


def zarr_chunk_of(document, node) -> Optional[ZarrChunk]:
    """The Zarr chunk (file node) that `node` belongs to, or None."""
    if document is None or getattr(document, "format", None) != "zarr":
        return None
    n = node
    while n is not None and not (n.kind == "file" and not isinstance(n.source, str)):
        n = n.parent
    if n is None or n.is_lazy:
        return None
    kids = list(n.iter_children())
    dec = next((c for c in kids if c.name == "decoded" and c.deferred), None)
    if dec is not None:   # a large array's chunk: decoded now, when it is selected
        dec.ensure_built()
        kids = [c for c in kids if c is not dec] + list(dec.iter_children())
    stages = [c for c in kids if c.name.startswith("Codec ")]
    records = next((c for c in kids if c.name == "Records"), None)
    if not stages and records is None:
        return None
    meta = _meta_for(document, getattr(n.source, "path", None))
    if meta is None or meta.rtype is None:
        return None
    coords = None
    try:
        coords = meta.coords_of(n.value) if isinstance(n.value, str) else None
    except Exception:  # noqa: BLE001
        coords = None
    return ZarrChunk(n, meta, stages, records, coords)


class RecordsModel(QAbstractTableModel):
    """The records of one decoded Zarr chunk (numpy views; rows formatted when painted)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.leaves = []
        self.cols: List[np.ndarray] = []
        self.n = 0
        self.inside: Optional[np.ndarray] = None
        self.coords_fn = None
        self._mono = theme.mono_font()

    def set_chunk(self, zc: Optional[ZarrChunk]) -> None:
        self.beginResetModel()
        self.leaves, self.cols, self.n, self.inside, self.coords_fn = [], [], 0, None, None
        rec = zc.records if zc is not None else None
        if rec is not None and rec.size:
            from arrayscope.formats.zarr.records import chunk_coords, inside_mask

            rt = zc.meta.rtype
            size = rt.itemsize
            n = rec.size // size if size else 0
            buf = rec.source.read(rec.offset, n * size)
            for f in rt.leaves():
                shape = (n,) + tuple(f.shape)
                inner = []
                step = f.base.itemsize
                for d in reversed(f.shape):
                    inner.insert(0, step)
                    step *= d
                self.cols.append(np.ndarray(shape, dtype=f.base, buffer=buf, offset=f.offset,
                                            strides=(size,) + tuple(inner)))
                self.leaves.append(f)
            self.n = n
            if zc.coords is not None:
                try:
                    self.inside = inside_mask(zc.meta, zc.coords)[:n]
                    self.coords_fn = chunk_coords(zc.meta, zc.coords)
                except Exception:  # noqa: BLE001
                    self.inside = self.coords_fn = None
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else self.n

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else 1 + len(self.leaves)

    def headerData(self, s, o, role=Qt.DisplayRole):
        if role == _DISPLAYROLE:
            if o == Qt.Vertical:
                return str(s)
            if s == 0:
                return "Array index"
            return self.leaves[s - 1].name
        if role == _TOOLTIPROLE and o == Qt.Horizontal and s > 0:
            f = self.leaves[s - 1]
            return f"{f.name}: {f.type_text()} at byte {f.offset} of the record"
        return None

    def cell_text(self, r: int, c: int) -> str:
        if c == 0:
            if self.coords_fn is None:
                return ""
            coords, _inside = self.coords_fn(r)
            return "[" + ", ".join(map(str, coords)) + "]"
        from arrayscope.formats.zarr.dtype import to_python

        x = self.cols[c - 1][r]
        if isinstance(x, np.floating):
            return str(x)  # the shortest text of the field's own width (float32 stays short)
        return _text(to_python(x))

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        r, c = index.row(), index.column()
        if role == _DISPLAYROLE:
            return self.cell_text(r, c)
        outside = self.inside is not None and r < len(self.inside) and not self.inside[r]
        if role == _FOREGROUNDROLE and outside:
            return theme.muted_color()
        if role == _TOOLTIPROLE and outside:
            return "outside the array: padding of an edge chunk (not part of the array's values)"
        if role == _FONTROLE and c == 0:
            return self._mono
        if role == _TEXTALIGNMENTROLE and c > 0 and self.leaves[c - 1].base.kind in "iufb":
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None


def _text(v) -> str:
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, list):
        inner = ", ".join(_text(x) for x in v[:8])
        return f"[{inner}{', …' if len(v) > 8 else ''}]"
    if isinstance(v, bool):
        return "true" if v else "false"
    return format_scalar(v)

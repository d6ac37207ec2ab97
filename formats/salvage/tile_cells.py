"""The cells of a damaged TileDB fragment that survive: which of its tiles verify found
damaged, and the cells of every other tile, decoded by the engine (never by libtiledb,
which refuses the whole read once one tile fails).

A fragment's tile N is the same cells in every field's data files (format_spec/
fragment.md), so a tile lost in one field is lost in all: the kept cells are those of the
tiles no finding lies in, for every field alike. Cells are kept as the bytes the tiles
hold (fixed cells, var bytes with their extents, validity bytes), so they are written back
exactly as they were read, whatever their type (a NaN stays a NaN, a null stays a null)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Tuple, Union

import numpy as np

from ..filters.enums import VAR_NUM, datatype_size
from ..tiledb.model.array_model import ArraySchema, Attribute, Dimension, Fragment, FragmentMetadata
from ..tiledb.parse.data_files import (
    POSITIONAL_NAMES_FROM,
    SPECIAL_FILES,
    data_file_stem,
    file_role,
    tile_offsets_for,
)
from ..tiledb.parse.rawtile import TileError
from ..tiledb.window.tile_cells import FieldTile, decode_part
from .report import Loss


@dataclass
class FieldCells:
    """Cells of one field, in stored order: fixed-size cells as rows of bytes, or var
    bytes with each cell's [start, end); validity bytes (0 = null) when nullable."""

    fixed: Optional[np.ndarray] = None      # (n, cell bytes) uint8
    data: Optional[np.ndarray] = None       # var: uint8
    starts: Optional[np.ndarray] = None     # var: int64 per cell
    ends: Optional[np.ndarray] = None
    validity: Optional[np.ndarray] = None   # uint8 per cell
    element: int = 1                        # bytes per value of the field's datatype

    def __len__(self) -> int:
        if self.fixed is not None:
            return len(self.fixed)
        return 0 if self.starts is None else len(self.starts)

    def take(self, idx: np.ndarray) -> "FieldCells":
        """The cells at positions `idx`, in that order."""
        val = None if self.validity is None else self.validity[idx]
        if self.fixed is not None:
            return FieldCells(fixed=self.fixed[idx], validity=val, element=self.element)
        assert self.starts is not None and self.ends is not None and self.data is not None
        s, e = self.starts[idx], self.ends[idx]
        lens = e - s
        new_starts = np.zeros(len(idx), np.int64)
        np.cumsum(lens[:-1], out=new_starts[1:])
        # byte k of new cell j comes from s[j] + k: one gather, no loop over cells
        src = np.repeat(s - new_starts, lens) + np.arange(int(lens.sum()), dtype=np.int64)
        return FieldCells(data=self.data[src], starts=new_starts, ends=new_starts + lens,
                          validity=val, element=self.element)

    def buffers(self) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]:
        """(data bytes, u64 cell offsets or None, validity bytes or None): what a write
        query takes."""
        if self.fixed is not None:
            return np.ascontiguousarray(self.fixed).reshape(-1), None, self.validity
        assert self.starts is not None and self.data is not None
        return self.data, self.starts.astype(np.uint64), self.validity

    @staticmethod
    def join(parts: List["FieldCells"]) -> "FieldCells":
        if not parts:
            return FieldCells(fixed=np.zeros((0, 1), np.uint8))
        val = None if parts[0].validity is None else np.concatenate([p.validity for p in parts])
        if parts[0].fixed is not None:
            return FieldCells(fixed=np.concatenate([p.fixed for p in parts]), validity=val,
                              element=parts[0].element)
        datas = [p.data if p.data is not None else np.zeros(0, np.uint8) for p in parts]
        base = np.cumsum(np.array([0] + [len(d) for d in datas[:-1]], np.int64))
        return FieldCells(data=np.concatenate(datas),
                          starts=np.concatenate([p.starts + b for p, b in zip(parts, base)]),
                          ends=np.concatenate([p.ends + b for p, b in zip(parts, base)]),
                          validity=val, element=parts[0].element)


TIMESTAMPS = SPECIAL_FILES["t"]   # the slot of a fragment's per-cell write times


class NotTileLevel(Exception):
    """The fragment cannot be salvaged tile by tile (the reason is the message)."""


class FragmentTiles:
    """The tiles of one fragment, each field's data files located by the engine."""

    def __init__(self, document, schema: ArraySchema, fm: FragmentMetadata, path: str,
                 name: str, key: Optional[bytes]):
        if fm.version is None or fm.version < POSITIONAL_NAMES_FROM:
            raise NotTileLevel(f"format {fm.version}: tile-level salvage reads format "
                               f"{POSITIONAL_NAMES_FROM} and later")
        if fm.has_delete_meta:
            raise NotTileLevel("it holds delete metadata, which a write cannot give back")
        if fm.has_timestamps and fm.dense:
            raise NotTileLevel("a dense fragment with per-cell timestamps")
        self.document, self.schema, self.fm, self.key = document, schema, fm, key
        self.fragment = Fragment(name, path)
        self.fields = list(schema.attributes) if fm.dense else \
            list(schema.dimensions) + list(schema.attributes)
        self.tiles: Dict[str, FieldTile] = {}   # field name -> its fixed-part tile 0
        counts = set()
        # a consolidated sparse fragment's per-cell write times (`t.tdb`): decoded with the
        # fields, they say which write each cell came from (the writes are made again)
        stems: List[Tuple[Optional[Union[Attribute, Dimension]], str]] = \
            [(fld, data_file_stem(schema, fm.version, fld)) for fld in self.fields]
        if fm.has_timestamps:
            stems.append((None, "t"))
        for fld, stem in stems:
            role = file_role(schema, fm, f"{stem}.tdb")
            offs, why = tile_offsets_for(fm, role) if role is not None else (None, "no slot")
            if role is None or offs is None:
                raise NotTileLevel(f"{stem}.tdb: its tiles cannot be located ({why})")
            obj = fld if fld is not None else role.obj
            kind = "attribute" if fld in schema.attributes else \
                "dimension" if fld is not None else "special"
            self.tiles[obj.name] = FieldTile(obj.name, kind, obj, self.fragment, fm, schema,
                                             stem, "fixed", role, 0, len(offs))
            counts.add(len(offs))
        if len(counts) != 1:
            raise NotTileLevel(f"its fields hold different tile counts ({sorted(counts)})")
        self.tile_num = counts.pop()

    def tile_of(self, file_name: str, offset: int) -> Optional[int]:
        """The tile of this fragment's data file `file_name` that byte `offset` lies in;
        None when the file is no data file of a field here, or the byte is in no tile."""
        role = file_role(self.schema, self.fm, file_name)
        if role is None or role.obj.name not in self.tiles:
            return None
        offs, _why = tile_offsets_for(self.fm, role)
        if offs is None or not len(offs):
            return None
        i = int(np.searchsorted(np.asarray(offs, np.uint64).astype(np.int64), offset,
                                side="right")) - 1
        return i if 0 <= i < self.tile_num else None

    def damaged(self, losses: List[Loss], frag_rel: str) -> Dict[int, List[Loss]]:
        """Each damaged tile with the findings in it; NotTileLevel when a finding lies
        outside every tile (the fragment metadata, a missing file): the fragment is lost."""
        out: Dict[int, List[Loss]] = {}
        for loss in losses:
            folder, _sep, file_name = loss.source.rpartition("/")
            tile = self.tile_of(file_name, loss.offset) \
                if folder == frag_rel and loss.offset is not None else None
            if tile is None:
                raise NotTileLevel(f"{loss.code} in {loss.source} at {loss.offset} is in no "
                                   f"data tile")
            out.setdefault(tile, []).append(loss)
        return out

    def tile_cells(self, name: str, tile: int) -> FieldCells:
        """Tile `tile` of field `name`, decoded. Raises TileError."""
        where = replace(self.tiles[name], tile_index=tile)
        fld = where.obj
        fixed, rle, _n = decode_part(self.document, where, "fixed", self.key)
        val = None
        if getattr(fld, "nullable", False):
            vb, _r, _n = decode_part(self.document, where, "validity", self.key)
            val = np.frombuffer(vb, np.uint8)
        if fld.cell_val_num == VAR_NUM:
            data, rle, _n = decode_part(self.document, where, "var", self.key)
            offs = np.frombuffer(rle if not len(fixed) and rle is not None else fixed, "<u8")
            starts = offs.astype(np.int64)
            ends = np.append(starts[1:], len(data)).astype(np.int64)
            if len(starts) and (starts[0] != 0 or (ends < starts).any() or ends[-1] > len(data)):
                raise TileError(f"{name}: tile {tile + 1}: cell offsets do not fit its var tile")
            cells = FieldCells(data=np.frombuffer(data, np.uint8), starts=starts, ends=ends,
                               validity=val, element=datatype_size(fld.datatype))
        else:
            size = datatype_size(fld.datatype) * max(1, fld.cell_val_num)
            if len(fixed) % size:
                raise TileError(f"{name}: tile {tile + 1}: {len(fixed)} B is no whole number "
                                f"of {size} B cells")
            cells = FieldCells(fixed=np.frombuffer(fixed, np.uint8).reshape(-1, size),
                               validity=val, element=datatype_size(fld.datatype))
        if val is not None and len(val) != len(cells):
            raise TileError(f"{name}: tile {tile + 1}: {len(val)} validity bytes for "
                            f"{len(cells)} cells")
        return cells

    def kept(self, lost: Dict[int, List[Loss]], frag_rel: str
             ) -> Tuple[Dict[str, FieldCells], List[int]]:
        """Every field's cells (and `TIMESTAMPS`, when the fragment has them) of the tiles
        not in `lost` (a tile that fails to decode in any field is added to `lost`), and
        the tiles they came from, in order."""
        tiles = [t for t in range(self.tile_num) if t not in lost]
        parts: Dict[str, List[FieldCells]] = {n: [] for n in self.tiles}
        kept_tiles: List[int] = []
        for t in tiles:
            try:
                got = {n: self.tile_cells(n, t) for n in self.tiles}
            except TileError as e:   # verify passed it, the decode did not: lost all the same
                lost[t] = [Loss("tile-decode-failed", frag_rel, e.offset or 0, f"tile {t + 1}",
                                str(e))]
                continue
            if len({len(c) for c in got.values()}) != 1:
                lost[t] = [Loss("tile-cell-count", frag_rel, 0, f"tile {t + 1}",
                                "its fields hold different cell counts")]
                continue
            for name, c in got.items():
                parts[name].append(c)
            kept_tiles.append(t)
        return {n: FieldCells.join(p) for n, p in parts.items()}, kept_tiles

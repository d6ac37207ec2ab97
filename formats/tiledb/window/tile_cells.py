"""One tile's typed cells, with its sibling tiles paired (for the GUI's pipeline panel; no Qt).

A field's tile N is spread over up to three data files of its fragment, each with its own
pipeline: `aN.tdb` (the fixed-size cells, or the u64 cell offsets of a var-sized field),
`aN_var.tdb` (the var-sized bytes) and `aN_validity.tdb` (one validity byte per cell), all
with the same tile index (format_spec/fragment.md). `locate` finds which field, part and
tile a data file's byte belongs to (from the array model's fragment metadata and schema);
`tile_cells` decodes the tile of every part and pairs them: cell i is `fixed[i]`, or the var
bytes `starts[i]:ends[i]`, null where `validity[i] == 0`. RLE / DICTIONARY var strings carry
their offsets inside the var tile (the offsets tile then has 0 chunks), as in `values.py`.

Everything stays numpy arrays: `text(i)` / `value(i)` format one cell when it is shown.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union

import numpy as np

from ...core.node import Node
from ...filters.enums import DATATYPE_NAMES, DATETIME_UNITS, TIME_UNITS, VAR_NUM, Datatype, datatype_size, numpy_dtype
from ..model.array_model import ArraySchema, Attribute, Dimension, Fragment, FragmentMetadata
from ..parse.data_files import DataFileRole, file_role, over_limit, tile_bounds, tile_offsets_for
from ..parse.decode import decode_tile
from ..parse.rawtile import TileError, chunk_table
from ..values.cells import BYTE_LIST_TYPES, TEXT_ENCODINGS, decode_text

PART_SUFFIX = {"fixed": "", "var": "_var", "validity": "_validity"}
NAT = -(2 ** 63)


@dataclass
class FieldTile:
    """Where a data file's byte belongs: field, fragment and tile index."""

    field_name: str
    field_kind: str               # "attribute", "dimension" or "special" (timestamps...)
    obj: Union[Attribute, Dimension]
    fragment: Fragment
    fm: FragmentMetadata
    schema: ArraySchema
    stem: str                     # "a0", "d1", "t"
    part: str                     # the part of the file the byte is in: fixed / var / validity
    role: DataFileRole
    tile_index: Optional[int]     # None when the byte is before the first tile
    tile_count: int

    @property
    def datatype(self) -> int:
        return self.obj.datatype

    @property
    def cell_val_num(self) -> int:
        return self.obj.cell_val_num

    @property
    def var(self) -> bool:
        return self.obj.cell_val_num == VAR_NUM

    @property
    def nullable(self) -> bool:
        return bool(getattr(self.obj, "nullable", False))

    @property
    def paired(self) -> bool:
        """The tile's cells need more than this file: var-sized or nullable."""
        return self.var or self.nullable

    def file_name(self, part: str) -> str:
        return f"{self.stem}{PART_SUFFIX[part]}.tdb"

    def part_text(self) -> str:
        if self.part == "fixed":
            return "offsets" if self.var else "data"
        return {"var": "var data", "validity": "validity"}[self.part]

    def describe(self) -> str:
        """`attribute 'name' (var data, tile 2 of 5)`."""
        dt = DATATYPE_NAMES.get(self.datatype, str(self.datatype))
        shape = ", var" if self.var else ("" if self.cell_val_num == 1 else f"[{self.cell_val_num}]")
        extra = ", nullable" if self.nullable else ""
        tile = f", tile {self.tile_index + 1} of {self.tile_count}" if self.tile_index is not None else ""
        return (f"{self.field_kind} '{self.field_name}' ({dt}{shape}{extra}) — "
                f"{self.part_text()}{tile}")


def _fragment_of(array, path: str) -> Optional[Fragment]:
    d = os.path.dirname(os.path.abspath(path))
    if hasattr(array, "fragment_in"):
        return array.fragment_in(d)
    return next((f for f in getattr(array, "fragments", ()) if os.path.abspath(f.path) == d),
                None)


def array_of(document, node: Optional[Node]):
    """The array model of the array directory holding `node` (a group member's too: the
    document's model is then the group's), else the document's."""
    n = node.parent if node is not None else None
    while n is not None:
        for model in (n.data, getattr(n.data, "model", None)):
            if hasattr(model, "schema_for"):
                return model
        n = n.parent
    model = getattr(document, "model", None)
    return model if hasattr(model, "schema_for") else None


def locate(document, source, offset: Optional[int] = None, node: Optional[Node] = None
           ) -> Optional[FieldTile]:
    """The field, part and tile of `source` (a data file of a fragment of the TileDB array
    holding `node`, the document's without one) at byte `offset`; None when `source` is
    not such a file or its fragment metadata cannot be read."""
    array = array_of(document, node)
    path = getattr(source, "path", None)
    if array is None or path is None or not hasattr(array, "fragments"):
        return None
    frag = _fragment_of(array, path)
    if frag is None or frag.metadata is None:
        return None
    fm = frag.metadata
    schema = fm.schema or array.schema_for(fm.schema_name)
    if schema is None:
        return None
    name = os.path.basename(path)
    role = file_role(schema, fm, name)
    if role is None:
        return None
    stem = name[:-4]
    for suf in ("_var", "_validity"):
        if stem.endswith(suf):
            stem = stem[: -len(suf)]
    obj = role.obj
    if isinstance(obj, Dimension) and obj.name != "__coords":
        kind = "dimension"
    elif isinstance(obj, Attribute) and not obj.name.startswith("__"):
        kind = "attribute"
    else:
        kind = "special"
    offs, _why = tile_offsets_for(fm, role)
    count = len(offs) if offs is not None else 0
    index = None
    if offs is not None and count and offset is not None:
        arr = np.asarray(offs, dtype=np.uint64).astype(np.int64)
        i = int(np.searchsorted(arr, offset, side="right")) - 1
        index = i if i >= 0 else None
    return FieldTile(obj.name, kind, obj, frag, fm, schema, stem, role.part, role, index, count)


@dataclass
class TileCells:
    """The cells of one tile of a field: numpy arrays, formatted one cell at a time."""

    where: FieldTile
    datatype: int
    cell_val_num: int
    count: int = 0
    fixed: Optional[np.ndarray] = None       # (n,) or (n, cvn) typed; byte strings as uint8
    starts: Optional[np.ndarray] = None      # var: int64 offsets into `var`
    ends: Optional[np.ndarray] = None
    var: Optional[np.ndarray] = None         # var: uint8 bytes of the var tile
    validity: Optional[np.ndarray] = None    # uint8 per cell (0 = null)
    sources: Dict[str, str] = field(default_factory=dict)   # part -> file name used
    notes: List[str] = field(default_factory=list)           # mismatches, offsets origin
    error: Optional[str] = None

    # ---- per cell --------------------------------------------------------------------
    def is_null(self, i: int) -> bool:
        v = self.validity
        return v is not None and i < len(v) and v[i] == 0

    def null_count(self) -> int:
        if self.validity is None:
            return 0
        return int(np.count_nonzero(self.validity[: self.count] == 0))

    def raw(self, i: int) -> bytes:
        """The cell's bytes (its var bytes for var-sized cells)."""
        if self.var is not None and self.starts is not None and self.ends is not None:
            return self.var[int(self.starts[i]):int(self.ends[i])].tobytes()
        if self.fixed is not None:
            return np.ascontiguousarray(self.fixed[i]).tobytes()
        return b""

    def location(self, i: int) -> int:
        """Byte offset of cell i in its decoded tile (the var tile for var-sized cells)."""
        if self.var is not None and self.starts is not None:
            return int(self.starts[i])
        size = datatype_size(self.datatype) * (1 if self.cell_val_num in (0, VAR_NUM)
                                                else self.cell_val_num)
        return i * size

    def value(self, i: int):
        """The cell as `values` gives it: str for text, list for several values, None for
        null."""
        if self.is_null(i):
            return None
        dt = self.datatype
        raw = self.raw(i)
        if dt in TEXT_ENCODINGS:
            return decode_text(raw, TEXT_ENCODINGS[dt])
        if dt in BYTE_LIST_TYPES:
            return list(raw)
        arr = np.frombuffer(raw, dtype=numpy_dtype(dt))
        if dt == Datatype.BOOL:
            arr = arr.astype(bool)
        if self.var is not None or self.cell_val_num not in (0, 1):
            return arr.tolist()
        return arr[0].item() if len(arr) else None

    def text(self, i: int, limit: int = 200) -> str:
        """What a person reads: strings as text, lists as [..], datetimes with their unit,
        null as `null`."""
        if self.is_null(i):
            return "null"
        dt = self.datatype
        if dt in TEXT_ENCODINGS:
            s = decode_text(self.raw(i), TEXT_ENCODINGS[dt])
            s = repr(s) if len(s) <= limit else repr(s[:limit]) + "…"
            return s
        if dt in BYTE_LIST_TYPES:
            raw = self.raw(i)
            return raw[:64].hex(" ") + (" …" if len(raw) > 64 else "")
        arr = np.frombuffer(self.raw(i), dtype=numpy_dtype(dt))
        items = [scalar_text(dt, x) for x in arr[:32]]
        if self.var is not None or self.cell_val_num not in (0, 1):
            more = f", … ({len(arr)} values)" if len(arr) > 32 else ""
            return "[" + ", ".join(items) + more + "]"
        return items[0] if items else ""

    def values(self) -> list:
        return [self.value(i) for i in range(self.count)]

    def summary(self) -> str:
        dt = DATATYPE_NAMES.get(self.datatype, str(self.datatype))
        nulls = self.null_count()
        parts = [f"{self.count:,} cells of {dt}{' var' if self.var is not None else ''}"]
        if self.validity is not None:
            parts.append(f"{nulls:,} null")
        return ", ".join(parts)


def scalar_text(dt: int, v) -> str:
    """One value of datatype `dt` as text (datetimes as ISO with their unit)."""
    unit = DATETIME_UNITS.get(dt)
    if unit is not None:
        iv = int(v)
        if iv == NAT:
            return "NaT"
        return f"{np.datetime64(iv, unit)} ({iv} {unit})"  # type: ignore[call-overload]
    if dt in TIME_UNITS:
        return f"{int(v)} {TIME_UNITS[dt]}"
    if dt == Datatype.BOOL:
        return "true" if v else "false"
    if isinstance(v, np.floating):
        return str(v)  # shortest text that reads back as the same float of its width
    return str(v.item() if isinstance(v, np.generic) else v)


def _source_for(document, path: str):
    if document is not None and hasattr(document, "open_source"):
        return document.open_source(path)
    from ...core.source import FileSource
    return FileSource(path)


def _tile(document, where: FieldTile, part: str):
    """(file name, its role, its source, the tile's index, start and end) of tile
    `where.tile_index` in `part`'s file. Raises TileError."""
    name = where.file_name(part)
    role = file_role(where.schema, where.fm, name)
    if role is None:
        raise TileError(f"{name} is not a data file of this fragment's schema")
    offs, why = tile_offsets_for(where.fm, role)
    if offs is None:
        raise TileError(f"{name}: tiles cannot be located: {why}")
    i = where.tile_index
    if i is None or i >= len(offs):
        raise TileError(f"{name} has {len(offs)} tile(s), no tile {0 if i is None else i + 1}")
    path = os.path.join(where.fragment.path, name)
    from ...core.filesystems import fs_of

    if not fs_of(document, path).stat(path).is_file:
        raise TileError(f"{name} is missing from the fragment")
    src = _source_for(document, path)
    ends = tile_bounds(offs, src.size)
    start, end = int(offs[i]), int(ends[i])
    if start > src.size or end < start:
        raise TileError(f"{name}: tile {i + 1} at {start} is not inside the file ({src.size} B)")
    return name, role, src, i, start, end


def decode_part(document, where: FieldTile, part: str, key: Optional[bytes] = None):
    """(decoded bytes of the tile in `part`'s file, offsets RLE/DICTIONARY rebuilt or None,
    file name). Raises TileError."""
    name, role, src, i, start, end = _tile(document, where, part)
    over = over_limit(role, sum(c[0] for c in chunk_table(src, start, end)), i)
    if over:
        raise TileError(f"{name}: tile {i + 1}: {over}", start)
    data, rle = decode_tile(src, start, end, role.specs, role.info, key)
    return data, rle, name


def tile_cells(document, where: FieldTile, key: Optional[bytes] = None) -> TileCells:
    """Decode tile `where.tile_index` of every part of the field and pair them. Never
    raises: a part that cannot be decoded gives `error` (and what could be paired)."""
    dt, cvn = where.datatype, where.cell_val_num
    tc = TileCells(where, dt, cvn)
    if where.tile_index is None:
        tc.error = "the selected bytes are not inside a tile"
        return tc
    try:
        fixed, rle_fixed, name = decode_part(document, where, "fixed", key)
        tc.sources["fixed"] = name
        if where.var:
            var, rle, vname = decode_part(document, where, "var", key)
            tc.sources["var"] = vname
            if len(fixed) == 0 and rle is not None:
                offs = np.frombuffer(rle, "<u8")
                tc.notes.append("cell offsets rebuilt from the var tile (RLE/DICTIONARY strings: "
                                "the offsets tile has 0 chunks)")
            else:
                offs = np.frombuffer(fixed, "<u8", count=len(fixed) // 8)
            starts = offs.astype(np.int64)
            n = len(starts)
            ends = np.empty_like(starts)
            if n:
                ends[:-1] = starts[1:]
                ends[-1] = len(var)
            bad = np.flatnonzero((starts > len(var)) | (ends < starts))
            if len(bad):
                tc.notes.append(f"{len(bad)} cell offset(s) outside the {len(var)} B var tile "
                                f"or decreasing (first: cell {int(bad[0])})")
                starts = np.clip(starts, 0, len(var))
                ends = np.maximum(np.clip(ends, 0, len(var)), starts)
            tc.var = np.frombuffer(var, np.uint8)
            tc.starts, tc.ends = starts, ends
            tc.count = n
        else:
            per = datatype_size(dt) * (1 if cvn in (0, VAR_NUM) else cvn)
            n = len(fixed) // per if per else 0
            if dt in TEXT_ENCODINGS or dt in BYTE_LIST_TYPES or dt not in DATATYPE_NAMES:
                arr = np.frombuffer(fixed, np.uint8, count=n * per).reshape(n, per)
            else:
                arr = np.frombuffer(fixed, numpy_dtype(dt), count=n * max(1, cvn))
                if cvn > 1:
                    arr = arr.reshape(n, cvn)
            if n * per != len(fixed):
                tc.notes.append(f"{len(fixed) - n * per} trailing byte(s) are not a whole cell")
            tc.fixed = arr
            tc.count = n
        if where.nullable:
            val, _r, vname = decode_part(document, where, "validity", key)
            tc.sources["validity"] = vname
            tc.validity = np.frombuffer(val, np.uint8)
            if len(tc.validity) != tc.count:
                tc.notes.append(f"{len(tc.validity)} validity bytes for {tc.count} cells")
    except TileError as e:
        tc.error = str(e)
    except Exception as e:  # noqa: BLE001 - a view helper must not raise
        tc.error = f"{type(e).__name__}: {e}"
    return tc


__all__ = ["FieldTile", "TileCells", "locate", "tile_cells", "decode_part", "scalar_text"]


def part_buffer(document, where: FieldTile, part: str, key: Optional[bytes] = None):
    """(source, base offset) of tile `where.tile_index` of `part`'s file, decoded: the file
    itself when the tile is one unfiltered chunk (its cells are the stored bytes), else a
    derived source of the decoded tile (`Document.add_derived`). Raises TileError."""
    name, role, src, i, start, end = _tile(document, where, part)
    chunks = chunk_table(src, start, end)
    if not role.specs and len(chunks) == 1:
        return src, chunks[0][4]
    data, _rle, _n = decode_part(document, where, part, key)
    return document.add_derived(data, f"{name} tile {i + 1} decoded",
                                origin=f"tile {i + 1} of {name}, every filter reversed",
                                parent=src), 0

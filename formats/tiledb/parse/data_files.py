"""Fragment data files (`aN.tdb`, `aN_var.tdb`, `aN_validity.tdb`, `dN.tdb`, `dN_var.tdb`,
`t.tdb`, `dt.tdb`, `dci.tdb`, legacy `__coords.tdb`): bare tiles back to back
(format_spec/fragment.md "Data File"; the tiles per format_spec/tile.md).

The tiles are found with the fragment metadata's per-slot tile offsets (the tile ends where
the next one starts; the last at the end of the file). Each is parsed with the pipeline and
DataInfo of what it holds: the attribute's or dimension's values, the u64 cell offsets of a
var-sized field (offsets filters), or the validity bytes (validity filters); encrypted arrays
add TileDB's internal AES-256-GCM filter last. A file with more than `LAZY_TILES` tiles shows
them as lazy children.
"""
from __future__ import annotations

import math
import os
import re
import urllib.parse
from dataclasses import dataclass
from typing import List, Optional, Union

import numpy as np

from ...core.cursor import Cursor, ParseStop
from ...core.engine import run_parser
from ...core.fielddoc import doc
from ...core.findings import FILE_SIZE, NO_KEY, SIZE_OVER_LIMIT
from ...core.node import ERROR, WARNING, LazyChildren, Node, hex_preview
from ...filters import DataInfo, FilterSpec
from ...filters.enums import FilterType
from ..model.array_model import ArraySchema, Attribute, Dimension, FragmentMetadata
from .tile import parse_tile

LAZY_TILES = 256
SPEC = "fragment.md Data File"

D_DATA_FILE = doc("Data file: the tiles of one attribute or dimension of the fragment, back to "
                  "back; where each starts is in the fragment metadata's tile offsets", spec=SPEC)
D_TILE_VALUES = doc("A data tile of cell values (fixed-sized cells, or the var-sized bytes)",
                    spec="tile.md")
D_TILE_OFFSETS = doc("A tile of u64 cell offsets (each relative to the start of its var tile) "
                     "of a var-sized field; written with 0 chunks when RLE or DICTIONARY encode "
                     "the strings, which then carry their own offsets", spec="tile.md",
                     note="0-chunk offsets tiles for RLE/DICTIONARY strings: FORMAT_NOTES")
D_TILE_VALIDITY = doc("A tile of validity bytes: 1 per cell, 0 = null", added_in=7,
                      spec="tile.md")
D_TILES = doc("The file's tiles (built when shown)", spec=SPEC)

_NAME_RE = re.compile(r"^(?:(a|d)(\d+)|(t|dt|dci|dcmh|__coords))(_var|_validity)?\.tdb$")
SPECIAL_FILES = {"t": "__timestamps", "dt": "__delete_timestamps",
                 "dci": "__delete_condition_index", "dcmh": "__delete_condition_index",
                 "__coords": "__coords"}


@dataclass
class DataFileRole:
    """What a data file holds."""

    slot: int              # index into the fragment's slots
    slot_name: str
    obj: Union[Attribute, Dimension]  # (or a stand-in Attribute for special slots)
    part: str              # "fixed" (values or offsets), "var" or "validity"
    role: str              # DataInfo role: attribute, dimension, offsets, validity
    specs: List[FilterSpec]
    info: DataInfo
    # The most unfiltered bytes one tile of this file can hold (tile cells × cell size, from
    # the schema); None when the schema gives no bound (var data, unbounded extents).
    max_bytes: Optional[int] = None
    fm: Optional[FragmentMetadata] = None   # its var tile sizes bound a var tile


# Format 9 (libtiledb 2.3) named data files by position (`a0`, `d1`); before, by the field's
# name (`a.tdb`, `a_var.tdb`, `a_validity.tdb`), the zipped coordinates of formats < 5 in
# `__coords.tdb`, and formats 5–8 one file per dimension named after it.
POSITIONAL_NAMES_FROM = 9


def data_file_stem(schema: ArraySchema, version: Optional[int], fld) -> str:
    """The stem of the data file of attribute or dimension `fld` in a fragment of format
    `version` (`a2` / `d0` from format 9, else the field's name)."""
    if version is not None and version < POSITIONAL_NAMES_FROM:
        # format 8 percent-encodes the name (libtiledb's encode_name); earlier ones do not
        return urllib.parse.quote(fld.name, safe="") if version == 8 else fld.name
    if fld in schema.attributes:
        return f"a{schema.attributes.index(fld)}"
    return f"d{schema.dimensions.index(fld)}"


def _named_file(schema: ArraySchema, file_name: str):
    """(kind, index, special, suffix) of a pre-format-9 data file named after its field."""
    if not file_name.endswith(".tdb"):
        return None
    stem = file_name[:-4]
    if "%" in stem:  # format 8 percent-encodes the field name in the file name
        stem = urllib.parse.unquote(stem)
    fields = {a.name: ("a", i) for i, a in enumerate(schema.attributes)}
    for j, d in enumerate(schema.dimensions):
        fields.setdefault(d.name, ("d", j))
    # the whole stem names a field first (an attribute may be called `x_var`)
    for suffix in (None, "_var", "_validity"):
        base = stem if suffix is None else (stem[:-len(suffix)] if stem.endswith(suffix) else None)
        if base is None:
            continue
        if base in fields:
            kind, i = fields[base]
            return kind, str(i), None, suffix
        if base == "__coords":
            return None, None, "__coords", suffix
    return None


def _special(name: str) -> Attribute:
    return Attribute(name, 10, 1)


def file_role(schema: ArraySchema, fm: FragmentMetadata, file_name: str) -> Optional[DataFileRole]:
    """The slot, part and pipeline of `file_name` in a fragment of `schema`, or None."""
    if fm.version and fm.version < POSITIONAL_NAMES_FROM:
        parts = _named_file(schema, file_name)
    else:
        m = _NAME_RE.match(file_name)
        parts = m.groups() if m is not None else None
    if parts is None:
        return None
    kind, num, special, suffix = parts
    slots = fm.slots or schema.slot_names(fm.has_timestamps, fm.has_delete_meta)
    nattr = len(schema.attributes)
    obj: Union[Attribute, Dimension]
    if kind == "a":
        i = int(num)
        if i >= nattr:
            return None
        obj, slot, base_role = schema.attributes[i], i, "attribute"
    elif kind == "d":
        i = int(num)
        if i >= len(schema.dimensions):
            return None
        obj, slot, base_role = schema.dimensions[i], nattr + 1 + i, "dimension"
    else:
        sname = SPECIAL_FILES[special]
        if sname not in slots:
            return None
        slot = slots.index(sname)
        obj, base_role = _special(sname), "attribute"
        if sname == "__coords":
            obj = Dimension("__coords", schema.dimensions[0].datatype if schema.dimensions else 1,
                            len(schema.dimensions))
            base_role = "coords"
    part = {None: "fixed", "_var": "var", "_validity": "validity"}[suffix]
    if part == "fixed" and getattr(obj, "var", False):
        role = "offsets"
    elif part == "validity":
        role = "validity"
    else:
        role = base_role
    if role in ("offsets", "validity"):
        specs = list(schema.pipeline_for(obj, role))
        info = schema.data_info(obj, role)
    elif base_role == "coords":
        specs = list(schema.coords_filters)
        info = DataInfo(obj.datatype, obj.cell_val_num, "coords")
    elif isinstance(obj, Attribute) and obj.name.startswith("__"):
        specs = list(schema.coords_filters)  # TileDB gives its special slots the coords filters
        info = DataInfo(10, 1, "attribute")
    else:
        specs = list(schema.pipeline_for(obj, role if role != "coords" else "dimension"))
        info = schema.data_info(obj, role)
    # The filters decode by the fragment's format version, not the array's (RLE / DICTIONARY
    # string forms need 12/13 ASCII, 17 UTF-8; datetime BWR / POSITIVE_DELTA 20).
    info.format_version = fm.version or None
    if fm.encrypted:
        specs.append(FilterSpec(FilterType.INTERNAL_FILTER_AES_256_GCM, {}))
    return DataFileRole(slot, slots[slot] if slot < len(slots) else obj.name, obj, part, role,
                        specs, info, _max_tile_bytes(schema, fm, obj, role), fm)


def _max_tile_bytes(schema: ArraySchema, fm: FragmentMetadata, obj, role: str) -> Optional[int]:
    """Tile cells × cell size: a dense fragment's tile holds the product of the tile extents,
    a sparse fragment's (a dense array's old sparse fragments too) at most `capacity`."""
    cells = int(schema.capacity or 0)
    if schema.dense and getattr(fm, "dense", True):
        extents = [d.tile_extent for d in schema.dimensions]
        if not extents or any(not isinstance(e, int) or isinstance(e, bool) or e <= 0
                              for e in extents):
            return None
        cells = math.prod(extents)
    if cells <= 0:
        return None
    if role == "offsets":
        return (cells + 1) * 8   # u64 per cell (some writers add the end offset)
    if role == "validity":
        return cells
    if getattr(obj, "var", False):
        return None
    return cells * max(1, obj.cell_size)


def tile_offsets_for(fm: FragmentMetadata, role: DataFileRole):
    arrs = {"fixed": fm.tile_offsets, "var": fm.tile_var_offsets,
            "validity": fm.tile_validity_offsets}[role.part]
    if role.slot >= len(arrs):
        return None, f"the fragment metadata has no slot {role.slot}"
    arr = arrs[role.slot]
    if arr is None:
        err = getattr(arrs, "error", lambda i: None)(role.slot)
        return None, err or "tile offsets unavailable"
    return arr, None


def expected_size(fm: FragmentMetadata, role: DataFileRole) -> Optional[int]:
    sizes = {"fixed": fm.file_sizes, "var": fm.file_var_sizes,
             "validity": fm.file_validity_sizes}[role.part]
    return sizes[role.slot] if role.slot < len(sizes) else None


def tile_bounds(offsets: np.ndarray, file_size: int) -> np.ndarray:
    """ends[i] of each tile: the next tile's start, the file size for the last one."""
    offs = np.asarray(offsets, dtype=np.uint64).astype(np.int64, copy=False)
    ends = np.empty_like(offs)
    if len(offs):
        ends[:-1] = offs[1:]
        ends[-1] = file_size
    return ends


def parse_data_file(document, source, ctx, fragment_metadata: FragmentMetadata,
                    schema: ArraySchema, file_name: str) -> Node:
    """Split data file `file_name` (of a fragment with `fragment_metadata`, written with
    `schema`) into its tiles, each parsed into chunks and per-filter chunk metadata with the
    pipeline of what the file holds. Bytes no tile explains become an 'unparsed' warning leaf;
    a tile offset beyond the file, or offsets that go backwards, become error nodes. Never
    raises."""
    fm = fragment_metadata
    name = os.path.basename(file_name)
    root = Node(name, "file", source, 0, source.size, doc=D_DATA_FILE)

    def parse(cur: Cursor):
        role = file_role(schema, fm, name) if schema is not None else None
        if role is None:
            cur.fail("unrecognised data file", f"{name} is not a data file of this fragment's "
                                               f"schema (no such attribute or dimension)")
        root.value = role.slot_name
        offsets, why = tile_offsets_for(fm, role)
        if offsets is None:
            msg = f"tiles of {name} cannot be located: {why}"
            if "no key given" in (why or ""):
                if source.size:
                    cur.raw("Tiles (encrypted metadata)", source.size).mark(WARNING, msg).code = \
                        NO_KEY
                return
            cur.fail("Tiles", msg)
        exp = expected_size(fm, role)
        if exp is not None and exp > source.size:
            root.mark(WARNING, f"the fragment metadata gives {name} {exp} bytes; the file has "
                               f"{source.size}")
        # libtiledb reads the file as long as its footer says (the last tile ends there):
        # bytes after it are never read (tests/tiledb/test_reader_faults.py)
        end = exp if exp is not None and exp < source.size else source.size
        root.display = (f"{role.slot_name} {role.part if role.role != 'offsets' else 'offsets'}, "
                        f"{len(offsets)} tile(s), [" + ", ".join(s.name for s in role.specs) + "]")
        if getattr(source, "remote", False) and len(offsets) <= LAZY_TILES:
            # on an object store each tile's header is a request: parsed when first shown
            # (more than LAZY_TILES tiles are lazy anyway); the built tree is the local one
            from ...core.remote import ReadDeferred

            cur.node.set_lazy(ReadDeferred(lambda: _tiles_of(source, ctx, role, offsets, name,
                                                             end)))
            return
        _add_tiles(cur, role, offsets, end)
        _after_footer_size(cur.node, source, name, end)

    run_parser(name, "file", source, parse, ctx, node=root)
    root.data = fm
    return root


def _tiles_of(source, ctx, role: DataFileRole, offsets: np.ndarray, name: str, end: int
              ) -> List[Node]:
    """The children `parse_data_file` gives a data file: its tiles and any gap between them."""
    holder = Node(name, "file", source, 0, source.size)

    def parse(cur: Cursor) -> None:
        _add_tiles(cur, role, offsets, end)
        _after_footer_size(cur.node, source, name, end)
    run_parser(name, "file", source, parse, ctx, node=holder)
    return list(holder.children)


def _after_footer_size(parent: Node, source, name: str, end: int) -> None:
    """Bytes of the file after the size its fragment metadata gives it: a warning, as
    libtiledb reads the file correctly (appended by a tool, a copy resumed twice...)."""
    extra = source.size - end
    if extra > 0:
        parent.add(Node("unparsed", "unparsed", source, end, extra, status=WARNING,
                        code=FILE_SIZE, display=hex_preview(source.read(end, 16)),
                        message=f"{extra} bytes after the {end} the fragment metadata gives "
                                f"{name}: libtiledb never reads them"))


def _tile_doc(role: DataFileRole):
    return {"offsets": D_TILE_OFFSETS, "validity": D_TILE_VALIDITY}.get(role.role, D_TILE_VALUES)


def _add_tiles(cur: Cursor, role: DataFileRole, offsets: np.ndarray, fsize: int) -> None:
    src = cur.source
    n = len(offsets)
    if n == 0:
        return
    offs = np.asarray(offsets, dtype=np.uint64)
    back = np.flatnonzero(offs[1:] < offs[:-1]) if n > 1 else np.array([], dtype=np.int64)
    beyond = np.flatnonzero(offs > fsize)
    tdoc = _tile_doc(role)
    if len(back) or len(beyond):
        # Irregular: show each tile we can, and an error for each bad offset. A tile ends at
        # the first later offset at or after its own (inside the file): one linear pass.
        ends_at = _next_at_or_after(offs, fsize)
        for i in range(n):
            off = int(offs[i])
            if off > fsize:
                cur.node.add(Node(f"Tile {i + 1}", "error", src, fsize, 0, status=ERROR,
                                  message=f"Tile {i + 1}: offset {off} is beyond the end of the "
                                          f"file ({fsize} bytes)"))
                continue
            end = ends_at[i]
            if i > 0 and off < int(offs[i - 1]):
                cur.node.add(Node(f"Tile {i + 1} offset", "error", src, off, 0, status=ERROR,
                                  message=f"Tile {i + 1}: offset {off} is before tile {i}'s "
                                          f"offset {int(offs[i - 1])}"))
                continue
            _one_tile(cur.node, src, role, i, off, end, tdoc)
        return
    ends = tile_bounds(offs, fsize)
    if n <= LAZY_TILES:
        for i in range(n):
            _one_tile(cur.node, src, role, i, int(offs[i]), int(ends[i]), tdoc)
        return
    first = int(offs[0])

    def make(i: int) -> Node:
        holder = Node("tiles", "struct", src, int(offs[i]), int(ends[i] - offs[i]))
        return _one_tile(holder, src, role, i, int(offs[i]), int(ends[i]), tdoc)
    node = Node("Tiles", "array", src, first, fsize - first, doc=D_TILES,
                display=f"{n} tiles", value=n, data=TileRun(src, role, offs, ends))
    node.set_lazy(LazyChildren(n, make, uniform=True))
    cur.node.add(node)


def over_limit(role: DataFileRole, declared: int, tile: Optional[int] = None) -> Optional[str]:
    """Why tile `tile` declaring `declared` unfiltered bytes must not be decoded (None: it
    may): over tile cells × cell size, or, for var data, over the var tile size the
    fragment metadata records."""
    if role.max_bytes is not None and declared > role.max_bytes:
        return (f"the tile's chunks declare {declared} unfiltered bytes; the schema allows at "
                f"most {role.max_bytes} ({role.role} tile cells × cell size): not decoded")
    if role.part == "var" and tile is not None and role.fm is not None:
        try:
            sizes = role.fm.tile_var_sizes[role.slot]
            limit = int(sizes[tile]) if sizes is not None and tile < len(sizes) else None
        except (IndexError, TypeError, ValueError):
            limit = None
        if limit is not None and declared > limit:
            return (f"the tile's chunks declare {declared} unfiltered bytes; the fragment "
                    f"metadata gives var tile {tile + 1} {limit} bytes: not decoded")
    return None


def _next_at_or_after(offs: np.ndarray, fsize: int) -> list:
    """For each i, the first offs[j] (j > i) with offs[i] <= offs[j] <= fsize, else fsize
    (a monotonic stack: linear however the offsets go back and forth)."""
    values = [int(x) for x in offs]
    out = [fsize] * len(values)
    stack: list = []   # later offsets inside the file, nearest first on top
    for i in range(len(values) - 1, -1, -1):
        v = values[i]
        if v > fsize:
            continue  # beyond the file: ends nothing, and is no tile's end
        while stack and stack[-1] < v:
            stack.pop()
        if stack:
            out[i] = stack[-1]
        stack.append(v)
    return out


class TileRun:
    """The tiles of a lazy "Tiles" node, readable without nodes: `verify` walks a million
    tiles' chunks holding one tile's chunk table at a time (memory independent of the tile
    count). `chunks(i)` raises TileError where the tile's node must say what is wrong (a
    chunk table that does not read, sizes over the schema's limit)."""

    def __init__(self, source, role: DataFileRole, offsets: np.ndarray, ends: np.ndarray):
        self.source, self.role = source, role
        self.offsets, self.ends = offsets, ends

    def __len__(self) -> int:
        return len(self.offsets)

    def chunks(self, i: int) -> list:
        from .rawtile import chunk_table
        from .tile import ChunkInfo

        specs, info, src = self.role.specs, self.role.info, self.source
        from .rawtile import TileError

        table = chunk_table(src, int(self.offsets[i]), int(self.ends[i]))
        if over_limit(self.role, sum(c[0] for c in table), i):
            raise TileError("over the size limit")
        return [ChunkInfo(k, src, o, f, mo, ml, d, specs, info)
                for k, (o, f, mo, ml, d) in enumerate(table)]


def _one_tile(parent: Node, src, role: DataFileRole, i: int, start: int, end: int, tdoc) -> Node:
    sub = Cursor(src, start, end, parent)
    try:
        tinfo = parse_tile(sub, role.specs, role.info, f"Tile {i + 1}", size=end - start,
                           node_doc=tdoc, defer=True)
    except ParseStop:
        return parent.children[-1]
    node = parent.children[-1]
    node.parent = None if parent.name == "tiles" else parent
    over = over_limit(role, tinfo.original_length, i)
    if over:
        node.mark(ERROR, over)
        node.code = SIZE_OVER_LIMIT
        tinfo.complete = False  # never decoded: the declared size is the damage
        for c in tinfo.chunks:
            c.blocked = over
    if not tinfo.chunks and role.role == "offsets":
        node.display = "0 chunks (offsets carried by the var tile: RLE/DICTIONARY strings)"
    return node

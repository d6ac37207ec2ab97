"""Checks of a fragment's cells that need no checksum: what the format itself makes
checkable once every tile is decoded.

Per field and tile: the decoded cell count against the count the fragment metadata implies
(and every field of the fragment agreeing); var tiles: cell offsets start at 0, never
decrease and stay inside their var tile, whose decoded size the metadata also gives;
validity bytes are 0 or 1; the per-tile min / max / sum / null count recomputed from the
cells against the fragment metadata. Sparse fragments: each tile's MBR recomputed against
the R-tree's leaf level, coordinates inside their dimension's domain and the fragment's
non-empty domain, in the array's global order, without duplicates unless the schema allows
them. Dense fragments: the non-empty domain inside the array domain.

Tiles that do not decode are skipped here: the chunk checks report them. Every finding
names the data file and the tile's offset in it."""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...core import compiled
from ...core.findings import (
    CELL_COUNT,
    COORD_DOMAIN,
    COORD_DUP,
    COORD_NED,
    COORD_ORDER,
    DENSE_DOMAIN,
    MBR_MISMATCH,
    OFFSET_RANGE,
    OFFSETS_ORDER,
    TILE_STAT,
    VALIDITY_VALUE,
    VAR_SIZE,
    WRITER_QUIRK,
    Finding,
)
from ...core.status import Status
from ...core.verify_tally import tally
from ...filters.enums import Datatype, FilterType
from ..model.array_model import ArraySchema, Attribute, Dimension, Fragment, FragmentMetadata
from ..parse.data_files import file_role, over_limit, tile_bounds, tile_offsets_for
from ..parse.decode import decode_generic_tile, decode_tile
from ..parse.rawtile import TileError, chunk_table
from . import tile_cache, writer_stats
from .tile_stats import var_extremes

# False: the statistics, domain and MBR checks tile by tile, the reference the vectorised
# passes must match (the tests run both)
VECTORISED = True
MAX_PER_KIND = 20   # findings of one kind per file: the rest are counted in the last one

# numpy types of the numeric datatypes whose statistics libtiledb keeps
_NUMERIC = {0: "<i4", 1: "<i8", 2: "<f4", 3: "<f8", 5: "i1", 6: "u1", 7: "<i2", 8: "<u2",
            9: "<u4", 10: "<u8"}
for _dt in range(18, 40):
    _NUMERIC[_dt] = "<i8"   # datetimes and times
_STRINGS = (Datatype.STRING_ASCII, Datatype.STRING_UTF8)  # (var CHAR tiles keep no min/max)
# lossy filters: statistics describe the values before them
SCALE_FLOAT, WEBP = FilterType.SCALE_FLOAT, FilterType.WEBP


@dataclass(slots=True)   # a million tiles: no __dict__ each
class _Tile:
    index: int
    offset: int          # where the tile starts in its data file
    data: bytes
    rle_offsets: Optional[bytes] = None


class _Out:
    """Findings with at most MAX_PER_KIND per (file, code)."""

    def __init__(self) -> None:
        self.items: List[Finding] = []
        self.count: Dict[Tuple[str, str], int] = {}

    def add(self, code: str, source: str, offset: int, message: str, hint: str = "") -> None:
        k = (source, code)
        n = self.count.get(k, 0) + 1
        self.count[k] = n
        if n <= MAX_PER_KIND:
            self.items.append(Finding(Status.ERROR, code, source, offset, "", message, hint))

    def note(self, code: str, source: str, offset: int, message: str) -> None:
        """An info finding: what a writer does that is not damage."""
        self.items.append(Finding(Status.INFO, code, source, offset, "", message, ""))

    def finish(self) -> List[Finding]:
        out = list(self.items)
        for (src, code), n in self.count.items():
            if n > MAX_PER_KIND:
                out.append(Finding(Status.ERROR, code, src, 0, "",
                                   f"{n - MAX_PER_KIND} more findings of this kind in this file"))
        return out


def _decode_all(document, frag: Fragment, fm: FragmentMetadata, schema: ArraySchema,
                file_name: str, key) -> Optional[List[Optional[_Tile]]]:
    """Every tile of a data file decoded (None where a tile does not decode), or None when
    the file cannot be located."""
    role = file_role(schema, fm, file_name)
    if role is None:
        return None
    offsets, _why = tile_offsets_for(fm, role)
    path = os.path.join(frag.path, file_name)
    if offsets is None or not document.fs.stat(path).is_file:
        return None   # missing, or not a regular file: the bookkeeping checks say so
    src = document.open_source(path) if hasattr(document, "open_source") else None
    if src is None:
        return None
    offs = np.asarray(offsets, dtype=np.uint64).astype(np.int64)
    ends = tile_bounds(offsets, src.size)
    cache = tile_cache.current()
    name = getattr(src, "name", None)
    n = len(offs)
    out: List[Optional[_Tile]] = [None] * n
    starts, stops = offs.tolist(), ends.tolist()
    inside = [not (a > src.size or b < a) for a, b in zip(starts, stops)]
    if cache is not None and name is not None and cache.tiles:
        for i in range(n):   # tiles the chunk checks left decoded
            if inside[i]:
                hit = cache.take(cache.key(name, starts[i], role.specs, role.info))
                if hit is not None:   # var cells are sliced and compared: as bytes
                    data = bytes(hit[0]) if role.part == "var" else memoryview(hit[0])
                    out[i] = _Tile(i, starts[i], data, hit[1])  # type: ignore[arg-type]
    from .tile_batch import decode_run

    want = np.array([o is None for o in out], dtype=bool) & np.array(inside, dtype=bool)
    for w in decode_run(src, offs, ends, role, want=want):   # the plain tiles in one pass
        for k, cells in enumerate(w.cells):
            i = w.first + k
            if cells is not None and out[i] is None and inside[i]:
                out[i] = _Tile(i, starts[i], cells)
    todo = [i for i in range(n) if out[i] is None and inside[i]]

    def decode(i: int) -> Optional[_Tile]:
        a, b = int(offs[i]), int(ends[i])
        try:
            if over_limit(role, sum(c[0] for c in chunk_table(src, a, b)), i) is not None:
                return None   # the chunk checks report it (size-over-limit): not decoded
            data, rle = decode_tile(src, a, b, role.specs, role.info, key)
        except (TileError, Exception):  # noqa: BLE001 - reported by the chunk checks
            return None
        return _Tile(i, a, bytes(data), rle)
    stored = sum(int(ends[i]) - int(offs[i]) for i in todo)
    for i, t in zip(todo, _map_tiles(decode, todo, stored)):
        out[i] = t
    return out


def _map_tiles(fn, items: List[int], stored: int) -> List[Optional[_Tile]]:
    """`fn` over the tiles, on a thread pool when there are many and they are not tiny
    (decoding releases the GIL; Python-bound tiny tiles would only fight over it); results
    in order."""
    workers = compiled.TUNING.workers
    if workers <= 1 or len(items) < 8 or stored < 16384 * len(items):
        return [fn(i) for i in items]
    from concurrent.futures import ThreadPoolExecutor

    step = max(1, min(256, -(-len(items) // (4 * workers))))
    with ThreadPoolExecutor(workers) as ex:
        parts = ex.map(lambda k: [fn(i) for i in items[k:k + step]], range(0, len(items), step))
        return [t for part in parts for t in part]


class _Expected(Sequence):
    """Cells per tile the metadata implies: `cpt` each, the last `last`. Not a list: the
    tile count comes from the (untrusted) domain, 2^27 tiles for one flipped bit."""

    def __init__(self, cpt: int, n: int, last: int):
        self.cpt, self.n, self.last = cpt, n, last

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.last if i == self.n - 1 else self.cpt


def _expected_cells(fm: FragmentMetadata, ntiles: int) -> Optional[Sequence[int]]:
    cpt = fm.cells_per_tile
    if not cpt:
        return None
    last = int(fm.last_tile_cell_num) if not fm.dense and ntiles and fm.last_tile_cell_num \
        else int(cpt)
    return _Expected(int(cpt), ntiles, last)


def check_fragment_cells(document, array, frag: Fragment, key) -> List[Finding]:
    fm = frag.metadata
    if fm is None or fm.loader is None:
        return []
    schema: Optional[ArraySchema] = fm.schema or array.schema_for(fm.schema_name)
    if schema is None or (fm.encrypted and not key):
        return []
    out = _Out()
    rel = document.relname
    fields: List[Any] = list(schema.attributes)
    if not fm.dense:
        fields += list(schema.dimensions)
    expected = _expected_cells(fm, fm.tile_num) if fm.tile_num else None
    coords: Dict[int, List[Optional[np.ndarray]]] = {}
    for fld in fields:
        if isinstance(fld, Attribute):
            stem = f"a{schema.attributes.index(fld)}"
        else:
            stem = f"d{schema.dimensions.index(fld)}"
        fixed = _decode_all(document, frag, fm, schema, stem + ".tdb", key)
        if fixed is None:
            continue
        src = rel(os.path.join(frag.path, stem + ".tdb"))
        decoded = len(fixed) - fixed.count(None)
        if decoded:
            tally().batch(src, decoded, 0)
        var_tiles = None
        if fld.var:
            var_tiles = _decode_all(document, frag, fm, schema, stem + "_var.tdb", key)
        counts = _field_counts(out, src, fld, fixed, expected, var_tiles)
        if fld.var:
            if var_tiles is not None:
                _check_var(out, rel(os.path.join(frag.path, stem + "_var.tdb")), src, fld, fm,
                           schema, fixed, var_tiles)
        validity = None
        if getattr(fld, "nullable", False):
            validity = _decode_all(document, frag, fm, schema, stem + "_validity.tdb", key)
            if validity is not None:
                _check_validity(out, rel(os.path.join(frag.path, stem + "_validity.tdb")),
                                validity, counts)
        if isinstance(fld, Attribute) or not fm.dense:
            _check_stats(out, src, fld, fm, schema, fixed, var_tiles, validity)
        if isinstance(fld, Dimension) and not fld.var and fld.datatype in _NUMERIC:
            j = schema.dimensions.index(fld)
            dt = np.dtype(_NUMERIC[fld.datatype])
            coords[j] = [None if t is None or len(t.data) % dt.itemsize else
                         np.frombuffer(t.data, dt) for t in fixed]
            _check_domain(out, src, fld, fm.non_empty_domain[j] if fm.non_empty_domain and
                          j < len(fm.non_empty_domain) else None, fixed, coords[j])
    # the per-cell timestamps and delete metadata of a consolidated fragment: one u64 per
    # cell each, as many cells as the fields (a lost block there fails libtiledb's read)
    for stem in _special_stems(fm):
        role = file_role(schema, fm, stem + ".tdb")
        tiles = _decode_all(document, frag, fm, schema, stem + ".tdb", key) if role else None
        if role is not None and tiles is not None:
            _field_counts(out, rel(os.path.join(frag.path, stem + ".tdb")), role.obj, tiles,
                          expected)
    if not fm.dense and coords and len(coords) == len(schema.dimensions):
        d0 = rel(os.path.join(frag.path, "d0.tdb"))
        offs0 = _decode_offsets(fm, schema, "d0.tdb")
        _check_mbrs(out, d0, fm, schema, coords, offs0, key)
        # a fragment with per-cell timestamps (consolidation keeps every version of a cell)
        # holds the same coordinates once per timestamp
        _check_order(out, d0, schema, coords, offs0,
                     schema.allows_dups or bool(getattr(fm, "has_timestamps", False)))
    if fm.dense:
        _check_dense_domain(out, rel(os.path.join(frag.path, "__fragment_metadata.tdb")),
                            schema, fm)
    return out.finish()


def _special_stems(fm: FragmentMetadata) -> List[str]:
    """The data files of a fragment's own per-cell fields (not the schema's)."""
    return (["t"] if getattr(fm, "has_timestamps", False) else []) + \
        (["dt", "dci"] if getattr(fm, "has_delete_meta", False) else [])


def _decode_offsets(fm: FragmentMetadata, schema: ArraySchema, file_name: str) -> List[int]:
    role = file_role(schema, fm, file_name)
    offsets = tile_offsets_for(fm, role)[0] if role is not None else None
    return [] if offsets is None else [int(x) for x in offsets]


def _field_counts(out: _Out, src: str, fld, tiles: Sequence[Optional[_Tile]],
                  expected: Optional[Sequence[int]],
                  var_tiles: Optional[Sequence[Optional[_Tile]]] = None) -> List[Optional[int]]:
    """Cells per tile from the fixed (or offsets) file, checked against the metadata. A var
    string tile under RLE or DICTIONARY leaves its offsets tile empty: libtiledb rebuilds
    the offsets from the var tile's filter output, and so is the cell count taken here
    (None when that var tile does not decode: not known)."""
    size = 8 if fld.var else fld.cell_size
    counts: List[Optional[int]] = []
    for t in tiles:
        if t is None:
            counts.append(None)
            continue
        n: Optional[int] = len(t.data) // size
        if fld.var and not t.data:
            vt = var_tiles[t.index] if var_tiles is not None and t.index < len(var_tiles) \
                else None
            rle = t.rle_offsets if t.rle_offsets is not None else \
                (vt.rle_offsets if vt is not None else None)
            if rle is not None:
                n = len(rle) // 8
            elif vt is None:
                n = None   # the var tile did not decode: its cell count is not known
        counts.append(n)
        if n is None:
            continue
        if len(t.data) % size:
            out.add(CELL_COUNT, src, t.offset,
                    f"tile {t.index + 1}: {len(t.data)} decoded bytes are not whole {size}-byte "
                    f"cells")
        elif expected is not None and t.index < len(expected) and n != expected[t.index]:
            out.add(CELL_COUNT, src, t.offset,
                    f"tile {t.index + 1} of {fld.name!r} decodes to {n} cells, the fragment "
                    f"metadata implies {expected[t.index]}")
    if expected is not None and len(tiles) != len(expected):
        out.add(CELL_COUNT, src, 0, f"{fld.name!r} has {len(tiles)} tiles, the fragment "
                                    f"metadata implies {len(expected)}")
    return counts


def _cell_offsets(t: _Tile) -> np.ndarray:
    """The u64 cell offsets a tile gives: an offsets tile's bytes, or those RLE / DICTIONARY
    rebuilt from a var string tile (whose offsets tile is empty)."""
    raw = t.rle_offsets if t.rle_offsets is not None else t.data
    return np.frombuffer(raw, "<u8", count=len(raw) // 8)


def _check_var(out: _Out, var_src: str, src: str, fld, fm: FragmentMetadata,
               schema: ArraySchema, fixed: Sequence[Optional[_Tile]],
               var_tiles: Sequence[Optional[_Tile]]) -> None:
    slot = schema.attributes.index(fld) if isinstance(fld, Attribute) else \
        len(schema.attributes) + 1 + schema.dimensions.index(fld)
    sizes = fm.tile_var_sizes[slot] if slot < len(fm.tile_var_sizes) else None
    for i, vt in enumerate(var_tiles):
        if vt is None:
            continue
        if sizes is not None and i < len(sizes) and int(sizes[i]) != len(vt.data):
            out.add(VAR_SIZE, var_src, vt.offset,
                    f"var tile {i + 1} of {fld.name!r} decodes to {len(vt.data)} bytes, the "
                    f"fragment metadata says {int(sizes[i])}")
        ot = fixed[i] if i < len(fixed) else None
        if ot is None:
            continue
        use = vt if not ot.data and vt.rle_offsets is not None else ot
        offs = _cell_offsets(use)
        if not len(offs):
            continue
        where = src if use is ot else var_src
        if int(offs[0]) != 0:
            out.add(OFFSETS_ORDER, where, use.offset,
                    f"tile {i + 1} of {fld.name!r}: the first cell offset is {int(offs[0])}, "
                    f"not 0")
        dec = np.flatnonzero(offs[1:] < offs[:-1])
        if len(dec):
            k = int(dec[0]) + 1
            out.add(OFFSETS_ORDER, where, use.offset,
                    f"tile {i + 1} of {fld.name!r}: cell offset {k} ({int(offs[k])}) is below "
                    f"the one before ({int(offs[k - 1])})")
        if int(offs.max()) > len(vt.data):
            k = int(np.argmax(offs > len(vt.data)))
            out.add(OFFSET_RANGE, where, use.offset,
                    f"tile {i + 1} of {fld.name!r}: cell offset {k} ({int(offs[k])}) is past "
                    f"the {len(vt.data)} bytes of its var tile")


def _check_validity(out: _Out, src: str, tiles: Sequence[Optional[_Tile]],
                    counts: List[Optional[int]]) -> None:
    for t in tiles:
        if t is None:
            continue
        v = np.frombuffer(t.data, np.uint8)
        bad = np.flatnonzero(v > 1)
        if len(bad):
            out.add(VALIDITY_VALUE, src, t.offset,
                    f"validity tile {t.index + 1}: byte {int(bad[0])} is {int(v[bad[0]])}, "
                    f"not 0 or 1 ({len(bad)} such bytes)")
        n = counts[t.index] if t.index < len(counts) else None
        if n is not None and len(v) != n:
            out.add(CELL_COUNT, src, t.offset,
                    f"validity tile {t.index + 1} has {len(v)} bytes for {n} cells")


# ---- per-tile statistics --------------------------------------------------------------
def _minmax_payload(fm: FragmentMetadata, kind: str, slot: int) -> Optional[Tuple[bytes, bytes]]:
    loader = fm.loader
    off = loader.offset_of(kind, slot) if loader is not None else None
    if off is None or loader is None:
        return None
    p = loader.payload_of(kind, slot)   # (the model path's metadata check decoded it)
    if p is None:
        try:
            p, _enc = decode_generic_tile(loader.source, off, loader.key)
        except Exception:  # noqa: BLE001 - the tree reports unreadable sections
            return None
    if len(p) < 16:
        return None
    fixed, var = struct.unpack_from("<QQ", p, 0)
    if 16 + fixed + var > len(p):
        return None
    return p[16:16 + fixed], p[16 + fixed:16 + fixed + var]


PADDED_DENSE_STATS_LAST_FORMAT = 15


def _check_stats(out: _Out, src: str, fld, fm: FragmentMetadata, schema: ArraySchema,
                 fixed: Sequence[Optional[_Tile]], var_tiles, validity) -> None:
    slot = schema.attributes.index(fld) if isinstance(fld, Attribute) else \
        len(schema.attributes) + 1 + schema.dimensions.index(fld)
    ntiles = len(fixed)
    if any(sp.type == SCALE_FLOAT or (sp.type == WEBP and not sp.options.get("lossless"))
           for sp in schema.pipeline_for(fld, "attribute")):
        return
    nulls_meta = fm.tile_null_counts
    nulls_meta = nulls_meta[slot] if nulls_meta is not None and slot < len(nulls_meta) and \
        not fld.var else None
    masks: List[Optional[np.ndarray]] = [None] * ntiles
    valids: List[Optional[np.ndarray]] = [None] * ntiles
    if fm.dense:
        # dense tiles are padded past the written region: statistics cover written cells only
        inside = _dense_written(fm, schema, [None if t is None else len(t.data) // max(
            1, 8 if fld.var else fld.cell_size) for t in fixed])
        if inside is None:
            return
        masks = inside
    if validity is not None:
        for t in validity:
            if t is not None and t.index < ntiles:
                valid = np.frombuffer(t.data, np.uint8) != 0
                valids[t.index] = valid
                base = masks[t.index]
                if base is not None and len(base) != len(valid):
                    continue
                masks[t.index] = valid if base is None else valid & base
                if fm.dense:
                    continue   # null counts of padded tiles: not compared
                if nulls_meta is not None and len(nulls_meta) == ntiles:
                    nulls = int(np.count_nonzero(~masks[t.index]))
                    if nulls != int(nulls_meta[t.index]):
                        out.add(TILE_STAT, src, fixed[t.index].offset if fixed[t.index]
                                else 0, f"tile {t.index + 1} of {fld.name!r} has {nulls} null "
                                        f"cells, the fragment metadata says "
                                        f"{int(nulls_meta[t.index])}")
    if fld.var:
        if fld.datatype in _STRINGS and var_tiles is not None:
            _check_var_minmax(out, src, fld, fm, schema, slot, fixed, var_tiles, masks, valids)
        return
    if fld.cell_val_num != 1 or fld.datatype not in _NUMERIC:
        return
    dt = np.dtype(_NUMERIC[fld.datatype])
    sums = fm.tile_sums
    sums = sums[slot] if sums is not None and slot < len(sums) else None
    mins = _minmax_payload(fm, "tile_mins", slot)
    maxs = _minmax_payload(fm, "tile_maxs", slot)
    mins_a = np.frombuffer(mins[0], dt) if mins and len(mins[0]) == ntiles * dt.itemsize else None
    maxs_a = np.frombuffer(maxs[0], dt) if maxs and len(maxs[0]) == ntiles * dt.itemsize else None
    # libtiledb 2.7-2.11 (formats 11-15) took a dense tile's min/max over every stored cell,
    # the padding of a partial tile included; later writers over the written cells only.
    padded_stats = fm.dense and fm.version <= PADDED_DENSE_STATS_LAST_FORMAT
    s_arr = np.asarray(sums) if sums is not None and len(sums) == ntiles else None
    try:
        want = _want_sums(s_arr, dt) if s_arr is not None else None
    except (TypeError, ValueError):
        want = None
    settle = _Settle(schema, fm, dt, valids, mins_a, maxs_a, want)
    try:
        if not VECTORISED:
            raise TypeError("the reference path")
        _stats_vectorised(out, src, fld, fixed, masks, dt, mins_a, maxs_a, s_arr, padded_stats,
                          settle)
    except (TypeError, ValueError):   # sums of an unexpected type: the loop says what it says
        _stats_loop(out, src, fld, fixed, masks, dt, mins_a, maxs_a, sums, ntiles, padded_stats,
                    settle)


class _Settle:
    """A tile the fast pass flags (or cannot compare: a non-finite cell, an integer sum
    that may saturate) computed again exactly as libtiledb's writers compute it
    (`writer_stats`), under each plan one of them feeds that tile: it agrees when one plan
    gives every stored statistic."""

    def __init__(self, schema: ArraySchema, fm: FragmentMetadata, dt: np.dtype,
                 valids: List[Optional[np.ndarray]], mins_a, maxs_a, want) -> None:
        self.schema, self.fm, self.dt, self.valids = schema, fm, dt, valids
        self.mins_a, self.maxs_a, self.want = mins_a, maxs_a, want
        self.grid = _grid(schema, fm)

    def _plans(self, i: int, ncells: int):
        return _writer_plans(self.schema, self.fm, self.grid, i, ncells)

    def may_saturate(self, t: _Tile) -> bool:
        """An integer tile whose running sum may pass 2**62: when no plan gives its stored
        sum, that is not reported. Such tiles are where libtiledb < 2.29's BIT_WIDTH_REDUCTION
        lost values (the chunk checks name that writer bug): the sum describes the cells as
        written, the decoded ones differ."""
        if self.dt.kind == "f":
            return False
        vals = np.frombuffer(t.data, self.dt, count=len(t.data) // self.dt.itemsize)
        return bool(len(vals)) and \
            float(np.abs(np.cumsum(vals, dtype=np.float64)).max()) >= 2.0 ** 62

    def exact(self, t: _Tile) -> Optional[Tuple[Any, Any, Any]]:
        """None when one plan gives the stored statistics; else (min, max, sum) of the
        plan that feeds the written cells (each None where not known)."""
        vals = np.frombuffer(t.data, self.dt, count=len(t.data) // self.dt.itemsize)
        i = t.index
        valid = self.valids[i] if i < len(self.valids) else None
        if valid is not None and len(valid) != len(vals):
            return None   # the validity check reports the count
        stored = (self.mins_a[i].item() if self.mins_a is not None else None,
                  self.maxs_a[i].item() if self.maxs_a is not None else None,
                  self.want[i].item() if self.want is not None else None)
        report = None
        main = 1 if self.fm.dense else 0   # dense: the ordered writer's plan (written cells)
        for k, plan in enumerate(self._plans(i, len(vals))):
            got = writer_stats.generator_stats(vals, valid, plan)
            if got is None:
                continue
            if all(w is None or writer_stats.same(w, g) for w, g in zip(stored, got)):
                return None
            if k == main or report is None:
                report = got
        return report


def _grid(schema: ArraySchema, fm: FragmentMetadata):
    """A dense fragment's tile grid (`dense_coords.tile_grid`), None when not usable."""
    if not fm.dense or fm.non_empty_domain is None:
        return None
    from ..values.dense_coords import tile_grid

    try:
        return tile_grid(schema, fm.non_empty_domain)
    except (ValueError, TypeError, OverflowError):
        return None


def _writer_plans(schema: ArraySchema, fm: FragmentMetadata, grid, i: int, ncells: int):
    """The plans libtiledb's write paths feed tile `i` in (`writer_stats`): a sparse tile
    whole; a dense one whole (global order) or in the ordered writer's slabs."""
    if not fm.dense:
        return [writer_stats.whole_tile(ncells)]
    if grid is None:
        return []
    pos = _tile_position(i, [n for _s, n, _e in grid], schema.tile_order)
    if pos is None:
        return []
    lo = [st + p * e for (st, _n, e), p in zip(grid, pos)]
    return writer_stats.dense_plans(schema, fm.non_empty_domain, lo, ncells)


def _tile_position(i: int, counts: List[int], order: int) -> Optional[List[int]]:
    """Tile `i`'s index along each dimension of a grid of `counts` tiles in `order`."""
    total = 1
    for c in counts:
        total *= c
    if not 0 <= i < total:
        return None
    pos = [0] * len(counts)
    dims = range(len(counts) - 1, -1, -1) if order == 0 else range(len(counts))
    for d in dims:
        pos[d] = i % counts[d]
        i //= counts[d]
    return pos


def _want_sums(s_arr: np.ndarray, dt: np.dtype) -> np.ndarray:
    """The metadata's sums as `_stats_loop` reads each one (int sums as 64-bit two's
    complement for signed fields, float sums from their bits when stored as integers)."""
    if dt.kind == "f":
        return s_arr.astype(np.float64) if s_arr.dtype.kind == "f" else s_arr.view("<f8")
    wide = np.int64 if dt.kind == "i" else np.uint64
    if s_arr.dtype.kind == dt.kind:
        return s_arr.astype(wide)
    return s_arr.view("<i8" if dt.kind == "i" else "<u8")


def _stats_vectorised(out: _Out, src: str, fld, fixed: Sequence[Optional[_Tile]], masks,
                      dt: np.dtype, mins_a, maxs_a, s_arr, padded_stats: bool,
                      settle: _Settle) -> None:
    """`_stats_loop` for every tile at once (tile_stats): the same findings, in order."""
    isz = dt.itemsize
    usable = [t for t in fixed if t is not None and
              (masks[t.index] is None or len(masks[t.index]) == len(t.data) // isz)]
    want = _want_sums(s_arr, dt) if s_arr is not None else None
    groups: List[List[_Tile]] = []
    group: List[_Tile] = []
    size = 0
    for t in usable:   # groups of tiles in order: the temporaries stay STATS_GROUP_BYTES-sized
        group.append(t)
        size += len(t.data)
        if size >= STATS_GROUP_BYTES:
            groups.append(group)
            group, size = [], 0
    if group:
        groups.append(group)
    for group, st in zip(groups, _group_stats(groups, masks, dt)):
        _stats_group(out, src, fld, group, st, dt, mins_a, maxs_a, want, padded_stats, settle)


STATS_GROUP_BYTES = 8 << 20


def _group_stats(groups: List[List[_Tile]], masks, dt: np.dtype):
    """`tile_stats` of each group, in order: a group per thread at a time when there are
    several (numpy's reductions run without the GIL), at most one group's temporaries per
    thread."""
    from .tile_stats import tile_stats
    workers = compiled.TUNING.workers

    def one(tiles: List[_Tile]):
        return tile_stats([t.data for t in tiles], [t.index for t in tiles],
                          [masks[t.index] for t in tiles], dt)
    if workers <= 1 or len(groups) < 2:
        for g in groups:
            yield one(g)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(workers, len(groups))) as ex:
        yield from ex.map(one, groups)


def _stats_group(out: _Out, src: str, fld, tiles: List[_Tile], st, dt: np.dtype, mins_a,
                 maxs_a, want, padded_stats: bool, settle: _Settle) -> None:
    live = (st.count > 0) & ~st.nonfinite
    flag = np.zeros(len(tiles), bool)
    for arr, got, stored in ((mins_a, st.mins, st.stored_mins), (maxs_a, st.maxs, st.stored_maxs)):
        if arr is None:
            continue
        exp = arr[st.index]
        bad = live & (exp != got)
        if padded_stats:
            bad &= ~(exp == stored)   # that writer's rule: the padding counted
        flag |= bad
    if want is not None:
        flag |= live & (st.sums != want[st.index]) & ~st.saturates
    # what the fast pass cannot settle: computed again as the writers compute it
    flag |= (st.count > 0) & (st.nonfinite | st.saturates)
    for k in np.flatnonzero(flag).tolist():
        _report_exact(out, src, fld, tiles[k], settle, dt)


def _typed(v, dt: np.dtype) -> str:
    """A cell value as its type prints it: a float32 minimum reads -1.2, not the float64
    -1.2000000476837158 its widening gives."""
    return str(dt.type(v)) if dt.kind == "f" else repr(v)


def _report_exact(out: _Out, src: str, fld, t: _Tile, settle: _Settle, dt: np.dtype) -> None:
    """The findings of a tile no writer plan explains: each stored statistic that differs
    from the written cells' (the ordered writer's plan for dense fragments)."""
    exact = settle.exact(t)
    if exact is None:
        return
    # plain Python numbers: the message reads the same whichever path computed them
    got = tuple(v.item() if isinstance(v, np.generic) else v for v in exact)
    i = t.index
    for label, arr, g in (("minimum", settle.mins_a, got[0]), ("maximum", settle.maxs_a, got[1])):
        # a plain number in the message, whichever route (compiled or numpy) computed it
        g = g.item() if isinstance(g, np.generic) else g
        if arr is not None and not writer_stats.same(arr[i].item(), g):
            out.add(TILE_STAT, src, t.offset,
                    f"tile {i + 1} of {fld.name!r}: the cells' {label} is {_typed(g, dt)}, "
                    f"the fragment metadata says {_typed(arr[i].item(), dt)}")
    w = settle.want
    if w is not None and not writer_stats.same(w[i].item(), got[2]) and \
            not settle.may_saturate(t):
        if dt.kind == "f":
            out.add(TILE_STAT, src, t.offset, f"tile {i + 1} of {fld.name!r}: the cells sum to "
                                              f"{float(got[2])!r}, the fragment metadata says "
                                              f"{float(w[i])!r}")
        else:
            out.add(TILE_STAT, src, t.offset, f"tile {i + 1} of {fld.name!r}: the cells sum to "
                                              f"{int(got[2])}, the fragment metadata says "
                                              f"{int(w[i])}")


def _stats_loop(out: _Out, src: str, fld, fixed: Sequence[Optional[_Tile]], masks,
                dt: np.dtype, mins_a, maxs_a, sums, ntiles: int, padded_stats: bool,
                settle: _Settle) -> None:
    """The statistics tile by tile (the reference `_stats_vectorised` matches)."""
    s_arr = np.asarray(sums) if sums is not None and len(sums) == ntiles else None
    for t in fixed:
        if t is None:
            continue
        stored_vals = vals = np.frombuffer(t.data, dt, count=len(t.data) // dt.itemsize)
        m = masks[t.index]
        if m is not None:
            if len(m) != len(vals):
                continue
            vals = vals[m]
        if not len(vals):
            continue
        if dt.kind == "f" and not np.all(np.isfinite(vals)):
            _report_exact(out, src, fld, t, settle, dt)
            continue
        i = t.index
        bad = False
        for arr, got, pad in ((mins_a, vals.min(), stored_vals.min()),
                              (maxs_a, vals.max(), stored_vals.max())):
            if arr is not None and arr[i] != got and padded_stats and arr[i] == pad:
                continue   # that writer's rule: the padding counted
            bad |= arr is not None and arr[i] != got
        if s_arr is not None:
            stored = s_arr[i].item() if s_arr.dtype.kind == dt.kind or dt.kind == "f" else \
                int(s_arr.view("<i8" if dt.kind == "i" else "<u8")[i])
            if dt.kind == "f" and s_arr.dtype.kind != "f":
                stored = float(s_arr.view("<f8")[i])
            bad |= not _sum_agrees(vals, dt, stored)
        if bad:
            _report_exact(out, src, fld, t, settle, dt)


def _dense_written(fm: FragmentMetadata, schema: ArraySchema,
                   counts: List[Optional[int]]) -> Optional[List[Optional[np.ndarray]]]:
    """Per tile, which stored cells lie inside the fragment's non-empty domain (None for a
    tile: all of them); None when that cannot be told (statistics not compared)."""
    from ..values.dense_coords import fragment_dense_coords

    if any(c is None for c in counts):
        return None
    total = sum(c for c in counts if c is not None)
    if _tiles_inside(schema, fm, total):   # every mask all True: the statistics take
        return [None] * len(counts)         # every cell, no coordinate per cell made
    try:
        cols = [fragment_dense_coords(schema, fm, j) for j in range(len(schema.dimensions))]
    except Exception:  # noqa: BLE001 - no usable domain: statistics are not compared
        return None
    if any(len(c) != total for c in cols):
        return None
    ok = np.ones(total, bool)
    for c, (lo, hi) in zip(cols, fm.non_empty_domain or []):
        ok &= (c >= lo) & (c <= hi)
    out: List[Optional[np.ndarray]] = []
    pos = 0
    for n in counts:
        k = n or 0
        out.append(ok[pos:pos + k])
        pos += k
    return out


def _tiles_inside(schema: ArraySchema, fm: FragmentMetadata, total: int) -> bool:
    """Whether the coordinates `_dense_written` makes (the same conditions: a domain that
    spans no more tiles than stored, `total` cells) all lie inside the non-empty domain:
    it is whole tiles along every dimension."""
    from ..values.dense_coords import MAX_CELLS, _stored_tiles, tile_grid

    ned = fm.non_empty_domain or []
    try:
        grid = tile_grid(schema, ned)
        tiles = cells = 1
        for _start, n, ext in grid:
            tiles *= n
            cells *= n * ext
        stored = _stored_tiles(fm)
        if (stored is not None and tiles > stored) or cells > MAX_CELLS or cells != total:
            return False
        return all(start == int(lo) and start + n * ext - 1 == int(hi)
                   for (start, n, ext), (lo, hi) in zip(grid, ned))
    except (ValueError, TypeError, OverflowError):
        return False


def _sum_agrees(vals: np.ndarray, dt: np.dtype, stored) -> bool:
    """The cells' sum added in order equals the stored one; False also for an integer sum
    that may saturate on the way (then the exact rule decides)."""
    if dt.kind == "f":
        return float(np.cumsum(vals.astype(np.float64))[-1]) == float(stored)
    if float(np.abs(np.cumsum(vals, dtype=np.float64)).max()) >= 2.0 ** 62:
        return False
    total = int(vals.sum(dtype=np.uint64 if dt.kind == "u" else np.int64))
    want = int(stored)
    if dt.kind != "u" and want >= 1 << 63:
        want -= 1 << 64
    return total == want


def _var_extremes(ot: _Tile, vt: _Tile, m: Optional[np.ndarray]
                  ) -> Optional[Tuple[bytes, bytes]]:
    """(smallest, largest) of a var tile's strings kept by `m`; None when none is kept or
    the offsets are unusable (the offsets checks report them)."""
    use = vt if not ot.data and vt.rle_offsets is not None else ot
    offs = _cell_offsets(use).astype(np.int64)
    if not len(offs) or np.any(offs[1:] < offs[:-1]) or int(offs.max()) > len(vt.data):
        return None
    keep = m if m is not None and len(m) == len(offs) else None
    if keep is not None and not keep.any():
        return None
    ext = var_extremes(np.frombuffer(vt.data, np.uint8), offs, keep)
    if ext is None:   # NUL bytes, or too wide a matrix: string by string
        ends = np.append(offs[1:], len(vt.data))
        cells = [vt.data[a:b] for a, b in zip(offs.tolist(), ends.tolist())]
        if keep is not None:
            cells = [c for c, ok in zip(cells, keep) if ok]
        ext = min(cells), max(cells)
    return ext


def _check_var_minmax(out: _Out, src: str, fld, fm, schema: ArraySchema, slot: int, fixed,
                      var_tiles, masks, valids) -> None:
    """A var string tile's stored min / max against its cells: the written cells (sparse
    tiles, the ordered dense writer), or every cell of the tile (the global-order writer:
    dense consolidation writes whole tiles, the cells no write covered as the fill value)."""
    mins = _minmax_payload(fm, "tile_mins", slot)
    maxs = _minmax_payload(fm, "tile_maxs", slot)
    ntiles = len(fixed)
    got: Dict[str, Optional[List[Optional[bytes]]]] = {}
    for label, p in (("minimum", mins), ("maximum", maxs)):
        if p is None or len(p[0]) != 8 * ntiles:
            got[label] = None
            continue
        offs = np.frombuffer(p[0], "<u8").astype(np.int64).tolist() + [len(p[1])]
        got[label] = [p[1][a:b] for a, b in zip(offs[:-1], offs[1:])]
    written: List[Optional[Tuple[bytes, bytes]]] = [None] * ntiles
    bad: List[int] = []
    grid = _grid(schema, fm)
    for i, (ot, vt) in enumerate(zip(fixed, var_tiles)):
        if ot is None or vt is None:
            continue
        ext = written[i] = _var_extremes(ot, vt, masks[i])
        m = masks[i]
        if ext is None and m is not None and len(m) and not m.any():
            ext = written[i] = (b"", b"")   # no cell taken: the generator leaves them empty
        if ext is None or _var_agrees(got, i, ext):
            continue
        if fm.dense:
            valid = valids[i] if i < len(valids) else None
            n = len(_cell_offsets(vt if not ot.data and vt.rle_offsets is not None else ot))
            keeps = [writer_stats.var_keep(plan, valid, n)
                     for plan in _writer_plans(schema, fm, grid, i, n)]
            # no cell taken: the generator's min / max stay unset, stored empty
            if any(_var_agrees(got, i, _var_extremes(ot, vt, k) if k.any() else (b"", b""))
                   for k in keeps):
                continue
        bad.append(i)
    layout = _attribute_parallel_layout(fm, schema, got, written) if bad else None
    if layout is not None:
        for label, want, stored in layout:
            out.add(TILE_STAT, src, fixed[0].offset,
                    f"tile 1 of {fld.name!r}: libtiledb's ordered dense writer (more "
                    f"attributes than tiles) stores the last tile's {label} here, "
                    f"{want[:40]!r}; the fragment metadata says {stored[:40]!r}")
        out.note(WRITER_QUIRK, src, 0,
                 f"{fld.name!r}: the var-sized tile minimum / maximum are stored as libtiledb's "
                 f"ordered dense writer stores them when a write has more attributes than "
                 f"tiles (the last tile's values in tile 1's place, zeros for the others; "
                 f"libtiledb 2.30 reads the cells right and does not use these)")
        return
    # the cells are the var tile's bytes: said there (a flipped byte of a string is in it)
    var_src = src[:-len(".tdb")] + "_var.tdb" if src.endswith(".tdb") else src
    for i in bad:
        ext = written[i]
        if ext is None:
            continue
        for label, want in (("minimum", ext[0]), ("maximum", ext[1])):
            said = got[label]
            if said is not None and said[i] is not None and said[i] != want:
                out.add(TILE_STAT, var_src, var_tiles[i].offset,
                        f"tile {i + 1} of {fld.name!r}: the cells' {label} is {want[:40]!r}, "
                        f"the fragment metadata says {(said[i] or b'')[:40]!r}")


def _var_agrees(got, i: int, ext: Optional[Tuple[bytes, bytes]]) -> bool:
    return ext is not None and all(got[label] is None or got[label][i] is None or got[label][i] == want
               for label, want in (("minimum", ext[0]), ("maximum", ext[1])))


def _attribute_parallel_layout(fm, schema: ArraySchema, got, written
                               ) -> Optional[List[Tuple[str, bytes, bytes]]]:
    """Whether the stored var min / max are laid out as libtiledb's OrderedWriter leaves
    them when it writes in parallel over attributes (more attributes than tiles): its
    fix-up loop restarts the tile index at 0 for every one-tile batch, so every tile's value
    is copied into tile 1's slot (the last one stays: as many bytes as tile 1's size, read
    past the last value's end when that is shorter) and the other slots keep the zeros they
    were sized with; the sizes stay right. None when not; else what of tile 1's slot
    differs from the last tile's values (label, expected prefix, stored)."""
    ntiles = len(written)
    if not fm.dense or ntiles < 2 or len(schema.attributes) <= ntiles or \
            any(w is None for w in written):
        return None
    differs: List[Tuple[str, bytes, bytes]] = []
    for k, label in enumerate(("minimum", "maximum")):
        stored = got[label]
        if stored is None:
            continue
        if any(s is None or len(s) != len(w[k]) for s, w in zip(stored, written)):
            return None
        if any(s != bytes(len(s)) for s in stored[1:]):
            return None
        last = written[-1][k]
        n = min(len(stored[0]), len(last))
        if stored[0][:n] != last[:n]:
            differs.append((label, last[:n], stored[0]))
    return differs


# ---- coordinates -----------------------------------------------------------------------
def _flagged(tiles, arrays, lo, hi, ned) -> List[int]:
    """Indices of the tiles with a coordinate outside [lo, hi] or the non-empty domain
    (one pass over every tile's coordinates laid end to end)."""
    use = [k for k, (t, a) in enumerate(zip(tiles, arrays))
           if t is not None and a is not None and len(a)]
    if not use:
        return []
    cat = np.concatenate([arrays[k] for k in use])
    bad = np.zeros(len(cat), bool)
    if lo is not None:
        bad |= (cat < lo) | (cat > hi)
    if ned is not None and ned[0] is not None and not isinstance(ned[0], (str, bytes)):
        bad |= (cat < ned[0]) | (cat > ned[1])
    lens = np.array([len(arrays[k]) for k in use], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    hit = np.add.reduceat(bad.astype(np.int64), starts) > 0
    return [use[k] for k in np.flatnonzero(hit).tolist()]


def _check_domain(out: _Out, src: str, dim: Dimension, ned, tiles, arrays) -> None:
    lo, hi = dim.domain if dim.domain is not None else (None, None)
    try:
        if not VECTORISED:
            raise TypeError("the reference path")
        flagged = _flagged(tiles, arrays, lo, hi, ned)   # the rest have nothing to say
    except Exception:  # noqa: BLE001 - bounds numpy cannot compare: tile by tile, as before
        flagged = list(range(len(tiles)))
    for k in flagged:
        t, a = tiles[k], arrays[k]
        if t is None or a is None or not len(a):
            continue
        if lo is not None:
            bad = np.flatnonzero((a < lo) | (a > hi))
            if len(bad):
                out.add(COORD_DOMAIN, src, t.offset,
                        f"tile {t.index + 1}: coordinate {int(bad[0])} of {dim.name!r} is "
                        f"{a[bad[0]].item()!r}, outside the domain [{lo}, {hi}]")
                continue
        if ned is not None and ned[0] is not None and not isinstance(ned[0], (str, bytes)):
            bad = np.flatnonzero((a < ned[0]) | (a > ned[1]))
            if len(bad):
                out.add(COORD_NED, src, t.offset,
                        f"tile {t.index + 1}: coordinate {int(bad[0])} of {dim.name!r} is "
                        f"{a[bad[0]].item()!r}, outside the fragment's non-empty domain "
                        f"[{ned[0]}, {ned[1]}]")


def _leaf_mbrs(fm: FragmentMetadata, schema: ArraySchema, key) -> Optional[np.ndarray]:
    """The R-tree's last level as (tiles, dims, 2) values (fixed-size dims, format >= 5)."""
    footer = fm.footer
    loader = fm.loader
    off = getattr(footer, "rtree", None)
    if off is None or loader is None or (fm.version or 0) < 5:  # noqa: SIM114
        return None
    dts = [np.dtype(_NUMERIC[d.datatype]) for d in schema.dimensions]
    if len({d.itemsize for d in dts}) != 1 or len({d.kind for d in dts}) != 1:
        return None   # mixed dimension types: compared per dimension below
    try:
        p, _enc = decode_generic_tile(loader.source, off, loader.key)
        _fanout, levels = struct.unpack_from("<II", p, 0)
        pos = 8
        mbr_size = sum(2 * d.itemsize for d in dts)
        leaf = None
        for _ in range(levels):
            (n,) = struct.unpack_from("<Q", p, pos)
            pos += 8
            if pos + n * mbr_size > len(p):
                return None
            leaf = np.frombuffer(p, dts[0], count=n * 2 * len(dts), offset=pos)
            pos += n * mbr_size
    except Exception:  # noqa: BLE001 - the tree reports an unreadable R-tree
        return None
    return None if leaf is None else leaf.reshape(-1, len(dts), 2)


def _check_mbrs(out: _Out, src: str, fm, schema: ArraySchema, coords, offs0, key) -> None:
    mbrs = _leaf_mbrs(fm, schema, key)
    if mbrs is None:
        return
    ntiles = len(coords[0])
    if len(mbrs) != ntiles:
        out.add(MBR_MISMATCH, src, 0, f"the R-tree has {len(mbrs)} leaf MBRs for {ntiles} tiles")
        return
    # each dimension's per-tile span in one pass; only the tiles that differ are looked at
    flag = np.zeros(ntiles, bool)
    if not VECTORISED or any(len(coords[j]) != ntiles for j in range(len(schema.dimensions))):
        flag[:] = True   # dimensions with other tile counts: every tile, as before
    for j in range(len(schema.dimensions) if not flag.all() else 0):
        use = [i for i, a in enumerate(coords[j]) if a is not None and len(a)]
        if not use:
            continue
        lens = np.array([len(coords[j][i]) for i in use], dtype=np.int64)
        cat = np.concatenate([coords[j][i] for i in use])
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
        idx = np.array(use, dtype=np.int64)
        lo, hi = np.minimum.reduceat(cat, starts), np.maximum.reduceat(cat, starts)
        flag[idx] |= (mbrs[idx, j, 0] != lo) | (mbrs[idx, j, 1] != hi)
    for i in np.flatnonzero(flag).tolist():
        for j, d in enumerate(schema.dimensions):
            a = coords[j][i]
            if a is None or not len(a):
                continue
            lo, hi = a.min(), a.max()
            if mbrs[i, j, 0] != lo or mbrs[i, j, 1] != hi:
                out.add(MBR_MISMATCH, src if j == 0 else src.replace("/d0.tdb", f"/d{j}.tdb"),
                        offs0[i] if i < len(offs0) else 0,
                        f"tile {i + 1}: {d.name!r} coordinates span [{lo.item()!r}, "
                        f"{hi.item()!r}], the R-tree's MBR says [{mbrs[i, j, 0].item()!r}, "
                        f"{mbrs[i, j, 1].item()!r}]")


def _order_keys(schema: ArraySchema, cols: List[np.ndarray]) -> Optional[List[np.ndarray]]:
    """Sort keys (most significant first) of libtiledb's global order (its GlobalCmp):
    tile indices in tile order, then coordinates in cell order (row- or col-major only;
    col-major: the last dimension most significant)."""
    if schema.cell_order not in (0, 1) or schema.tile_order not in (0, 1):
        return None   # hilbert and others: not checked
    tiles: List[np.ndarray] = []
    for d, c in zip(schema.dimensions, cols):
        t = _tile_index(d, c)
        if t is not None:   # no tile extent: the dimension does not take part (tile_order_cmp)
            tiles.append(t)
    cell = cols if schema.cell_order == 0 else cols[::-1]
    tile = tiles if schema.tile_order == 0 else tiles[::-1]
    return list(tile) + list(cell)


def _tile_index(d: Dimension, c: np.ndarray) -> Optional[np.ndarray]:
    """libtiledb's Dimension::tile_idx of every coordinate: integers `(v - low) / extent`
    in the unsigned type of the width (modulo 2**64 here, as exact); floats
    `(v - low) / extent` in the dimension's own float type, truncated to uint64 (C++'s
    conversion; so a float32 dimension rounds as float32 does)."""
    ext = d.tile_extent
    if ext is None or d.domain is None:
        return None
    if c.dtype.kind == "f":
        with np.errstate(all="ignore"):
            q = (c - c.dtype.type(d.domain[0])) / c.dtype.type(ext)
        return np.where(np.isfinite(q) & (q >= 0), q, 0).astype(np.uint64)
    # c - domain low is >= 0 but may pass INT64 max (an int64 domain near +-2**62, a
    # uint64 one above 2**63): taken modulo 2**64 in uint64, as exact as libtiledb's
    u = c.astype(np.uint64) if c.dtype.kind == "u" else c.astype(np.int64).view(np.uint64)
    return (u - np.uint64(int(d.domain[0]) % (1 << 64))) // np.uint64(int(ext))


def _check_order(out: _Out, src: str, schema: ArraySchema, coords, offs0,
                 repeats: Optional[bool] = None) -> None:
    ntiles = len(coords[0])
    ndims = len(schema.dimensions)
    if any(len(coords[j]) < ntiles for j in range(ndims)):
        for i in range(ntiles):   # as before: a tile that stops it, else IndexError
            cols_i = [coords[j][i] for j in range(ndims)]
            if any(c is None for c in cols_i) or len({len(c) for c in cols_i}) != 1:
                return
    coords = {j: coords[j][:ntiles] for j in range(ndims)}
    if any(c is None for j in range(ndims) for c in coords[j]):
        return
    lens = np.array([len(c) for c in coords[0]], dtype=np.int64)
    for j in range(1, ndims):
        if not np.array_equal(lens, np.array([len(c) for c in coords[j]], dtype=np.int64)):
            return   # a tile whose dimensions disagree on its cell count
    if not ntiles:
        return
    cols = [np.concatenate(coords[j]) for j in range(ndims)]
    tile_of = np.repeat(np.arange(ntiles), lens)
    keys = _order_keys(schema, cols)
    if keys is None or len(cols[0]) < 2:
        return
    # compare each cell with the next, most significant key first
    n = len(cols[0])
    decided = np.zeros(n - 1, bool)
    less = np.zeros(n - 1, bool)
    for k in keys:
        a, b = k[:-1], k[1:]
        lt, gt = (a < b) & ~decided, (a > b) & ~decided
        less |= lt
        bad = np.flatnonzero(gt)
        if len(bad):
            c = int(bad[0]) + 1
            t = int(tile_of[c])
            out.add(COORD_ORDER, src, offs0[t] if t < len(offs0) else 0,
                    f"tile {t + 1}: cell {c} is before cell {c - 1} in the array's global "
                    f"order ({len(bad)} such places)")
            return
        decided |= lt
    if not (schema.allows_dups if repeats is None else repeats):
        dup = np.flatnonzero(~less)
        if len(dup):
            c = int(dup[0]) + 1
            t = int(tile_of[c])
            out.add(COORD_DUP, src, offs0[t] if t < len(offs0) else 0,
                    f"tile {t + 1}: cell {c} repeats the coordinates of cell {c - 1}, and the "
                    f"schema does not allow duplicates ({len(dup)} such places)")


def _check_dense_domain(out: _Out, src: str, schema: ArraySchema, fm: FragmentMetadata) -> None:
    for d, r in zip(schema.dimensions, fm.non_empty_domain or []):
        if d.domain is None or r is None or r[0] is None or isinstance(r[0], (str, bytes)):
            continue
        if r[0] < d.domain[0] or r[1] > d.domain[1] or r[0] > r[1]:
            out.add(DENSE_DOMAIN, src, 0,
                    f"the fragment's domain of {d.name!r} is [{r[0]}, {r[1]}], outside the "
                    f"array domain [{d.domain[0]}, {d.domain[1]}]")


"""One TileDB fragment with damaged tiles, rewritten without them: every intact tile's bytes
copied as they are (filtered, encrypted: never re-encoded), and the fragment metadata
written anew for the tiles kept (`tiledb/write/fragment_metadata.py`).

Sparse: one fragment of the same name, the damaged tiles' cells gone from every field: tile
offsets, var sizes, tile mins/maxs/sums/null counts and the R-tree's leaves kept for the
tiles kept (its upper levels and the non-empty domain rebuilt from them), the fragment
min/max/sum/null count recomputed as libtiledb computes it, the cell count (tile count, last
tile's cells) and the footer rewritten.

Dense: a dense fragment's non-empty domain is a hyper-rectangle whose tiles it holds in tile
order, so the intact tiles are split into rectangles (`rectangles`) and each written as a
fragment of its own: where a damaged tile was, a reader sees what lies beneath (an older
fragment, or the fill value).

Anything this cannot place or write (damage in the fragment metadata itself, a file the
schema does not name, a format before `WRITABLE_FROM`, a layout it does not know) raises
`Unwritable`: the caller then leaves the fragment out whole, saying why."""
from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Literal, Optional, Sequence, Tuple

import numpy as np

from ..core.findings import FILE_SIZE
from ..filters.enums import Datatype, numpy_dtype
from ..tiledb.model import names
from ..tiledb.model.array_model import ArraySchema, FragmentMetadata
from ..tiledb.parse.data_files import file_role
from ..tiledb.parse.fragment_sections import sum_kind
from ..tiledb.parse.rawtile import TileError
from ..tiledb.write import fragment_metadata as W
from ..tiledb.write.generic_tile import GenericTileForm
from .job import Job
from .report import Loss

FRAGMENT_METADATA = "__fragment_metadata.tdb"
BLOCK = 1 << 22   # bytes of a kept tile read and written at a time
_PART_KIND = {"fixed": "tile_offsets", "var": "tile_var_offsets",
              "validity": "tile_validity_offsets"}
_U64_SUBSETS = ("tile_var_sizes", "tile_sums", "tile_null_counts")


class Unwritable(Exception):
    """The fragment cannot be rewritten tile by tile (the message says why)."""


@dataclass
class DataFile:
    name: str
    path: str
    part: str                  # fixed, var, validity
    slot: int
    offsets: np.ndarray        # where each tile starts
    declared: int              # the file size the footer gives
    actual: int                # its size on disk

    def bounds(self, i: int) -> Tuple[int, int]:
        end = int(self.offsets[i + 1]) if i + 1 < len(self.offsets) else self.declared
        return int(self.offsets[i]), end


@dataclass
class NewFragment:
    """One fragment written: its folder (relative to the array) and the tiles it holds."""

    rel: str
    tiles: List[int]           # original tile indexes, in the new fragment's order
    cells: int                 # cells it holds (dense: inside its non-empty domain)


@dataclass
class Rewrite:
    fragments: List[NewFragment] = field(default_factory=list)
    lost: Dict[int, List[Loss]] = field(default_factory=dict)   # tile -> why
    lost_cells: Dict[int, int] = field(default_factory=dict)    # tile -> its cells


class Fragment:
    """A damaged fragment read for rewriting: its metadata decoded, its data files placed."""

    def __init__(self, job: Job, path: str, rel_in_array: str,
                 fm: Optional[FragmentMetadata], losses: Sequence[Loss] = ()):
        for loss in losses:   # its own metadata damaged: nothing in it can be trusted
            if loss.source.rsplit("/", 1)[-1] == FRAGMENT_METADATA:
                raise Unwritable(f"its {FRAGMENT_METADATA} is damaged ({loss.code} at offset "
                                 f"{loss.offset})")
        if fm is None or fm.footer is None or fm.loader is None or fm.schema is None:
            raise Unwritable("its fragment metadata or its schema cannot be read")
        schema: ArraySchema = fm.schema   # the schema it was written with
        self.job, self.path, self.fm, self.schema = job, path, fm, schema
        self.rel = job.rel(path)             # relative to the dataset (findings name it so)
        self.rel_in_array = rel_in_array     # `__fragments/<name>`
        ft = fm.footer
        if ft.version < W.WRITABLE_FROM:
            raise Unwritable(f"format {ft.version}: fragment metadata is rewritten from format "
                             f"{W.WRITABLE_FROM} on only")
        self.dims = list(schema.dimensions)
        self.var_dims = [d.var for d in self.dims]
        src = fm.loader.source
        try:
            self.meta = W.read_metadata_file(src, ft, self.var_dims,
                                             [d.cell_size for d in self.dims], job.key)
            self.form = GenericTileForm.of(src, ft.rtree)
        except (TileError, W.PayloadError, ValueError) as e:
            raise Unwritable(f"its fragment metadata cannot be read: {e}")
        self.dense = bool(ft.dense)
        self.tile_num = int(fm.tile_num if self.dense else ft.sparse_tile_num)
        self.files = self._data_files()
        self.damaged = self.damaged_tiles(list(losses))

    def _data_files(self) -> List[DataFile]:
        out = []
        for e in self.job.fs.list(self.path):
            if e.name == FRAGMENT_METADATA:
                continue
            if not e.is_file:
                raise Unwritable(f"{e.name}: not a regular file")
            role = file_role(self.schema, self.fm, e.name)
            if role is None:
                raise Unwritable(f"{e.name}: not a data file of this schema")
            offs = W.read_u64_list(self.meta.payloads[(_PART_KIND[role.part], role.slot)])
            if len(offs) != self.tile_num:
                raise Unwritable(f"{e.name}: {len(offs)} tile offsets for {self.tile_num} tiles")
            sizes = {"fixed": self.meta.file_sizes, "var": self.meta.file_var_sizes,
                     "validity": self.meta.file_validity_sizes}[role.part]
            out.append(DataFile(e.name, e.path, role.part, role.slot, offs.astype(np.int64),
                                int(sizes[role.slot]), int(e.size)))
        return out

    # -- where the damage is --------------------------------------------------------------
    def damaged_tiles(self, losses: List[Loss]) -> Dict[int, List[Loss]]:
        """Tile index -> the findings in it; a tile whose bytes run past the end of a
        truncated file is damaged too. Unwritable when a finding is not in a data tile."""
        by_name = {f.name: f for f in self.files}
        out: Dict[int, List[Loss]] = {}
        for loss in losses:
            name = loss.source.rsplit("/", 1)[-1]
            f = by_name.get(name)
            if f is None or not self.tile_num:
                raise Unwritable(f"{loss.source}: {loss.code} is not in one of its data tiles")
            i = int(np.searchsorted(f.offsets, loss.offset, side="right")) - 1
            out.setdefault(min(max(i, 0), self.tile_num - 1), []).append(loss)
        for f in self.files:
            ends = np.append(f.offsets[1:], f.declared)
            for i in np.flatnonzero((ends > f.actual) | (f.offsets > ends)).tolist():
                a, b = f.bounds(i)
                out.setdefault(i, []).append(Loss(
                    FILE_SIZE, f"{self.rel}/{f.name}", min(a, f.actual), f.name,
                    f"tile {i} spans bytes {a}..{b}; the file has {f.actual}"))
        return out

    # -- cells -----------------------------------------------------------------------------
    def cell_num(self, i: int) -> int:
        """libtiledb's `FragmentMetadata::cell_num`: a dense tile's cells, a sparse
        fragment's capacity for every tile but the last."""
        if self.dense:
            return int(self.fm.cells_per_tile or 0)
        if i != self.tile_num - 1:
            return int(self.schema.capacity)
        return int(self.meta.last_tile_cell_num)


# -- dense tiles and rectangles -----------------------------------------------------------
def _int_of(raw: bytes, datatype: int) -> int:
    signed = datatype not in (Datatype.UINT8, Datatype.UINT16, Datatype.UINT32,
                              Datatype.UINT64, Datatype.BOOL)
    return int.from_bytes(raw, "little", signed=signed)


def _raw_of(v: int, size: int, datatype: int) -> bytes:
    return int(v).to_bytes(size, "little", signed=_int_of(b"\xff" * size, datatype) < 0)


class DenseGrid:
    """The tiles of a dense fragment: its non-empty domain expanded to tiles, in the array's
    tile order (ROW_MAJOR 0: the last dimension fastest; COL_MAJOR 1: the first)."""

    def __init__(self, frag: Fragment):
        self.frag = frag
        dims = frag.dims
        if frag.meta.ned is None or any(d.var or d.domain is None or d.tile_extent is None
                                        for d in dims):
            raise Unwritable("a dense fragment without an integer non-empty domain")
        self.ned = [(_int_of(lo, d.datatype), _int_of(hi, d.datatype))
                    for (lo, hi), d in zip(frag.meta.ned, dims)]
        self.base = [int(d.domain[0]) for d in dims if d.domain is not None]
        self.ext = [int(d.tile_extent) for d in dims]
        self.box = [((lo - b) // e, (hi - b) // e)
                    for (lo, hi), b, e in zip(self.ned, self.base, self.ext)]
        self.col_major = frag.schema.tile_order == 1
        if math.prod(hi - lo + 1 for lo, hi in self.box) != frag.tile_num:
            raise Unwritable("its tile count is not its non-empty domain's")

    @property
    def _order(self) -> Literal["C", "F"]:
        return "F" if self.col_major else "C"

    def coords_of(self, i: int) -> Tuple[int, ...]:
        """The tile coordinates of the fragment's tile `i`."""
        shape = tuple(hi - lo + 1 for lo, hi in self.box)
        local = np.unravel_index(i, shape, order=self._order)
        return tuple(int(x) + lo for x, (lo, _hi) in zip(local, self.box))

    def tiles_of(self, box: Sequence[Tuple[int, int]]) -> List[int]:
        """The fragment's tile indexes of the tiles of `box`, in tile order."""
        shape = tuple(hi - lo + 1 for lo, hi in self.box)
        axes = np.meshgrid(*[np.arange(lo - flo, hi - flo + 1)
                             for (lo, hi), (flo, _fhi) in zip(box, self.box)], indexing="ij")
        flat = np.ravel_multi_index(tuple(a.ravel(order=self._order) for a in axes), shape,
                                    order=self._order)
        return flat.tolist()

    def cell_box(self, box: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
        """The cells of tile box `box` inside the fragment's non-empty domain."""
        return [(max(lo, b + t0 * e), min(hi, b + (t1 + 1) * e - 1))
                for (t0, t1), (lo, hi), b, e in zip(box, self.ned, self.base, self.ext)]


def rectangles(box: List[Tuple[int, int]], holes: set) -> List[List[Tuple[int, int]]]:
    """`box` (per dimension an inclusive tile range) less the tiles `holes`, as boxes: the
    first dimension's runs of whole slabs are one box each; a slab with a hole is split on
    the next dimension the same way."""
    if not holes:
        return [box]
    (lo, hi), rest = box[0], box[1:]
    out: List[List[Tuple[int, int]]] = []
    run: Optional[int] = None
    for t in range(lo, hi + 2):
        inside = {h[1:] for h in holes if h[0] == t} if t <= hi else set()
        if t <= hi and not inside:
            run = t if run is None else run
            continue
        if run is not None:
            out.append([(run, t - 1)] + rest)
            run = None
        if inside and rest:
            out += [[(t, t)] + r for r in rectangles(rest, inside)]
    return out


# -- statistics as libtiledb computes them ---------------------------------------------------
def _typed(datatype: Optional[int], width: int) -> Optional[np.dtype]:
    """The numpy type to compare min/max values of `width` bytes by (None: as bytes)."""
    if datatype is None or datatype in (Datatype.CHAR, Datatype.STRING_ASCII,
                                        Datatype.STRING_UTF8, Datatype.BLOB):
        return None
    try:
        dt = numpy_dtype(datatype)
    except (KeyError, TypeError):
        return None
    return dt if dt.itemsize == width and dt.kind in "iuf" else None


def fragment_stats(old: W.SlotStats, mins, maxs, sums, nulls, cells: List[int],
                   datatype: Optional[int], nullable: bool) -> W.SlotStats:
    """`FragmentMetadata::compute_fragment_min_max_sum_null_count` for one slot over the
    tiles kept (`mins`/`maxs`: per tile bytes or None; `sums`/`nulls`: per tile u64 words or
    None where the slot has none): a tile whose cells are all null counts for neither its
    min/max nor its sum; an integer sum stops at its type's bound on overflow."""
    n = len(cells)
    null = [nulls is not None and int(nulls[t]) == cells[t] for t in range(n)]
    lo, hi = old.min, old.max
    if mins is not None and maxs is not None and (old.min or old.max):
        live = [t for t in range(n) if not null[t]]
        t = _typed(datatype, len(old.min)) if old.min else None
        if t is not None:
            lv = [np.frombuffer(mins[k], t)[0] for k in live]
            hv = [np.frombuffer(maxs[k], t)[0] for k in live]
            info = np.finfo(t) if t.kind == "f" else np.iinfo(t)
            cur_lo, cur_hi = t.type(info.max), t.type(info.min)
            for a in lv:
                cur_lo = cur_lo if cur_lo < a else a
            for b in hv:
                cur_hi = cur_hi if cur_hi > b else b
            lo, hi = np.array(cur_lo, t).tobytes(), np.array(cur_hi, t).tobytes()
        elif live:
            lo, hi = min(mins[k] for k in live), max(maxs[k] for k in live)
        elif len(old.min) == 0:
            lo, hi = b"", b""
    s = old.sum
    if sums is not None and n:
        kind = sum_kind(datatype)
        words = [int(sums[t]) for t in range(n) if not (nullable and null[t])]
        if kind == "f64":
            acc = 0.0
            for w in words:
                acc += float(np.array(w, "<u8").view("<f8"))
            s = np.array(acc, "<f8").tobytes()
        else:
            signed = kind == "i64"
            top, bottom = (2**63 - 1, -2**63) if signed else (2**64 - 1, 0)
            total = 0
            for w in words:
                v = w - (1 << 64) if signed and w >= 1 << 63 else w
                if total > 0 and v > 0 and total > top - v:
                    total = top
                    break
                if total < 0 and v < 0 and total < bottom - v:
                    total = bottom
                    break
                total += v
            s = total.to_bytes(8, "little", signed=signed)
    count = sum(int(nulls[t]) for t in range(n)) if nulls is not None else old.null_count
    return W.SlotStats(lo, hi, s, count)


# -- R-tree --------------------------------------------------------------------------------
def _union(dims, var_dims) -> Callable[[List[W.Mbr]], W.Mbr]:
    types = [None if v else numpy_dtype(d.datatype) for d, v in zip(dims, var_dims)]

    def union(mbrs: List[W.Mbr]) -> W.Mbr:
        out = []
        for k, t in enumerate(types):
            los, his = [m[k][0] for m in mbrs], [m[k][1] for m in mbrs]
            if t is None:
                out.append((min(los), max(his)))
            else:
                a = np.frombuffer(b"".join(los), t)
                b = np.frombuffer(b"".join(his), t)
                out.append((los[int(np.argmin(a))], his[int(np.argmax(b))]))
        return tuple(out)
    return union


def build_rtree(leaves: List[W.Mbr], fanout: int, union) -> List[List[W.Mbr]]:
    """`RTree::build_tree`: height ceil(log_fanout(leaves)) + 1 (as libtiledb computes the
    logarithm: a quotient of natural logarithms), each level's node the union of up to
    `fanout` nodes below it; root first."""
    if not leaves:
        return []
    height = math.ceil(math.log(len(leaves)) / math.log(fanout)) + 1
    levels = [leaves]
    while len(levels) < height:
        below = levels[0]
        levels.insert(0, [union(below[i:i + fanout]) for i in range(0, len(below), fanout)])
    return levels


# -- the rewrite ---------------------------------------------------------------------------
def _subset_metadata(frag: Fragment, keep: List[int], new_offsets: Dict[Tuple[str, int], list],
                     new_sizes: Dict[Tuple[str, int], int], ned: Optional[List[W.Range]]
                     ) -> W.MetadataFile:
    m, n = frag.meta, frag.tile_num
    slots = m.footer.slots
    out = W.MetadataFile(m.footer, ned, m.var_dims, [0] * len(slots), [0] * len(slots),
                         [0] * len(slots), 0 if frag.dense else len(keep),
                         m.last_tile_cell_num, order=list(m.order))
    if not frag.dense:
        out.last_tile_cell_num = frag.cell_num(keep[-1])
    for (part, slot), size in new_sizes.items():
        {"fixed": out.file_sizes, "var": out.file_var_sizes,
         "validity": out.file_validity_sizes}[part][slot] = size
    cells = [frag.cell_num(i) for i in keep]
    per_tile: Dict[Tuple[str, int], Optional[list]] = {}
    for sec in m.order:
        kind, slot = sec
        p = m.payloads[sec]
        if kind == "rtree":
            tree = W.read_rtree(p, m.var_dims, [d.cell_size for d in frag.dims])
            if tree.levels:
                if len(tree.levels[-1]) != n:
                    raise Unwritable(f"{len(tree.levels[-1])} R-tree leaves for {n} tiles")
                leaves = [tree.levels[-1][i] for i in keep]
                tree.levels = build_rtree(leaves, tree.fanout, _union(frag.dims, m.var_dims))
            out.payloads[sec] = W.rtree_payload(tree, m.var_dims)
        elif kind in ("tile_offsets", "tile_var_offsets", "tile_validity_offsets"):
            old = W.read_u64_list(p)
            part = {v: k for k, v in _PART_KIND.items()}[kind]
            if (part, slot) in new_offsets:
                vals = new_offsets[(part, slot)]
            elif len(old) in (0, n) and not old.any():
                # a slot with no file (a dense fragment's coordinates): n zero offsets
                vals = [0] * (len(keep) if len(old) else 0)
            else:
                raise Unwritable(f"{kind} of slot {slots[slot]} without its data file")
            out.payloads[sec] = W.u64_list_payload(vals)
        elif kind in _U64_SUBSETS:
            old = W.read_u64_list(p)
            if len(old) not in (0, n):
                raise Unwritable(f"{kind} of slot {slots[slot]}: {len(old)} values for {n} tiles")
            words = [int(old[i]) for i in keep] if len(old) else None
            per_tile[sec] = words
            out.payloads[sec] = W.u64_list_payload(words or [])
        elif kind in ("tile_mins", "tile_maxs"):
            fixed, var = W.read_minmax(p)
            is_var = _slot_var(frag.schema, slots[slot])
            each = W.split_minmax(fixed, var, n, is_var)
            kept_each = [each[i] for i in keep] if each is not None else None
            per_tile[sec] = kept_each
            out.payloads[sec] = W.minmax_payload(*W.join_minmax(kept_each, is_var))
        elif kind == "processed":
            out.payloads[sec] = p
    if ("fmmsn", 0) in m.payloads:
        stats = []
        for s, o in enumerate(W.read_fmmsn(m.payloads[("fmmsn", 0)], len(slots))):
            f = frag.schema.field(slots[s])
            dt = getattr(f, "datatype", None) if f is not None else \
                (Datatype.UINT64 if slots[s].startswith("__") and slots[s] != "__coords" else None)
            real = f is not None   # `__coords` keeps what libtiledb wrote (zeros)
            stats.append(fragment_stats(
                o, per_tile.get(("tile_mins", s)) if real else None,
                per_tile.get(("tile_maxs", s)) if real else None,
                per_tile.get(("tile_sums", s)), per_tile.get(("tile_null_counts", s)), cells,
                dt, bool(getattr(f, "nullable", False))))
        out.payloads[("fmmsn", 0)] = W.fmmsn_payload(stats)
    return out


def _slot_var(schema: ArraySchema, name: str) -> bool:
    f = schema.field(name)
    return bool(f is not None and f.var)


def _layout(frag: Fragment, keep: List[int]
            ) -> Tuple[Dict[Tuple[str, int], list], Dict[Tuple[str, int], int]]:
    """(new tile offsets, new file sizes) by (part, slot) of each data file holding only the
    tiles `keep`, in that order."""
    offsets: Dict[Tuple[str, int], list] = {}
    sizes: Dict[Tuple[str, int], int] = {}
    for f in frag.files:
        pos, offs = 0, []
        for i in keep:
            a, b = f.bounds(i)
            offs.append(pos)
            pos += b - a
        offsets[(f.part, f.slot)] = offs
        sizes[(f.part, f.slot)] = pos
    return offsets, sizes


def _copy_tiles(job: Job, frag: Fragment, keep: List[int], folder_rel: str) -> None:
    """Each data file of `frag` with only the tiles `keep`, their bytes as stored, to
    `folder_rel` of OUT (streamed: one block of a tile in memory at a time)."""
    for f in frag.files:
        src = job.fs.open_source(f.path, f.name)
        try:
            job.out.write_blocks(f"{folder_rel}/{f.name}", _tile_blocks(frag, f, src, keep))
        finally:
            close = getattr(src, "close", None)
            if close is not None:
                close()


def _tile_blocks(frag: Fragment, f: DataFile, src, keep: List[int]) -> Iterator[bytes]:
    """The bytes of tiles `keep` of data file `f`, in blocks of at most BLOCK bytes."""
    for i in keep:
        a, b = f.bounds(i)
        for pos in range(a, b, BLOCK):
            want = min(BLOCK, b - pos)
            data = src.read(pos, want)
            if len(data) != want:   # damaged_tiles placed every short tile: changed since
                raise OSError(f"{frag.rel}/{f.name}: tile {i} reads {pos - a + len(data)} of "
                              f"{b - a} bytes (the file changed during the salvage)")
            yield bytes(data)


def _ned_of_leaves(frag: Fragment, keep: List[int]) -> Optional[List[W.Range]]:
    """A sparse fragment's non-empty domain: the union of its tiles' MBRs."""
    try:
        tree = W.read_rtree(frag.meta.payloads[("rtree", 0)], frag.var_dims,
                            [d.cell_size for d in frag.dims])
    except W.PayloadError as e:
        raise Unwritable(f"its R-tree cannot be read: {e}")
    if not tree.levels:
        raise Unwritable("a sparse fragment without R-tree leaves")
    leaves = tree.levels[-1]
    return list(_union(frag.dims, frag.var_dims)([leaves[i] for i in keep]))


def _new_name(rel: str, first: bool) -> str:
    """The first new fragment keeps its name; the others take the same timestamps and
    format version with a fresh UUID."""
    if first:
        return rel
    folder, name = rel.rsplit("/", 1) if "/" in rel else ("", rel)
    info = names.parse_name(name)
    if info is None or info.get("t1") is None:
        raise Unwritable(f"{name}: not a timestamped fragment name")
    v = f"_{info['version']}" if info.get("version") is not None else ""
    new = f"__{info['t1']}_{info['t2']}_{uuid.uuid4().hex}{v}"
    return f"{folder}/{new}" if folder else new


def rewrite(job: Job, frag: Fragment, out_array: str) -> Rewrite:
    """Write `frag` less its damaged tiles under OUT's array folder `out_array` (all or
    nothing: Unwritable before anything is written)."""
    damaged = frag.damaged
    res = Rewrite(lost=dict(damaged))
    groups: List[Tuple[List[int], Optional[List[W.Range]], int]] = []
    if frag.dense:
        grid = DenseGrid(frag)
        holes = {grid.coords_of(i) for i in damaged}
        for i in damaged:
            box = [(c, c) for c in grid.coords_of(i)]
            res.lost_cells[i] = math.prod(hi - lo + 1 for lo, hi in grid.cell_box(box))
        for box in rectangles(list(grid.box), holes):
            span = grid.cell_box(box)
            ned = [(_raw_of(lo, d.cell_size, d.datatype), _raw_of(hi, d.cell_size, d.datatype))
                   for (lo, hi), d in zip(span, frag.dims)]
            groups.append((grid.tiles_of(box), ned, math.prod(hi - lo + 1 for lo, hi in span)))
    else:
        for i in damaged:
            res.lost_cells[i] = frag.cell_num(i)
        kept = [i for i in range(frag.tile_num) if i not in damaged]
        if kept:
            groups.append((kept, _ned_of_leaves(frag, kept),
                           sum(frag.cell_num(i) for i in kept)))
    made = []   # every fragment's metadata made before anything is written
    for k, (keep, new_ned, cells) in enumerate(groups):
        rel = _new_name(frag.rel_in_array, k == 0)
        offsets, sizes = _layout(frag, keep)
        try:
            m = _subset_metadata(frag, keep, offsets, sizes, new_ned)
            meta = W.write_metadata_file(m, frag.form, job.key)
        except (W.PayloadError, ValueError, TileError) as e:
            raise Unwritable(f"its fragment metadata cannot be rewritten: {e}")
        made.append((rel, keep, cells, meta))
    for rel, keep, cells, meta in made:
        folder = "/".join(p for p in (out_array, rel) if p)
        _copy_tiles(job, frag, keep, folder)
        job.out.write(f"{folder}/{FRAGMENT_METADATA}", meta)
        res.fragments.append(NewFragment(rel, keep, cells))
    return res

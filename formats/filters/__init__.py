"""Every TileDB filter, reversible and applicable stage by stage, bit-exact with TileDB.

Public API (used by formats.tiledb.parse.tile, the values decoder and the GUI's pipeline panel):
- `FilterSpec`, `DataInfo`, `Stage`, `RunContext`, `FilterError`
- `get(filter_type) -> Filter`
- `stage_infos(specs, info) -> [DataInfo]`: what each filter sees (datatypes change along)
- `split_metadata(specs, cur, info)`: on-disk chunk metadata into one node group per filter
- `reverse_chunk(specs, md, data, info, run) -> ChunkRun`: every stage's output, last first
- `forward_chunk(specs, cells, info, run) -> [Stage]`: stage outputs from the cells

Extensions (all optional, defaults keep the old behaviour):
- `DataInfo.tile_datatype`, `.cell_size`, `.var_strings`: the tile's own type and cell size
  (RLE runs are cells; var ASCII/UTF-8 tiles take RLE's and DICTIONARY's string form)
- `RunContext.offsets` (forward of RLE/DICTIONARY strings needs the cell offsets) and
  `RunContext.format_version` (string encodings from 12/13/17, datetimes in
  BIT_WIDTH_REDUCTION / POSITIVE_DELTA from 20)
- `Stage.offsets` / `ChunkRun.offsets`: the u64 cell offsets RLE/DICTIONARY rebuilt (the
  offsets tile of such an attribute is written with 0 chunks)
- `Stage.uninitialised`, `Stage.unverifiable`: bytes libtiledb
  leaves uninitialised (BIT_WIDTH_REDUCTION full-range window offsets), for comparing a
  forward stage with the stored one

Filters live one module per job: compression (GZIP/ZSTD/LZ4/BZIP2 framing), encryption,
shuffle, windows (BWR, POSITIVE_DELTA), deltas (DOUBLE_DELTA, DELTA), rle, dictionary,
checksum, scale (SCALE_FLOAT), xor, webp; bits (vectorised transposes and bit streams),
strings (var-string framing), parts (part tables), options (option bytes), util. A filter
class registers itself by declaring its `type` (see `base.Filter`); `MODULE_OF` names the
module that declares each type, imported the first time a filter of that type is asked
for (a command on a ZSTD array never imports the AES or WEBP code, nor their libraries).
Adding a filter is one module, its FilterType member (the on-disk id), its `MODULE_OF`
entry and its test.
"""
from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from typing import Dict, List, Optional

from ..core.cursor import Cursor
from .base import _CLASSES, DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .enums import FilterType

_REGISTRY: Dict[int, Filter] = {}   # one instance per type, made on first use


class _NoOp(Filter):
    type = FilterType.NONE

    def reverse(self, spec, stage, info, run):
        return Stage(list(stage.metadata), list(stage.data))

    def forward(self, spec, stage, info, run):
        return stage.passed_on()


class _Unknown(Filter):
    """A filter type this build does not know: its metadata cannot be split."""

    def __init__(self, t: int):
        self.type = t

    def parse_metadata(self, spec, cur, info):
        cur.fail(f"{spec.name} metadata", f"filter type {spec.type} is not known to arrayscope; "
                                          f"its metadata cannot be split")


# The module of this package that declares each filter type (tests/filters/
# test_filter_declarations.py holds it to the classes the modules register).
MODULE_OF: Dict[int, str] = {
    FilterType.GZIP: "compression", FilterType.ZSTD: "compression",
    FilterType.LZ4: "compression", FilterType.BZIP2: "compression",
    FilterType.RLE: "rle", FilterType.DICTIONARY: "dictionary",
    FilterType.DOUBLE_DELTA: "deltas", FilterType.DELTA: "deltas",
    FilterType.BIT_WIDTH_REDUCTION: "windows", FilterType.POSITIVE_DELTA: "windows",
    FilterType.BITSHUFFLE: "shuffle", FilterType.BYTESHUFFLE: "shuffle",
    FilterType.INTERNAL_FILTER_AES_256_GCM: "encryption",
    FilterType.CHECKSUM_MD5: "checksum", FilterType.CHECKSUM_SHA256: "checksum",
    FilterType.SCALE_FLOAT: "scale", FilterType.XOR: "xor", FilterType.WEBP: "webp",
}


def _class_of(filter_type: int) -> Optional[type]:
    """The class registered for `filter_type`, its module imported first if need be."""
    cls = _CLASSES.get(filter_type)
    if cls is None and filter_type in MODULE_OF:
        importlib.import_module(f"{__name__}.{MODULE_OF[filter_type]}")
        cls = _CLASSES.get(filter_type)
    return cls


def get(filter_type: int) -> Filter:
    f = _REGISTRY.get(filter_type)
    if f is None:
        cls = _class_of(filter_type)
        if cls is None:
            return _Unknown(filter_type)
        f = _REGISTRY.setdefault(filter_type, cls())
    return f


def is_known(filter_type: int) -> bool:
    """Whether this build implements filter type `filter_type`."""
    return filter_type in _REGISTRY or _class_of(filter_type) is not None


def stage_infos(specs: List[FilterSpec], info: DataInfo) -> List[DataInfo]:
    """infos[k] is what filter k sees; infos[len(specs)] is what comes out."""
    base = info.base_datatype
    fv = info.format_version
    out = [DataInfo(info.datatype, info.cell_val_num, info.role, info.var, base, fv)]
    for s in specs:
        prev = out[-1]
        dt = get(s.type).output_datatype(s, prev.datatype)
        out.append(DataInfo(dt, prev.cell_val_num, prev.role, prev.var, base, fv))
    return out


def _run_for(info: DataInfo, run: Optional[RunContext]) -> RunContext:
    """`run` (or a default one) with the format version of the tile's fragment, when the
    DataInfo knows it: the version-dependent filter forms follow the writer's version."""
    run = run or RunContext()
    fv = info.format_version
    if fv is not None and run.format_version != fv:
        run = dataclasses.replace(run, format_version=fv)
    return run


def split_metadata(specs: List[FilterSpec], cur: Cursor, info: DataInfo,
                   name_prefix: str = "Filter") -> None:
    """Nodes for each filter's part of on-disk chunk metadata. The last filter's own metadata
    comes first; a filter that passes earlier metadata through is followed by the previous
    filter's, down to the first compressor or encryption (which holds the rest inside its
    data). Nodes are named '<Filter k> <NAME> metadata' with k the position in the pipeline."""
    infos = stage_infos(specs, info)
    for k in range(len(specs) - 1, -1, -1):
        if cur.at_end():
            break
        spec = specs[k]
        f = get(spec.type)
        cur.group(f"{name_prefix} {k + 1} {spec.name} metadata",
                  lambda c: f.parse_metadata(spec, c, infos[k]), kind="metadata")  # called now
        if not f.passes_metadata:
            break


@dataclass
class ChunkRun:
    """The result of reversing a chunk: stages[k] is the chunk as it was after filters
    0..k-1 (stages[len(specs)] is what is on disk, stages[0] the cell bytes). Stages that
    could not be reached are None; `error` says why, at stage `failed_at`."""

    stages: List[Optional[Stage]]
    error: Optional[FilterError] = None
    failed_at: Optional[int] = None
    # bytes at the end of the chunk's metadata that no filter read: decoded alike, as
    # libtiledb ignores them (`unread.py`); `verify` reports them
    unread: int = 0

    @property
    def cells(self) -> Optional[bytes]:
        s = self.stages[0]
        return None if s is None else s.data_bytes

    @property
    def offsets(self) -> Optional[bytes]:
        """u64 cell offsets rebuilt by RLE / DICTIONARY from a var-sized string tile."""
        for s in self.stages:
            if s is not None and s.offsets is not None:
                return s.offsets
        return None


def reverse_chunk(specs: List[FilterSpec], md: bytes, data: bytes, info: DataInfo,
                  run: Optional[RunContext] = None, stop_at: int = 0) -> ChunkRun:
    run = _run_for(info, run)
    infos = stage_infos(specs, info)
    stages: List[Optional[Stage]] = [None] * (len(specs) + 1)
    stages[len(specs)] = Stage([md] if md else [], [data])
    for k in range(len(specs) - 1, stop_at - 1, -1):
        below = stages[k + 1]
        assert below is not None  # stages are filled from the disk end down, one by one
        try:
            out = get(specs[k].type).reverse(specs[k], below, infos[k], run)
            if out.offsets is None and below.offsets is not None:
                out.offsets = below.offsets
            stages[k] = out
        except FilterError as e:
            return ChunkRun(stages, e, k)
        except (MemoryError, RecursionError) as e:
            return ChunkRun(stages, FilterError(f"{specs[k].name}: {type(e).__name__}"), k)
        except Exception as e:  # a codec raising something unexpected on corrupt input
            return ChunkRun(stages, FilterError(f"{specs[k].name}: {type(e).__name__}: {e}"), k)
    if stop_at == 0 and run.original_length is not None and stages[0] is not None:
        n = len(stages[0].data_bytes)
        if n != run.original_length:
            return ChunkRun(stages, FilterError(
                f"reversed chunk has {n} bytes, its header says {run.original_length}"), 0)
    return ChunkRun(stages, unread=_unread(specs, stages) if stop_at == 0 else 0)


def _unread(specs: List[FilterSpec], stages: List[Optional[Stage]]) -> int:
    """Bytes at the end of the chunk's on-disk metadata that no filter read: those the
    first filter from the disk end that does not pass metadata on left over, or, when every
    filter passes it on, what the first filter's reverse left."""
    for k in range(len(specs) - 1, -1, -1):
        s = stages[k]
        if s is None:
            return 0
        if s.unread:
            return s.unread
        if not get(specs[k].type).passes_metadata:
            return 0
    first = stages[0]
    return len(first.metadata_bytes) if first is not None else 0


def forward_chunk(specs: List[FilterSpec], cells: bytes, info: DataInfo,
                  run: Optional[RunContext] = None) -> List[Stage]:
    """stages[k] after filters 0..k-1, starting from the cell bytes (one data part)."""
    run = _run_for(info, run)
    infos = stage_infos(specs, info)
    stages = [Stage([], [cells])]
    for k, spec in enumerate(specs):
        prev = stages[-1]
        out = get(spec.type).forward(spec, prev, infos[k], run)
        if prev.uninitialised or prev.unverifiable:
            # passed-through metadata keeps its bytes at the end of the new metadata
            f = get(spec.type)
            if f.passes_metadata and not prev.unverifiable:
                shift = len(out.metadata_bytes) - len(prev.metadata_bytes)
                out.uninitialised = out.uninitialised + [(o + shift, n)
                                                         for o, n in prev.uninitialised]
            else:
                out.unverifiable = True
        stages.append(out)
    return stages


__all__ = ["FilterSpec", "DataInfo", "Stage", "RunContext", "FilterError", "Filter", "get",
           "is_known", "stage_infos", "split_metadata", "reverse_chunk", "forward_chunk",
           "ChunkRun"]

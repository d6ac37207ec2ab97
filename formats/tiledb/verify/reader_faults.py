"""What makes libtiledb refuse or misread the array as a whole, as `verify` findings: the
fragment view (visibility.py) of a reader opening the array now, turned into errors.

- a committed fragment that a reader loads has no `__fragment_metadata.tdb` (a partial copy;
  consolidated fragment metadata does not stand in for it: libtiledb still asks the file's
  size): opening the array fails;
- a consolidated commits file (`.con`) commits a fragment whose folder is gone: opening fails
  (a `.wrt` without its fragment is `check_commits`');
- a fragment consolidated into another that no `.vac` hides, in a sparse array that allows
  duplicates: readers read the cells from both, so every one of them twice;
- an empty var-sized tile (every cell '') through a pipeline that loses its empty part (a
  shuffle, then a checksum or AES) or gives a delta an empty part: libtiledb 2.30 writes it
  and cannot read it back (a warning: a writer bug, the cells are there and arrayscope
  reads them).

Each was checked with tiledb-py 0.36.1 / libtiledb 2.30 (tests/tiledb/test_reader_faults.py).
"""
from __future__ import annotations

import os
from typing import List, Optional, Tuple

from ...core.dataset_fs import listable
from ...core.findings import COMMIT_ORPHAN, EMPTY_TILE_UNREADABLE, METADATA_MISSING, READ_TWICE
from ...core.health import now_ms
from ...core.node import ERROR, WARNING, Node
from ...filters.enums import FilterType
from ..health import visibility
from ..health.snapshot import take_bookkeeping
from ..model import layout


def check_reader_faults(document, array) -> List[Node]:
    from .check_findings import finding

    out: List[Node] = []
    schema = array.latest_schema
    with take_bookkeeping(document, array.path, array.schemas) as snap:
        rows, _conds, _open, _read, _notes = visibility.fragment_rows(snap, 0, now_ms())
    by_name = {r.name: r for r in rows}
    for r in rows:
        fd = snap.listing.fragments.get(r.name)
        if r.state == "missing-files" and r.visible and fd is not None and \
                layout.FRAGMENT_METADATA_FILE in r.missing and listable(document.fs, fd.path):
            meta = os.path.join(fd.path, layout.FRAGMENT_METADATA_FILE)
            out.append(finding(document.relname(fd.path), 0, ERROR,
                               f"{document.relname(meta)} is missing: fragment {r.name} is "
                               f"committed ({r.commit}), so libtiledb loads it and opening the "
                               f"array fails: {visibility.open_failure(meta)}",
                               code=METADATA_MISSING))
        elif r.state == "orphan" and r.commit and " (line " in r.commit and \
                "opening the array" in r.reason and \
                listable(document.fs, os.path.join(array.path, layout.FRAGMENTS_DIR)):
            # visible: a reader loads it (an unlistable folder is its own finding)
            con = r.commit.split(" (line ", 1)[0]
            meta = os.path.join(array.path, layout.FRAGMENTS_DIR, r.name,
                                layout.FRAGMENT_METADATA_FILE)
            out.append(finding(con, 0, ERROR,
                               f"{con} commits fragment {r.name}, whose folder is gone: "
                               f"opening the array fails: {visibility.open_failure(meta)}",
                               code=COMMIT_ORPHAN))
        elif r.state == "consolidated" and r.visible and schema is not None and \
                not schema.dense and schema.allows_dups:
            cover = by_name.get(r.consolidated_into or "")
            if cover is None or not cover.visible or fd is None:
                continue
            out.append(finding(document.relname(fd.path), 0, ERROR,
                               f"fragment {r.name} was consolidated into {cover.name}, but no "
                               f".vac file hides it: readers read both, and as the array allows "
                               f"duplicates they return each of its cells twice (vacuum the "
                               f"array, or delete {r.name})", code=READ_TWICE))
    return out


# How libtiledb 2.30 moves an empty var tile through a pipeline (its FilterBuffer: parts of
# bytes, `append_view` drops empty ones; a reverse that asks for a part with
# `get_const_buffer` fails "no current buffer" when none is left, even for 0 bytes).
# Pass-on stages (no-op, checksums) keep views of their input: no empty part survives.
# Shuffles and XOR write one buffer of their input's size and declare each input part,
# which their reverse asks for. Compressors (the deltas included) and AES turn every
# metadata and data part into one buffer, declare each, and ask for each: a compressed part
# is never empty, an encrypted one is as long as its input; a delta given an empty part
# writes bytes its own reverse cannot place ("Write would overflow buffer"). Checked
# with tiledb-py 0.36.1 on ~240 distinct pipelines of these stages (random, 414 runs, 99
# of them unreadable) on one-tile sparse arrays of '' cells: 0 mismatches; the cases kept are
# in tests/tiledb/test_reader_faults.py.
_PASS_ON = {FilterType.NONE, FilterType.CHECKSUM_MD5, FilterType.CHECKSUM_SHA256}
_SHUFFLES = {FilterType.BYTESHUFFLE, FilterType.BITSHUFFLE, FilterType.XOR}
_DELTAS = {FilterType.DELTA, FilterType.DOUBLE_DELTA}
_COMPRESSORS = _DELTAS | {FilterType.GZIP, FilterType.ZSTD, FilterType.LZ4, FilterType.BZIP2,
                          FilterType.RLE, FilterType.DICTIONARY}
NO_BUFFER = "FilterBuffer error; no current buffer"
OVERFLOW = "Write would overflow buffer"


def _views(parts: List[int]) -> List[int]:
    """The parts `append_view` keeps: from the first non-empty one to the last."""
    full = [i for i, n in enumerate(parts) if n]
    return parts[full[0]:full[-1] + 1] if full else []


def _asks_met(buffers: List[int], asks: List[int]) -> bool:
    """Whether a reverse that asks for these part sizes in turn finds a current buffer each
    time (a buffer read to its end, an empty one included, moves the cursor on)."""
    at, rel = 0, 0
    for n in asks:
        if at >= len(buffers) or buffers[at] - rel < n:
            return False
        rel += n
        if rel == buffers[at]:
            at, rel = at + 1, 0
    return True


def empty_tile_read_error(types: List[int], encrypted: bool) -> Optional[str]:
    """The error libtiledb's read gives for an empty var tile it wrote through a pipeline of
    these filter types (AES appended when the array is encrypted), None when it reads it
    back. Part sizes only matter as empty or not: a compressed part is never empty."""
    stages = list(types) + ([FilterType.INTERNAL_FILTER_AES_256_GCM] if encrypted else [])
    data: List[int] = [0]           # the tile: one empty buffer
    meta: List[int] = []
    plan: List[Tuple[Optional[List[int]], int]] = []   # per stage: parts asked, output size
    for t in stages:
        if t in _PASS_ON:
            plan.append((None, 0))
            data, meta = _views(data), ([] if t == FilterType.NONE else [1]) + _views(meta)
        elif t in _SHUFFLES:
            plan.append((list(data), sum(data)))
            data, meta = [sum(data)], [1] + _views(meta)
        elif t == FilterType.INTERNAL_FILTER_AES_256_GCM:
            plan.append((meta + data, sum(data)))
            data, meta = [sum(meta) + sum(data)], [1]
        elif t in _COMPRESSORS:
            parts = meta + data
            if t in _DELTAS and 0 in parts:
                return OVERFLOW
            plan.append(([1] * len(parts), sum(data)))
            data, meta = [len(parts)], [1]
        else:
            return None   # a filter this rule was not checked for: say nothing
    buffers = [sum(data)]   # the reverse of the last stage reads the stored chunk
    for asks, size in reversed(plan):
        if asks is None:
            buffers = _views(buffers)
            continue
        if not _asks_met(buffers, asks):
            return NO_BUFFER
        buffers = [size]
    return None


def _while_read(array, field) -> str:
    """Which reads meet the tile: every one, or (an attribute a later schema dropped) only
    those at times whose schema still has it (libtiledb reads the latest schema's fields)."""
    latest = getattr(array, "latest_schema", None)
    if latest is None or field.name in {f.name for f in
                                        list(latest.attributes) + list(latest.dimensions)}:
        return ""
    return (f" where they read {field.name!r} (at times before the schema evolution that "
            f"dropped it; the latest schema has no {field.name!r}, reads at it succeed)")


def check_unreadable_empty_tiles(document, array, frag) -> List[Node]:
    """A warning per var-sized field of `frag` holding empty tiles libtiledb cannot read."""
    from .check_findings import finding

    fm = frag.metadata
    schema = array.schema_for(getattr(fm, "schema_name", None)) if fm is not None else None
    if schema is None:
        return []
    encrypted = bool(getattr(fm, "encrypted", False))
    fields = list(schema.attributes) + [None] + list(schema.dimensions)   # the footer's slots
    out: List[Node] = []
    for slot, obj in enumerate(fields):
        if obj is None or not getattr(obj, "var", False) or slot >= len(fm.tile_var_sizes):
            continue
        sizes = fm.tile_var_sizes[slot]
        if sizes is None or len(sizes) == 0:
            continue
        filters = obj.filters or (schema.coords_filters if obj in schema.dimensions else [])
        error = empty_tile_read_error([f.type for f in filters], encrypted)
        if error is None:
            continue
        empty = [i for i, n in enumerate(sizes) if int(n) == 0]
        if not empty:
            continue
        names = ", ".join(str(i + 1) for i in empty[:5]) + (" ..." if len(empty) > 5 else "")
        stages = ", ".join(FilterType(f.type).name for f in filters) + (", AES_256_GCM" if encrypted else "")
        out.append(finding(document.relname(frag.path), 0, WARNING,
                           f"{obj.name!r}: {len(empty)} empty var tile(s) (tile {names}) written "
                           f"through [{stages}]: libtiledb 2.30 writes such a tile but cannot "
                           f"read it back (\"{error}\"), so reads "
                           f"of this fragment fail{_while_read(array, obj)}; the cells are '' "
                           f"and arrayscope reads them", code=EMPTY_TILE_UNREADABLE))
    return out

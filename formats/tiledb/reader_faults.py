"""What makes libtiledb refuse or misread the array as a whole, as `verify` findings: the
fragment view (visibility.py) of a reader opening the array now, turned into errors.

- a committed fragment that a reader loads has no `__fragment_metadata.tdb` (a partial copy;
  consolidated fragment metadata does not stand in for it: libtiledb still asks the file's
  size): opening the array fails;
- a consolidated commits file (`.con`) commits a fragment whose folder is gone: opening fails
  (a `.wrt` without its fragment is `check_commits`');
- a fragment consolidated into another that no `.vac` hides, in a sparse array that allows
  duplicates: readers read the cells from both, so every one of them twice;
- an empty var-sized tile (every cell '') written through a shuffle stage and then a
  checksum or AES stage: libtiledb 2.30 writes it and cannot read it back (a warning: a
  writer bug, the cells are there and arrayscope reads them).

Each was checked with tiledb-py 0.36.1 / libtiledb 2.30 (tests/tiledb/test_reader_faults.py).
"""
from __future__ import annotations

import os
from typing import List

from ..findings import COMMIT_ORPHAN, EMPTY_TILE_UNREADABLE, METADATA_MISSING, READ_TWICE
from ..health import now_ms
from ..node import ERROR, WARNING, Node
from . import layout, visibility
from .enums import FilterType
from .snapshot import take_bookkeeping


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
                layout.FRAGMENT_METADATA_FILE in r.missing:
            meta = os.path.join(fd.path, layout.FRAGMENT_METADATA_FILE)
            out.append(finding(document.relname(fd.path), 0, ERROR,
                               f"{document.relname(meta)} is missing: fragment {r.name} is "
                               f"committed ({r.commit}), so libtiledb loads it and opening the "
                               f"array fails: {visibility.open_failure(meta)}",
                               code=METADATA_MISSING))
        elif r.state == "orphan" and r.commit and " (line " in r.commit and \
                "opening the array" in r.reason:   # visible: a reader loads it
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


# Stages that turn an empty input into output with no data part (libtiledb's shuffles), and
# stages that then drop such a part (append_view of a checksum, AES). Found with tiledb-py
# 0.36.1 / libtiledb 2.30 on one-tile sparse arrays of '' cells (tests/tiledb/
# test_reader_faults.py): [BYTESHUFFLE, MD5], [BITSHUFFLE, SHA256], [XOR, MD5], [BYTESHUFFLE]
# encrypted fail to read ("FilterBuffer error; no current buffer"); a compressor before the
# checksum ([BYTESHUFFLE, ZSTD, MD5]), [NOOP, MD5], [NOOP, BYTESHUFFLE, MD5] and [MD5] read.
_EMPTYING = {FilterType.BYTESHUFFLE, FilterType.BITSHUFFLE, FilterType.XOR}
_DROPPING = {FilterType.CHECKSUM_MD5, FilterType.CHECKSUM_SHA256,
             FilterType.INTERNAL_FILTER_AES_256_GCM}


def empty_tile_unreadable(types: List[int], encrypted: bool) -> bool:
    """Whether libtiledb cannot read back an empty var tile it wrote through a pipeline of
    these filter types (AES appended when the array is encrypted): the first stage is a
    shuffle, and so is every stage up to the first checksum / AES stage but no-ops (a
    leading no-op keeps the empty part: [NOOP, BYTESHUFFLE, MD5] reads;
    [BYTESHUFFLE, NOOP, MD5] does not)."""
    stages = list(types)
    if encrypted:
        stages.append(FilterType.INTERNAL_FILTER_AES_256_GCM)
    for k, t in enumerate(stages):
        if t in _DROPPING:
            return k > 0 and stages[0] in _EMPTYING and \
                all(s in _EMPTYING or s == FilterType.NONE for s in stages[1:k])
    return False


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
        if not empty_tile_unreadable([f.type for f in filters], encrypted):
            continue
        empty = [i for i, n in enumerate(sizes) if int(n) == 0]
        if not empty:
            continue
        names = ", ".join(str(i + 1) for i in empty[:5]) + (" ..." if len(empty) > 5 else "")
        stages = ", ".join(FilterType(f.type).name for f in filters) + (", AES_256_GCM" if encrypted else "")
        out.append(finding(document.relname(frag.path), 0, WARNING,
                           f"{obj.name!r}: {len(empty)} empty var tile(s) (tile {names}) written "
                           f"through [{stages}]: libtiledb 2.30 writes such a tile but cannot "
                           f"read it back (\"FilterBuffer error; no current buffer\"), so reads "
                           f"of this fragment fail; the cells are '' and arrayscope reads them",
                           code=EMPTY_TILE_UNREADABLE))
    return out

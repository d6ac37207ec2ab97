"""Cross-file checks of an SCDL archive, vectorised over the memory-mapped arrays.

Findings are error/warning nodes on the offending bytes (the item of row_ptr.npy that
decreases, the column index that is too large, the num_rows of metadata.json, ...), saying
what was expected and what was found.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..core.dataset_fs import member_path
from ..core.filesystems import fs_of
from ..core.findings import (
    OUTSIDE_DATASET,
    SCDL_COLUMN_INDEX,
    SCDL_LENGTHS,
    SCDL_METADATA,
    SCDL_MISSING,
    SCDL_NEIGHBORS,
    SCDL_ROW_POINTERS,
)
from ..core.node import ERROR, WARNING, Node
from ..core.source import ByteSource
from ..core.status import Status
from .enums import ARRAY_FILES, HEADER_FILE
from .model import Archive, ArrayFile


def run(archive: Archive, root: Node) -> None:
    _listed_files(archive, root)
    rp = _consistent(archive.arrays.get("ROWPTR"))
    data = _consistent(archive.arrays.get("DATA"))
    col = _consistent(archive.arrays.get("COLPTR"))
    nnz = None
    if data is not None and col is not None and len(data.items) != len(col.items):
        _error(col, min(len(col.items), len(data.items)),
               f"COLPTR: col_ptr.npy has {len(col.items)} column indices but data.npy has "
               f"{len(data.items)} values; both must hold nnz items", code=SCDL_LENGTHS)
    elif col is not None:
        nnz = len(col.items)
    elif data is not None:
        nnz = len(data.items)
    n_rows = None
    if rp is not None and _rowptr(rp, nnz) and col is not None:
        _columns(archive, rp, col)
    typed_rp = archive.arrays.get("ROWPTR")
    if typed_rp is not None and typed_rp.items is not None and len(typed_rp.items):
        n_rows = len(typed_rp.items) - 1   # as the library counts: every item of the file
        _dtype_hints(archive, int(typed_rp.items[-1]))
    _metadata(archive, n_rows)
    _feature_indices(archive, n_rows)
    _neighbors(archive, n_rows)


_BY_SIZE = {1: "uint8", 2: "uint16 or float16", 4: "uint32 or float32", 8: "uint64 or float64"}


def _dtype_hints(archive: Archive, nnz: int) -> None:
    """For an array file whose size disagrees with header.sch: the item size that would
    make it hold ROWPTR[-1] = nnz items (after a concat the library upcasts the files and
    keeps the old header)."""
    if nnz <= 0:
        return
    for name in ("DATA", "COLPTR"):
        af = archive.arrays.get(name)
        if af is None or af.items is None or af.source is None or af.node is None or \
                _consistent(af) is not None:
            continue
        size = af.source.size
        isz = size // nnz
        if size % nnz == 0 and isz in _BY_SIZE and isz != af.items.itemsize:
            af.node.mark(WARNING, f"{name}: {os.path.basename(af.path)} has {size} bytes = "
                                  f"ROWPTR[-1] = {nnz} items × {isz} bytes: its items are "
                                  f"probably {_BY_SIZE[isz]}, not {af.items.dtype.name} as "
                                  f"{HEADER_FILE} says")


CHUNK = 1 << 24   # items per vectorised step: bounded memory on big memory-mapped files


def _find(mask_fn, n: int):
    """(first index where mask_fn(lo, hi) is True, how many) over 0..n, chunk by chunk."""
    first, total = None, 0
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        hits = np.flatnonzero(mask_fn(lo, hi))
        if hits.size:
            total += int(hits.size)
            if first is None:
                first = lo + int(hits[0])
    return first, total


@dataclass
class _Items:
    """An array file whose items can be trusted: typed, its size as header.sch says."""

    name: str
    source: ByteSource
    node: Node
    items: np.ndarray


def _consistent(af: Optional[ArrayFile]) -> Optional[_Items]:
    if af is None or af.items is None or af.source is None or af.node is None:
        return None
    d = af.desc
    if d.length is not None and d.length * af.items.itemsize != af.source.size:
        return None
    return _Items(d.name, af.source, af.node, af.items)


def _error(af: _Items, index: int, message: str, status: Status = ERROR,
           code: str = SCDL_ROW_POINTERS) -> Node:
    isz = af.items.itemsize
    n = len(af.items)
    off = min(index, n) * isz
    size = isz if index < n else 0
    node = Node(f"{af.name}[{index}]", "error", af.source, off, size, status=status,
                message=message,
                value=af.items[index].item() if index < n else None,
                display=str(af.items[index].item()) if index < n else "(end of file)",
                code=code)
    af.node.add(node)
    return node


def _rowptr(rp: _Items, nnz: Optional[int]) -> bool:
    return _pointers(rp, nnz, "ROWPTR", "row_ptr.npy", "the items of data.npy and col_ptr.npy",
                     SCDL_ROW_POINTERS)


def _pointers(rp: _Items, nnz: Optional[int], label: str, fname: str, nnz_from: str,
              code: str) -> bool:
    """CSR pointers: 0 first, never decreasing, `nnz` (the items they point into) last."""
    a = rp.items
    if len(a) == 0:
        rp.node.add(Node(f"{label} (empty)", "error", rp.source, 0, 0, status=ERROR,
                         message=f"{label}: {fname} is empty; it needs rows + 1 >= 1 items",
                         code=code))
        return False
    ok = True
    if a[0] != 0:
        _error(rp, 0, f"{label}[0]: expected 0, found {a[0]}", code=code)
        ok = False
    first, total = _find(lambda lo, hi: a[lo + 1:hi + 1] < a[lo:hi], len(a) - 1)
    if first is not None:
        i = first + 1
        _error(rp, i, f"{label}[{i}] = {a[i]} is less than {label}[{i - 1}] = {a[i - 1]}: row "
                      f"pointers must be non-decreasing ({total} decrease(s) in all)", code=code)
        ok = False
    if nnz is not None and int(a[-1]) != nnz:
        _error(rp, len(a) - 1, f"{label}[{len(a) - 1}]: expected nnz = {nnz} ({nnz_from}), "
                               f"found {a[-1]}", code=code)
        ok = False
    return ok


def _neighbors(archive: Archive, n_rows: Optional[int]) -> None:
    """The neighbour graph (neighbor_indptr/indices/values.npy, a CSR matrix of cells by
    cells): pointers as row_ptr's, one pointer per cell plus one, one value per index,
    every index a cell."""
    ptr = _consistent(archive.arrays.get("NEIGHBOR_INDICES_PTR"))
    idx = _consistent(archive.arrays.get("NEIGHBOR_INDICES"))
    val = _consistent(archive.arrays.get("NEIGHBOR_VALUES"))
    if ptr is None:
        return
    if idx is not None and val is not None and len(idx.items) != len(val.items):
        _error(val, min(len(idx.items), len(val.items)),
               f"NEIGHBOR_VALUES: neighbor_values.npy has {len(val.items)} weights but "
               f"neighbor_indices.npy has {len(idx.items)} indices; one weight per index",
               code=SCDL_NEIGHBORS)
    nnz = len(idx.items) if idx is not None else None
    _pointers(ptr, nnz, "NEIGHBOR_INDICES_PTR", "neighbor_indptr.npy",
              "the items of neighbor_indices.npy", SCDL_NEIGHBORS)
    if n_rows is not None and len(ptr.items) != n_rows + 1:
        _error(ptr, min(len(ptr.items), n_rows + 1),
               f"NEIGHBOR_INDICES_PTR: neighbor_indptr.npy has {len(ptr.items)} items; the "
               f"archive has {n_rows} cells, so it needs {n_rows + 1}", code=SCDL_NEIGHBORS)
    if idx is not None and n_rows is not None and len(idx.items):
        a = idx.items
        first, total = _find(lambda lo, hi: a[lo:hi] >= n_rows, len(a))
        if first is not None:
            _error(idx, first, f"NEIGHBOR_INDICES[{first}] = {a[first]}: expected a cell "
                               f"below {n_rows} ({total} out of range in all)",
                   code=SCDL_NEIGHBORS)


def _columns(archive: Archive, rp: _Items, col: _Items) -> None:
    """Every column index below the feature count of its row's var block."""
    fdir = archive.feature_dirs.get("var_features") or archive.feature_dirs.get("features")
    if fdir is None or not fdir.cumsum or len(fdir.cumsum) < 2:
        return
    files = sorted(fdir.parquet_rows)
    blocks = len(fdir.cumsum) - 1
    if len(files) != blocks:
        if fdir.cumsum_node is not None:
            fdir.cumsum_node.mark(WARNING, f"cumulative_sum_index.npy has {blocks} blocks but "
                                           f"{fdir.name}/ has {len(files)} parquet files")
        return
    n_rows = len(rp.items) - 1
    cols, ptr = col.items, rp.items
    for k, fname in enumerate(files):
        limit = fdir.parquet_rows[fname]
        if limit is None:
            continue
        r0 = min(max(fdir.cumsum[k], 0), n_rows)
        r1 = min(max(fdir.cumsum[k + 1], 0), n_rows)
        if r1 <= r0:
            continue
        e0, e1 = int(ptr[r0]), int(ptr[r1])
        first, total = _find(lambda lo, hi: cols[e0 + lo:e0 + hi] >= limit, e1 - e0)
        if first is not None:
            j = e0 + first
            _error(col, j, f"COLPTR[{j}] = {cols[j]}: a column index of row block {k + 1} (rows "
                           f"{r0}..{r1 - 1}) must be below {limit}, the feature count of "
                           f"{fdir.name}/{fname} ({total} index(es) out of range in all)",
                   code=SCDL_COLUMN_INDEX)


def _metadata(archive: Archive, n_rows: Optional[int]) -> None:
    m = archive.metadata_node
    if m is None or n_rows is None or archive.metadata_num_rows == n_rows:
        return
    m.mark(WARNING, f"metadata.json num_rows = {archive.metadata_num_rows}, but row_ptr.npy "
                    f"holds {n_rows} rows (bionemo-scdl keeps the first dataset's num_rows "
                    f"after a concat; its reader uses row_ptr.npy)").code = SCDL_METADATA


def _feature_indices(archive: Archive, n_rows: Optional[int]) -> None:
    for name, fdir in archive.feature_dirs.items():
        if n_rows is None or not fdir.cumsum or fdir.cumsum_node is None:
            continue
        end = max(fdir.cumsum[-1], 0)
        if end != n_rows:
            status = ERROR if name in ("var_features", "features") else WARNING
            fdir.cumsum_node.mark(status, f"{name}/cumulative_sum_index.npy ends at {end} rows, "
                                          f"but row_ptr.npy holds {n_rows} rows"
                                          + (" (the library's number_of_rows() raises)"
                                             if status == ERROR else "")).code = SCDL_LENGTHS
    if archive.header is None:
        return
    for fi in archive.header.feature_indices:
        if n_rows is not None and fi.length_node is not None and fi.length != n_rows:
            fi.length_node.mark(WARNING, f"{fi.name} length: {HEADER_FILE} says {fi.length} "
                                         f"rows, row_ptr.npy holds {n_rows} (stale header?)"
                                  ).code = SCDL_LENGTHS


def _listed_files(archive: Archive, root: Node) -> None:
    """Files header.sch names must exist; feature folders should be in the header."""
    if archive.header is None:
        return
    fs = fs_of(None, archive.path)
    for a in archive.header.arrays:
        rel = ARRAY_FILES.get(a.name) or member_path(a.name)
        if rel is None:
            if a.node is not None:
                _outside(a.node, f"array name {a.name!r} names a path outside the archive: "
                                 f"never read")
        elif a.node is not None and not fs.stat(os.path.join(archive.path, rel)).is_file:
            a.node.mark(ERROR, f"array {a.name!r}: {rel} is missing from the archive (the "
                               f"library's load() raises FileNotFoundError)").code = SCDL_MISSING
    named = set()
    for fi in archive.header.feature_indices:
        named.add(fi.name)
        for path, node in zip(fi.files, fi.file_nodes):
            inside = member_path(path) if path else ""
            if inside is None:
                _outside(node, f"index file {path!r} listed in {HEADER_FILE} is outside the "
                               f"archive: never examined")
            elif inside and not fs.stat(os.path.join(archive.path, inside)).is_file:
                node.mark(ERROR, f"index file {path!r} listed in {HEADER_FILE} is missing"
                          ).code = SCDL_MISSING
    for name in archive.feature_dirs:
        if name not in named and name != "features":
            root.mark(WARNING, f"{name}/ is not described by {HEADER_FILE}")


def _outside(node: Node, message: str) -> None:
    node.mark(ERROR, message)
    node.code = OUTSIDE_DATASET

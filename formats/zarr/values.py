"""`arrayscope values ARRAY --field NAME`: one struct field over the whole array, C order.

Every chunk is decoded with the codecs' fast path (no nodes, whether or not the tree has
decoded it), one at a time, its field copied straight into one preallocated output array at
its array positions (F order / transpose undone, edge chunks cropped); absent chunks give
the fill record. Value conventions are those of `dtype.to_python` (U → str, S → latin-1 str,
V → hex str, bool → bool, subarrays → lists, NaN → float).
"""
from __future__ import annotations

import math
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from ..core.dataset_fs import DatasetFS, Entry
from ..core.filesystems import fs_of
from .codecs import CodecError
from .decode import decode_chunk
from .dtype import little_endian, to_python
from .meta import ArrayMeta
from .shard import inner_chunks
from .vlen import VlenError, parse_items

MAX_VALUES_BYTES = 1 << 31
MAX_FILL_BYTES = 256 << 20   # output that absent chunks (fill records) may account for


def chunk_files(meta: ArrayMeta, fs: Optional[DatasetFS] = None) -> Dict[tuple, Entry]:
    """{chunk coordinates: entry} of every file under the array whose name is a chunk key
    (regular or not: a FIFO or a link out of the dataset is reported, never read)."""
    fs = fs_of(None, meta.path) if fs is None else fs
    out: Dict[tuple, Entry] = {}
    stack = [meta.path]
    while stack:
        d = stack.pop()
        try:
            entries = fs.list(d)
        except OSError:
            continue
        for e in entries:
            if e.is_dir:
                stack.append(e.path)
                continue
            key = os.path.relpath(e.path, meta.path).replace(os.sep, "/")
            c = meta.coords_of(key)
            if c is not None:
                out[c] = e
    return out


def decoded_chunks(meta: ArrayMeta, fs: DatasetFS, errors: List[str],
                   files: Optional[Dict[tuple, Entry]] = None
                   ) -> Iterator[Tuple[Tuple[int, ...], bytes]]:
    """(coords, decoded bytes) of every stored chunk, in key order, one at a time; for a
    sharded array each present inner chunk, by its coords in the inner grid
    (`meta.shard.inner`). What cannot be read or decoded goes to `errors`."""
    files = chunk_files(meta, fs) if files is None else files
    for coords, entry in sorted(files.items()):
        key = meta.key(coords)
        if not entry.is_file:
            problem = entry.problem()
            errors.append(problem[2] if problem else f"{key}: not a regular file")
            continue
        try:
            stored, _more = fs.read_bytes(entry.path, entry.size)
            data = decode_chunk(meta, stored)
            del stored   # not held while the caller places the decoded chunk
        except CodecError as e:
            errors.append(f"{key}: {e}")
            continue
        except Exception as e:  # noqa: BLE001 - a library error on corrupt input
            errors.append(f"{key}: {type(e).__name__}: {e}")
            continue
        if meta.shard is None:
            yield coords, data
        else:
            yield from inner_chunks(meta, coords, data, key, errors)
        # not held while the next chunk is read and decoded (the caller has placed it): the
        # peak is the output plus one decoded chunk, not two
        del data


def place(out: np.ndarray, unit: ArrayMeta, coords: Tuple[int, ...], recs: np.ndarray) -> None:
    """Write chunk `coords` of `unit` (its records in storage order, flat, plus any
    per-record shape) into `out` (the whole array): axes back in array order, edge chunks
    cropped."""
    extra = recs.shape[1:]
    recs = recs.reshape(unit.storage_shape() + extra)
    if not unit.ndim:
        out[...] = recs.reshape(out.shape)
        return
    inverse = tuple(int(x) for x in np.argsort(unit.perm))
    recs = recs.transpose(inverse + tuple(range(len(inverse), len(inverse) + len(extra))))
    sl = tuple(slice(c * n, min((c + 1) * n, s))
               for c, n, s in zip(coords, unit.chunks, unit.shape))
    out[sl] = recs[tuple(slice(0, x.stop - x.start) for x in sl)]


def field_array(arr: np.ndarray, name: str, is_struct: bool) -> np.ndarray:
    if not is_struct:
        return arr["value"]
    a = arr
    for part in name.split("."):
        a = a[part]
    return a


def read_field(meta: ArrayMeta, name: Optional[str] = None, fs: Optional[DatasetFS] = None):
    """(numpy array of field `name` over the whole array — shape + the field's own shape —,
    [error messages]); `name` None: the whole records. Chunks are decoded one at a time
    straight into that one preallocated array (no decoded chunk outlives its turn);
    absent or undecodable chunks keep the fill value."""
    rt = meta.rtype
    if rt is None:
        raise ValueError(f"the array has no usable dtype: {meta.problem}")
    dt = rt.numpy_dtype()
    total = math.prod(meta.shape)
    probe = np.zeros(1, dt)
    sel = (lambda a: a) if name is None else (lambda a: field_array(a, name, rt.is_struct))
    sample = sel(probe)
    fshape = sample.shape[1:]
    fdtype = sample.dtype
    if total * max(1, sample.nbytes) > MAX_VALUES_BYTES:
        raise ValueError(f"the field holds {total * sample.nbytes} bytes; values are limited "
                         f"to {MAX_VALUES_BYTES}")
    fs = fs_of(None, meta.path) if fs is None else fs
    files = chunk_files(meta, fs)
    # Absent chunks are metadata only: their fill records come from no stored byte, so what
    # they may add to the output is bounded (a 2 GiB shape with no chunk file is refused).
    absent = max(0, math.prod(meta.grid) - len(files)) if meta.grid else (0 if files else 1)
    fill_bytes = min(total, absent * meta.records_per_chunk) * sample.nbytes
    if fill_bytes > MAX_FILL_BYTES:
        raise ValueError(f"{absent} chunk(s) are absent: {fill_bytes} bytes of the field would "
                         f"be fill values made from metadata alone, over the {MAX_FILL_BYTES}-"
                         f"byte limit; nothing is written (check the shape, or write the chunks)")
    def filled() -> np.ndarray:
        fill = sel(np.frombuffer(meta.fill or bytes(rt.itemsize), dtype=dt, count=1))[0]
        out = np.empty(tuple(meta.shape) + fshape, dtype=fdtype)
        out[...] = fill
        return out

    # One chunk that is the whole array, stored in C order, its records the field: the
    # decoded chunk is the output (an output array beside it doubled the peak: 2.27 GB for
    # a 1 GiB chunk)
    whole = (meta.shard is None and len(files) == 1 and tuple(meta.chunks) == tuple(meta.shape)
             and tuple(meta.perm) == tuple(range(meta.ndim)) and sample.nbytes == rt.itemsize)
    out: Optional[np.ndarray] = None if whole else filled()
    errors: List[str] = []
    unit = meta.shard.inner if meta.shard is not None else meta
    nrec = unit.records_per_chunk
    for coords, data in decoded_chunks(meta, fs, errors, files):
        if len(data) != nrec * rt.itemsize:
            errors.append(f"{unit.key(coords) if meta.shard is None else list(coords)}: decoded "
                          f"chunk has {len(data)} bytes, expected {nrec} × {rt.itemsize} = "
                          f"{nrec * rt.itemsize}")
            if len(data) < nrec * rt.itemsize:
                continue
        recs = sel(np.frombuffer(data, dtype=dt, count=nrec))
        if out is None:
            out = recs.reshape(tuple(meta.shape) + fshape)
        else:
            place(out, unit, coords, recs)
        del data, recs
    return (filled() if out is None else out), errors


def values(meta: ArrayMeta, name: str, entry_name: str, with_values: bool = True,
           fs: Optional[DatasetFS] = None) -> Dict:
    if meta.vlen and meta.usable:
        return object_values(meta, entry_name, with_values, fs)
    if meta.rtype is None or not meta.usable:
        return {"name": entry_name, "values": [], "raw": b"",
                "error": f"the array cannot be decoded: {meta.problem}"}
    try:
        f, errors = read_field(meta, name, fs)
    except ValueError as e:
        return {"name": entry_name, "values": [], "raw": b"", "error": str(e)}
    rt = meta.rtype
    field = rt.field(name) if rt.is_struct else rt.leaves()[0]
    shape = field.shape if field is not None else ()
    flat = f.reshape((-1,) + tuple(shape))
    entry = {"name": entry_name, "values": to_python(flat) if with_values else [],
             "raw": memoryview(np.ascontiguousarray(little_endian(flat)).reshape(-1)
                               .view(np.uint8).data)}   # the decoded buffer, never copied again
    if errors:
        entry["error"] = "; ".join(errors[:20]) + (f" (+{len(errors) - 20} more)"
                                                   if len(errors) > 20 else "")
    return entry


# ---- object arrays (vlen codecs) -------------------------------------------------------
def read_items(meta: ArrayMeta, fs: Optional[DatasetFS] = None) -> Tuple[np.ndarray, List[str]]:
    """(object array of the whole array, C order; [errors]). Absent chunks give the fill;
    files are read through the dataset's `fs` (a FIFO or a link out of it is never read)."""
    codec = meta.vlen
    if codec is None:
        raise ValueError("not an object array (no vlen codec)")
    fs = fs_of(None, meta.path) if fs is None else fs
    out = np.empty(tuple(meta.shape), dtype=object)
    out[...] = meta.fill_json
    errors: List[str] = []
    unit = meta.shard.inner if meta.shard is not None else meta
    nrec = unit.records_per_chunk
    for coords, data in decoded_chunks(meta, fs, errors):
        try:
            items = parse_items(data, nrec, codec, meta.vlen_dtype)
        except VlenError as e:
            errors.append(f"{unit.key(coords)}: {e}")
            continue
        arr = np.empty(nrec, dtype=object)
        arr[:] = items if codec != "vlen-array" else [list(x) for x in items]
        place(out, unit, coords, arr)
    return out, errors


def object_values(meta: ArrayMeta, entry_name: str, with_values: bool = True,
                  fs: Optional[DatasetFS] = None) -> Dict:
    arr, errors = read_items(meta, fs)
    flat = arr.reshape(-1).tolist()
    vals = [x.decode("latin-1") if isinstance(x, bytes) else x for x in flat]
    raw = b"".join(x.encode("utf-8") if isinstance(x, str) else
                   x if isinstance(x, bytes) else b"" for x in flat)
    entry: Dict[str, Any] = {"name": entry_name, "values": vals if with_values else [],
                             "raw": raw}
    if errors:
        entry["error"] = "; ".join(errors[:20])
    return entry

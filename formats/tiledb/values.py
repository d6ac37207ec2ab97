"""The `values` command for TileDB arrays: one attribute or dimension, decoded by reversing
every filter of every tile of every fragment, in the order the cells are stored on disk.

One entry per fragment: `{"name": fragment directory name, "values": [...], "raw": bytes-like,
"error": optional str}`. Dense fragments give their tiles one after the other, every cell of
every stored tile (cells a partial write did not cover hold what is stored: zeros, or a single
NUL byte for var cells); a dimension of a dense fragment, which has no data file, gives the
coordinates those cells imply, in the same order (dense_coords.py; cells of edge tiles past
the domain included); sparse fragments give their cells in stored (global) order. `raw` is
the decoded cell bytes of the fragment (for var-sized fields, the var data bytes): a
`memoryview` of the buffer the tiles were decoded into (equal to the `bytes`; `bytes(raw)`
makes a copy), or `b""`.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import List, Optional, Tuple

import numpy as np

from ..filters.batch import plan, reverse_into
from ..remote import is_url
from ..source import FileSource
from .cells import Buffer, cell_values
from .data_files import data_file_stem, file_role, over_limit, tile_bounds, tile_offsets_for
from .dense_coords import fragment_dense_coords
from .legacy_coords import dimension_values
from .model import (
    ArraySchema,
    Dimension,
    Fragment,
    FragmentMetadata,
    TileDBArray,
    TileDBContext,
)
from .rawtile import TileError, _decode_chunk, chunk_table

# Decode chunks on every core when there are many (zstd, zlib, bz2, lz4, numpy and the AES
# of `cryptography` release the GIL).
_THREAD_MIN_CHUNKS = 8
_WORKERS = max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1)))


class ValuesError(Exception):
    pass


def field_names(array_model: Optional[TileDBArray]) -> List[str]:
    """Attribute names, then dimension names, of the latest schema (then any field only an
    older schema has)."""
    if array_model is None:
        return []
    out: List[str] = []
    schemas = [array_model.latest_schema] if array_model.latest_schema is not None else []
    schemas += [s for _, s in sorted(array_model.schemas.items())
                if s is not array_model.latest_schema]
    for s in schemas:
        for f in list(s.attributes) + list(s.dimensions):
            if f.name not in out:
                out.append(f.name)
    return out


def values(document, name: str, key: Optional[bytes] = None,
           with_values: bool = True) -> List[dict]:
    """Entries `{"name", "values", "raw", "error"?}` for field `name`, one per fragment
    (fragments in timestamp order, as readers order them). `key` decrypts encrypted arrays.
    `with_values=False` leaves "values" empty: only the raw bytes (`values --raw`)."""
    array: Optional[TileDBArray] = getattr(document, "model", None)
    if key is None:
        key = getattr(getattr(document, "ctx", None), "key", None)
    if array is None:
        return [{"name": os.path.basename(getattr(document, "path", "")), "values": [],
                 "raw": b"", "error": "not a TileDB array directory"}]
    out = []
    for frag in sorted(array.fragments, key=lambda f: f.order_key()):
        try:
            vals, raw = fragment_values(document, array, frag, name, key, with_values)
            out.append({"name": frag.name, "values": vals, "raw": raw})
        except (ValuesError, TileError) as e:
            out.append({"name": frag.name, "values": [], "raw": b"", "error": str(e)})
    return out


def _metadata(document, array: TileDBArray, frag: Fragment) -> FragmentMetadata:
    fm = frag.metadata
    if fm is not None and fm.extra.get("loader") is not None:
        return fm
    from ..context import Context
    from .fragment_metadata import load_fragment_metadata

    path = os.path.join(frag.path, "__fragment_metadata.tdb")
    if not _exists(document, path):
        raise ValuesError("fragment has no __fragment_metadata.tdb")
    ctx = Context(key=document.ctx.key if document is not None else None,
                  format=TileDBContext(array=array))
    fm = load_fragment_metadata(_source(document, path), ctx)  # no nodes: the model only
    frag.metadata = fm
    return fm


def _exists(document, path: str) -> bool:
    from ..dataset_fs import fs_of

    return fs_of(document, path).stat(path).is_file


def _source(document, path: str):
    if document is not None and hasattr(document, "open_source") and \
            (is_url(path) or os.path.abspath(path).startswith(getattr(document, "path", "\0"))):
        return document.open_source(path)
    return FileSource(path)


def fragment_values(document, array: TileDBArray, frag: Fragment, name: str,
                    key: Optional[bytes], with_values: bool = True) -> Tuple[list, Buffer]:
    """(values, raw bytes) of field `name` in one fragment."""
    fm = _metadata(document, array, frag)
    if fm.extra.get("footer") is None or not fm.extra["footer"].complete:
        raise ValuesError("the fragment metadata footer cannot be read")
    if fm.extra.get("encrypted") and not key:
        raise ValuesError("the array is encrypted: give the key with --key-file or "
                          "ARRAYSCOPE_KEY")
    schema: Optional[ArraySchema] = fm.extra.get("schema") or array.schema_for(fm.schema_name)
    if schema is None:
        raise ValuesError(f"no array schema {fm.schema_name!r} to interpret the fragment")
    fld = schema.field(name)
    if fld is None:
        raise ValuesError(f"field {name!r} is not in this fragment's schema {schema.name}")
    if isinstance(fld, Dimension) and fm.dense:
        # no data file: the coordinates are implied by the tile grid (dense_coords.py)
        try:
            coords = fragment_dense_coords(schema, fm, schema.dimensions.index(fld))
        except ValueError as e:
            raise ValuesError(f"dimension {name!r}: {e}")
        raw: Buffer = coords.view(np.uint8).data
        if not with_values:
            return [], raw
        return cell_values(fld.datatype, 1, raw), raw
    if isinstance(fld, Dimension) and fm.version and fm.version < 5:
        # formats 1–4: every dimension in one `__coords.tdb`
        role = file_role(schema, fm, "__coords.tdb")
        buf, bounds, _o = _decode_file_buffer(document, frag, fm, role, "__coords.tdb", key)
        try:
            raw = dimension_values(buf, bounds, len(schema.dimensions),
                                   schema.dimensions.index(fld), fld.cell_size, fm.version)
        except ValueError as e:
            raise ValuesError(f"__coords.tdb: {e}")
        return (cell_values(fld.datatype, 1, raw) if with_values else []), memoryview(raw)
    stem = data_file_stem(schema, fm.version, fld)
    fixed_role = file_role(schema, fm, stem + ".tdb")
    validity = None
    if getattr(fld, "nullable", False):
        vrole = file_role(schema, fm, stem + "_validity.tdb")
        vtiles, _ = _decode_file(document, frag, fm, vrole, stem + "_validity.tdb", key)
        validity = b"".join(vtiles)  # views into one buffer
    if not fld.var:
        raw, _b, _o = _decode_file_buffer(document, frag, fm, fixed_role, stem + ".tdb", key)
        if not with_values:
            return [], raw
        return cell_values(fld.datatype, fld.cell_val_num, raw, validity=validity), raw
    fixed_tiles, _o = _decode_file(document, frag, fm, fixed_role, stem + ".tdb", key)
    vrole = file_role(schema, fm, stem + "_var.tdb")
    var, vbounds, rle_offs = _decode_file_buffer(document, frag, fm, vrole, stem + "_var.tdb",
                                                 key)
    vmv = memoryview(var)
    var_tiles = [vmv[a:b] for a, b in vbounds]
    if len(var_tiles) != len(fixed_tiles):
        raise ValuesError(f"{len(fixed_tiles)} offsets tiles but {len(var_tiles)} var tiles")
    parts, total = [], 0
    for i, (ot, vt) in enumerate(zip(fixed_tiles, var_tiles)):
        rebuilt = rle_offs[i]
        cell_offs: Buffer = rebuilt if len(ot) == 0 and len(vt) and rebuilt is not None else ot
        offs = np.frombuffer(cell_offs, "<u8", count=len(cell_offs) // 8)
        if len(offs) and (int(offs[-1]) > len(vt) or np.any(offs[1:] < offs[:-1])):
            raise ValuesError(f"tile {i + 1}: cell offsets are not increasing within the "
                              f"{len(vt)} bytes of its var tile")
        parts.append(offs.astype(np.int64) + total)
        total += len(vt)
    offsets = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    if not with_values:
        return [], var
    return cell_values(fld.datatype, fld.cell_val_num, None, offsets, var, validity), var


def _decode_file(document, frag: Fragment, fm: FragmentMetadata, role, file_name: str,
                 key) -> Tuple[List[memoryview], List[Optional[bytes]]]:
    """Per tile: its decoded bytes (views into one buffer holding the whole file's cells),
    and the cell offsets RLE/DICTIONARY rebuilt (or None)."""
    buf, bounds, offs = _decode_file_buffer(document, frag, fm, role, file_name, key)
    mv = memoryview(buf)
    return [mv[a:b] for a, b in bounds], offs


def _decode_file_buffer(document, frag: Fragment, fm: FragmentMetadata, role, file_name: str,
                        key) -> Tuple[memoryview, List[Tuple[int, int]], List[Optional[bytes]]]:
    """(every tile's decoded bytes in one buffer — a memoryview of a numpy array, written in
    place, never copied into a `bytes` — (start, end) of each tile in it, per tile the
    offsets RLE/DICTIONARY rebuilt or None)."""
    if role is None:
        raise ValuesError(f"{file_name}: not a data file of this schema")
    offsets, why = tile_offsets_for(fm, role)
    if offsets is None:
        raise ValuesError(f"{file_name}: tiles cannot be located: {why}")
    if len(offsets) == 0:
        return memoryview(b""), [], []
    path = os.path.join(frag.path, file_name)
    if not _exists(document, path):
        raise ValuesError(f"{file_name} is missing from the fragment")
    src = _source(document, path)
    ends = tile_bounds(offsets, src.size)
    offs = np.asarray(offsets, dtype=np.uint64).astype(np.int64)
    if np.any(offs > src.size):
        i = int(np.flatnonzero(offs > src.size)[0])
        raise ValuesError(f"{file_name}: tile {i + 1} offset {int(offs[i])} is beyond the file "
                          f"({src.size} bytes)")
    jobs = []   # (tile, chunk index, chunk, output position)
    bounds: List[Tuple[int, int]] = []
    pos = 0
    for i in range(len(offs)):
        if ends[i] < offs[i]:
            raise ValuesError(f"{file_name}: tile {i + 1} offset {int(offs[i])} goes backwards")
        try:
            table = chunk_table(src, int(offs[i]), int(ends[i]))
        except TileError as e:
            raise ValuesError(f"{file_name}: tile {i + 1}: {e}")
        start = pos
        for ci, c in enumerate(table):
            jobs.append((i, ci, c, pos))
            pos += c[0]
        over = over_limit(role, pos - start, i)   # checked before anything is allocated
        if over:
            raise ValuesError(f"{file_name}: tile {i + 1}: {over}")
        bounds.append((start, pos))
    toffs: List[List[np.ndarray]] = [[] for _ in bounds]
    buf = np.empty(pos, np.uint8)  # large: numpy asks for huge pages (few page faults)

    def run(job):
        t, ci, c, at = job
        try:
            cells, o = _decode_chunk(src, c, role.specs, role.info, key, ci)
        except TileError as e:
            raise ValuesError(f"{file_name}: tile {t + 1}: {e}")
        if len(cells) != c[0]:
            raise ValuesError(f"{file_name}: tile {t + 1} chunk {ci + 1}: {len(cells)} bytes "
                              f"decoded, its header says {c[0]}")
        buf[at:at + len(cells)] = np.frombuffer(cells, np.uint8)
        return o
    # the common pipelines ([BYTESHUFFLE,] compressor): decoded in batches straight into
    # `buf`; what the batch path leaves (other pipelines, anything unusual) runs chunk by chunk
    p = plan(role.specs, role.info) if role.specs else None
    rest = list(range(len(jobs)))
    if p is not None:
        whole = src.view(0, src.size)  # chunk tables checked every range against the file
        fast = [(whole[c[2]:c[2] + c[3]], whole[c[4]:c[4] + c[1]], c[0], at)
                for _t, _ci, c, at in jobs]
        if len(jobs) >= 4 * _THREAD_MIN_CHUNKS and _WORKERS > 1:
            step = -(-len(fast) // _WORKERS)
            with ThreadPoolExecutor(_WORKERS) as ex:
                lefts = list(ex.map(lambda a: [a + i for i in reverse_into(
                    role.specs, role.info, fast[a:a + step], buf, p)],
                    range(0, len(fast), step)))
            rest = [i for left in lefts for i in left]
        else:
            rest = reverse_into(role.specs, role.info, fast, buf, p)
        del fast, whole
    todo = [jobs[i] for i in rest]
    if len(todo) >= _THREAD_MIN_CHUNKS and _WORKERS > 1:
        with ThreadPoolExecutor(_WORKERS) as ex:
            results = list(ex.map(run, todo))
    else:
        results = [run(j) for j in todo]
    for (t, ci, c, at), o in zip(todo, results):
        if o is not None:
            arr = np.frombuffer(o, "<u8")
            rel = at - bounds[t][0]
            if rel and len(arr) and int(arr[0]) == 0:
                arr = arr + np.uint64(rel)   # chunk-relative: make tile-relative
            toffs[t].append(arr)
    return buf.data, bounds, [np.concatenate(o).tobytes() if o else None for o in toffs]

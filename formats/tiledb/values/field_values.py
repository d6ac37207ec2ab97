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

import contextlib
import dataclasses
import gc
import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterable, Iterator, List, Optional, Tuple

import numpy as np

from ...core import compiled
from ...core.context import Context
from ...core.remote import is_url
from ...core.source import BytesSource, FileSource
from ...filters.enums import stage_names
from ..model.array_model import (
    ArraySchema,
    Dimension,
    Fragment,
    FragmentMetadata,
    TileDBArray,
    TileDBContext,
)
from ..model.fragment_model import SlotArrays, prefetch_u64s
from ..parse import fragment_metadata
from ..parse.data_files import (
    data_file_stem,
    file_role,
    over_limit,
    tile_offsets_for,
)
from ..parse.decode import Piece, Run, decode
from ..parse.rawtile import TileError, chunk_table
from .bulk_locate import FastValues, local_folder
from .cells import Buffer, cell_values
from .dense_coords import fragment_dense_coords
from .legacy_coords import dimension_values

# Data files up to this size are read whole when located (and dropped once decoded: what
# FileSource would read with one pread anyway, there mapped beyond it).
_HELD_MAX = FileSource.PREAD_MAX


class ValuesError(Exception):
    pass


# where the buffers of decoded cells come from: a writable uint8 array of n bytes
Buffers = Callable[[int], np.ndarray]


def _anonymous(nbytes: int) -> np.ndarray:
    return np.empty(nbytes, np.uint8)  # large: numpy asks for huge pages (few page faults)


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
           with_values: bool = True, buffers: Optional[Buffers] = None) -> List[dict]:
    """Entries `{"name", "values", "raw", "error"?}` for field `name`, one per fragment
    (fragments in timestamp order, as readers order them). `key` decrypts encrypted arrays.
    `with_values=False` leaves "values" empty: only the raw bytes (`values --raw`).
    `buffers` gives the buffers the cells of "raw" are decoded into (`values --raw`: the
    output file's mapping, `explorer/commands/raw_output.py`), each asked for just before
    it is filled; buffers of other bytes (offsets, validity) are the decoder's own. The
    fragments that do not go through it (many small ones read by the compiled bulk
    reader; dense dimensions) make their own.

    The data files of fixed-size attributes (the common case) are located fragment by
    fragment and then decoded together, every chunk of every fragment in one pass over one
    thread pool: a thousand small fragments cost one pass, not a thousand."""
    array: Optional[TileDBArray] = getattr(document, "model", None)
    if key is None:
        key = getattr(getattr(document, "ctx", None), "key", None)
    if array is None:
        return [{"name": os.path.basename(getattr(document, "path", "")), "values": [],
                 "raw": b"", "error": "not a TileDB array directory"}]
    with _collections_paused():
        return _values(document, array, name, key, with_values, buffers or _anonymous)


@contextlib.contextmanager
def _collections_paused() -> Iterator[None]:
    """No cyclic garbage collection while the fragments are read: a thousand fragments'
    models are tens of thousands of containers that all stay alive, and the collections
    their allocations trigger scan the whole heap and free nothing (a fifth of `values` on
    1 000 fragments). Nothing here makes reference cycles of note; collection resumes
    after (and is left alone when something else had turned it off)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _values(document, array: TileDBArray, name: str, key: Optional[bytes],
            with_values: bool, buffers: Buffers) -> List[dict]:
    tuning = compiled.TUNING
    out: List[dict] = []
    pending: List[Tuple[dict, _Deferred]] = []          # to locate
    deferred: List[Tuple[dict, _FileJob, Any]] = []     # located, to decode
    stored = 0
    roles: dict = {}   # what the fragments of one schema share: their data file's role
    frags = sorted(array.fragments, key=lambda f: f.order_key())
    # many fragments: those read like one the Python path read go through the kernels
    # (bulk_locate.py); what they hand back is read here after
    fast = FastValues(document, compiled.TUNING.workers, with_values) \
        if FastValues.available(len(frags)) else None
    # A full batch is decoded on a thread of its own while the next one's fragments are
    # read: their metadata is Python under the GIL, the decode mostly compiled code without
    # it, so on many fragments the two overlap. One batch in flight at most (its stored
    # pages stay resident until it is decoded).
    in_flight: Optional[Future] = None
    with ThreadPoolExecutor(1) as finisher:
        def read(entry: dict, frag: Fragment) -> None:
            nonlocal pending, deferred, stored, in_flight
            try:
                r = _fragment_values(document, array, frag, name, key, with_values,
                                     defer=True, roles=roles, buffers=buffers)
            except (ValuesError, TileError) as e:
                entry.update(raw=b"", error=str(e))
                return
            if not isinstance(r, _Deferred):
                entry["values"], entry["raw"] = r
                return
            if fast is not None and fast.learn(r):
                replanned.add(frag.version)
            pending.append((entry, r))
            if len(pending) < tuning.locate_batch:
                return
            stored += _locate_pending(document, pending, deferred)
            pending = []
            if stored >= tuning.batch_stored or len(deferred) >= tuning.batch_files or \
                    sum(job.size for _e, job, _f in deferred) >= tuning.batch_decoded:
                if in_flight is not None:
                    in_flight.result()
                if tuning.overlap:
                    in_flight = finisher.submit(_finish, deferred, key, with_values, buffers)
                else:
                    _finish(deferred, key, with_values, buffers)
                deferred, stored = [], 0

        replanned: set = set()   # the formats `read` made a new plan for
        try:
            for frag in frags:
                entry: dict = {"name": frag.name, "values": [], "raw": b""}
                out.append(entry)
                folder = fast.takes(frag) if fast is not None else None
                if folder is not None:
                    fast.add(entry, frag, folder)   # type: ignore[union-attr]
                else:
                    read(entry, frag)
            if fast is not None:
                _read_handed_back(fast, fast.collect(), read, replanned)
        finally:
            if fast is not None:
                fast.close()
        _locate_pending(document, pending, deferred)
        if in_flight is not None:
            in_flight.result()
    _finish(deferred, key, with_values, buffers)
    return out


def _read_handed_back(fast: FastValues, left: list, read, replanned: set) -> None:
    """Read the fragments the kernels handed back (their entries untouched) with `read`.
    When one whose metadata did not read like its plan's (a schema evolved) makes a new
    plan, the rest of its format go through the kernels again with it — a few times at
    most, each after a fragment read here, so this always ends."""
    rounds = 0
    while left:
        entry, frag, status = left.pop(0)
        replanned.discard(frag.version)
        read(entry, frag)
        if status != 1 or frag.version not in replanned or rounds >= compiled.TUNING.replans:
            continue
        rounds += 1
        keep = []
        for e, f, s in left:
            folder = fast.takes(f) if s == 1 and f.version == frag.version else None
            if folder is not None:
                fast.add(e, f, folder)
            else:
                keep.append((e, f, s))
        left = keep + fast.collect()


# New plans tried on handed-back fragments, at most (each costs one batch round)


def _locate_pending(document, pending: List[Tuple[dict, "_Deferred"]],
                    located: List[Tuple[dict, "_FileJob", Any]]) -> int:
    """Locate the pending files (their fragments' tile offsets decoded together first:
    `prefetch_u64s`) onto `located`; an entry whose file cannot be located gets its error.
    Returns the bytes the located files hold."""
    prefetch_u64s([(d.fm.tile_offsets.loader, d.fm.tile_offsets.kind, d.role.slot)
                   for _e, d in pending
                   if d.role is not None and isinstance(d.fm.tile_offsets, SlotArrays)])
    stored = 0
    for entry, d in pending:
        try:
            job = _locate(document, d.frag, d.fm, d.role, d.file_name)
        except (ValuesError, TileError) as e:
            entry.update(raw=b"", error=str(e))
            continue
        located.append((entry, job, d.fld))
        stored += job.src.size if job.src is not None else 0
    return stored


def _finish(deferred: List[Tuple[dict, "_FileJob", Any]], key, with_values: bool,
            buffers: Buffers) -> None:
    """Decode the deferred files together (into one buffer from `buffers`) and fill their
    entries."""
    _decode_jobs([job for _e, job, _f in deferred], key, buffers)
    for entry, job, fld in deferred:
        if job.error is not None:
            entry["error"] = job.error
            continue
        raw = job.result()[0]
        entry["raw"] = raw
        if with_values:
            entry["values"] = cell_values(fld.datatype, fld.cell_val_num, raw)


def _metadata(document, array: TileDBArray, frag: Fragment) -> FragmentMetadata:
    fm = frag.metadata
    if fm is not None and fm.loader is not None:
        return fm
    src = _open_in(document, frag, "__fragment_metadata.tdb",
                   "fragment has no __fragment_metadata.tdb", compiled.TUNING.held_meta)
    ctx = Context(key=document.ctx.key if document is not None else None,
                  format=TileDBContext(array=array))
    # no nodes: the model only (looked up in its module on each call: a spy sees it)
    fm = fragment_metadata.load_fragment_metadata(src, ctx)
    frag.metadata = fm
    return fm


def _source(document, path: str):
    if document is not None and hasattr(document, "open_source") and \
            (is_url(path) or os.path.abspath(path).startswith(getattr(document, "path", "\0"))):
        return document.open_source(path)
    return FileSource(path)


def _open(document, path: str, missing: str):
    """The source of `path`; ValuesError(`missing`) when it is not a regular file of the
    dataset (one stat: opening checks what a separate existence test would)."""
    try:
        return _source(document, path)
    except OSError:
        raise ValuesError(missing) from None


class _HeldFile(BytesSource):
    """A small file of the dataset, read whole; `path` is where it lies (parsers look
    beside it: a format 1 fragment is sparse when a `__coords.tdb` lies next to its
    metadata)."""

    def __init__(self, data: bytes, name: str, path: str):
        super().__init__(data, name)
        self.path = path


def _open_in(document, frag: Fragment, file_name: str, missing: str, hold: int = 0):
    """`_open` of file `file_name` of fragment `frag`. When the fragment's folder was listed
    as a real folder of a local dataset, the file is opened there with one open (never
    through a link) and no path resolution, and a file of at most `hold` bytes is read
    whole at once (a `_HeldFile` named as the document names it: a thousand fragments
    read two small files each; such a file is not one of the document's sources). Anything
    else takes `_open`, which says what is wrong."""
    if local_folder(document, frag) is not None:
        got = document.fs.read_in(frag.entry, file_name, hold)
        if got is not None:
            entry, data = got
            if data is not None and len(data) == entry.size:
                return _HeldFile(data, document.listed_name(entry), entry.real)
            try:
                return document.open_listed(entry)
            except OSError:
                pass
    return _open(document, os.path.join(frag.path, file_name), missing)


def _shared_role(roles: dict, schema: ArraySchema, fm: FragmentMetadata, file_name: str):
    """`file_role` of a fixed-size attribute's file, made once for every fragment that
    agrees on what it depends on (a thousand fragments of one schema: one role). Such a
    role needs no fragment (`fm` is for var tiles only): it has none."""
    k = (id(schema), file_name, fm.version, fm.encrypted, fm.has_timestamps,
         fm.has_delete_meta, fm.dense, tuple(fm.slots or ()))
    got = roles.get(k)
    if got is None:
        role = file_role(schema, fm, file_name)
        got = roles[k] = (schema, dataclasses.replace(role, fm=None) if role is not None
                          else None)
    return got[1]


class _Deferred:
    """A fixed-size attribute file, to be located and decoded with the other fragments'."""

    def __init__(self, fld, frag: Fragment, fm: FragmentMetadata, role, file_name: str):
        self.fld, self.frag, self.fm, self.role, self.file_name = fld, frag, fm, role, file_name


def _fragment_values(document, array: TileDBArray, frag: Fragment, name: str,
                     key: Optional[bytes], with_values: bool = True, defer: bool = False,
                     roles: Optional[dict] = None, buffers: Buffers = _anonymous):
    """(values, raw bytes) of field `name` in one fragment; with `defer`, a fixed-size
    attribute's file is only located (its tiles decoded later with other fragments'): a
    `_Deferred`. `roles` keeps the roles of
    such files across the fragments of one `values` call (`_shared_role`). The raw bytes
    of a data file are decoded into a buffer from `buffers`."""
    fm = _metadata(document, array, frag)
    if fm.footer is None or not fm.footer.complete:
        raise ValuesError("the fragment metadata footer cannot be read")
    if fm.encrypted and not key:
        raise ValuesError("the array is encrypted: give the key with --key-file or "
                          "ARRAYSCOPE_KEY")
    schema: Optional[ArraySchema] = fm.schema or array.schema_for(fm.schema_name)
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
    if defer and roles is not None and not fld.var and not getattr(fld, "nullable", False):
        return _Deferred(fld, frag, fm, _shared_role(roles, schema, fm, stem + ".tdb"),
                         stem + ".tdb")
    fixed_role = file_role(schema, fm, stem + ".tdb")
    validity: Optional[Buffer] = None
    if getattr(fld, "nullable", False):
        # the validity bytes of every tile, one after the other in one buffer (no copy)
        vrole = file_role(schema, fm, stem + "_validity.tdb")
        validity = _decode_file_buffer(document, frag, fm, vrole, stem + "_validity.tdb",
                                       key)[0]
    if not fld.var and defer and validity is None:
        return _Deferred(fld, frag, fm, fixed_role, stem + ".tdb")
    if not fld.var:
        raw, _b, _o = _decode_file_buffer(document, frag, fm, fixed_role, stem + ".tdb", key,
                                          buffers)
        if not with_values:
            return [], raw
        return cell_values(fld.datatype, fld.cell_val_num, raw, validity=validity), raw
    fjob = _locate(document, frag, fm, fixed_role, stem + ".tdb")
    if with_values:   # (the offsets file first: its damage is reported first)
        pieces = _offsets_pieces(fjob, key, whole=True)
    vrole = file_role(schema, fm, stem + "_var.tdb")
    var, vbounds, rle_offs = _decode_file_buffer(document, frag, fm, vrole, stem + "_var.tdb",
                                                 key, buffers)
    if len(vbounds) != len(fjob.bounds):
        raise ValuesError(f"{len(fjob.bounds)} offsets tiles but {len(vbounds)} var tiles")
    if not with_values:
        pieces = _offsets_pieces(fjob, key, whole=False)
    parts: List[np.ndarray] = []
    for t0, t1, fixed in pieces:
        whole = np.frombuffer(fixed, np.uint8) if len(fixed) else np.zeros(0, np.uint8)
        base = fjob.bounds[t0][0] if t1 > t0 else 0
        for i in range(t0, t1):
            fa, fb = fjob.bounds[i][0] - base, fjob.bounds[i][1] - base
            va, vb = vbounds[i]
            n = vb - va
            rebuilt = rle_offs[i]
            # RLE / DICTIONARY string tiles: an empty offsets tile, the offsets rebuilt
            src = rebuilt if fb == fa and rebuilt is not None else whole[fa:fb]
            offs = np.frombuffer(src, "<u8", count=len(src) // 8)
            if len(offs) and (int(offs[-1]) > n or np.any(offs[1:] < offs[:-1])):
                raise ValuesError(f"tile {i + 1}: cell offsets are not increasing within the "
                                  f"{n} bytes of its var tile")
            if with_values:   # absolute offsets into the file's var bytes
                parts.append(offs.astype(np.int64) + va)
    if not with_values:
        return [], var
    offsets = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    return cell_values(fld.datatype, fld.cell_val_num, None, offsets, var, validity), var




def _offsets_pieces(job: "_FileJob", key, whole: bool) -> Iterable[Tuple[int, int, Any]]:
    """The offsets file of `job` decoded: [(first tile, end tile, their decoded bytes)],
    the whole file at once or (not `whole`) in pieces of about `TUNING.offsets_piece` bytes (they are not
    part of the output: never all held beside the var bytes), each
    dropped once the next is asked for (a generator). A piece that fails is decoded again
    with the whole file, for the error as the whole file reports it (ValuesError)."""
    if whole or job.size <= compiled.TUNING.offsets_piece:
        _decode_jobs([job], key)
        if job.error is not None:
            raise ValuesError(job.error)
        return [(0, len(job.bounds), job.result()[0])]
    return _pieces(job, key)


def _pieces(job: "_FileJob", key) -> Iterator[Tuple[int, int, Any]]:
    n = 0   # first chunk of the piece
    t0 = 0
    while t0 < len(job.bounds):
        base = job.bounds[t0][0]
        t1 = t0 + 1
        while t1 < len(job.bounds) and job.bounds[t1][1] - base <= compiled.TUNING.offsets_piece:
            t1 += 1
        m = n
        while m < len(job.chunks) and job.chunks[m].tile < t1:
            m += 1
        sub = _FileJob(job.file_name, job.src, job.role,
                       [pc._replace(at=pc.at - base, tile=pc.tile - t0)
                        for pc in job.chunks[n:m]],
                       [(a - base, b - base) for a, b in job.bounds[t0:t1]],
                       job.bounds[t1 - 1][1] - base)
        _decode_jobs([sub], key)
        if sub.error is not None:
            _decode_jobs([job], key)
            raise ValuesError(job.error or sub.error)
        yield t0, t1, sub.result()[0]
        del sub
        t0, n = t1, m


def _decode_file_buffer(document, frag: Fragment, fm: FragmentMetadata, role, file_name: str,
                        key, buffers: Buffers = _anonymous
                        ) -> Tuple[memoryview, List[Tuple[int, int]], List[Optional[np.ndarray]]]:
    """(every tile's decoded bytes in one buffer from `buffers` — a memoryview of a numpy
    array, written in place, never copied into a `bytes` — (start, end) of each tile in it,
    per tile the offsets RLE/DICTIONARY rebuilt or None)."""
    job = _locate(document, frag, fm, role, file_name)
    _decode_jobs([job], key, buffers)
    if job.error is not None:
        raise ValuesError(job.error)
    return job.result()


class _FileJob:
    """One data file of one fragment with its chunks located (`decode.Piece`s, positioned
    in the file's cells); decoded by `_decode_jobs` into `buf[base:base+size]`;
    `error` is the first chunk's error, in file order."""

    def __init__(self, file_name: str, src, role, chunks: List[Piece], bounds: List[Tuple[int, int]],
                 size: int):
        self.file_name, self.src, self.role = file_name, src, role
        self.chunks, self.bounds, self.size = chunks, bounds, size
        self.buf: Optional[np.ndarray] = None
        self.base = 0
        self.error: Optional[str] = None
        self.error_at = -1
        self.toffs: List[List[np.ndarray]] = [[] for _ in bounds]

    def fail(self, at: int, message: str) -> None:
        if self.error is None or at < self.error_at:
            self.error, self.error_at = message, at

    def result(self) -> Tuple[memoryview, List[Tuple[int, int]], List[Optional[np.ndarray]]]:
        """(the cells, tile bounds, per tile the u64 offsets RLE/DICTIONARY rebuilt as
        uint8 bytes — the decoder's own array when one chunk made them — or None)."""
        offs = [(o[0] if len(o) == 1 else np.concatenate(o)).view(np.uint8) if o else None
                for o in self.toffs]   # (tiles of '' cells only: offsets and no bytes)
        if self.buf is None or not self.size:
            return b"", self.bounds, offs  # type: ignore[return-value]
        return self.buf.data[self.base:self.base + self.size], self.bounds, offs


def _locate(document, frag: Fragment, fm: FragmentMetadata, role, file_name: str) -> _FileJob:
    """The chunks of every tile of `file_name` (ValuesError when they cannot be located or
    a tile would decode to more than its schema allows: checked before any allocation)."""
    if role is None:
        raise ValuesError(f"{file_name}: not a data file of this schema")
    offsets, why = tile_offsets_for(fm, role)
    if offsets is None:
        raise ValuesError(f"{file_name}: tiles cannot be located: {why}")
    if len(offsets) == 0:
        return _FileJob(file_name, None, role, [], [], 0)
    # a small file is read whole here and held until decoded (a thousand files would be
    # closed out of FileSource's few open descriptors, then opened and read again)
    src = _open_in(document, frag, file_name, f"{file_name} is missing from the fragment",
                   _HELD_MAX)
    size = src.size
    # plain ints, no numpy: most fragments of a many-fragment array hold a tile or two
    offs = (offsets if isinstance(offsets, np.ndarray) and offsets.dtype == np.uint64
            else np.asarray(offsets, dtype=np.uint64)).tolist()
    if max(offs) > size:
        beyond = next(i for i, a in enumerate(offs) if a > size)
        raise ValuesError(f"{file_name}: tile {beyond + 1} offset {offs[beyond]} is beyond the "
                          f"file ({size} bytes)")
    ends = offs[1:] + [size]   # a tile ends where the next starts (data_files.tile_bounds)
    chunks: List[Piece] = []   # (output position: in the file's cells)
    bounds: List[Tuple[int, int]] = []
    pos = 0
    for i, (a, b) in enumerate(zip(offs, ends)):
        if b < a:
            raise ValuesError(f"{file_name}: tile {i + 1} offset {a} goes backwards")
        try:
            table = chunk_table(src, a, b)
        except TileError as e:
            raise ValuesError(f"{file_name}: tile {i + 1}: {e}")
        start = pos
        for ci, c in enumerate(table):
            chunks.append(Piece(src, c, pos, i, ci))
            pos += c.original
        over = over_limit(role, pos - start, i)   # checked before anything is allocated
        if over:
            raise ValuesError(f"{file_name}: tile {i + 1}: {over}")
        bounds.append((start, pos))
    release = getattr(src, "release", None)
    if release is not None:   # the pages mapped around every chunk header: not kept resident
        release(0, src.size)
    return _FileJob(file_name, src, role, chunks, bounds, pos)


def _pipeline_key(role) -> tuple:
    """Files whose chunks one `reverse_into` call may decode together. Made once for a
    role the files of many fragments share (`_shared_role`: no fragment of its own)."""
    if role.fm is not None:
        return (repr(role.specs), repr(role.info))
    got = _PIPELINE_KEYS.get(id(role))
    if got is not None and got[0] is role:
        return got[1]
    k = (repr(role.specs), repr(role.info))
    if len(_PIPELINE_KEYS) >= 64:
        _PIPELINE_KEYS.clear()
    _PIPELINE_KEYS[id(role)] = (role, k)
    return k


# id(shared role) -> (the role, its key): the role held keeps its id from being reused
_PIPELINE_KEYS: dict = {}


def _decode_jobs(jobs: List[_FileJob], key, buffers: Buffers = _anonymous) -> None:
    """Decode every chunk of every job into one buffer from `buffers` (each job's cells
    contiguous, in job order; none asked for when there are no cells): one `decode.Run` per
    pipeline, decoded by the decoder `decode.choose` picks (what it declines by the
    reference). Errors are recorded on the job (the first failing chunk in file order),
    never raised."""
    live = [j for j in jobs if j.chunks]   # chunks of 0 bytes too: RLE / DICTIONARY offsets
    total = sum(j.size for j in live)
    buf = buffers(total) if total else np.empty(0, np.uint8)
    base = 0
    groups: dict = {}
    for j in live:
        j.buf, j.base = buf, base
        base += j.size
        groups.setdefault(_pipeline_key(j.role), []).append(j)
    for js in groups.values():   # the filters' kernels run chunk by chunk (64 KiB pieces)
        compiled.prepare(sum(j.size for j in js), stage_names(js[0].role.specs))
    for js in groups.values():
        role = js[0].role
        owners = [(j, n) for j in js for n in range(len(j.chunks))]
        pieces = [pc._replace(at=j.base + pc.at) if j.base else pc
                  for j in js for pc in j.chunks]
        run = Run(role.specs, role.info, pieces, key)
        for i in decode(run, buf):
            j, n = owners[i]
            pc = j.chunks[n]
            j.fail(n, f"{j.file_name}: tile {pc.tile + 1}: {run.errors[i]}")
        for i, o in sorted(run.offsets.items()):
            j, n = owners[i]
            pc = j.chunks[n]
            rel = pc.at - j.bounds[pc.tile][0]
            if rel and len(o) and int(o[0]) == 0:
                o = o + np.uint64(rel)   # chunk-relative: make tile-relative
            j.toffs[pc.tile].append(o)

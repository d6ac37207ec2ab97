"""From a TileDB tile's stored chunks to its cells: one contract, two implementations, and
the one place that chooses between them.

The contract: `decoder.decode(run, out) -> declined`. A `Run` is the chunks of one filter
pipeline (`Piece`s: where each chunk's bytes lie, where its cells go in `out`); `decode`
writes the cells of every chunk it takes and returns the indices of those it declined.

- `Reference` reverses each chunk stage by stage (`filters.reverse_chunk`, what the window
  shows and `verify` checks): it takes every chunk that decodes and declines the others,
  saying why in `run.errors` — the message every route reports.
- `Planned` decodes whole runs without a Stage object: the fused compiled kernel (no GIL;
  C codecs by address, `filters/fused.py`), then the vectorised batch reversal
  (`filters/batch.py`), then the direct decoders (AES, RLE / DICTIONARY strings,
  `filters/direct.py`), each over every core when the run is large. It takes a chunk only
  when the reference would give exactly those bytes (and, for a `clean` run, no finding:
  the run's `checked` planner, verify's `tile_batch.chunk_plan`); everything else it
  declines, and the caller hands it to the reference, which says what is wrong. So both
  give the same cells and the same errors.

Every decision of how tiles become cells is a `Route`, and the one decision table below
(`choose`, `choose_many`, `choose_windows`; `choose_chunk` for verify's chunks) makes it:

| the job | route |
| --- | --- |
| `TUNING.planned` off (the differential tests) | `REFERENCE` or `COPY`, nothing planned |
| a run with no filters (a chunk is its cells) | `COPY` (the reference's copy: nothing to plan) |
| one tile of one chunk asked alone (`decode_tile`, `alone`) | `REFERENCE` (a plan costs more than it saves) |
| a `clean` run (verify) its `checked` planner plans | `CHECKED` (`Planned`: chunks with no finding) |
| a run `Planned` has a plan for (`planned_for`) | `PLANNED` |
| any other run | `REFERENCE` (for a `clean` run: every chunk checked in full by the caller) |
| `values` of many fragments (`compiled.bulk_wanted`, libc, the fused kernel) | `BULK` (`bulk_locate.py`) |
| verify of a data file whose role `tile_batch` decodes whole (a local file) | `WINDOWS` (`tile_batch.decode_run`) |

Verify's route for each chunk it checks outside a whole-file window (`choose_chunk`: the
chunks of multi-chunk tiles, a file `WINDOWS` did not take, fragment metadata sections). A
probe is a file's first chunk of a pipeline, checked in full; what it shows picks the route
of the file's other chunks of that pipeline (the caller keeps what each probe showed).
"Fits": `tile_batch.chunk_plan` plans its pipeline, its metadata is as planned, its bytes
lie inside its file and 0 < its cells <= `TUNING.window_chunk_max`. "Silent last": its
pipeline ends with filters whose forward can fail only on their options (`silent_from`).

| the chunk | route |
| --- | --- |
| `TUNING.planned` off; a derived source's or a blocked chunk (nothing checked here) | `REFERENCE` (every check) |
| fits, the probe not made | `PROBE` (every check) |
| fits, the probe clean and decoded | `CHECKED` (into windows: `clean` runs) |
| else silent last, the probe of those forwards not made | `LAST_PROBE` (every check) |
| else silent last, their forwards passed on the probe | `LAST_SKIPPED` (all but those forwards) |
| any other chunk (a probe that found something) | `REFERENCE` |

What the caller does with what `Planned` declines is always the same: `Reference` on those
chunks. Whether `Planned` runs compiled kernels or their numpy twins is `compiled.py`'s
rule; every number that tunes either is in `compiled.TUNING`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Protocol, Sequence, Tuple

import numpy as np

from ...core import compiled
from ...filters import DataInfo, FilterSpec, RunContext, fused, reverse_chunk
from ...filters.batch import Plan as BatchPlan
from ...filters.batch import plan as batch_plan
from ...filters.batch import reverse_into
from ...filters.direct import decode_into, direct_plan
from .rawtile import GT_HEAD_SIZE, MAX_GENERIC_DECODE, Chunk, TileError, chunk_table, generic_specs, peek_generic_tile
from .tile_layout import CHUNK_HEADER


class Piece(NamedTuple):
    """One chunk to decode: the source its offsets are in (a `ByteSource`, or bytes-like),
    the chunk, where its cells go in the output, and the tile (and chunk of the tile) it is
    part of — string tiles are decoded whole by one route or the other."""

    source: Any
    chunk: Chunk
    at: int
    tile: int = 0
    nth: int = 0   # its place among the tile's chunks


# verify's planner of chunks no per-chunk check could find anything in: the `filters.batch`
# plan of a pipeline whose decoded chunks need no check, else None (`tile_batch.chunk_plan`,
# handed in with the run: the decoder names no verify module)
CheckedPlanner = Callable[[List[FilterSpec], DataInfo], Optional[BatchPlan]]


@dataclass
class Run:
    """The chunks of one filter pipeline to decode into one output. `checked` (verify):
    take only chunks the per-chunk checks could find nothing in, as that planner plans them
    (the run is then `clean`). Filled by the decoders: `errors` (why a chunk did not decode,
    by piece index) and `offsets` (the u64 cell offsets RLE / DICTIONARY rebuilt, relative
    to the chunk, by piece index)."""

    specs: List[FilterSpec]
    info: DataInfo
    pieces: Sequence[Piece]
    key: Optional[bytes] = None
    checked: Optional[CheckedPlanner] = None
    errors: Dict[int, str] = field(default_factory=dict)
    offsets: Dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return self.checked is not None

    def subset(self, indices: Sequence[int]) -> "Run":
        """The same pipeline over some of the pieces (indices into the subset map back
        through `indices`)."""
        return Run(self.specs, self.info, [self.pieces[i] for i in indices], self.key,
                   self.checked)


class Decoder(Protocol):
    def decode(self, run: Run, out: np.ndarray) -> List[int]:
        """Write the cells of the pieces taken into `out`; the indices declined."""


def _buffer(source: Any) -> Any:
    """The whole of a piece's source as a bytes-like object (a `ByteSource` by its view:
    mapped or read once, never copied per chunk)."""
    view = getattr(source, "view", None)
    return view(0, source.size) if view is not None else source


def _release(pieces: Iterable[Piece]) -> None:
    """Drop the stored pages of `pieces` from resident memory (`FileSource.release`): a data
    file read once is never all resident beside the decoded cells."""
    spans: Dict[int, Tuple[Any, int, int]] = {}
    for p in pieces:
        c = p.chunk
        got = spans.get(id(p.source))
        lo, hi = c.md_offset, c.data_offset + c.filtered
        spans[id(p.source)] = (p.source, lo, hi) if got is None else \
            (p.source, min(got[1], lo), max(got[2], hi))
    for src, lo, hi in spans.values():
        # a ByteSource's pages (bytes-like sources have none to drop: a memoryview's
        # `release` is another thing)
        release = getattr(src, "release", None) if hasattr(src, "view") else None
        if release is not None:
            release(lo, hi - lo)


def _map(decoder: Any, fn: Callable[[int], List[int]], starts: Sequence[int],
         workers: Optional[int] = None) -> List[int]:
    """`fn` over the slices starting at `starts`, on the decoder's threads when more than one
    (the codecs and kernels run without the GIL; its pool when it has one); the declined
    indices, in order."""
    workers = decoder.workers if workers is None else workers
    if workers > 1 and len(starts) > 1:
        if decoder.pool is not None:
            return [i for part in decoder.pool.map(fn, starts) for i in part]
        from concurrent.futures import ThreadPoolExecutor  # here: a small decode needs none

        with ThreadPoolExecutor(workers) as ex:
            return [i for part in ex.map(fn, starts) for i in part]
    return [i for a in starts for i in fn(a)]


# ---- the reference ----------------------------------------------------------------------

def decode_chunk(source: Any, c: Chunk, specs: List[FilterSpec], info: DataInfo,
                 key: Optional[bytes], i: int) -> Tuple[bytes, Optional[bytes]]:
    """(cells, u64 cell offsets RLE / DICTIONARY rebuilt or None) of chunk `i` of a tile in
    `source` (a `ByteSource` or bytes-like), every filter reversed stage by stage;
    TileError says why it cannot be."""
    mv = memoryview(_buffer(source))
    orig, filt, md_at, mdl, data = c
    if not specs:
        if orig != filt:
            raise TileError(f"chunk {i + 1}: no filters, yet {filt} B stored for {orig} B",
                            md_at - CHUNK_HEADER.size)
        return bytes(mv[data:data + filt]), None
    md = bytes(mv[md_at:md_at + mdl]) if mdl else b""
    run = reverse_chunk(specs, md, bytes(mv[data:data + filt]), info, RunContext(key, orig))
    if run.error is not None or run.cells is None:
        raise TileError(f"chunk {i + 1}: {run.error}", data)
    return run.cells, run.offsets


class Reference:
    """Each chunk reversed stage by stage (`decode_chunk`), on `workers` threads when there
    are many (`pool`: the caller's, left running). Declines exactly the chunks that do not
    decode, with the reason."""

    def __init__(self, workers: Optional[int] = None, pool: Any = None):
        self.workers = compiled.TUNING.workers if workers is None else workers
        self.pool = pool

    def decode(self, run: Run, out: np.ndarray) -> List[int]:
        pieces, bufs = run.pieces, {}
        for p in pieces:
            if id(p.source) not in bufs:
                bufs[id(p.source)] = _buffer(p.source)

        def one(i: int) -> bool:
            p = pieces[i]
            try:
                cells, o = decode_chunk(bufs[id(p.source)], p.chunk, run.specs, run.info,
                                        run.key, p.nth)
            except TileError as e:
                run.errors[i] = str(e)
                return False
            out[p.at:p.at + len(cells)] = np.frombuffer(cells, np.uint8)
            if o is not None:
                run.offsets[i] = np.frombuffer(o, "<u8")
            return True
        n = len(pieces)
        t = compiled.TUNING
        # a few slices per thread, not a future per chunk (that overhead, under the GIL,
        # cost more than the codec work the threads share)
        step = -(-n // (4 * self.workers)) if n >= t.thread_min_chunks else max(n, 1)
        return _map(self, lambda a: [i for i in range(a, min(a + step, n)) if not one(i)],
                    range(0, n, step))


# ---- the planned path --------------------------------------------------------------------

def planned_for(specs: List[FilterSpec], info: DataInfo,
                checked: Optional[CheckedPlanner] = None) -> bool:
    """Whether `Planned` has a plan for this pipeline (it may still decline a chunk); for a
    `clean` run, whether its `checked` planner has one."""
    if not specs:
        return False
    if checked is not None:
        return checked(specs, info) is not None
    return fused.fused_plan(specs, info) is not None or \
        batch_plan(specs, info) is not None or direct_plan(specs, info) is not None


class Planned:
    """Whole runs decoded without Stage objects (module doc): fused kernel, then batch
    reversal, then the direct decoders, each taking what the one before declined."""

    def __init__(self, workers: Optional[int] = None, pool: Any = None):
        self.workers = compiled.TUNING.workers if workers is None else workers
        self.pool = pool

    def decode(self, run: Run, out: np.ndarray) -> List[int]:
        specs, info = run.specs, run.info
        if run.checked is not None:
            p = run.checked(specs, info)
            if p is None:
                return list(range(len(run.pieces)))
            # the fused kernel decodes, it does not check: not for a plan that checks
            fplan = fused.fused_plan(specs, info) if p.typed is None else None
        else:
            p = batch_plan(specs, info)
            fplan = fused.fused_plan(specs, info)
        left = list(range(len(run.pieces)))
        if fplan is not None:
            kernel = fused.decoder(sum(pc.chunk.original for pc in run.pieces), specs)
            if kernel is not None:
                left = self._fused(kernel, fplan, run, left, out)
        if left and p is not None:
            left = self._batch(p, run, left, out)
        if left and not run.clean:
            left = self._direct(run, left, out)
        return left

    def _fused(self, kernel, fplan: fused.FusedPlan, run: Run, todo: List[int],
               out: np.ndarray) -> List[int]:
        """The kernel over runs of chunks (`_fused_runs`), taken by every core in turn."""
        t = compiled.TUNING
        n = len(todo)
        most = t.release_every
        if self.workers > 1 and n >= 4 * t.thread_min_chunks:
            most = min(most, max(t.thread_min_chunks,
                                 -(-n // (t.runs_per_worker * self.workers))))
        runs = _fused_runs(run.pieces, todo, most)

        def one(k: int) -> List[int]:
            return _decode_fused_run(kernel, fplan, run.pieces, runs[k], out)
        return _map(self, one, range(len(runs)))

    def _batch(self, p, run: Run, todo: List[int], out: np.ndarray) -> List[int]:
        """`filters.batch.reverse_into` over slices of the chunks, a slice per thread, each
        slice's stored pages released as it goes."""
        t = compiled.TUNING
        views = _views(run.pieces, todo)
        n = len(todo)
        step = -(-n // self.workers) if self.workers > 1 and n >= 4 * t.thread_min_chunks \
            else max(n, 1)

        def part(a: int) -> List[int]:
            left: List[int] = []
            for b in range(a, min(a + step, n), t.release_every):
                e = min(b + t.release_every, a + step, n)
                left += [todo[b + i] for i in reverse_into(run.specs, run.info, views[b:e],
                                                           out, p)]
                _release(run.pieces[i] for i in todo[b:e])
            return left
        return _map(self, part, range(0, n, step))

    def _direct(self, run: Run, todo: List[int], out: np.ndarray) -> List[int]:
        """`filters.direct` (encrypted pipelines; RLE / DICTIONARY string tiles). A string
        tile one chunk of which is declined is declined whole (its rebuilt offsets stay in
        chunk order when the reference decodes it)."""
        dp = direct_plan(run.specs, run.info)
        if dp is None:
            return todo
        views = _views(run.pieces, todo)
        n = len(todo)
        step = max(1, -(-n // self.workers))
        if dp.kind == "aes":   # smaller slices: a slow thread holds up less
            step = max(1, min(step, compiled.TUNING.aes_slice))
        offs: Dict[int, np.ndarray] = {}

        def part(a: int) -> List[int]:
            lft, o = decode_into(dp, run.key, views[a:a + step], out)
            offs.update((todo[a + i], v) for i, v in o.items())
            return [todo[a + i] for i in lft]
        left = _map(self, part, range(0, n, step))
        if dp.kind != "strings":
            return left
        bad = {(id(run.pieces[i].source), run.pieces[i].tile) for i in left}
        declined = []
        for i in todo:
            pc = run.pieces[i]
            if (id(pc.source), pc.tile) in bad:
                declined.append(i)
            else:
                run.offsets[i] = offs[i]
        return declined


def _views(pieces: Sequence[Piece], todo: Sequence[int]) -> List[Tuple[Any, Any, int, int]]:
    """(metadata, data, original length, output position) of each piece in `todo`: views
    of its source, no copy."""
    bufs: Dict[int, Any] = {}
    out = []
    for i in todo:
        pc = pieces[i]
        v = bufs.get(id(pc.source))
        if v is None:
            v = bufs[id(pc.source)] = memoryview(_buffer(pc.source))
        c = pc.chunk
        out.append((v[c.md_offset:c.md_offset + c.md_length],
                    v[c.data_offset:c.data_offset + c.filtered], c.original, pc.at))
    return out


def _fused_runs(pieces: Sequence[Piece], todo: List[int], most: int) -> List[List[int]]:
    """The kernel calls: consecutive pieces of one source in runs of at most `most`; the
    pieces of sources with few chunks packed together up to `most` chunks or
    `TUNING.pack_bytes` stored bytes (a call costs some microseconds to set up: a thousand
    one-chunk fragments, a thousand calls)."""
    t = compiled.TUNING
    groups: List[List[int]] = []   # consecutive pieces of one source
    for i in todo:
        if groups and pieces[groups[-1][-1]].source is pieces[i].source:
            groups[-1].append(i)
        else:
            groups.append([i])
    runs: List[List[int]] = []
    packed: List[int] = []
    stored = 0
    for g in groups:
        if len(g) > t.pack_chunks:
            runs += [g[a:a + most] for a in range(0, len(g), most)]
            continue
        packed += g
        first, last = pieces[g[0]].chunk, pieces[g[-1]].chunk
        stored += last.data_offset + last.filtered - first.md_offset
        if len(packed) >= most or stored >= t.pack_bytes:
            runs.append(packed)
            packed, stored = [], 0
    if packed:
        runs.append(packed)
    return runs


def _decode_fused_run(kernel, fplan: fused.FusedPlan, pieces: Sequence[Piece], run: List[int],
                      out: np.ndarray) -> List[int]:
    """One kernel call over `run`: one source's chunks read in place, or several sources'
    chunk bytes laid end to end in one buffer (copied: cheaper than a call each). The
    stored pages are released after. Returns the pieces declined."""
    src0 = pieces[run[0]].source
    if all(pieces[i].source is src0 for i in run):
        buf = _buffer(src0)
        chunks = [pieces[i].chunk for i in run]
    else:
        blob = bytearray()
        chunks = []
        k = 0
        while k < len(run):   # each source's stretch copied once
            src = pieces[run[k]].source
            e = k
            while e < len(run) and pieces[run[e]].source is src:
                e += 1
            first, last = pieces[run[k]].chunk, pieces[run[e - 1]].chunk
            lo, hi = first.md_offset, last.data_offset + last.filtered
            shift = len(blob) - lo
            blob += memoryview(_buffer(src))[lo:hi]
            chunks += [Chunk(c.original, c.filtered, c.md_offset + shift, c.md_length,
                             c.data_offset + shift) for c in (pieces[i].chunk for i in run[k:e])]
            k = e
        buf = blob
    left = fused.decode_chunks(kernel, fplan, buf, chunks, [pieces[i].at for i in run], out)
    _release(pieces[i] for i in run)
    return [run[i] for i in left]


# ---- the choice --------------------------------------------------------------------------

class Route(enum.Enum):
    """The ways a TileDB tile's chunks become cells (the decision table of the module doc)."""

    REFERENCE = "reference"   # each chunk reversed stage by stage (`Reference`)
    COPY = "copy"             # no filters: each chunk's bytes are its cells (`Reference`)
    PLANNED = "planned"       # whole runs without Stage objects (`Planned`)
    CHECKED = "checked"       # verify: `Planned` taking only chunks no check could fault
    BULK = "bulk"             # `values` of many fragments: compiled read, locate, decode
    WINDOWS = "windows"       # verify: a data file's tiles decoded window by window
    PROBE = "probe"           # verify: a file's first chunk `CHECKED` could take, in full
    LAST_PROBE = "last-probe"        # verify: the first with silent last filters, in full
    LAST_SKIPPED = "last-skipped"    # verify: every check but the last filters' forwards


def choose(run: Run, alone: bool = False) -> Route:
    """The route of `run` (the decision table of the module doc). `alone`: one tile asked
    on its own (`decode_tile`), where a one-chunk run is not worth a plan; a one-chunk tile
    among a fragment's runs (values, verify) is planned like any other."""
    if not run.specs:
        return Route.COPY
    if not compiled.TUNING.planned or (alone and len(run.pieces) == 1 and not run.clean):
        return Route.REFERENCE
    if planned_for(run.specs, run.info, run.checked):
        return Route.CHECKED if run.clean else Route.PLANNED
    return Route.REFERENCE


def choose_many(fragments: int) -> Route:
    """`values` of `fragments` fragments: `BULK` when this machine reads them that way and
    it pays (`compiled.bulk_wanted`); else fragment by fragment, each run `choose`n:
    `PLANNED`, or `REFERENCE` when the planned routes are off."""
    if not compiled.TUNING.planned:
        return Route.REFERENCE
    if not compiled.bulk_wanted(fragments):
        return Route.PLANNED
    from ...accel import bulkread
    if bulkread.libc_functions() is None or fused.decoder(1 << 30) is None:
        return Route.PLANNED
    return Route.BULK


def choose_windows(whole: bool) -> Route:
    """Verify of a data file whose tiles `tile_batch` can decode whole (`whole`: a simple
    role in a local file): `WINDOWS`, else `REFERENCE` (chunk by chunk, every check)."""
    return Route.WINDOWS if whole and compiled.TUNING.planned else Route.REFERENCE


def choose_chunk(checkable: bool, planned: bool, cells: int, probe: Optional[bool],
                 silent_last: bool, last_probe: Optional[bool]) -> Route:
    """Verify's route for one chunk checked outside a whole-file window (the second table
    of the module doc). `checkable`: its bytes are checked here (a file's own chunk, not
    blocked); `planned`: its pipeline has a `checked` plan that fits the chunk (its metadata
    length as planned, its bytes inside the file); `cells`: its declared cells; `probe`,
    `last_probe`: what the file's probe of the pipeline showed (None: not made yet);
    `silent_last`: the pipeline ends with filters whose forward can fail only on their
    options."""
    if not checkable or not compiled.TUNING.planned:
        return Route.REFERENCE
    if planned and 0 < cells <= compiled.TUNING.window_chunk_max and probe is not False:
        return Route.PROBE if probe is None else Route.CHECKED
    if silent_last and last_probe is not False:
        return Route.LAST_PROBE if last_probe is None else Route.LAST_SKIPPED
    return Route.REFERENCE


def decode(run: Run, out: np.ndarray, workers: Optional[int] = None, pool: Any = None
           ) -> List[int]:
    """Every piece of `run` into `out` by the chosen route, what `Planned` declines by the
    reference; returns the pieces that do not decode (`run.errors` says why). A `clean`
    run stops after the planned path: what it declines (every piece when the route is not
    `CHECKED`) the caller checks chunk by chunk."""
    route = choose(run)
    if run.clean and route is not Route.CHECKED:
        return list(range(len(run.pieces)))
    if route in (Route.REFERENCE, Route.COPY):
        return Reference(workers, pool).decode(run, out)
    left = Planned(workers, pool).decode(run, out)
    if not left or run.clean:
        return left
    sub = run.subset(left)
    bad = Reference(workers, pool).decode(sub, out)
    run.errors.update((left[i], e) for i, e in sub.errors.items())
    run.offsets.update((left[i], o) for i, o in sub.offsets.items())
    return [left[i] for i in bad]


def decode_tile(source, offset: int, end: int, specs: List[FilterSpec], info: DataInfo,
                key: Optional[bytes] = None) -> Tuple[bytes, Optional[bytes]]:
    """(cell bytes, u64 cell offsets relative to the tile or None) of the bare tile at
    `offset` (which must end by `end`): the offsets are what RLE / DICTIONARY rebuild from
    var-sized strings (their offsets tile has 0 chunks). TileError when a chunk does not
    decode (the first one's reason)."""
    table = chunk_table(source, offset, end)
    pieces, at = [], 0
    for i, c in enumerate(table):
        pieces.append(Piece(source, c, at, 0, i))
        at += c.original
    run = Run(specs, info, pieces, key)
    if choose(run, alone=True) is not Route.PLANNED:   # the reference's own result (and errors)
        return join_chunks([decode_chunk(_buffer(source), c, specs, info, key, i)
                            for i, c in enumerate(table)])
    out = np.empty(at, np.uint8)
    bad = decode(run, out, 1)
    if bad:
        raise TileError(run.errors[bad[0]], table[bad[0]].data_offset)
    if not run.offsets:
        return out.tobytes(), None
    parts = []
    for i, pc in enumerate(pieces):
        o = run.offsets.get(i)
        if o is not None:
            parts.append((o + np.uint64(pc.at)) if pc.at and len(o) and int(o[0]) == 0 else o)
    return out.tobytes(), np.concatenate(parts).astype("<u8").tobytes()


def decode_generic_tile(source, offset: int, key: Optional[bytes] = None) -> Tuple[bytes, bool]:
    """(payload, encrypted) of the generic tile at `offset`."""
    head = peek_generic_tile(source, offset)
    if head is None:
        raise TileError(f"generic tile at {offset}: header runs past the end", offset)
    total, psize, persisted, enc, _tsize = head
    if offset + total > source.size:
        raise TileError(f"generic tile at {offset}: {total} bytes declared, "
                        f"{source.size - offset} present", offset)
    pstart = offset + GT_HEAD_SIZE
    specs = generic_specs(source, offset, psize)
    start = pstart + psize
    declared = sum(c[0] for c in chunk_table(source, start, start + persisted))
    if declared > MAX_GENERIC_DECODE:
        raise TileError(f"generic tile at {offset}: its chunks declare {declared} unfiltered "
                        f"bytes, over the {MAX_GENERIC_DECODE}-byte limit: not decoded", offset)
    return decode_tile(source, start, start + persisted, specs, DataInfo(4, 1, "generic"),
                       key)[0], enc


def join_chunks(decoded: List[Tuple[bytes, Optional[bytes]]]) -> Tuple[bytes, Optional[bytes]]:
    """A tile's (cells, offsets) from its chunks' (cells, offsets RLE/DICTIONARY rebuilt)."""
    if len(decoded) == 1:
        return decoded[0]
    parts, offs, total = [], [], 0
    for cells, o in decoded:
        if o is not None:
            arr = np.frombuffer(o, "<u8")
            if total and len(arr) and int(arr[0]) == 0:
                arr = arr + np.uint64(total)  # chunk-relative: make tile-relative
            offs.append(arr.tobytes())
        parts.append(cells)
        total += len(cells)
    return b"".join(parts), (b"".join(offs) if offs else None)

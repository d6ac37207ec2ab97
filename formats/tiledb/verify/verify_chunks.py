"""The chunk checks of everything under a node, in verify order, fast where nothing can be
found: a lazy run of tiles decoded in one pass (`tile_batch.decode_run`), multi-chunk tiles
in windows (`tile_batch.decode_chunks`), the rest chunk by chunk (`chunk_checks`) on a thread
pool. Tiles decoded whole are kept in the tile cache for the cell checks."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from ...accel.unread import unread_metadata
from ...core import compiled
from ...core.node import ERROR, Node
from ...core.verify_tally import tally
from ..parse.decode import Route, choose_chunk, join_chunks
from ..parse.tile import ChunkInfo, TileInfo
from . import tile_cache
from .check_findings import finding
from .chunk_checks import Checked, check_one, silent_from, src_name
from .chunk_walk import Run, Splice, tile_chunks, walk_chunks


def verify_chunks(document, root: Node, items=None, pool=None) -> List[object]:
    """The checks of every chunk under `root`, in `iter_chunks` order. `items` (streamed
    verify): the walk to take instead, with `Splice`s of findings already made. `pool`: a
    thread pool of `thread_count()` threads to use (and leave running) instead of a new one."""
    out: List[object] = []
    key = document.ctx.key
    keep = _TileKeeper(tile_cache.current())

    def take(ci: ChunkInfo, tile: Optional[TileInfo], r: Optional[Checked],
             err: Optional[Exception]) -> None:
        if err is not None:   # what guard says
            out.append(finding(ci.source, 0, ERROR, f"check check_one could not finish: "
                                                    f"{type(err).__name__}: {err}"))
            keep.add(ci, tile, None)
            return
        assert r is not None
        if r.tallied is not None:
            tally().tile(*r.tallied)
        out.extend(r.findings)
        keep.add(ci, tile, r.decoded)

    spliced = items is not None
    walk = _batched(items if spliced else walk_chunks(root, runs=True))
    threads = pool is not None or not spliced   # a spliced walk: threads only when given
    for got in _checked(walk, key, thread_count() if threads else 1, pool if threads else None):
        if isinstance(got, Splice):
            out.extend(got.found)
        else:
            take(*got)
    keep.flush()
    return out


def _batched(items) -> Iterable[Union[Tuple[ChunkInfo, Optional[TileInfo]], "Splice"]]:
    """The chunks of `walk_chunks(root, runs=True)` left to the per-chunk path: the tiles of a lazy
    tiles list that decode in one pass (tile_batch: no finding possible) are tallied here."""
    from . import tile_batch

    for item in items:
        if not isinstance(item, Run):
            yield item
            continue
        run, node = item.run, item.node
        name = getattr(run.source, "name", str(run.source))
        cache = tile_cache.current()
        for w in tile_batch.decode_run(run.source, run.offsets, run.ends, run.role, probe=True):
            done = len(w.cells) - w.cells.count(None)
            if done:
                tally().batch(name, done, w.stored)
            if cache is not None and run.role.specs:   # kept for the cell checks, as
                for k, cells in enumerate(w.cells):      # _TileKeeper keeps the others
                    if cells is not None and len(cells) >= compiled.TUNING.keep_min:
                        cache.put(cache.key(name, int(run.offsets[w.first + k]), run.role.specs,
                                            run.role.info), (cells, None))
            for k, cells in enumerate(w.cells):
                if cells is None:
                    yield from tile_chunks(node, run, w.first + k)


def thread_count() -> int:
    return compiled.TUNING.workers


def _run_one(ci: ChunkInfo, key, tile, skip_from: Optional[int] = None
             ) -> Tuple[Optional[Checked], Optional[Exception]]:
    try:
        return check_one(ci, key, tile, skip_from), None
    except Exception as e:  # noqa: BLE001 - verify never raises
        return None, e


Result = Tuple[ChunkInfo, Optional[TileInfo], Optional[Checked], Optional[Exception]]


def _checked(items, key, workers: int, shared=None) -> Iterable[Union[Splice, Result]]:
    """Each chunk of `items` with its check, in order (`Splice`s in their place), by the
    route `decode.choose_chunk` gives it: `CHECKED` chunks are decoded in windows, one
    slice of a window per thread (`_FastChunks`); the rest, and what a window leaves, are
    checked one by one, on the pool in batches (`_slow`). One pool for the whole walk
    (`shared`, when given: the caller's, left running)."""
    from concurrent.futures import ThreadPoolExecutor

    pool = None if workers <= 1 else shared if shared is not None else \
        ThreadPoolExecutor(workers)
    fast = _FastChunks(key, pool, workers)
    slow: list = []
    size = 0
    try:
        for item in items:
            if not isinstance(item, Splice):
                ci, tile = item
                route = fast.route(ci)
                if route in (Route.CHECKED, Route.PROBE):
                    if slow:
                        yield from _slow(slow, key, pool, workers)
                        slow, size = [], 0
                    if route is Route.CHECKED:
                        yield from fast.add(ci, tile)
                    else:   # the first chunk of its file: checked in full first
                        yield from fast.flush()
                        r, err = _run_one(ci, key, tile)
                        fast.probed(ci, r, err)
                        yield ci, tile, r, err
                    continue
                size += ci.filtered_length + ci.original_length
                if route is Route.LAST_PROBE:   # the file's first chunk of it: in full, first
                    yield from fast.flush()
                    yield from _slow(slow, key, pool, workers)
                    slow, size = [], 0
                    r, err = _run_one(ci, key, tile)
                    fast.last_probed(ci, r, err)
                    yield ci, tile, r, err
                    continue
                item = (ci, tile, silent_from(ci.specs) if route is Route.LAST_SKIPPED else None)
            yield from fast.flush()
            slow.append(item)
            if len(slow) >= 8 * compiled.TUNING.check_batch or \
                    size >= 8 * compiled.TUNING.check_batch_bytes:
                yield from _slow(slow, key, pool, workers)
                slow, size = [], 0
        yield from fast.flush()
        yield from _slow(slow, key, pool, workers)
    finally:
        if pool is not None and pool is not shared:
            pool.shutdown()


class _FastChunks:
    """Chunks of one file and pipeline gathered into a window (up to `TUNING.window`
    stored bytes, `TUNING.window_cells` decoded), then decoded together by
    `decode.Planned` (a `clean` run); each comes out clean (no finding, its cells) or
    through the per-chunk checks, which say what is wrong. Keeps what each file's probes
    showed (`decode.choose_chunk` reads them)."""

    def __init__(self, key, pool, workers: int):
        self.key, self.pool, self.workers = key, pool, workers
        self.plans: Dict[Tuple[int, int], Tuple[Any, int, int, bool, Any, Any]] = {}
        self.pipelines: Dict[Tuple[str, str], int] = {}   # (specs, info) by value -> number
        self.probes: Dict[Tuple[str, int], bool] = {}   # (file name, pipeline) -> clean
        self.lasts: Dict[Tuple[str, int], bool] = {}    # -> its last codec's forward is ok
        self.items: List[Tuple[ChunkInfo, Optional[TileInfo]]] = []
        self.lo = self.hi = self.cells = 0
        self.group: Optional[Tuple[int, int]] = None

    def _plan(self, ci: ChunkInfo) -> Tuple[Any, int, int, bool]:
        """(plan or None, its metadata length, the pipeline's number, whether it ends with
        filters whose forward can fail only on their options): by value, as every generic
        tile (fragment metadata sections) has a pipeline object of its own."""
        k = (id(ci.specs), id(ci.info))
        got = self.plans.get(k)
        if got is None:
            from .tile_batch import chunk_plan, plan_metadata

            p = chunk_plan(ci.specs, ci.info)
            number = self.pipelines.setdefault((repr(ci.specs), repr(ci.info)),
                                               len(self.pipelines))
            # the objects are kept: an id is not reused while this walk runs
            got = self.plans[k] = (p, plan_metadata(p) if p is not None else 0, number,
                                   silent_from(ci.specs) < len(ci.specs), ci.specs, ci.info)
        return got[0], got[1], got[2], got[3]

    def route(self, ci: ChunkInfo) -> Route:
        """The chunk's route (`decode.choose_chunk`), from its facts and its file's probes."""
        if ci.blocked is not None or not hasattr(ci.source, "path"):
            return choose_chunk(False, False, 0, None, False, None)
        p, mdl, number, silent_last = self._plan(ci)
        planned = p is not None and unread_metadata(ci.metadata_length, mdl) == 0 and \
            ci.metadata_offset >= 0 and \
            ci.data_offset + ci.filtered_length <= getattr(ci.source, "size", 0)
        at = (src_name(ci), number)
        return choose_chunk(True, planned, ci.original_length, self.probes.get(at),
                            silent_last, self.lasts.get(at))

    def last_probed(self, ci: ChunkInfo, r: Optional[Checked],
                    err: Optional[Exception]) -> None:
        """What the first chunk showed (nothing when its forward checks did not run: the
        next chunk is the probe)."""
        ok = r.last_ok if err is None and r is not None else None
        if ok is not None:
            self.lasts[(src_name(ci), self._plan(ci)[2])] = ok

    def probed(self, ci: ChunkInfo, r: Optional[Checked], err: Optional[Exception]) -> None:
        """The file's first chunk checked in full: clean and decoded, its other chunks come
        here; else (a forward that raises, damage) every one of them is checked in full."""
        self.probes[(src_name(ci), self._plan(ci)[2])] = \
            err is None and r is not None and not r.findings and r.decoded is not None

    def add(self, ci: ChunkInfo, tile: Optional[TileInfo]) -> Iterable[Result]:
        group = (id(ci.source), self._plan(ci)[2])
        start, end = ci.metadata_offset, ci.data_offset + ci.filtered_length
        lo, hi = (min(self.lo, start), max(self.hi, end)) if self.items else (start, end)
        if self.items and (group != self.group or hi - lo > compiled.TUNING.window or
                           self.cells + ci.original_length > compiled.TUNING.window_cells):
            yield from self.flush()
            lo, hi = start, end
        self.group, self.lo, self.hi = group, lo, hi
        self.items.append((ci, tile))
        self.cells += ci.original_length

    def flush(self) -> Iterable[Result]:
        items, lo, hi = self.items, self.lo, self.hi
        self.items, self.cells, self.group = [], 0, None
        if not items:
            return
        import numpy as np

        from ..parse.decode import Piece, Run, decode
        from ..parse.rawtile import Chunk
        from .tile_batch import chunk_plan

        first = items[0][0]
        src = first.source
        view = src.view(lo, hi - lo)   # what a file that shrank lacks, the chunks it cuts
        pieces = []                    # are declined and checked in full
        at = 0
        for ci, _t in items:
            pieces.append(Piece(view, Chunk(ci.original_length, ci.filtered_length,
                                            ci.metadata_offset - lo, ci.metadata_length,
                                            ci.data_offset - lo), at))
            at += ci.original_length
        out = np.empty(at, np.uint8)
        run = Run(first.specs, first.info, pieces, self.key, checked=chunk_plan)
        left = set(decode(run, out, self.workers, self.pool))
        done = stored = 0
        results: List[Result] = []
        for (ci, tile), pc in zip(items, pieces):
            n, pos = pc.chunk.original, pc.at
            if len(results) in left:
                results.append((ci, tile) + _run_one(ci, self.key, tile))
                continue
            r = Checked()
            r.decoded = (out[pos:pos + n], None)   # type: ignore[assignment]
            results.append((ci, tile, r, None))
            done += 1
            stored += ci.metadata_length + ci.filtered_length
        if done:
            tally().batch(src_name(first), done, stored)
        release = getattr(src, "release", None)
        if release is not None:   # the stored pages read once: not kept resident
            release(lo, hi - lo)
        self.lo = self.hi = 0
        yield from results


def _slow(items: list, key, pool, workers: int) -> Iterable[Union[Splice, Result]]:
    """The per-chunk checks of `items` in order: in this thread, or on the pool (batches of
    `TUNING.check_batch` chunks or `check_batch_bytes` bytes, a few ahead; batches of tiny chunks run
    here: Python-bound, threads would only fight over the GIL)."""
    from collections import deque

    if pool is None:
        for item in items:
            yield item if isinstance(item, Splice) else (item[0], item[1]) + _run_one(
                item[0], key, item[1], item[2])
        return

    def run(batch):
        return [_run_one(ci, key, tile, skip) for ci, tile, skip in batch]

    def batches():
        batch: list = []
        size = 0
        for item in items:
            if isinstance(item, Splice):
                if batch:
                    yield batch, size
                    batch, size = [], 0
                yield [item], -1
                continue
            ci = item[0]
            batch.append(item)
            size += ci.filtered_length + ci.original_length
            if len(batch) >= compiled.TUNING.check_batch or \
                    size >= compiled.TUNING.check_batch_bytes:
                yield batch, size
                batch, size = [], 0
        if batch:
            yield batch, size

    def done(batch, results):
        for (ci, tile, _skip), (r, err) in zip(batch, results):
            yield ci, tile, r, err

    pending: deque = deque()
    for batch, size in batches():
        if size < 0 or size < compiled.TUNING.check_thread_min:   # a Splice, or tiny chunks: here, in order
            while pending:
                b, fut = pending.popleft()
                yield from done(b, fut.result())
            if size < 0:
                yield batch[0]
            else:
                yield from done(batch, run(batch))
            continue
        pending.append((batch, pool.submit(run, batch)))
        if len(pending) > 2 * workers:
            b, fut = pending.popleft()
            yield from done(b, fut.result())
    while pending:
        b, fut = pending.popleft()
        yield from done(b, fut.result())


class _TileKeeper:
    """Puts each tile whose chunks all reversed cleanly into the verify's tile cache (the
    chunks of a tile come one after the other)."""

    def __init__(self, cache: Optional[tile_cache.TileCache]):
        self.cache = cache
        self.tile: Optional[TileInfo] = None
        self.parts: Optional[list] = []

    def add(self, ci: ChunkInfo, tile: Optional[TileInfo], decoded) -> None:
        if self.cache is None:
            return
        if tile is not self.tile:
            self.flush()
            self.tile, self.parts = tile, []
        if tile is None or self.parts is None:
            return
        if decoded is None or ci.index != len(self.parts):
            self.parts = None   # not whole: the cell checks decode it (and skip it) themselves
            return
        self.parts.append(decoded)

    def flush(self) -> None:
        t, parts = self.tile, self.parts
        self.tile, self.parts = None, []
        if self.cache is None or t is None or not parts or len(parts) != len(t.chunks) or \
                not t.specs or t.source is None:
            return
        name = getattr(t.source, "name", None)
        if name is not None:
            self.cache.put(self.cache.key(name, t.offset, t.specs, t.info),
                           _adjacent(parts) or join_chunks(parts))


def _adjacent(parts: list) -> Optional[Tuple[Any, None]]:
    """The tile's cells as one slice when its chunks were decoded side by side into one
    array (`_FastChunks`): no copy; else None."""
    if len(parts) < 2 or any(o is not None or not hasattr(c, "base") for c, o in parts):
        return None
    import numpy as np

    first = parts[0][0]
    base, at = first.base, first.ctypes.data
    for c, _o in parts:
        if c.base is not base or c.ctypes.data != at:
            return None
        at += len(c)
    whole = np.asarray(base)
    start = first.ctypes.data - whole.ctypes.data
    return whole[start:start + (at - first.ctypes.data)], None

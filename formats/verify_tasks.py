"""`verify --workers N` / `--dask ADDRESS`: the expensive part of verify as independent tasks.

What costs is decoding: every chunk of every TileDB tile, every Zarr chunk file, and the
TileDB cell checks, which need the same tiles' cells. Those are split into tasks; the
rest — the tree's own diagnostics, fragment and commit bookkeeping, formats with nothing to
split (SCDL) — runs in the calling process, which then puts the tasks' findings in the
places the single-process verify gives them: the same findings, in the same order.

TileDB work is named by data-level coordinates (formats/tiledb/verify_units.py): a fragment
and its data files by name. A worker opens the array's model only (schemas and fragment
list, no annotation tree), reads those fragments' metadata and decodes those files: the
chunk checks of each file, then the fragment's cell checks on the tiles just decoded (kept
in a tile cache, as one process does). Tasks are sized by stored bytes (at least
MIN_TASK_BYTES, about TASKS_PER_WORKER per worker), so decoding dominates a task's cost; a
fragment bigger than a worker's share is split by data file, and a big data file into runs
of its tiles (its cell checks then decode its tiles again, in a task of their own).
Whatever a worker cannot do (a fragment whose metadata it cannot read) is done by the
caller, so a worker never changes the result.

Zarr chunks are named by their index path in the annotation tree (child indices from the
root): the worker opens the store's tree (once per process) and finds them there.

A task carries the dataset's path or URL, opens the dataset in the worker (once per worker
process), and returns its findings as plain data (`Finding`, a frozen dataclass). An
encrypted dataset's key never travels in a task (tasks cross the network and a Dask worker
may spill them to disk): a task names the key (`context.key_name`, a one-way digest), the
executor hands the key to its own processes once (`Executor.share_key`: a pipe to a local
worker), and a Dask worker takes it from its own environment ($ARRAYSCOPE_KEY, set by
whoever starts the workers); a worker without it leaves its part to the caller.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .context import key_name
from .executors import Executor
from .findings import CHECK_CRASHED, Finding
from .node import OK, Node
from .status import Status

IndexPath = Tuple[int, ...]
TASKS_PER_WORKER = 4          # enough to even out uneven tasks, few enough to keep overhead low
MIN_TASK_BYTES = 16 << 20     # stored bytes: below this a task's overhead is not small

TILEDB_FRAGMENTS = "tiledb-fragments"
ZARR_CHUNKS = "zarr-chunks"
Stamp = Tuple[str, int, int]   # (file name in the dataset, size, local mtime or 0)


@dataclass(frozen=True)
class FragmentWork:
    """Part of one TileDB fragment: the chunk checks of some of its data files (by file
    name) and, with `cells`, its cell checks."""

    fragment: str
    files: Tuple[str, ...]
    cells: bool
    stamps: Tuple[Stamp, ...] = ()   # of the files read, as the caller saw them
    part: Optional[Tuple[int, int]] = None   # pieces a..b of its one file (verify_units.pieces)


@dataclass(frozen=True)
class Task:
    """Units of one kind: Zarr chunks (index paths) or TileDB fragment parts."""

    path: str
    kind: str
    units: Tuple[Any, ...]
    key_id: Optional[str] = None   # context.key_name of the key: the key stays out of the task
    as_format: Optional[str] = None
    stamp: str = ""    # fingerprint of the dataset the units were listed from


def fingerprint(document) -> str:
    """Names, sizes (and, for local files, modification times) of the document's file
    sources: a worker whose copy differs has a different dataset (or a stale one)."""
    import hashlib

    h = hashlib.sha1()
    for src in sorted(document.sources, key=lambda s: s.name):
        _name, size, mtime = file_stamp(src)
        h.update(f"{src.name}\0{size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def file_stamp(src) -> Stamp:
    """What says a worker reads the same file as the caller: its size and, for a local
    file, its modification time."""
    mtime = 0
    path = getattr(src, "path", None)
    if path and not getattr(src, "remote", False):
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            mtime = -1
    return (getattr(src, "name", ""), int(getattr(src, "size", 0) or 0), mtime)


# ---- listing the units -----------------------------------------------------------------------
def zarr_units(root: Node) -> List[IndexPath]:
    """Index paths of the chunks verify decodes, in `Node.walk` order."""
    out: List[IndexPath] = []
    stack: List[Tuple[IndexPath, Node]] = [((), root)]
    while stack:
        path, n = stack.pop()
        if n.name == "decoded" and n.pending:
            out.append(path)
        if n.is_lazy:
            continue
        kids = list(n.iter_children())
        stack.extend((path + (i,), kids[i]) for i in reversed(range(len(kids))))
    return out


def resolve(root: Node, path: IndexPath) -> Optional[Node]:
    node = root
    for i in path:
        if not 0 <= i < node.child_count():
            return None
        node = node.child(i)
    return node


# ---- the worker side -------------------------------------------------------------------------
_OPEN: Dict[Tuple[str, Optional[str], Optional[str], str, str], Any] = {}


_KEYS: Dict[str, bytes] = {}   # key_name -> key, in this process only


def remember_key(key: bytes) -> None:
    """Make `key` available to the tasks run in this process (`Executor.share_key`)."""
    _KEYS[key_name(key)] = key


def key_named(key_id: Optional[str]) -> Optional[bytes]:
    """The key a task names: handed to this process, or in its $ARRAYSCOPE_KEY."""
    if not key_id:
        return None
    if key_id not in _KEYS:
        from .context import load_key

        env = load_key()
        if env is not None:
            remember_key(env)
    if key_id not in _KEYS:
        raise RuntimeError("this worker has no key for the encrypted dataset: set "
                           "ARRAYSCOPE_KEY in the environment of the processes that run "
                           "the workers")
    return _KEYS[key_id]


def _document(task: Task):
    """The worker's document of the task's dataset, opened once per process (and again
    when the dataset changed: a long-lived cluster must not check a stale copy). TileDB:
    the model only (no tree); Zarr: the tree the caller listed the chunks from."""
    k = (task.path, task.key_id, task.as_format, task.stamp, task.kind)
    doc = _OPEN.get(k)
    if doc is None:
        from . import open as open_dataset

        key = key_named(task.key_id)
        for old in _OPEN.values():
            old.close()
        _OPEN.clear()
        if task.kind == TILEDB_FRAGMENTS:
            doc = open_dataset(task.path, key=key, as_format=task.as_format, tree=False)
        else:
            doc = open_dataset(task.path, key=key, as_format=task.as_format)
            from .remote import build_read_deferred

            build_read_deferred(doc.root)   # the same tree (and index paths) as the caller's
            if task.stamp and fingerprint(doc) != task.stamp:
                doc.close()
                raise RuntimeError("the dataset this worker reads differs from the one being "
                                   "verified (changed meanwhile, or another copy)")
        _OPEN[k] = doc
    return doc


def _crash(task: Task, message: str) -> Finding:
    return Finding(status=Status.ERROR, code=CHECK_CRASHED, source="", offset=0, node="",
                   message=f"verify task ({len(task.units)} unit(s) of {task.kind}) could not "
                           f"finish: {message}")


# A TileDB unit's result: the findings of each of its files (in `files` order) and of its
# cell checks (None without `cells`). Not done here: None when the data stopped this worker
# (the caller, checking it itself, reports what is wrong), a reason when the worker could
# not do its part (the dataset does not open there, its files differ): the caller checks it
# itself and says so.
FragmentResult = Any


def run_task(task: Task) -> Any:
    """Check every unit of `task`, as plain data; never raises. Zarr: the findings, in unit
    order; TileDB: one `FragmentResult` per unit."""
    try:
        document = _document(task)
    except Exception as e:  # noqa: BLE001 - a worker reports, never raises
        why = f"cannot open {task.path}: {type(e).__name__}: {e}"
        if task.kind == TILEDB_FRAGMENTS:
            return [why for _u in task.units]
        return [_crash(task, why)]
    if task.kind == TILEDB_FRAGMENTS:
        return [_fragment_work(document, u) for u in task.units]
    if task.kind != ZARR_CHUNKS or document.root is None:
        return [_crash(task, f"unknown kind of unit {task.kind!r}")]
    from .verify import finding
    from .zarr import verify_chunk

    out: List[Finding] = []
    for path in task.units:
        node = resolve(document.root, path)
        if node is None:
            out.append(_crash(task, f"no node at {path}: the dataset changed while it was verified"))
            continue
        for n in verify_chunk(node):
            if n.status != OK:
                out.append(finding(n, document))
    return out


def _fragment_work(document, work: FragmentWork) -> FragmentResult:
    """The checks of `work` in this worker, the chunk and cell checks sharing a tile cache
    (as in `checks.verify_array`)."""
    from .tiledb import tile_cache
    from .tiledb.verify_units import FragmentFiles

    token = tile_cache.use(tile_cache.TileCache() if work.cells and work.files else None)
    try:
        part = FragmentFiles(document, work.fragment)
        files = tuple(part.check_file(name, work.part) for name in work.files)
        cells = part.check_cells() if work.cells else None
    except Exception:  # noqa: BLE001 - what stops a worker here, the caller checks itself
        return None
    finally:
        tile_cache.reset(token)
    for name, size, mtime in work.stamps:
        src = document.source_by_name(name)
        if src is not None and file_stamp(src) != (name, size, mtime):
            return (f"{name} is not the caller's file here ({file_stamp(src)[1]} bytes, the "
                    f"caller's {size}): another copy, or changed meanwhile")
    return files, cells


def _here() -> Tuple[str, int]:
    import socket

    return socket.gethostname(), os.getpid()


def run_task_counted(task: Task) -> Tuple[Any, int, int, Tuple[str, int], Tuple[int, int]]:
    """`run_task`, with the requests and bytes it transferred, the process it ran in and
    the (tiles, stored bytes) it checked: a worker's transfers and tally are not in the
    caller's totals unless sent back."""
    from .remote import counting
    from .verify import _TALLY, Tally

    tal = Tally()
    token = _TALLY.set(tal)
    try:
        with counting() as stats:
            found = run_task(task)
    finally:
        _TALLY.reset(token)
    requests, nbytes = stats.snapshot()
    return found, requests, nbytes, _here(), (tal.tiles, tal.nbytes)


# ---- the calling side ------------------------------------------------------------------------
def split(units: Sequence[Any], workers: int) -> List[Tuple[Any, ...]]:
    """Consecutive runs of units, about TASKS_PER_WORKER per worker."""
    if not units:
        return []
    size = max(1, -(-len(units) // (max(1, workers) * TASKS_PER_WORKER)))
    return [tuple(units[i:i + size]) for i in range(0, len(units), size)]


def plan(document, workers: int) -> Tuple[str, List[Task]]:
    """(kind, tasks) for the document's format; kind "" when there is nothing to split."""
    root = document.root
    if root is None:
        return "", []
    if document.format == "tiledb":
        from .tiledb.group_walk import is_group_document
        from .tiledb.verify_units import slots

        if is_group_document(document):
            return "", []   # a group verifies member by member in this process (verify_group)
        kind, runs = TILEDB_FRAGMENTS, fragment_runs(document, slots(document, root), workers)
    elif document.format == "zarr":
        kind, runs = ZARR_CHUNKS, split(zarr_units(root), workers)
    else:
        return "", []
    source = getattr(document, "source_path", None) or document.path
    stamp = fingerprint(document)
    key = document.ctx.key
    key_id = key_name(key) if key else None
    return kind, [Task(source, kind, run, key_id, document.format, stamp) for run in runs]


def fragment_runs(document, found, workers: int) -> List[Tuple[FragmentWork, ...]]:
    """The data files of `found` (verify_units.slots) as tasks of whole fragments (files and
    cell checks together, the tiles decoded once), about TASKS_PER_WORKER per worker and at
    least MIN_TASK_BYTES stored each; a fragment over a worker's share is split by file and
    its big files into runs of tiles, its cell checks a part of their own."""
    files: Dict[str, List[Tuple[str, Stamp]]] = {}
    nodes: Dict[Tuple[str, str], Node] = {}
    meta: Dict[str, Tuple[Stamp, ...]] = {}
    for where, node in found:
        if where is not None and node.source is not None:
            frag, name = where
            files.setdefault(frag, []).append((name, file_stamp(node.source)))
            nodes[where] = node
            if frag not in meta:
                folder = document.source_name(node.source).rpartition("/")[0]
                src = document.source_by_name(f"{folder}/__fragment_metadata.tdb")
                meta[frag] = (file_stamp(src),) if src is not None else ()
    if not files:
        return []
    size = {frag: sum(s[1] for _n, s in fs) for frag, fs in files.items()}
    total = sum(size.values())
    workers = max(1, workers)
    target = max(MIN_TASK_BYTES, total // (workers * TASKS_PER_WORKER))
    share = total / workers
    pieces: List[Tuple[int, FragmentWork]] = []   # (stored bytes, work)
    for frag, fs in files.items():
        base = meta[frag]
        every = base + tuple(s for _n, s in fs)
        if workers > 1 and size[frag] > share:
            # the cell checks decode every tile again: the biggest part, given out first
            pieces.append((max(size[frag], target), FragmentWork(frag, (), True, every)))
            for name, st in fs:
                for part, nbytes in _file_parts(nodes[(frag, name)], st[1], target):
                    pieces.append((nbytes, FragmentWork(frag, (name,), False, base + (st,),
                                                        part)))
        else:
            pieces.append((size[frag], FragmentWork(frag, tuple(n for n, _s in fs), True, every)))
    runs: List[Tuple[FragmentWork, ...]] = []
    run: List[FragmentWork] = []
    held = 0
    for nbytes, work in pieces:
        run.append(work)
        held += nbytes
        if held >= target:
            runs.append(tuple(run))
            run, held = [], 0
    if run:
        runs.append(tuple(run))
    return runs


def _file_parts(node: Node, nbytes: int,
                target: int) -> List[Tuple[Optional[Tuple[int, int]], int]]:
    """(pieces a..b, stored bytes) of the data file, about `target` bytes each; one part
    (None: the whole file) when it is not bigger or cannot be split."""
    from .tiledb.verify_units import piece_size, pieces

    found = pieces(node) if nbytes > target else []
    if len(found) < 2:
        return [(None, nbytes)]
    parts: List[Tuple[Optional[Tuple[int, int]], int]] = []
    a, held = 0, 0
    for k, p in enumerate(found):
        held += piece_size(p)
        if held >= target:
            parts.append(((a, k + 1), held))
            a, held = k + 1, 0
    if a < len(found):
        parts.append(((a, len(found)), held))
    return parts if len(parts) > 1 else [(None, nbytes)]


def verify_with(document, executor: Executor) -> List[Finding]:
    """`formats.verify.verify(document)`, with the decoding spread over `executor`:
    the same findings in the same order."""
    from . import registry
    from .remote import build_read_deferred
    from .verify import finding, unique

    build_read_deferred(document.root)
    head = [finding(n, document) for n in document.diagnostics() if n.status != OK]
    kind, tasks = plan(document, executor.workers)
    if not kind:
        plugin = registry.plugin_named(document.format) if document.format else None
        extra = getattr(plugin, "verify", None)
        rest = _guarded(lambda: extra(document)) if extra is not None else []
        return unique(head + [r if isinstance(r, Finding) else finding(r, document)
                              for r in rest if getattr(r, "status", OK) != OK])
    if document.ctx.key:
        executor.share_key(document.ctx.key)
    if kind == ZARR_CHUNKS:
        from .zarr import tally_chunks

        tally_chunks(document)   # as a single-process verify counts them
    results = _run(executor, tasks)
    if kind == TILEDB_FRAGMENTS:
        body = _guarded(lambda: _tiledb_findings(document, tasks, results))
    else:
        body = [f for part in results for f in part]
    return unique(head + [r if isinstance(r, Finding) else finding(r, document)
                          for r in body if getattr(r, "status", OK) != OK])


def _tiledb_findings(document, tasks: List[Task], results: List[Any]) -> List[Any]:
    """`checks.verify_array`'s findings in its order: the chunk checks slot by slot (a data
    file a worker checked, or the caller's own), then the bookkeeping with the workers'
    cell checks. What a worker did not do is done here."""
    from .tiledb.checks import verify_chunks
    from .tiledb.verify_units import bookkeeping_with, slots

    parts: Dict[Tuple[str, str], Dict[int, Optional[List[Finding]]]] = {}  # file -> a -> found
    cells: Dict[str, List[Finding]] = {}
    missed: List[str] = []   # why workers could not do their part
    for task, result in zip(tasks, results):
        if not isinstance(result, list) or len(result) != len(task.units):
            result = [str(result)] * len(task.units)
        for work, got in zip(task.units, result):
            a = work.part[0] if work.part is not None else 0
            if isinstance(got, str):
                missed.append(got)
            if not isinstance(got, tuple):
                for name in work.files:
                    parts.setdefault((work.fragment, name), {})[a] = None
                continue
            files, cell = got
            for name, found in zip(work.files, files):
                parts.setdefault((work.fragment, name), {})[a] = found
            if cell is not None:
                cells[work.fragment] = cell
    by_file: Dict[Tuple[str, str], List[Finding]] = {}
    for file_key, got_parts in parts.items():
        if all(f is not None for f in got_parts.values()):   # else: this file, here
            by_file[file_key] = [f for a in sorted(got_parts) for f in got_parts[a] or ()]
    out: List[Any] = []
    if missed:
        out.append(Finding(Status.WARNING, CHECK_CRASHED, "", 0, "",
                           f"{len(missed)} verify task part(s) could not run on the workers and "
                           f"were checked in this process: {missed[0]}",
                           "check that every worker reads the same dataset (path, "
                           "credentials)"))
    for where, node in slots(document, document.root):
        got = by_file.get(where) if where is not None else None
        out.extend(got if got is not None else verify_chunks(document, node))
    return out + bookkeeping_with(document, cells)


def _run(executor: Executor, tasks: List[Task]) -> List[Any]:
    """The tasks' results in task order (a lost cluster: each task's result is the error)."""
    from .remote import TOTAL
    from .verify import tally

    try:
        results = executor.map(run_task_counted, tasks)
    except Exception as e:  # noqa: BLE001 - a lost worker is a finding, not a traceback
        why = f"verify workers failed: {type(e).__name__}: {e}"
        if tasks and tasks[0].kind == TILEDB_FRAGMENTS:
            return [[why] * len(t.units) for t in tasks]   # the caller checks them itself
        return [[Finding(status=Status.ERROR, code=CHECK_CRASHED, source="", offset=0, node="",
                         message=why)] for _t in tasks]
    here = _here()
    tal = tally()
    for _found, requests, nbytes, where, (tiles, stored) in results:
        if where != here:   # in this process (threads, in-process) TOTAL has them already
            TOTAL.add(requests, nbytes)
        tal.tiles += tiles
        tal.nbytes += stored
    return [found for found, _r, _b, _w, _t in results]


def _guarded(fn: Callable[[], List[Any]]) -> List[Any]:
    try:
        return list(fn())
    except Exception as e:  # noqa: BLE001 - verify reports, never raises
        return [Finding(status=Status.ERROR, code=CHECK_CRASHED, source="", offset=0, node="verify",
                        message=f"format checks could not finish: {type(e).__name__}: {e}")]

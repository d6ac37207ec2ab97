"""`verify --workers N` / `--dask ADDRESS`: the expensive part of verify as independent tasks.

What costs is decoding: every chunk of every TileDB tile, every Zarr chunk file. Those are
the *units*: a TileDB tile (its chunks, reversed and re-applied forward) or a Zarr chunk,
each named by its index path in the annotation tree (child indices from the root), which
is the same in every process that opens the same dataset. The units are listed in exactly
the order the single-process verify visits them (`checks.iter_chunks`, `Node.walk`); a
task is a run of consecutive units (the tiles of one data file — fragment x field — or a
tile range of it; small files batched), so concatenating the tasks' findings in task order
is the single-process order. Everything cheap — the tree's own diagnostics, fragment and
commit bookkeeping, formats with nothing to split (SCDL) — runs in the calling process.

A task carries the dataset's path or URL (and the key, when one was given: a Dask cluster
receives it with the task), opens the dataset in the worker (once per worker process),
and returns its findings as plain data (`Finding`, a frozen dataclass).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .executors import Executor
from .findings import CHECK_CRASHED, Finding
from .node import OK, Node

IndexPath = Tuple[int, ...]
TASKS_PER_WORKER = 4          # enough to even out uneven tiles, few enough to keep overhead low

TILEDB_TILES = "tiledb-tiles"
ZARR_CHUNKS = "zarr-chunks"


@dataclass(frozen=True)
class Task:
    """A run of units of one kind, in verify order."""

    path: str
    kind: str
    units: Tuple[IndexPath, ...]
    key: Optional[bytes] = field(default=None, repr=False)
    as_format: Optional[str] = None
    stamp: str = ""    # fingerprint of the dataset the units were listed from


def fingerprint(document) -> str:
    """Names, sizes (and, for local files, modification times) of the document's file
    sources: a worker whose copy differs has a different dataset (or a stale one)."""
    import hashlib
    import os

    h = hashlib.sha1()
    for src in sorted(document.sources, key=lambda s: s.name):
        mtime = 0
        path = getattr(src, "path", None)
        if path and not getattr(src, "remote", False):
            try:
                mtime = os.stat(path).st_mtime_ns
            except OSError:
                mtime = -1
        h.update(f"{src.name}\0{src.size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


# ---- listing the units ---------------------------------------------------------------------
def tiledb_units(root: Node) -> List[IndexPath]:
    """Index paths of the tiles (and chunks outside tiles) under `root`, in the order
    `formats.tiledb.checks.iter_chunks` visits their chunks (the same stack discipline;
    a tile's chunks come out together, so a tile is one unit). Lazy tiles are not built."""
    from .tiledb.tile import ChunkInfo

    out: List[IndexPath] = []
    stack: List[Tuple[IndexPath, Node]] = [((), root)]
    while stack:
        path, n = stack.pop()
        if isinstance(n.data, ChunkInfo) or n.kind == "tile":
            out.append(path)
            continue
        if n.is_lazy:
            count = n.child_count()
            if count and n.child(0).kind == "tile":
                out.extend(path + (i,) for i in range(count))  # tiles in file order
            continue
        stack.extend((path + (i,), c) for i, c in enumerate(n.iter_children()))
    return out


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
_OPEN: Dict[Tuple[str, Optional[bytes], Optional[str], str], Any] = {}


def _document(task: Task):
    """The worker's document of the task's dataset, opened once per process (and again
    when the dataset changed: a long-lived cluster must not check a stale copy)."""
    k = (task.path, task.key, task.as_format, task.stamp)
    doc = _OPEN.get(k)
    if doc is None:
        from . import open as open_dataset

        for old in _OPEN.values():
            old.close()
        _OPEN.clear()
        doc = open_dataset(task.path, key=task.key, as_format=task.as_format)
        from .remote import build_read_deferred

        build_read_deferred(doc.root)   # the same tree (and index paths) as the caller's
        if task.stamp and fingerprint(doc) != task.stamp:
            doc.close()
            raise RuntimeError("the dataset this worker reads differs from the one being "
                               "verified (changed meanwhile, or another copy)")
        _OPEN[k] = doc
    return doc


def _crash(task: Task, message: str) -> Finding:
    return Finding(status="error", code=CHECK_CRASHED, source="", offset=0, node="",
                   message=f"verify task ({len(task.units)} unit(s) of {task.kind}) could not "
                           f"finish: {message}")


def run_task(task: Task) -> List[Finding]:
    """Check every unit of `task`; findings as plain data, in unit order. Never raises."""
    from .verify import finding

    try:
        document = _document(task)
    except Exception as e:  # noqa: BLE001 - a worker reports, never raises
        return [_crash(task, f"cannot open {task.path}: {type(e).__name__}: {e}")]
    check = _UNIT_CHECKS.get(task.kind)
    if check is None or document.root is None:
        return [_crash(task, f"unknown kind of unit {task.kind!r}")]
    out: List[Finding] = []
    for path in task.units:
        node = resolve(document.root, path)
        if node is None:
            out.append(_crash(task, f"no node at {path}: the dataset changed while it was verified"))
            continue
        for n in check(document, node):
            if isinstance(n, Finding):
                out.append(n)
            elif n.status != OK:
                out.append(finding(n, document))
    return out


def _here() -> Tuple[str, int]:
    import os
    import socket

    return socket.gethostname(), os.getpid()


def run_task_counted(task: Task) -> Tuple[List[Finding], int, int, Tuple[str, int]]:
    """`run_task`, with the requests and bytes it transferred and the process it ran in:
    a worker's transfers are not in the caller's `--stats` totals unless sent back."""
    from .remote import counting

    with counting() as stats:
        found = run_task(task)
    requests, nbytes = stats.snapshot()
    return found, requests, nbytes, _here()


def _check_tiledb(document, node: Node) -> List[Any]:
    from .tiledb.checks import verify_chunks

    return verify_chunks(document, node)


def _check_zarr(document, node: Node) -> List[Node]:
    from .zarr import verify_chunk

    return verify_chunk(node)


_UNIT_CHECKS: Dict[str, Callable[[Any, Node], List[Node]]] = {
    TILEDB_TILES: _check_tiledb, ZARR_CHUNKS: _check_zarr}


# ---- the calling side ------------------------------------------------------------------------
def split(units: Sequence[IndexPath], workers: int) -> List[Tuple[IndexPath, ...]]:
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

        if is_group_document(document):
            return "", []   # a group verifies member by member in this process (verify_group)
        kind, units = TILEDB_TILES, tiledb_units(root)
    elif document.format == "zarr":
        kind, units = ZARR_CHUNKS, zarr_units(root)
    else:
        return "", []
    source = getattr(document, "source_path", None) or document.path
    stamp = fingerprint(document)
    tasks = [Task(source, kind, run, document.ctx.key, document.format, stamp)
             for run in split(units, workers)]
    return kind, tasks


def _serial_rest(document) -> List[Any]:
    """What runs in the calling process after the tasks (same order as verify_array)."""
    if document.format == "tiledb":
        from .tiledb.checks import verify_bookkeeping

        return verify_bookkeeping(document)
    return []


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
    results = _run(executor, tasks)
    tail = _guarded(lambda: _serial_rest(document))
    body = [f for part in results for f in part]
    return unique(head + body + [r if isinstance(r, Finding) else finding(r, document)
                                 for r in tail if getattr(r, "status", OK) != OK])


def _run(executor: Executor, tasks: List[Task]) -> List[List[Finding]]:
    from .remote import TOTAL

    try:
        results = executor.map(run_task_counted, tasks)
        here = _here()
        for _found, requests, nbytes, where in results:
            if where != here:   # in this process (threads, in-process) TOTAL has them already
                TOTAL.add(requests, nbytes)
        return [found for found, _r, _b, _w in results]
    except Exception as e:  # noqa: BLE001 - a lost worker is a finding, not a traceback
        return [[Finding(status="error", code=CHECK_CRASHED, source="", offset=0, node="",
                         message=f"verify workers failed: {type(e).__name__}: {e}")]]


def _guarded(fn: Callable[[], List[Any]]) -> List[Any]:
    try:
        return list(fn())
    except Exception as e:  # noqa: BLE001 - verify reports, never raises
        return [Finding(status="error", code=CHECK_CRASHED, source="", offset=0, node="verify",
                        message=f"format checks could not finish: {type(e).__name__}: {e}")]


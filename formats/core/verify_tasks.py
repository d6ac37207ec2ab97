"""`verify --workers N` / `--dask ADDRESS`: the expensive part of verify as independent tasks.

Plan, map, merge, with the format's part behind its plugin's `verify_units`
(`plugin.VerifyUnits`): the caller takes the tree's own diagnostics, asks the plugin for the
units of its work (in verify order, each with its cost in stored bytes), groups consecutive
units into tasks (about TASKS_PER_WORKER per worker, at least MIN_TASK_BYTES each, so
decoding dominates a task's cost), runs them on the executor and gives the results back to
the plugin, which puts them in the places its single-process verify gives them: the same
findings, in the same order. A format without `verify_units` (or a dataset it does not
split, a TileDB group) runs its `verify` here. This module names no format.

A worker opens the dataset once per process (`VerifyUnits.open`) and returns each unit's
result as plain data; a unit it could not check comes back `NotDone` and the caller checks
it itself, so a worker never changes the result (one warning says why, when there is a
reason to say).

A task carries the dataset's path or URL, never an encrypted dataset's key (tasks cross the
network and a Dask worker may spill them to disk): a task names the key
(`context.key_name`, a one-way digest), the executor hands the key to its own processes
once (`Executor.share_key`: a pipe to a local worker), and a Dask worker takes it from its
own environment ($ARRAYSCOPE_KEY, set by whoever starts the workers); a worker without it
leaves its part to the caller.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from .context import key_name, key_named
from .findings import CHECK_CRASHED, Finding, of_node, unique
from .node import OK
from .plugin import NotDone, VerifyUnit
from .status import Status
from .verify_tally import Tally, counting_into, tally

TASKS_PER_WORKER = 4          # enough to even out uneven tasks, few enough to keep overhead low
MIN_TASK_BYTES = 16 << 20     # stored bytes: below this a task's overhead is not small
Stamp = Tuple[str, int, int]   # (file name in the dataset, size, local mtime or 0)


@dataclass(frozen=True)
class Task:
    """Consecutive units of one format's verify work on one dataset."""

    path: str
    format: str                    # the plugin whose `verify_units` runs them
    units: Tuple[Any, ...]         # the units' `work`
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


# ---- the worker side -------------------------------------------------------------------------
_OPEN: Dict[Tuple[str, Optional[str], Optional[str], str, str], Any] = {}


def _units_of(format_name: Optional[str]):
    from . import registry

    plugin = registry.plugin_named(format_name) if format_name else None
    return getattr(plugin, "verify_units", None)


def _document(task: Task, units):
    """The worker's document of the task's dataset, opened once per process (and again
    when the dataset changed: a long-lived cluster must not check a stale copy)."""
    k = (task.path, task.key_id, task.as_format, task.stamp, task.format)
    doc = _OPEN.get(k)
    if doc is None:
        key = key_named(task.key_id)
        for old in _OPEN.values():
            old.close()
        _OPEN.clear()
        doc = _OPEN[k] = units.open(task.path, key, task.as_format, task.stamp)
    return doc


def run_task(task: Task) -> List[Any]:
    """Each unit's result, in unit order (`NotDone` where this worker did not check it);
    never raises."""
    units = _units_of(task.format)
    if units is None:
        return [NotDone(f"no verify units for format {task.format!r} here")] * len(task.units)
    try:
        document = _document(task, units)
    except Exception as e:  # noqa: BLE001 - a worker reports, never raises
        return [NotDone(f"cannot open {task.path}: {type(e).__name__}: {e}")] * len(task.units)
    out: List[Any] = []
    for work in task.units:
        try:
            out.append(units.run(document, work))
        except Exception:  # noqa: BLE001 - what stops a worker here, the caller checks itself
            out.append(NotDone())
    tal = tally()
    for src in getattr(document, "sources", []):   # every file parsed is a file checked
        tal.file(document.source_name(src))
    return out


def _here() -> Tuple[str, int]:
    import socket

    return socket.gethostname(), os.getpid()


# tiles, stored bytes, files checked, folders checked to the end (what, their stored bytes)
Counted = Tuple[int, int, Tuple[str, ...], Tuple[Tuple[str, int], ...]]


def run_task_counted(task: Task) -> Tuple[Any, int, int, Tuple[str, int], Counted]:
    """`run_task`, with the requests and bytes it transferred, the process it ran in and
    what it checked (`Counted`): a worker's transfers and tally are not in the caller's
    totals unless sent back."""
    from .remote import counting

    with counting_into(Tally()) as tal, counting() as stats:
        found = run_task(task)
    requests, nbytes = stats.snapshot()
    return found, requests, nbytes, _here(), (tal.tiles, tal.nbytes, tuple(sorted(tal.files)),
                                              tuple(tal.folders.items()))


# ---- the calling side ------------------------------------------------------------------------
def task_bytes(total: int, workers: int) -> int:
    """The cost a task is given: about TASKS_PER_WORKER tasks per worker, at least
    MIN_TASK_BYTES (a plugin splits a unit bigger than that: `VerifyUnits.units`)."""
    return max(MIN_TASK_BYTES, total // (max(1, workers) * TASKS_PER_WORKER))


def group(units: List[VerifyUnit], workers: int) -> List[Tuple[VerifyUnit, ...]]:
    """Consecutive runs of units of `task_bytes` cost each (the last may hold less)."""
    target = task_bytes(sum(u.cost for u in units), workers)
    runs: List[Tuple[VerifyUnit, ...]] = []
    run: List[VerifyUnit] = []
    held = 0
    for u in units:
        run.append(u)
        held += u.cost
        if held >= target:
            runs.append(tuple(run))
            run, held = [], 0
    if run:
        runs.append(tuple(run))
    return runs


def plan(document, workers: int) -> List[Tuple[Task, Tuple[VerifyUnit, ...]]]:
    """The tasks of the document's verify work, each with its units; [] when its format
    splits nothing here."""
    units_of = _units_of(document.format)
    if units_of is None or document.root is None:
        return []
    units = units_of.units(document, workers)
    if not units:
        return []
    source = getattr(document, "source_path", None) or document.path
    stamp = fingerprint(document)
    key = document.ctx.key
    key_id = key_name(key) if key else None
    return [(Task(source, document.format, tuple(u.work for u in run), key_id, document.format,
                  stamp), run)
            for run in group(units, workers)]


def verify_with(document, executor) -> Optional[List[Finding]]:
    """`formats.core.verify.verify(document)`, with the format's work spread over `executor`:
    the same findings in the same order; None when the format splits nothing here."""
    planned = plan(document, executor.workers)
    if not planned:
        return None
    if document.ctx.key:
        executor.share_key(document.ctx.key)
    tasks = [t for t, _u in planned]
    results = _run(executor, tasks)
    units: List[VerifyUnit] = []
    flat: List[Any] = []
    for (task, run), result in zip(planned, results):
        if not isinstance(result, list) or len(result) != len(run):
            result = [result if isinstance(result, NotDone) else NotDone(str(result))] * len(run)
        units.extend(run)
        flat.extend(result)
    missed = [r.reason for r in flat if isinstance(r, NotDone) and r.reason]
    said: List[Any] = []
    if missed:
        said.append(Finding(Status.WARNING, CHECK_CRASHED, "", 0, "",
                            f"{len(missed)} verify task part(s) could not run on the workers and "
                            f"were checked in this process: {missed[0]}",
                            "check that every worker reads the same dataset (path, "
                            "credentials)"))
    merge = _units_of(document.format).merge
    return unique(said + _findings(guarded(lambda: merge(document, units, flat)), document))


def _findings(items: List[Any], document) -> List[Finding]:
    return [r if isinstance(r, Finding) else of_node(r, document)
            for r in items if getattr(r, "status", OK) != OK]


def _run(executor, tasks: List[Task]) -> List[Any]:
    """The tasks' results in task order (a lost cluster: every unit `NotDone`, the caller
    checks them itself)."""
    from .remote import TOTAL

    here = _here()
    tal = tally()

    def counted(_i: int, result) -> None:
        """A task's work counted as it comes back, on the progress bar too (the workers'
        chunks are checked, and their folders: not only the caller's own)."""
        _found, requests, nbytes, where, (tiles, stored, files, folders) = result
        if where != here:   # in this process (threads, in-process) TOTAL has them already
            TOTAL.add(requests, nbytes)
        tal.add(Tally(files=set(files), tiles=tiles, nbytes=stored), "")
        for what, size in folders:
            tal.finished(size, what)

    try:
        results = executor.map(run_task_counted, tasks, counted)
    except Exception as e:  # noqa: BLE001 - a lost worker is a finding, not a traceback
        why = NotDone(f"verify workers failed: {type(e).__name__}: {e}")
        return [[why] * len(t.units) for t in tasks]
    return [found for found, _r, _b, _w, _t in results]


def guarded(fn: Callable[[], List[Any]]) -> List[Any]:
    """`fn()`'s findings, or one saying why it could not finish: verify reports, never raises."""
    try:
        return list(fn())
    except Exception as e:  # noqa: BLE001 - verify reports, never raises
        return [Finding(status=Status.ERROR, code=CHECK_CRASHED, source="", offset=0, node="verify",
                        message=f"format checks could not finish: {type(e).__name__}: {e}",
                        hint="a bug in arrayscope: please report it with this message")]

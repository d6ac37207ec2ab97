"""Where independent tasks run: this process, local worker processes, or a Dask cluster.

An executor maps a picklable top-level function over a list of picklable items and returns
the results in the order of the items, whatever order they finish in; `done`, when given, is
told of each result as it comes (in the calling thread, before `map` returns: progress
counts the work really done, not the end of the last task). Dask
(`dask.distributed`, the `distributed` extra) is imported only when a cluster is asked for.
"""
from __future__ import annotations

import os
from typing import Any, Callable, List, Optional, Protocol, Sequence

Done = Callable[[int, Any], None]   # (item index, its result), as each result comes

CONNECT_TIMEOUT = "10s"   # an unreachable scheduler is a message, not a hang


class Executor(Protocol):
    """Runs `fn` over `items`; results in item order."""

    workers: int

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any],
            done: Optional[Done] = None) -> List[Any]:
        ...

    def share_key(self, key: bytes) -> None:
        """Make the encryption key available to the tasks, never inside a task."""
        ...

    def close(self) -> None:
        ...


class InProcess:
    """Every task here, one after the other (the reference the others must equal)."""

    workers = 1

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any],
            done: Optional[Done] = None) -> List[Any]:
        out: List[Any] = []
        for i, x in enumerate(items):
            out.append(fn(x))
            if done is not None:
                done(i, out[-1])
        return out

    def share_key(self, key: bytes) -> None:
        from .context import remember_key

        remember_key(key)

    def close(self) -> None:
        pass


class LocalProcesses:
    """`workers` processes on this machine, each a fresh interpreter started isolated from
    the dataset (formats/core/childproc.py: `python -I`, a working directory chosen here; not
    multiprocessing's spawn, which starts its children in the caller's working directory
    with that directory on their import path). A fresh interpreter shares no threads, locks
    or open mappings with the parent (the window, fsspec's event loop). The processes start
    on the first `map` and end with `close` (or with this process)."""

    def __init__(self, workers: int):
        self.workers = max(1, int(workers))
        self._procs: List[Any] = []
        self._key: Optional[bytes] = None

    def share_key(self, key: bytes) -> None:
        """Through each worker's stdin, once (a pipe: never the network, never a disk)."""
        self._key = key
        for proc in self._procs:
            self._hand_key(proc)

    def _hand_key(self, proc) -> None:
        from .context import remember_key
        from .taskworker import receive, send

        send(proc.stdin, (remember_key, self._key))
        receive(proc.stdout)

    def _start(self) -> None:
        import subprocess

        from .childproc import SAFE_CWD, child_env, python_module_command

        cmd = python_module_command("arrayscope.formats.core.taskworker")
        while len(self._procs) < self.workers:
            # a session of its own: Ctrl+C in the terminal interrupts this process, which
            # kills the workers (`map`); they end by themselves when this process is gone
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    cwd=SAFE_CWD, env=child_env(), start_new_session=True)
            self._procs.append(proc)
            if self._key is not None:
                self._hand_key(proc)

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any],
            done: Optional[Done] = None) -> List[Any]:
        import queue
        import threading

        from .taskworker import receive, send

        items = list(items)
        if not items:
            return []
        self._start()
        results: List[Any] = [None] * len(items)
        errors: List[BaseException] = []
        lock = threading.Lock()
        todo = iter(range(len(items)))
        came: "queue.SimpleQueue[Optional[int]]" = queue.SimpleQueue()   # None: a feed ended

        def feed(proc) -> None:
            try:
                while True:
                    with lock:
                        i = None if errors else next(todo, None)
                    if i is None:
                        return
                    try:
                        send(proc.stdin, (fn, items[i]))
                        got = receive(proc.stdout)
                    except (OSError, ValueError) as e:   # its pipe broken or closed (`close`)
                        got = (False, e)
                    if got is None:
                        got = (False, RuntimeError(f"a worker process ended (status "
                                                   f"{proc.poll()}) during task {i}"))
                    ok, value = got
                    if not ok:
                        with lock:
                            errors.append(value)
                        return
                    results[i] = value
                    came.put(i)
            finally:
                came.put(None)

        threads = [threading.Thread(target=feed, args=(p,), daemon=True) for p in self._procs]
        for t in threads:
            t.start()
        try:
            running = len(threads)
            while running:   # each result told here, in the calling thread, as it comes
                i = came.get()
                if i is None:
                    running -= 1
                elif done is not None and not errors:
                    done(i, results[i])
            for t in threads:
                t.join()
        except BaseException:   # Ctrl+C, SystemExit: the workers' tasks are dropped at once
            self._kill()
            raise
        if errors:
            self.close()   # a failed worker's stream is in an unknown state: start afresh
            raise errors[0]
        return results

    def _kill(self) -> None:
        procs, self._procs = self._procs, []
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
            for pipe in (p.stdin, p.stdout):
                try:
                    pipe.close()
                except OSError:
                    pass

    def close(self) -> None:
        procs, self._procs = self._procs, []
        for p in procs:
            try:
                p.stdin.close()   # the end of its tasks: it exits
            except OSError:
                pass
        for p in procs:
            try:
                p.wait(timeout=5)
            except Exception:  # noqa: BLE001 - stuck: killed
                p.kill()
                p.wait()
            p.stdout.close()


class DaskCluster:
    """The workers of a dask.distributed scheduler: an address (`tcp://host:8786`) or a
    `distributed.LocalCluster` / `Client` object. Every worker needs arrayscope installed
    (and, for datasets on object stores, the fsspec back end and its credentials)."""

    def __init__(self, address: Any):
        try:
            from distributed import Client
        except ImportError as e:
            raise RuntimeError("--dask needs dask.distributed: pip install \"arrayscope[distributed]\"") from e
        self._own = not isinstance(address, Client)
        self._client = address if not self._own else \
            Client(address, set_as_default=False, timeout=CONNECT_TIMEOUT)
        info = self._client.scheduler_info()
        self.workers = max(1, len(info.get("workers", {})))

    def share_key(self, key: bytes) -> None:
        """Nothing is sent: a key in a task would cross the network and could be spilled to
        a worker's disk. Each worker takes it from its own environment ($ARRAYSCOPE_KEY, set
        by whoever starts it); a worker without it leaves its part to the caller."""

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any],
            done: Optional[Done] = None) -> List[Any]:
        if not items:
            return []
        # pure=False: two equal tasks are still two tasks (no result is shared by key)
        futures = self._client.map(fn, list(items), pure=False)
        if done is None:
            return list(self._client.gather(futures))
        from distributed import as_completed

        index = {f.key: i for i, f in enumerate(futures)}
        out: List[Any] = [None] * len(futures)
        for f in as_completed(futures, loop=self._client.loop):   # (not the default client)
            i = index[f.key]
            out[i] = f.result()   # (a task's error raised here, as `gather` raises it)
            done(i, out[i])
        return out

    def close(self) -> None:
        if self._own:
            self._client.close()


def executor_for(workers: Optional[int] = None, dask: Any = None) -> Executor:
    """The executor the CLI options ask for (`--dask` wins; `--workers 0`: every core)."""
    if dask is not None:
        return DaskCluster(dask)
    if workers is None or workers == 1:
        return InProcess()
    return LocalProcesses(workers if workers > 0 else (os.cpu_count() or 1))

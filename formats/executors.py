"""Where independent tasks run: this process, local worker processes, or a Dask cluster.

An executor maps a picklable top-level function over a list of picklable items and returns
the results in the order of the items, whatever order they finish in. Dask
(`dask.distributed`, the `distributed` extra) is imported only when a cluster is asked for.
"""
from __future__ import annotations

import os
from typing import Any, Callable, List, Optional, Protocol, Sequence

CONNECT_TIMEOUT = "10s"   # an unreachable scheduler is a message, not a hang


class Executor(Protocol):
    """Runs `fn` over `items`; results in item order."""

    workers: int

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> List[Any]:
        ...

    def close(self) -> None:
        ...


class InProcess:
    """Every task here, one after the other (the reference the others must equal)."""

    workers = 1

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> List[Any]:
        return [fn(x) for x in items]

    def close(self) -> None:
        pass


class LocalProcesses:
    """`workers` processes on this machine. Spawned, not forked: a fresh interpreter shares
    no threads, locks or open mappings with the parent (the window, fsspec's event loop)."""

    def __init__(self, workers: int):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = max(1, int(workers))
        self._pool = ProcessPoolExecutor(max_workers=self.workers,
                                         mp_context=multiprocessing.get_context("spawn"))

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> List[Any]:
        return list(self._pool.map(fn, items))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


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

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> List[Any]:
        if not items:
            return []
        # pure=False: two equal tasks are still two tasks (no result is shared by key)
        futures = self._client.map(fn, list(items), pure=False)
        return list(self._client.gather(futures))

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

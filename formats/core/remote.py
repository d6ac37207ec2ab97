"""Datasets on object stores: any fsspec URL (`s3://`, `gs://`, `az://`, `https://`,
`file://`, `memory://`) read by range, on demand, through a bounded block cache.

A `RemoteStore` is one opened dataset: it lists the dataset once (one recursive listing,
paginated by the store) and answers every "is this a folder, what is in it, how big is
that file" from that listing, so walking an array costs no request per file. A
`RemoteSource` is one object of it as a `ByteSource`: a read fetches only the blocks it
touches (adjacent missing blocks in one ranged request), never the whole object, and the
store's cache keeps at most `cache_bytes` of blocks (least recently read out first).

Every request and every byte transferred is counted, per store (the window's status bar)
and for the whole process (`--stats`). Credentials come from fsspec's and the cloud SDKs'
own configuration (environment, config files, instance roles): nothing here sees or keeps
them. fsspec back ends (s3fs, gcsfs, adlfs, aiohttp) are imported by fsspec when a URL of
theirs is opened, never at import time of this module.
"""
from __future__ import annotations

import posixpath
import re
import threading
import time
import weakref
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from . import dataset_fs as dfs
from .node import BuildDeferred, Node
from .source import ByteSource

BLOCK_SIZE = 1 << 20          # one ranged request fetches at least this much (small objects whole)
CACHE_BYTES = 64 << 20        # blocks kept per store
LIST_PAGE = 1000              # keys per listing request (S3, GCS and Azure page at 1 000)

# A scheme of two letters or more: `C:\data` (a Windows drive) is a local path.
_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")


def is_url(path: object) -> bool:
    """True for an fsspec URL (`s3://bucket/key`, `file:///tmp/x`, ...)."""
    return isinstance(path, str) and _URL_RE.match(path) is not None


def absolute(path: str) -> str:
    """`os.path.abspath` for a dataset path: a URL is absolute already (abspath would glue
    the working directory to it)."""
    import os

    return (path.rstrip("/") or path) if is_url(path) else os.path.abspath(path)


def realpath(path: str) -> str:
    """`os.path.realpath` for a dataset path: an object store has no links."""

    return absolute(path) if is_url(path) else dfs.realpath(path)


def normpath(path: str) -> str:
    """`os.path.normpath` for a dataset path: a URL keeps its `scheme://` (normpath would
    fold it to `scheme:/`), and its path part is normalised."""
    import os

    if not is_url(path):
        return os.path.normpath(path)
    scheme, _, rest = path.partition("://")
    rest = posixpath.normpath(rest) if rest else rest
    return f"{scheme}://{'' if rest == '.' else rest}"


class RemoteError(OSError):
    """The dataset cannot be listed or read (no such bucket or key, no credentials...)."""


@dataclass(frozen=True)
class Timeouts:
    """How long the server may take, in seconds: to accept a connection (`connect`), between
    two received bytes (`read`), and for one request from start to end, retries included
    (`total`: what ends a server that trickles bytes, or answers each retry late). A
    request over budget fails naming its object, and the store tries no further request
    (a stalled server would make each one wait as long)."""

    connect: float = 10.0
    read: float = 30.0
    total: float = 120.0


# The timeouts of the stores opened from now on (the command line sets them: --timeout...).
_timeouts = Timeouts()
# Where "still waiting" lines go (the command line: stderr; the window: nowhere).
_waiting_sink: Optional[Callable[[str], None]] = None
WAIT_REPORT_FIRST = 1.0   # seconds into a request before its first "waiting" line
WAIT_REPORT_EVERY = 5.0   # seconds between further lines (never more than one a second)


def set_timeouts(timeouts: Timeouts) -> Timeouts:
    """Use `timeouts` for the stores opened from now on; returns the ones they replace."""
    global _timeouts
    before, _timeouts = _timeouts, timeouts
    return before


def report_waits(sink: Optional[Callable[[str], None]]) -> None:
    """Send a line to `sink` while a request waits on the server (None: silent)."""
    global _waiting_sink
    _waiting_sink = sink


def _timeout_options(protocol: str, t: Timeouts) -> Dict[str, Any]:
    """The fsspec back end's own connect and read timeouts (the total budget is applied
    around each call, whatever the back end: `RemoteStore._call`)."""
    if protocol in ("s3", "s3a"):
        # botocore: one retry of its own (s3fs retries too; the total budget bounds both)
        return {"config_kwargs": {"connect_timeout": t.connect, "read_timeout": t.read,
                                  "retries": {"max_attempts": 2, "mode": "standard"}}}
    if protocol in ("http", "https"):
        import aiohttp

        return {"client_kwargs": {"timeout": aiohttp.ClientTimeout(
            total=t.total, sock_connect=t.connect, sock_read=t.read)}}
    return {}


def _merged(options: Dict[str, Any], defaults: Dict[str, Any]) -> Dict[str, Any]:
    """`options` over `defaults`, one level deep (the caller's own client/config kwargs win)."""
    out = dict(defaults)
    for k, v in options.items():
        out[k] = {**out[k], **v} if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _is_timeout(e: BaseException) -> bool:
    """A timeout, as any back end words it (asyncio, aiohttp, botocore, fsspec)."""
    return isinstance(e, TimeoutError) or "Timeout" in type(e).__name__


def _key_problem(rel: str) -> Optional[str]:
    """Why object key `rel` (relative to the dataset) is no path: an empty, `.` or `..`
    segment (a store keeps such keys verbatim; followed as a path, `a/..` is `a`'s parent
    and the walk loops)."""
    for seg in rel.split("/"):
        if seg in (".", ".."):
            return f"an object key with a '{seg}' segment"
        if not seg:
            return "an object key with an empty segment ('//')"
    return None


@dataclass
class TransferStats:
    """Requests made and bytes received. Thread-safe; `line()` is what `--stats` prints."""

    requests: int = 0
    bytes: int = 0
    errors: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, requests: int, nbytes: int, errors: int = 0) -> None:
        with self._lock:
            self.requests += requests
            self.bytes += nbytes
            self.errors += errors

    def snapshot(self) -> Tuple[int, int]:
        with self._lock:
            return self.requests, self.bytes

    def line(self) -> str:
        requests, nbytes = self.snapshot()
        return f"requests: {requests}, bytes: {nbytes}"


# Everything this process transferred (what `--stats` reports when a command ends).
TOTAL = TransferStats()
# What the current thread transferred inside `counting()` (a verify task in a worker: its
# counts go back with its findings, and the caller adds them to its own TOTAL).
_THREAD = threading.local()


@contextmanager
def counting() -> Iterator[TransferStats]:
    """The transfers this thread makes inside the block (nested blocks each count)."""
    outer = getattr(_THREAD, "stats", ())
    mine = TransferStats()
    _THREAD.stats = outer + (mine,)
    try:
        yield mine
    finally:
        _THREAD.stats = outer


@dataclass(frozen=True, slots=True)
class Listed:
    """One listed path: a file (with its size) or a folder (size None). `version` is what
    the listing says of the object's contents, to hold its reads against: the store's ETag
    (S3, GCS, Azure, HTTP) where it gives one, else its modification time (`_version`)."""

    size: Optional[int]
    version: Optional[str] = None

    @property
    def is_dir(self) -> bool:
        return self.size is None

    @property
    def etag(self) -> Optional[str]:
        kind, _, value = (self.version or "").partition(":")
        return value if kind == "etag" else None


def _version(info: Dict[str, Any]) -> Optional[str]:
    """An object's version as fsspec's `info()`/`find(detail=True)` gives it: `etag:<ETag>`
    (s3fs `ETag`, gcsfs/adlfs `etag`, HTTP `ETag`), else `mtime:<time>` (local `mtime`,
    S3-like `LastModified`, adlfs `last_modified`, gcsfs `updated`, memory `created`);
    None when the store says neither."""
    for k in ("ETag", "etag"):
        if info.get(k):
            return f"etag:{info[k]}"
    for k in ("mtime", "LastModified", "last_modified", "updated", "created"):
        t = info.get(k)
        if t is not None:   # a listing and `info` may say one time as a number or a datetime
            return f"mtime:{t.timestamp() if hasattr(t, 'timestamp') else t}"
    return None


def _said(version: str) -> str:
    """A version as a message says it: `etag "abc"`, `mtime 1795961320.07`."""
    return version.replace(":", " ", 1)


async def _s3_get_if_match(fs: Any, path: str, start: int, end: int, etag: str) -> bytes:
    """Bytes [start, end) of S3 object `path`, only if its ETag is still `etag` (GetObject
    `If-Match`: a rewritten object answers 412, whatever its size), through s3fs's own
    request call (its retries, credentials and error translation)."""
    bucket, key, _version_id = fs.split_path(path)
    resp = await fs._call_s3("get_object", Bucket=bucket, Key=key,
                             Range=f"bytes={start}-{end - 1}", IfMatch=etag)
    try:
        return await resp["Body"].read()
    finally:
        resp["Body"].close()


def _precondition_failed(e: BaseException) -> bool:
    """A conditional read refused because the object's ETag changed: s3fs turns S3's 412
    into OSError(EINVAL, "...pre-conditions..."), aiohttp keeps the status."""
    if getattr(e, "status", None) == 412:
        return True
    response = getattr(e.__cause__, "response", None)
    if isinstance(response, dict) and response.get("Error", {}).get("Code") in (
            "PreconditionFailed", "412"):
        return True
    return isinstance(e, OSError) and "pre-condition" in str(e).lower()


class BlockCache:
    """Least-recently-read blocks, at most `capacity` bytes, shared by one store's sources."""

    def __init__(self, capacity: int = CACHE_BYTES):
        self.capacity = capacity
        self.used = 0
        self._blocks: "OrderedDict[Tuple[str, int], bytes]" = OrderedDict()

    def get(self, key: Tuple[str, int]) -> Optional[bytes]:
        data = self._blocks.get(key)
        if data is not None:
            self._blocks.move_to_end(key)
        return data

    def drop(self, name: str) -> None:
        """Forget every block of object `name`."""
        for key in [k for k in self._blocks if k[0] == name]:
            self.used -= len(self._blocks.pop(key))

    def put(self, key: Tuple[str, int], data: bytes) -> None:
        if len(data) > self.capacity:
            return
        old = self._blocks.pop(key, None)
        if old is not None:
            self.used -= len(old)
        self._blocks[key] = data
        self.used += len(data)
        while self.used > self.capacity and self._blocks:
            _k, dropped = self._blocks.popitem(last=False)
            self.used -= len(dropped)


class RemoteStore:
    """One dataset on an fsspec filesystem: its listing, its sources, its transfer counts.

    Paths are URLs: the dataset's own (`url`, without a trailing slash) and its members
    `url + "/" + relative path`, so `posixpath.join`, `basename` and `dirname` work on them.
    """

    def __init__(self, url: str, fs: Any = None, block_size: int = BLOCK_SIZE,
                 cache_bytes: int = CACHE_BYTES, storage_options: Optional[Dict[str, Any]] = None,
                 timeouts: Optional[Timeouts] = None):
        self.timeouts = timeouts or _timeouts
        if fs is None:
            import fsspec  # imported on first use: a local-only session never loads it

            protocol = url.partition("://")[0].lower()
            options = _merged(storage_options or {}, _timeout_options(protocol, self.timeouts))
            fs, fs_path = fsspec.core.url_to_fs(url, **options)
        else:
            fs_path = fs._strip_protocol(url)
        self.fs = fs
        self.url = url.rstrip("/") or url
        self.root = self.url   # the DatasetFS protocol's name for it
        self._fs_root = str(fs_path).rstrip("/") or str(fs_path)
        try:   # fsspec instances are shared and may hold an old listing: list afresh
            fs.invalidate_cache(self._fs_root)
        except Exception:  # noqa: BLE001 - a cache that cannot be dropped is only stale
            pass
        self.block_size = max(4096, int(block_size))
        self.cache = BlockCache(cache_bytes)
        self.stats = TransferStats()
        self._lock = threading.RLock()
        self._entries: Optional[Dict[str, Listed]] = None   # relative path -> entry
        self._children: Dict[str, List[str]] = {}
        # keys that are no path (`a/../b`): parent folder -> [(key, why)], shown, never entered
        self._bad_keys: Dict[str, List[Tuple[str, str]]] = {}
        self.stalled: Optional[str] = None         # why no further request is tried
        self.range_ignored: Optional[str] = None   # the server answers ranged reads whole
        self.changed: Dict[str, str] = {}          # objects that changed since the listing
        self._confirmed: set = set()   # objects whose version was held against the listing

    # ---- accounting --------------------------------------------------------------------
    def _count(self, requests: int, nbytes: int, errors: int = 0) -> None:
        self.stats.add(requests, nbytes, errors)
        TOTAL.add(requests, nbytes, errors)
        for t in getattr(_THREAD, "stats", ()):
            t.add(requests, nbytes, errors)

    # ---- paths -------------------------------------------------------------------------
    def rel(self, path: str) -> Optional[str]:
        """`path` relative to the dataset ("" for the dataset itself); None when it is not
        under it (a path outside the dataset is never listed nor read)."""
        path = path.rstrip("/")
        if path == self.url:
            return ""
        if not path.startswith(self.url + "/"):
            return None
        rel = posixpath.normpath(path[len(self.url) + 1:])
        if rel == ".":
            return ""
        return None if rel == ".." or rel.startswith("../") else rel

    def join(self, rel: str) -> str:
        return self.url if rel in ("", ".") else f"{self.url}/{rel}"

    def _fs_path(self, rel: str) -> str:
        return self._fs_root if rel in ("", ".") else f"{self._fs_root}/{rel}"

    # ---- the listing -------------------------------------------------------------------
    def entries(self) -> Dict[str, Listed]:
        """{relative path: Listed} of everything under the dataset, listed once."""
        with self._lock:
            if self._entries is None:
                self._entries = self._list()
                kids: Dict[str, List[str]] = {}
                for rel in self._entries:
                    if rel:
                        parent, _, name = rel.rpartition("/")
                        kids.setdefault(parent, []).append(name)
                self._children = {k: sorted(v) for k, v in kids.items()}
            return self._entries

    def _list(self) -> Dict[str, Listed]:
        try:
            found = self._call(self.url, "listing", "find", self._fs_root, detail=True,
                               withdirs=True)
        except FileNotFoundError:
            found = {}
        except RemoteError:
            self._count(1, 0, 1)
            raise
        except Exception as e:  # noqa: BLE001 - credentials, network: one message
            self._count(1, 0, 1)
            raise RemoteError(f"{self.url}: cannot list: {type(e).__name__}: {e}") from e
        # A recursive listing is paginated by the store: count its pages as requests (the
        # store lists objects; folders are inferred from their names, not listed).
        objects = sum(1 for info in found.values() if info.get("type") != "directory")
        self._count(max(1, -(-objects // LIST_PAGE)), 0)
        out: Dict[str, Listed] = {}
        root = self._fs_root.rstrip("/")
        for name, info in found.items():
            name = str(name).rstrip("/")
            if name == root:
                rel = ""
            elif name.startswith(root + "/"):
                rel = name[len(root) + 1:]
            else:
                continue
            is_dir = info.get("type") == "directory"
            why = _key_problem(rel) if rel else None
            if why is not None:
                if not is_dir:   # folders inferred from such keys: their objects say it
                    self._note_bad_key(rel, why)
                continue
            if not is_dir and info.get("size") is None:   # HTTP finds names, not sizes
                info = self._call(self.join(rel), "listing", "info", name)
            out[rel] = Listed(None) if is_dir else Listed(int(info.get("size") or 0), _version(info))
        if out and "" not in out:
            out[""] = Listed(None)
        # folders implied by keys (object stores have no folder objects)
        for rel in list(out):
            parent = rel.rpartition("/")[0] if "/" in rel else ""
            while rel and parent not in out:
                out[parent] = Listed(None)
                parent = parent.rpartition("/")[0] if "/" in parent else ""
        if not out:
            # not a prefix: maybe a single object
            try:
                info = self._call(self.url, "listing", "info", self._fs_root)
            except FileNotFoundError:
                self._count(1, 0)
                return {}
            except RemoteError:
                self._count(1, 0, 1)
                raise
            except Exception as e:  # noqa: BLE001
                self._count(1, 0, 1)
                raise RemoteError(f"{self.url}: cannot read: {type(e).__name__}: {e}") from e
            self._count(1, 0)
            if info.get("type") != "directory":
                out[""] = Listed(int(info.get("size") or 0), _version(info))
        return out

    def _note_bad_key(self, rel: str, why: str) -> None:
        """Keep key `rel` (no path: `_key_problem`) for the folder above its first odd
        segment, where the walk shows it as a finding."""
        parts = rel.split("/")
        first = next(i for i, p in enumerate(parts) if p in ("", ".", ".."))
        self._bad_keys.setdefault("/".join(parts[:first]), []).append((rel, why))

    def bad_keys(self) -> List[Tuple[str, str]]:
        """(key relative to the dataset, why it is no path) for every such key listed."""
        self.entries()
        return sorted(k for ks in self._bad_keys.values() for k in ks)

    # ---- requests ----------------------------------------------------------------------
    def _call(self, url: str, what: str, method: str, *args: Any, **kwargs: Any) -> Any:
        """`fs.<method>(*args, **kwargs)` for object `url` within the total budget, with a
        "waiting" line now and then (`report_waits`). An async back end (s3fs, gcsfs,
        adlfs, HTTP) runs the call on its own loop under `asyncio.wait_for`, so a request
        over budget is cancelled (its connection closed), not left running; then the store
        is marked stalled and later requests fail at once, naming this one."""
        if self.stalled is not None:
            raise RemoteError(f"{url}: {what} not tried: {self.stalled}")
        coro_fn = getattr(self.fs, "_" + method, None)
        if not self._is_async or coro_fn is None:
            return getattr(self.fs, method)(*args, **kwargs)   # memory://, file://: no server
        return self._await(url, what, lambda: coro_fn(*args, **kwargs))

    @property
    def _is_async(self) -> bool:
        return bool(getattr(self.fs, "async_impl", False)) and getattr(self.fs, "loop", None) is not None

    def _await(self, url: str, what: str, make: Callable[[], Any]) -> Any:
        """Run coroutine `make()` on the back end's loop within the total budget (`_call`)."""
        if self.stalled is not None:
            raise RemoteError(f"{url}: {what} not tried: {self.stalled}")
        fs, t = self.fs, self.timeouts
        import asyncio  # here: a local dataset's command never pays its import (~0.05 s)
        import concurrent.futures

        future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(make(), t.total), fs.loop)
        start = time.monotonic()
        next_report = start + WAIT_REPORT_FIRST
        try:
            while True:
                done, _ = concurrent.futures.wait([future], timeout=max(0.05, next_report - time.monotonic()))
                if done:
                    return future.result()
                now = time.monotonic()
                if now - start > t.total + 5.0:   # the loop itself is stuck: give up anyway
                    future.cancel()
                    raise TimeoutError
                sink = _waiting_sink
                if sink is not None:
                    sink(f"waiting for {url} ({what}): {now - start:.0f} s of {t.total:g} s")
                next_report = now + WAIT_REPORT_EVERY
        except Exception as e:  # noqa: BLE001 - sorted below: a timeout stalls the store
            if not _is_timeout(e):
                raise
            self.stalled = (f"{url}: no answer from the server within the timeouts "
                            f"(connect {t.connect:g} s, read {t.read:g} s, {t.total:g} s per "
                            f"request; --connect-timeout, --read-timeout, --timeout set them)")
            _note_problem(self.stalled)
            raise RemoteError(self.stalled) from e

    def entry(self, path: str) -> Optional[Listed]:
        rel = self.rel(path)
        return None if rel is None else self.entries().get(rel)

    def exists(self, path: str) -> bool:
        return self.entry(path) is not None

    def isdir(self, path: str) -> bool:
        e = self.entry(path)
        return e is not None and e.is_dir

    def isfile(self, path: str) -> bool:
        e = self.entry(path)
        return e is not None and not e.is_dir

    def getsize(self, path: str) -> int:
        e = self.entry(path)
        if e is None or e.is_dir:
            raise FileNotFoundError(path)
        return e.size or 0

    def listdir(self, path: str) -> List[str]:
        rel = self.rel(path)
        entries = self.entries()
        if rel is None or rel not in entries or not entries[rel].is_dir:
            raise NotADirectoryError(path)
        return list(self._children.get(rel, []))

    # ---- the DatasetFS protocol (formats/core/dataset_fs.py) ---------------------------------
    def contains(self, path: str) -> bool:
        return self.rel(path) is not None

    def stat(self, path: str):
        """The dataset_fs.Entry at `path`: FILE, DIR, MISSING, or SYMLINK_OUT for a path
        outside the dataset (an object store has no links, FIFOs or devices)."""
        rel = self.rel(path)
        if rel is None:
            return dfs.Entry(path, path, dfs.SYMLINK_OUT, detail=path)
        listed = self.entries().get(rel)
        full, shown = self.join(rel), rel or "."
        if listed is None:
            return dfs.Entry(full, shown, dfs.MISSING)
        if listed.is_dir:
            return dfs.Entry(full, shown, dfs.DIR, real=full)
        return dfs.Entry(full, shown, dfs.FILE, size=listed.size or 0, real=full)

    def list(self, path: str):
        """The dataset_fs.Entry of each name in folder `path`, sorted; keys that are no path
        (`a/../b`) last, as BAD_KEY entries (findings, never entered)."""
        rel = self.rel(path)
        base = self.join(rel or "") if rel is not None else path
        out = [self.stat(f"{base}/{name}") for name in self.listdir(path)]
        for key, why in sorted(self._bad_keys.get(rel or "", [])):
            out.append(dfs.Entry(f"{self.url}/{key}", key, dfs.BAD_KEY, detail=why))
        return out

    def read_bytes(self, path: str, limit: int) -> Tuple[bytes, bool]:
        """(up to `limit` bytes from the start of the object, whether it holds more)."""
        src = self.open_source(path)
        return src.read(0, max(0, limit)), src.size > max(0, limit)

    def is_file(self, path: str) -> bool:
        return self.isfile(path)

    def is_dir(self, path: str) -> bool:
        return self.isdir(path)

    # ---- bytes -------------------------------------------------------------------------
    def open_source(self, path: str, name: Optional[str] = None) -> "RemoteSource":
        """The object at `path` as a ByteSource (nothing is read until asked)."""
        rel = self.rel(path)
        e = self.entry(path)
        if rel is None or e is None or e.is_dir:
            raise FileNotFoundError(f"{path}: no such object in {self.url}")
        src = RemoteSource(self, rel, e.size or 0, name if name is not None else posixpath.basename(rel))
        return src

    def fetch(self, rel: str, start: int, stop: int, size: int) -> bytes:
        """One ranged request: bytes [start, stop) of object `rel`, listed with `size` bytes
        (fewer at its end). What comes back is held against the listing: the last block
        asks one byte past the listed end, so an object that grew shows, as does one that
        shrank (a short answer); either is named as changed since the listing, and its
        later reads fail the same way (old and new bytes are never mixed). A server that
        ignores Range (more bytes than asked) is noted once: small objects are then read
        whole into the cache, larger ones not at all (each read would transfer them whole)."""
        url = self.join(rel)
        if rel in self.changed:
            raise RemoteError(self.changed[rel])
        cap = self.cache.capacity // 4
        if self.range_ignored is not None and size > cap:
            raise RemoteError(f"{url}: not read ({size} B): {self.range_ignored}")
        ask = stop + 1 if stop >= size else stop
        listed = self.entries().get(rel)
        version = listed.version if listed is not None else None
        try:
            data = self._ranged_get(rel, url, start, ask, listed)
        except RemoteError:
            self._count(1, 0, 1)
            raise
        except Exception as e:  # noqa: BLE001 - a failed read is a short read, never a crash
            self._count(1, 0, 1)
            if version is not None and _precondition_failed(e):
                return self._changed(rel, f"{url}: the object changed since the dataset was "
                                          f"listed (listed {size} B, {_said(version)}; the "
                                          f"store now holds another version): reopen the "
                                          f"dataset")
            raise RemoteError(f"{url}: read of bytes {start}-{stop} failed: "
                              f"{type(e).__name__}: {e}") from e
        data = bytes(data)
        self._count(1, len(data))
        want = min(stop, size) - start
        if len(data) > ask - start and not (start == 0 and len(data) == want):
            return self._whole_answer(rel, url, data, start, stop, size, cap)
        if len(data) != want:
            now = (f"it now ends at byte {start + len(data)}" if len(data) < want
                   else f"it now holds more than {size} B")
            return self._changed(rel, f"{url}: the object changed since the dataset was listed "
                                      f"(listed {size} B, {now}): reopen the dataset")
        return data

    def _ranged_get(self, rel: str, url: str, start: int, end: int,
                    listed: Optional[Listed]) -> bytes:
        """Bytes [start, end) of object `rel`, held against the version the listing saw,
        without a request of its own where the store can: S3 and HTTP read conditionally
        (`If-Match` the listed ETag: a rewrite of any size answers 412), other stores say
        the object's version once, before its first read (`info`: a stat for a local
        file, one request per object on a server)."""
        what, path = f"bytes {start}-{end}", self._fs_path(rel)
        version = listed.version if listed is not None else None
        etag = listed.etag if listed is not None else None
        if etag is not None and self._is_async and hasattr(self.fs, "_call_s3"):
            return self._await(url, what, lambda: _s3_get_if_match(self.fs, path, start, end, etag))
        protocols = self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,)
        if etag is not None and "http" in protocols:
            return self._call(url, what, "cat_file", path, start=start, end=end,
                              headers={"If-Match": etag})
        if version is not None and rel not in self._confirmed:
            self._confirm(rel, url, path, version)
        return self._call(url, what, "cat_file", path, start=start, end=end)

    def _confirm(self, rel: str, url: str, path: str, version: str) -> None:
        """Ask the store once for object `rel`'s version and hold it against the listing's."""
        try:
            self.fs.invalidate_cache(path)
        except Exception:  # noqa: BLE001 - a cache that cannot be dropped: info may be stale
            pass
        info = self._call(url, "version", "info", path)
        if self._is_async:   # a request to a server (a local stat is none)
            self._count(1, 0)
        now = _version(info)
        if now is not None and now != version:
            self._changed(rel, f"{url}: the object changed since the dataset was listed "
                               f"(listed {self.entries()[rel].size} B, {_said(version)}; now "
                               f"{info.get('size')} B, {_said(now)}): reopen the dataset")
        self._confirmed.add(rel)

    def _changed(self, rel: str, message: str) -> bytes:
        self.changed[rel] = message
        self.cache.drop(rel)
        _note_problem(message)
        raise RemoteError(message)

    def _whole_answer(self, rel: str, url: str, data: bytes, start: int, stop: int, size: int,
                      cap: int) -> bytes:
        """A ranged request answered with the whole object: the server ignores Range."""
        if self.range_ignored is None:
            self.range_ignored = (f"the server ignores Range requests (asked for bytes "
                                  f"{start}-{stop} of {url}, it sent {len(data)} B): objects "
                                  f"over {cap} B are not read")
            _note_problem(f"{self.url}: {self.range_ignored}")
        if len(data) != size:
            return self._changed(rel, f"{url}: the object changed since the dataset was listed "
                                      f"(listed {size} B, it now holds {len(data)} B): reopen "
                                      f"the dataset")
        if size <= cap:   # keep it: its other blocks cost no further request
            bs = self.block_size
            for b in range(-(-size // bs)):
                self.cache.put((rel, b), data[b * bs:(b + 1) * bs])
        return data[start:stop]


class RemoteSource(ByteSource):
    """One object of a `RemoteStore`, read by block on demand.

    A read fetches the blocks it touches that are not cached, each run of adjacent missing
    blocks in one request; a read longer than the cache bypasses it (one request, nothing
    kept), so memory stays bounded whatever is asked. A failed request is a short read
    (`last_error` says why): parsers report it at its offset, the view never sees an
    exception."""

    remote = True   # parsers defer what costs requests (tiles) until it is shown

    def __init__(self, store: RemoteStore, rel: str, size: int, name: str):
        self.store = store
        self.rel = rel
        self.path = store.join(rel)
        self.name = name
        self._size = size
        self.last_error: Optional[str] = None

    @property
    def size(self) -> int:
        return self._size

    def view(self, offset: int, length: int) -> memoryview:
        n = self.available(offset, length)
        if n == 0:
            return memoryview(b"")
        try:
            return memoryview(self._read(offset, n))
        except RemoteError as e:
            self.last_error = str(e)
            return memoryview(b"")

    def _read(self, offset: int, n: int) -> bytes:
        store, bs = self.store, self.store.block_size
        first, last = offset // bs, (offset + n - 1) // bs
        if (last - first + 1) * bs > store.cache.capacity:
            return store.fetch(self.rel, offset, offset + n, self._size)   # too big to cache
        with store._lock:
            blocks: Dict[int, bytes] = {}
            missing: List[int] = []
            for b in range(first, last + 1):
                data = store.cache.get((self.rel, b))
                if data is None:
                    missing.append(b)
                else:
                    blocks[b] = data
            for a, z in _runs(missing):
                start, stop = a * bs, min(self._size, (z + 1) * bs)
                data = store.fetch(self.rel, start, stop, self._size)
                for b in range(a, z + 1):
                    piece = data[(b - a) * bs:(b - a + 1) * bs]
                    blocks[b] = piece
                    store.cache.put((self.rel, b), piece)
        joined = blocks[first] if first == last else b"".join(blocks[b] for b in range(first, last + 1))
        lo = offset - first * bs
        return joined[lo:lo + n]


def _runs(sorted_ints: List[int]) -> Iterator[Tuple[int, int]]:
    """(first, last) of each run of consecutive integers."""
    i = 0
    while i < len(sorted_ints):
        j = i
        while j + 1 < len(sorted_ints) and sorted_ints[j + 1] == sorted_ints[j] + 1:
            j += 1
        yield sorted_ints[i], sorted_ints[j]
        i = j + 1


# The stores of the datasets opened in this process, by URL: detection (which knows a path,
# not a document) finds the store of a URL under an opened dataset here.
_STORES: "weakref.WeakValueDictionary[str, RemoteStore]" = weakref.WeakValueDictionary()


def store_for(url: str) -> RemoteStore:
    """The store of the opened dataset that holds `url` (the deepest), else a new one
    rooted at `url` (kept while something uses it)."""
    url = url.rstrip("/") or url
    best: Optional[RemoteStore] = None
    for root, store in list(_STORES.items()):
        if (url == root or url.startswith(root + "/")) and (best is None or len(root) > len(best.url)):
            best = store
    if best is None:
        best = RemoteStore(url)
        _STORES[best.url] = best
    return best


def problems(since: int = 0) -> List[str]:
    """What went wrong with remote datasets in this process (from mark `since`: `len` of
    an earlier answer), one line each: a stalled server, a server that ignores Range,
    objects that changed since their listing."""
    with _PROBLEMS_LOCK:
        return list(_PROBLEMS[since:])


_PROBLEMS: List[str] = []
_PROBLEMS_LOCK = threading.Lock()


def _note_problem(message: str) -> None:
    with _PROBLEMS_LOCK:
        if message not in _PROBLEMS:
            _PROBLEMS.append(message)


class ReadDeferred(BuildDeferred):
    """Children deferred only because building them costs requests (a remote data file's
    tiles): once built the tree is exactly the local one, so verify builds them all first
    (`build_read_deferred`), unlike the decoded chunks a Zarr array defers to save memory."""


def build_read_deferred(root: Optional[Node]) -> None:
    """Build every read-deferred node under `root`, and every other BuildDeferred (a lazily
    opened TileDB array's fragments and files): verify needs the whole tree."""
    if root is None:
        return
    stack = [root]
    while stack:
        n = stack.pop()
        if isinstance(n.children, BuildDeferred):
            n.ensure_built()
        if n.is_lazy:
            continue
        stack.extend(n.iter_children())


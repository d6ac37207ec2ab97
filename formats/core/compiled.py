"""Optional compiled kernels (numba), each with a numpy path beside it, and the one place
that decides which of the two runs.

Why: a few decode stages cannot reach the decode budget in numpy — a byte unshuffle is a
byte-strided copy numpy runs at about 1 GB/s, while zstd decompresses the same frames at
about 4 GB/s — and a loop compiled by numba (LLVM vectorises it) runs at 11–17 GB/s.
numba installs from wheels, but importing it costs 0.3–0.7 s (it pulls in scipy when that
is installed) and compiling the kernels minutes on a busy machine, once per machine.

The decision rule (`kernel_wanted`), asked by every caller before it takes a compiled
route (`Kernel.get`, `kernels.unshuffler`, `fused.decoder`, `bulkread`, the many-fragment
path of `values`), with the job's size and, where the caller knows them, its stages (the
filter types' names, `filters.enums.stage_names`); `prepare` announces a whole job before its pieces ask:

1. `ARRAYSCOPE_NO_JIT=1`, or numba does not import: numpy, and numba is never imported.
2. numba already loaded in this process: compiled, whatever the job (nothing left to pay).
3. a job below `TUNING.min_bytes` decoded bytes: numpy. A small dataset's command never
   imports numba.
4. a job whose stages are all `BYTEWISE` (codecs, BYTESHUFFLE, AES, checksums, RLE and
   DICTIONARY strings): numpy. Its stages run in C libraries (zstd, zlib, OpenSSL) or in
   numpy's byte loops at codec speed, on every core; importing numba and loading the cached
   kernels is 0.4 s of one core first. Measured whole process, 64 Mi int64 cells on 2
   cores: [BYTESHUFFLE, ZSTD] 0.96 s numpy against 1.38 s compiled, GZIP 1.09–1.46 against
   1.41–1.67, [AES, ZSTD] numpy ahead too. Only when `prepare` has announced
   `TUNING.bytewise_min_bytes` of such jobs in this process (a dataset of gigabytes: numpy's
   slower byte un-shuffle, 1 against 11 GB/s, then costs more than the import) is numba
   loaded for them, and from then on rule 2 holds.
5. any other job (a bit-level stage: DOUBLE_DELTA, DELTA, POSITIVE_DELTA, BITSHUFFLE, XOR,
   SCALE_FLOAT, BIT_WIDTH_REDUCTION; or stages unknown): load numba now; compiled. numpy
   runs these stages in several passes over memory (DOUBLE_DELTA whole process: 2.8 s
   numpy against 1.06–1.70 s compiled; BITSHUFFLE 1.7 against 1.10–1.42).
6. the compiled bulk reader (many small files read, located and decoded in one call,
   `bulk_wanted`): from `TUNING.min_files` files on, whether numba is loaded or not.

| job | numba not loaded | numba loaded |
| --- | --- | --- |
| `ARRAYSCOPE_NO_JIT=1` / no numba | numpy | numpy |
| < `min_bytes` (1 MiB) | numpy | compiled |
| only `BYTEWISE` stages | numpy (numba loads once `prepare` saw `bytewise_min_bytes`, 1 GiB) | compiled |
| a bit-level stage, or stages not said | numba loaded, compiled | compiled |
| bulk reader, ≥ `min_files` (64) files | numba loaded, compiled | compiled |

So the window's repeated decodes, once anything loaded numba, keep the kernels (rule 2).

A kernel is written once, in numba's nopython subset of Python, and declared with
`@kernel`; callers ask `KERNEL.get(nbytes)` for the compiled function and fall back to
their numpy code when it gives None. Kernels run with the GIL released (`nogil`), so a
thread pool decodes tiles on every core.

Importing the library changes nothing in the process (no environment variable, no numba
setting). Our own processes (the `arrayscope` command, its workers) call `own_process()`:
numba's cache then goes to the user's cache folder, set through `numba.config` when numba
is loaded, and a one-line note on stderr says when kernels are about to be compiled.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, List, Optional, Sequence, overload


def _cores() -> int:
    """The cores this process may run on, all of them (issue 26: the pool is sized to the
    machine, not capped; a job is cut into at least as many parts as there are threads)."""
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, n or 1)


@dataclass(frozen=True)
class Tuning:
    """Every number that tunes the decode of TileDB tiles (`tiledb/parse/decode.py`, `values`,
    verify's tile batches): when compiled kernels pay for importing numba, how the work is
    cut for the threads, what memory it may hold. None changes a result, only its speed and
    memory; tests replace the object (`dataclasses.replace`) to reach the edge cases."""

    # decoded bytes of one job from which numba is loaded: below, importing it (~0.5 s)
    # costs more than numpy's slower loops on the whole job
    min_bytes: int = 1 << 20
    # decoded bytes of jobs with only `BYTEWISE` stages announced (`prepare`) in one process
    # from which numba is loaded for them too (rule 4 of the module doc)
    bytewise_min_bytes: int = 1 << 30
    # False: every chunk through the reference decoder (`tiledb/parse/decode.py`), verify's tile
    # batches off — what the differential tests compare the planned path with
    planned: bool = True
    # fragments from which `values` reads them with the compiled bulk reader: below, the
    # Python path's per-file cost is small beside loading numba and batching
    min_files: int = 64
    # decode threads (zstd, zlib, bz2, lz4, numpy, the kernels and the AES of
    # `cryptography` release the GIL)
    workers: int = field(default_factory=_cores)
    # chunks from which a run is cut for the threads (fewer: one thread, no pool)
    thread_min_chunks: int = 8
    # stored chunks decoded between releases of their mapped pages (64 KiB chunks: 16 MiB);
    # also the most chunks of one fused kernel call
    release_every: int = 256
    # kernel calls per thread at least, when there are enough chunks: a slow stretch holds
    # up one call, not a fixed share of the file
    runs_per_worker: int = 8
    # a file of at most this many chunks is packed with others into one kernel call (a
    # call costs some microseconds to set up), up to `pack_bytes` stored bytes a call
    pack_chunks: int = 8
    pack_bytes: int = 16 << 20
    # encrypted chunks per thread's slice at most (a slow thread holds up less)
    aes_slice: int = 128
    # `values` of many fragments: deferred files are decoded together in batches of about
    # this many stored bytes, decoded bytes or files (their mapped pages stay resident until
    # the batch is decoded), each batch while the next one's fragments are read (`overlap`;
    # False: one after the other, for A/B measurements)
    batch_stored: int = 16 << 20
    batch_decoded: int = 8 << 20
    batch_files: int = 128
    overlap: bool = True
    # fragments located together (their tile offsets decoded together): fewer than
    # FileSource keeps open (128), so each metadata file is read once
    locate_batch: int = 32
    # a format whose fragments did not read like its bulk plan is planned again this often
    replans: int = 8
    # `values --raw` of a var-sized field checks its offsets tiles this many bytes at a time
    offsets_piece: int = 4 << 20
    # the compiled bulk reader: fragments per batch, and the largest data file it reads
    bulk_fragments: int = 32
    bulk_file_limit: int = 1 << 20
    # verify's tile batches: bytes of a file read at once, tiles per window (progress is
    # reported at least this often), decoded tiles kept for the cell checks
    window: int = 32 << 20
    window_tiles: int = 65536
    # verify's chunk windows (`decode.choose_chunk`): a chunk declaring more cells is
    # checked on its own (its limits), and a window holds this many decoded bytes (plus
    # one chunk)
    window_chunk_max: int = 64 << 20
    window_cells: int = 64 << 20
    # verify's per-chunk checks: on the pool in batches of this many chunks or bytes (tiny
    # chunks cost no task each; a batch of less than `check_thread_min` bytes runs in the
    # calling thread), eight batches' worth gathered between chunk windows (bounded memory
    # for a million tiles, few waits for the pool)
    check_batch: int = 256
    check_batch_bytes: int = 4 << 20
    check_thread_min: int = 1 << 20
    # decoded tiles kept for the cell checks from this size (a codec call saved each);
    # smaller ones are decoded again, in one pass, rather than held a million at a time
    keep_min: int = 4096
    tile_cache: int = 256 << 20
    # the numpy un-shuffle: equal-sized chunks per call (64 KiB chunks: 1 MiB, about L2),
    # sizes grouped at once (a scratch array each), the largest chunk grouped
    unshuffle_group: int = 32
    unshuffle_sizes: int = 2
    unshuffle_group_max: int = 1 << 20
    # encrypted chunks decrypted before their lower filters run (bounds what is held)
    aes_group: int = 32
    # an output from this size on is written with streaming stores (past the caches)
    stream_bytes: int = 16 << 20
    # the numpy bit un-shuffle (`filters/bits.py`): 8 KiB blocks per numpy pass (128: 1 MiB
    # of cells, stays in L2), and blocks from which the word transposes run (from 128 KiB
    # they win; measured: 64 KiB loses)
    bit_blocks_per_step: int = 128
    bit_words_min_blocks: int = 16
    # `values`: fragment-metadata files up to this size are read whole and kept by the model
    # (what libtiledb keeps of a loaded fragment too)
    held_meta: int = 16 << 10


TUNING = Tuning()


def tuned(**changes: Any) -> Tuning:
    """`TUNING` with some numbers changed (tests put it in `TUNING`'s place)."""
    return replace(TUNING, **changes)
MIN_BYTES = TUNING.min_bytes   # a default size for callers that ask "once loaded, compiled?"

_lock = threading.RLock()
_numba: Any = None
_tried = False
_bytewise_seen = 0   # decoded bytes of `BYTEWISE` jobs `prepare` was told of (rule 4)

# The stages numpy and the C codecs run at codec speed (filter type names, `filters.enums.stage_names`):
# a job of only these does not load numba (rule 4). Every other stage is bit-level.
BYTEWISE = frozenset({"NONE", "GZIP", "ZSTD", "LZ4", "BZIP2", "RLE", "DICTIONARY",
                      "BYTESHUFFLE", "INTERNAL_FILTER_AES_256_GCM", "CHECKSUM_MD5",
                      "CHECKSUM_SHA256"})
_own: Optional["_OwnProcess"] = None
_listening = False   # the first-compile listener is registered with numba


def disabled() -> bool:
    """`ARRAYSCOPE_NO_JIT=1`: numpy paths only (read on every call, so tests can set it)."""
    return os.environ.get("ARRAYSCOPE_NO_JIT", "").lower() in ("1", "true", "yes")


def user_cache_dir() -> str:
    """Where our own processes keep the compiled machine code: the user's cache folder,
    never the installed package (numba's default is a `__pycache__` beside the source: in
    site-packages those files outlive `pip uninstall`), in a folder of its own per version
    of the kernel sources (`kernel_sources_stamp`)."""
    if sys.platform == "win32":
        root = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    elif sys.platform == "darwin":
        root = os.path.expanduser("~/Library/Caches")
    else:
        root = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(root, "arrayscope", "numba", kernel_sources_stamp())


def kernel_sources_stamp() -> str:
    """A short digest of the kernel modules' sizes and modification times. numba checks
    only the calling function's own file before it reuses cached machine code, but a
    kernel inlines functions of other modules (`nativekernels` calls `simd`, `kernels`):
    after a change to one of those, the cache would hand out the old code. Every version
    of the sources gets a cache of its own instead."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # formats/
    import hashlib  # here: only our own process with numba loaded asks

    digest = hashlib.sha1()
    for folder in sorted(d for d, _, _ in os.walk(here) if "__pycache__" not in d):
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
        except OSError:
            continue
        for name in names:
            try:
                st = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            digest.update(f"{name}:{st.st_size}:{st.st_mtime_ns};".encode())
    return digest.hexdigest()[:12]


@dataclass
class _OwnProcess:
    user_cache: bool                         # False: NUMBA_CACHE_DIR (the user's) rules
    notice: Optional[Callable[[str], None]]  # where the first-compile note goes
    noted: bool = False


# what one stack's kernels take to compile, measured on a busy 2-core machine
# (tests/benchmarks/startup.py --kernels: 1.5-3 s): the note tells the order of magnitude
COMPILE_NOTE = "compiling decode kernels once (a few seconds)…"


def own_process(notice: Optional[Callable[[str], None]] = None) -> None:
    """Called by the entry points of our own processes (the CLI, the window, the verify
    worker), never on import: numba's cache goes to `user_cache_dir()` (unless the user
    set NUMBA_CACHE_DIR), set through `numba.config` once numba is loaded; `notice` gets
    `COMPILE_NOTE` once, when a kernel is about to be compiled (none cached for its
    arguments), not when one is read from the cache."""
    global _own
    _own = _OwnProcess(not os.environ.get("NUMBA_CACHE_DIR"), notice)
    if _numba is not None:
        _configure(_numba)


def _configure(numba: Any) -> None:
    """Our own process's numba settings (numba.config values set in code are kept by
    numba's config reload, which only re-reads NUMBA_* variables when they change)."""
    own = _own
    if own is None:
        return
    if own.user_cache:
        folder = user_cache_dir()
        numba.config.CACHE_DIR = folder
        prune_caches(folder)
    if own.notice is not None:
        _listen_for_compiles(numba)


def _listen_for_compiles(numba: Any) -> None:
    """`_own.notice` gets `COMPILE_NOTE` at the first compile numba starts in this process
    (numba's "numba:compile" event starts only when the cache has no machine code for
    the arguments)."""
    from numba.core import event

    class _FirstCompile(event.Listener):
        def on_start(self, ev: Any) -> None:
            own = _own
            if own is not None and own.notice is not None and not own.noted:
                own.noted = True
                own.notice(COMPILE_NOTE)

        def on_end(self, ev: Any) -> None:
            pass

    global _listening
    with _lock:
        if not _listening:
            event.register("numba:compile", _FirstCompile())
            _listening = True


# another version's cache untouched this long is an old install's: removed. (Not at once:
# two installs in use side by side, sharing the user's cache folder, keep theirs.)
STALE_CACHE_S = 3600.0


def prune_caches(current: str, now: Optional[float] = None) -> List[str]:
    """Remove the kernel caches of other versions of the sources (the sibling folders of
    `current` under the user's cache folder) that nothing wrote for `STALE_CACHE_S`: every
    reinstall makes a new one. Returns the folders removed; an error leaves a folder."""
    import shutil

    parent = os.path.dirname(current)
    now = time.time() if now is None else now
    removed: List[str] = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        folder = os.path.join(parent, name)
        if folder == current or len(name) != 12 or not os.path.isdir(folder) \
                or os.path.islink(folder):
            continue
        newest = _newest_mtime(folder)
        if newest is not None and now - newest > STALE_CACHE_S:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _newest_mtime(folder: str) -> Optional[float]:
    newest: Optional[float] = None
    for root, _dirs, files in os.walk(folder):
        for n in [root] + [os.path.join(root, f) for f in files]:
            try:
                m = os.lstat(n).st_mtime
            except OSError:
                continue
            newest = m if newest is None or m > newest else newest
    return newest


def _load() -> Any:
    global _numba, _tried
    if not _tried:
        with _lock:
            if not _tried:
                try:
                    import numba as found
                    _numba = found
                except Exception:   # not installed, or broken against this numpy
                    _numba = None
                _tried = True
                if _numba is not None:
                    _configure(_numba)
    return _numba


def loaded() -> bool:
    """numba is imported already (asking for a kernel costs no import)."""
    return _tried and _numba is not None


def _bytewise(stages: Optional[Sequence[str]]) -> bool:
    return stages is not None and all(s in BYTEWISE for s in stages)


def prepare(nbytes: int, stages: Optional[Sequence[str]] = None) -> None:
    """A decode of `nbytes` in all through `stages` is about to run in pieces smaller than
    `min_bytes` (chunk by chunk): load numba now if it pays (rules 3–5), so each piece's
    `get` finds it loaded. A `BYTEWISE` job counts towards `bytewise_min_bytes`."""
    global _bytewise_seen
    if _bytewise(stages) and not loaded() and not disabled() and nbytes >= TUNING.min_bytes:
        with _lock:
            _bytewise_seen += nbytes
            if _bytewise_seen < TUNING.bytewise_min_bytes:
                return
        _load()
        return
    kernel_wanted(nbytes, stages)


def kernel_wanted(nbytes: int, stages: Optional[Sequence[str]] = None) -> bool:
    """The decision rule (module docstring, 1–5): a compiled kernel should run on a job of
    `nbytes` decoded bytes through `stages` (None: not said, taken as bit-level). numba is
    imported here (or in `prepare`, `bulk_wanted`), and only here, when the job pays
    for it."""
    if disabled():
        return False
    if loaded():
        return True
    if nbytes < TUNING.min_bytes or _bytewise(stages):
        return False
    return _load() is not None


def bulk_wanted(files: int) -> bool:
    """The rule for the compiled bulk reader (`bulkread`, `values` of many fragments): at
    least `TUNING.min_files` files — below, its batches cost more than the Python path
    reading them one by one, numba loaded or not — and numba loads."""
    if disabled() or files < TUNING.min_files:
        return False
    return _load() is not None


class Kernel:
    """One compiled kernel: the plain-Python source (also runnable as Python, for tests of
    tiny inputs) and its numba dispatcher, made on first use."""

    def __init__(self, fn: Callable[..., Any], stages: Optional[Sequence[str]] = None) -> None:
        self.py = fn
        self.stages = stages   # the stage it runs (None: bit-level; `kernel_wanted`)
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self._jit: Optional[Callable[..., Any]] = None
        self._inline: Any = None

    def get(self, nbytes: int = MIN_BYTES) -> Optional[Callable[..., Any]]:
        """The compiled function, or None: take the numpy path."""
        if not kernel_wanted(nbytes, self.stages):
            return None
        if self._jit is None:
            numba = _load()
            with _lock:
                if self._jit is None:
                    self._jit = numba.njit(nogil=True, cache=True)(self.py)
        return self._jit

    def inlined(self) -> Any:
        """The kernel for other compiled code to inline (numba loaded: `nativekernels`): its
        body compiled into the caller, whose constants prune its branches, rather than a
        function of its own compiled for every size of everything (a first run's cost)."""
        if self._inline is None:
            numba = _load()
            with _lock:
                if self._inline is None:
                    self._inline = numba.njit(nogil=True, cache=True, inline="always")(self.py)
        return self._inline


@overload
def kernel(fn: Callable[..., Any]) -> Kernel: ...
@overload
def kernel(*, stages: Sequence[str]) -> Callable[[Callable[..., Any]], Kernel]: ...


def kernel(fn: Optional[Callable[..., Any]] = None, *, stages: Optional[Sequence[str]] = None
           ) -> Any:
    """`@kernel`, or `@kernel(stages=(...))` for a kernel of `BYTEWISE` stages only (which
    never loads numba by itself: rule 4)."""
    if fn is None:
        return lambda f: Kernel(f, stages)
    return Kernel(fn, stages)

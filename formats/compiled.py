"""Optional compiled kernels (numba), each with a numpy path beside it.

Why: a few decode stages cannot reach the decode budget in numpy — a byte unshuffle is a
byte-strided copy numpy runs at about 1 GB/s, while zstd decompresses the same frames at
about 4 GB/s — and a loop compiled by numba (LLVM vectorises it) runs at 11–17 GB/s.
numba installs from wheels; the numpy path stays, and is taken:

- when numba is not installed, or `ARRAYSCOPE_NO_JIT=1` (the tests run both paths);
- for small inputs while nothing is compiled yet: importing numba (about 0.3 s) and
  compiling a kernel (about 0.5 s, once per machine: the machine code is cached on disk)
  costs more than a small decode saves.

A kernel is written once, in numba's nopython subset of Python, and declared with
`@kernel`; callers ask `KERNEL.get(nbytes)` for the compiled function and fall back to
their numpy code when it gives None. Kernels run with the GIL released (`nogil`), so a
thread pool decodes tiles on every core.
"""
from __future__ import annotations

import hashlib
import os
import sys
import threading
from typing import Any, Callable, Optional

MIN_BYTES = 1 << 20      # below this, the numpy path unless numba is already loaded

_lock = threading.RLock()
_numba: Any = None
_tried = False


def disabled() -> bool:
    """`ARRAYSCOPE_NO_JIT=1`: numpy paths only (read on every call, so tests can set it)."""
    return os.environ.get("ARRAYSCOPE_NO_JIT", "").lower() in ("1", "true", "yes")


def user_cache_dir() -> str:
    """Where the compiled machine code is kept: the user's cache folder, never the installed
    package (numba's default is a `__pycache__` beside the source: in site-packages those
    files outlive `pip uninstall`, and the folder they leave shadows a later editable
    install of `arrayscope`), in a folder of its own per version of the kernel sources
    (`kernel_sources_stamp`). `NUMBA_CACHE_DIR`, when set, is left alone."""
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
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha1()
    for folder in (here, os.path.join(here, "filters")):
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


def use_user_cache() -> None:
    """Point numba's cache at `user_cache_dir` (unless `NUMBA_CACHE_DIR` is set): numba
    reads it once, when it is first imported, so this runs before any import of numba —
    when `arrayscope.formats` is imported, and again in `_load`. The modules that import
    numba themselves (`filters/simd.py`, `filters/nativekernels.py`) are reached only
    through this package."""
    if "numba" not in sys.modules:
        os.environ.setdefault("NUMBA_CACHE_DIR", user_cache_dir())


def _load() -> Any:
    global _numba, _tried
    if not _tried:
        with _lock:
            if not _tried:
                use_user_cache()
                try:
                    import numba as found
                    _numba = found
                except Exception:   # not installed, or broken against this numpy
                    _numba = None
                _tried = True
    return _numba


def loaded() -> bool:
    """numba is imported already (asking for a kernel costs no import)."""
    return _tried and _numba is not None


def prepare(nbytes: int) -> None:
    """A decode of `nbytes` in all is about to run in pieces smaller than MIN_BYTES (chunk
    by chunk): load numba now if it pays, so each piece's `get` finds it loaded."""
    if nbytes >= MIN_BYTES and not disabled():
        _load()


def kernel_wanted(nbytes: int) -> bool:
    """A compiled kernel should run on `nbytes`: not disabled, and numba loads (imported
    now when `nbytes` is large enough to pay for it)."""
    if disabled():
        return False
    if nbytes < MIN_BYTES and not loaded():
        return False
    return _load() is not None


class Kernel:
    """One compiled kernel: the plain-Python source (also runnable as Python, for tests of
    tiny inputs) and its numba dispatcher, made on first use."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.py = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self._jit: Optional[Callable[..., Any]] = None

    def get(self, nbytes: int = MIN_BYTES) -> Optional[Callable[..., Any]]:
        """The compiled function, or None: take the numpy path."""
        if not kernel_wanted(nbytes):
            return None
        if self._jit is None:
            numba = _load()
            with _lock:
                if self._jit is None:
                    self._jit = numba.njit(nogil=True, cache=True)(self.py)
        return self._jit


def kernel(fn: Callable[..., Any]) -> Kernel:
    return Kernel(fn)

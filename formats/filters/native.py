"""C codec entry points a compiled kernel can call with the GIL released.

Why: python-zstandard releases the GIL inside each `decompress` call, but a 64 KiB chunk
decompresses in about 15 µs, so threads spend their time handing the GIL back and forth
(two threads ran slower than one). A kernel that loops over a whole file's chunks and calls
libzstd itself holds no GIL at all, on every core.

The functions are the ones the installed wheels already carry — no new library: libzstd as
built into python-zstandard (its cffi module, `zstandard._cffi`, shipped in the same wheel;
cffi comes with cryptography). Addresses are plain integers, so the kernels that take them
stay cacheable on disk (`formats/filters/nativekernels.py`). Anything missing gives None and
the callers keep their Python paths.
"""
from __future__ import annotations

import importlib
import threading
from typing import Any, NamedTuple, Optional


class ZstdFunctions(NamedTuple):
    """Addresses of the libzstd functions the fused kernels call."""

    decompress_dctx: int         # ZSTD_decompressDCtx(dctx, dst, capacity, src, size)
    frame_compressed_size: int   # ZSTD_findFrameCompressedSize(src, size)
    frame_content_size: int      # ZSTD_getFrameContentSize(src, size)


_lock = threading.Lock()
_tried = False
_zstd: Optional[ZstdFunctions] = None
_cffi: Any = None
_local = threading.local()


def _load() -> Optional[ZstdFunctions]:
    global _tried, _zstd, _cffi
    if _tried:
        return _zstd
    with _lock:
        if not _tried:
            try:
                # the wheel's cffi build of libzstd
                found = importlib.import_module("zstandard._cffi")
                ffi, lib = found.ffi, found.lib

                def address(name: str) -> int:
                    return int(ffi.cast("uintptr_t", ffi.addressof(lib, name)))
                _zstd = ZstdFunctions(address("ZSTD_decompressDCtx"),
                                      address("ZSTD_findFrameCompressedSize"),
                                      address("ZSTD_getFrameContentSize"))
                _cffi = found
            except Exception:   # no cffi, another zstandard build: the Python path
                _zstd = None
            _tried = True
    return _zstd


def zstd() -> Optional[ZstdFunctions]:
    """The libzstd addresses, or None when this zstandard build does not expose them."""
    return _load()


def zstd_dctx() -> int:
    """This thread's libzstd decompression context (a context is not thread-safe); freed
    when the thread ends. Default parameters: the same window limit and checksum checks as
    `zstandard.ZstdDecompressor()`, which the Python path uses."""
    held = getattr(_local, "dctx", None)
    if held is None:
        if _load() is None:
            raise RuntimeError("libzstd is not available")
        ffi, lib = _cffi.ffi, _cffi.lib
        held = _local.dctx = ffi.gc(lib.ZSTD_createDCtx(), lib.ZSTD_freeDCtx)
        if held == ffi.NULL:
            del _local.dctx
            raise MemoryError("ZSTD_createDCtx failed")
    return int(_cffi.ffi.cast("uintptr_t", held))

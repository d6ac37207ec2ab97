"""C codec entry points a compiled kernel can call with the GIL released.

Why: the Python codec bindings release the GIL inside each call, but a 64 KiB chunk
decompresses in about 15 µs, so threads spend their time handing the GIL back and forth
(two threads ran slower than one). A kernel that loops over a whole file's chunks and calls
the C library itself holds no GIL at all, on every core.

Only the public C API of the system's shared libraries is called — libzstd, liblz4,
libbz2 (found by `ctypes.util.find_library`, as a C program links them) — never a private
module or a struct layout of another Python package. Each codec is called as libtiledb calls
it, so the kernels and the Python paths (`compression.py`, python-zstandard's and python-lz4's
public API) give the same bytes; a chunk the kernel does not decode exactly is left to the
Python path. Addresses are plain integers, so the kernels that take them stay cacheable on
disk (`formats/accel/nativekernels.py`). A library that cannot be found gives None and the
callers keep their Python paths. AES-256-GCM (`aes_gcm`, at the end) comes from the
system's OpenSSL libcrypto, on Linux.
"""
from __future__ import annotations

import ctypes
import sys
import threading
from enum import IntEnum
from typing import Any, Dict, Optional, Tuple


class Codec(IntEnum):
    """The codecs the kernels call (the kernels branch on these numbers)."""

    ZSTD = 0    # ZSTD_decompressDCtx, ZSTD_findFrameCompressedSize, ZSTD_getFrameContentSize
    LZ4 = 1     # LZ4_decompress_safe (what lz4.block.decompress calls)
    ZLIB = 2    # none: the Python path (see _LOADERS)
    BZIP2 = 3   # BZ2_bzBuffToBuffDecompress (one stream, as bz2.BZ2Decompressor reads it)


_lock = threading.Lock()
_found: Dict[Codec, Optional[Tuple[int, ...]]] = {}
_libs: Dict[str, Any] = {}
_local = threading.local()


def address(fn: Any) -> int:
    """A ctypes function's address, as the compiled kernels call it (0: none)."""
    return int(ctypes.cast(fn, ctypes.c_void_p).value or 0)


def _library(name: str) -> Any:
    """The system's shared library `name` (as the linker names it: "zstd" for libzstd)."""
    if name not in _libs:
        from ctypes.util import find_library  # here: it imports subprocess and tempfile

        path = find_library(name)
        if path is None:
            raise OSError(f"lib{name} not found")
        _libs[name] = ctypes.CDLL(path)
    return _libs[name]


def _system(name: str, *symbols: str) -> Tuple[int, ...]:
    lib = _library(name)
    return tuple(address(getattr(lib, symbol)) for symbol in symbols)


def _zstd() -> Tuple[int, ...]:
    lib = _library("zstd")
    lib.ZSTD_createDCtx.restype = ctypes.c_void_p
    lib.ZSTD_freeDCtx.argtypes = [ctypes.c_void_p]
    return _system("zstd", "ZSTD_decompressDCtx", "ZSTD_findFrameCompressedSize",
                   "ZSTD_getFrameContentSize")


# ZLIB has no kernel: the Python path (`compression.Gzip`, the `zlib_ng` wheel's public API,
# which releases the GIL) inflates faster than the system zlib called from a kernel — zlib-ng
# is about 1.9× zlib, more than the GIL costs a codec this slow (16M float64 cells, 2 cores:
# 429 ms of CPU against 552 ms).
_LOADERS = {Codec.ZSTD: _zstd, Codec.LZ4: lambda: _system("lz4", "LZ4_decompress_safe"),
            Codec.ZLIB: lambda: None,
            Codec.BZIP2: lambda: _system("bz2", "BZ2_bzBuffToBuffDecompress")}


# the kernels pass pointers, size_t and zlib's uLong as 64-bit integers
_LP64 = ctypes.sizeof(ctypes.c_void_p) == 8 and ctypes.sizeof(ctypes.c_ulong) == 8


def functions(codec: Codec) -> Optional[Tuple[int, ...]]:
    """The addresses of `codec`'s functions (the order `Codec` lists), or None when its
    library cannot be reached here."""
    if not _LP64:
        return None
    if codec not in _found:
        with _lock:
            if codec not in _found:
                try:
                    got: Optional[Tuple[int, ...]] = _LOADERS[codec]()
                    if got is not None and not all(got):
                        got = None
                except Exception:   # no such library or symbol: the Python path
                    got = None
                _found[codec] = got
    return _found[codec]


class _DecompressionContext:
    """One thread's ZSTD_DCtx (not thread-safe), freed with the thread's locals."""

    def __init__(self) -> None:
        self.lib = _library("zstd")
        self.address = int(self.lib.ZSTD_createDCtx() or 0)
        if not self.address:
            raise MemoryError("ZSTD_createDCtx failed")

    def __del__(self) -> None:
        if self.address:
            self.lib.ZSTD_freeDCtx(self.address)


def context(codec: Codec) -> int:
    """This thread's decompression context for `codec` (0 when it needs none): a libzstd
    context with default parameters (the window limit and checksum checks of
    `zstandard.ZstdDecompressor()`); not thread-safe, freed when the thread ends."""
    if codec != Codec.ZSTD:
        return 0
    held = getattr(_local, "dctx", None)
    if held is None:
        if functions(Codec.ZSTD) is None:
            raise RuntimeError("libzstd is not available")
        held = _local.dctx = _DecompressionContext()
    return held.address


# ---- AES-256-GCM: OpenSSL's EVP interface, for decrypting without the GIL -----------------
# cryptography's AESGCM holds the GIL while it decrypts (and its OpenSSL is private to its
# wheel), so encrypted chunks were decrypted one thread at a time. The system's libcrypto
# (OpenSSL 1.1 or 3: the same EVP calls) is called instead where one is found, on Linux only
# (macOS aborts a process that loads its unversioned libcrypto). GCM is exact: the same key,
# IV, ciphertext and tag give the same plaintext or the same refusal on either library.
_EVP_CTRL_GCM_SET_TAG = 0x11
_aes_found: Optional[Tuple[int, ...]] = None
_aes_tried = False
_aes_lib: Any = None


def _load_aes() -> Optional[Tuple[int, ...]]:
    global _aes_lib
    if not sys.platform.startswith("linux") or not _LP64:
        return None
    from ctypes.util import find_library

    path = find_library("crypto")
    if path is None:
        return None
    lib = ctypes.CDLL(path)
    version = lib.OpenSSL_version_num
    version.restype = ctypes.c_ulong
    if version() < 0x10100000:   # before 1.1: another API for contexts
        return None
    cipher = lib.EVP_aes_256_gcm
    cipher.restype = ctypes.c_void_p
    lib.EVP_CIPHER_CTX_new.restype = ctypes.c_void_p
    lib.EVP_CIPHER_CTX_free.argtypes = [ctypes.c_void_p]
    _aes_lib = lib
    return (address(lib.EVP_DecryptInit_ex), address(lib.EVP_CIPHER_CTX_ctrl),
            address(lib.EVP_DecryptUpdate), address(lib.EVP_DecryptFinal_ex),
            int(cipher() or 0), _EVP_CTRL_GCM_SET_TAG)


def aes_gcm() -> Optional[Tuple[int, ...]]:
    """(EVP_DecryptInit_ex, EVP_CIPHER_CTX_ctrl, EVP_DecryptUpdate, EVP_DecryptFinal_ex,
    the EVP_aes_256_gcm cipher, the set-tag control code), or None: no usable libcrypto here
    (the callers keep cryptography's path)."""
    global _aes_found, _aes_tried
    if not _aes_tried:
        with _lock:
            if not _aes_tried:
                try:
                    got = _load_aes()
                    _aes_found = got if got is not None and all(got) else None
                except Exception:   # no such library or symbol
                    _aes_found = None
                _aes_tried = True
    return _aes_found


class _CipherContext:
    """One thread's EVP_CIPHER_CTX (not thread-safe), freed with the thread's locals."""

    def __init__(self) -> None:
        self.address = int(_aes_lib.EVP_CIPHER_CTX_new() or 0)
        if not self.address:
            raise MemoryError("EVP_CIPHER_CTX_new failed")

    def __del__(self) -> None:
        if self.address and _aes_lib is not None:
            _aes_lib.EVP_CIPHER_CTX_free(self.address)


def aes_context() -> int:
    """This thread's cipher context (`aes_gcm` must have given the functions)."""
    held = getattr(_local, "evp", None)
    if held is None:
        held = _local.evp = _CipherContext()
    return held.address

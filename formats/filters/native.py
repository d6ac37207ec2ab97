"""C codec entry points a compiled kernel can call with the GIL released.

Why: the Python codec bindings release the GIL inside each call, but a 64 KiB chunk
decompresses in about 15 µs, so threads spend their time handing the GIL back and forth
(two threads ran slower than one). A kernel that loops over a whole file's chunks and calls
the C library itself holds no GIL at all, on every core.

The libraries are the ones already installed — no new one: libzstd as built into
python-zstandard (its cffi module `zstandard._cffi`, shipped in the same wheel; cffi is a
dependency), liblz4 inside python-lz4's extension module (which exports its symbols), and
the system zlib and libbz2 that Python's own `zlib` and `bz2` modules load. Each codec is
called exactly as its Python binding calls it, so both give the same bytes. Addresses are
plain integers, so the kernels that take them stay cacheable on disk
(`formats/filters/nativekernels.py`). A library that cannot be found gives None and the
callers keep their Python paths. AES-256-GCM (`aes_gcm`, at the end) comes from the
system's OpenSSL libcrypto, on Linux.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import sys
import threading
from enum import IntEnum
from typing import Any, Dict, List, Optional, Tuple


class Codec(IntEnum):
    """The codecs the kernels call (the kernels branch on these numbers)."""

    ZSTD = 0    # ZSTD_decompressDCtx, ZSTD_findFrameCompressedSize, ZSTD_getFrameContentSize
    LZ4 = 1     # LZ4_decompress_safe (what lz4.block.decompress calls)
    ZLIB = 2    # zlib-ng's inflate, or uncompress2 (a zlib stream, as zlib.decompressobj() reads it)
    BZIP2 = 3   # BZ2_bzBuffToBuffDecompress (one stream, as bz2.BZ2Decompressor reads it)


_lock = threading.Lock()
_found: Dict[Codec, Optional[Tuple[int, ...]]] = {}
_zstd_cffi: Any = None
_local = threading.local()


def _address(fn: Any) -> int:
    return int(ctypes.cast(fn, ctypes.c_void_p).value or 0)


def _zstd() -> Tuple[int, ...]:
    global _zstd_cffi
    found = importlib.import_module("zstandard._cffi")   # the wheel's cffi build of libzstd
    ffi, lib = found.ffi, found.lib
    _zstd_cffi = found
    return tuple(int(ffi.cast("uintptr_t", ffi.addressof(lib, name)))
                 for name in ("ZSTD_decompressDCtx", "ZSTD_findFrameCompressedSize",
                              "ZSTD_getFrameContentSize"))


def _lz4() -> Tuple[int, ...]:
    ext = importlib.import_module("lz4.block._block")
    return (_address(ctypes.CDLL(ext.__file__).LZ4_decompress_safe),)


def _system(name: str, symbol: str) -> Tuple[int, ...]:
    path = ctypes.util.find_library(name)
    if path is None:
        raise OSError(f"lib{name} not found")
    return (_address(getattr(ctypes.CDLL(path), symbol)),)


# ---- zlib: zlib-ng's inflate where its wheel is installed, else the system's uncompress2 -----
# zlib-ng inflates the same deflate streams about 1.9× faster than the system zlib here (it
# was the one codec at which libtiledb kept up with us). Its wheel (`zlib_ng`, a runtime
# dependency) links zlib-ng into its extension module and exports the native API
# (`zng_` names), which has no uncompress2: the kernels drive a `zng_stream` — one per
# thread (`context`), reset per part — with inflate(Z_FINISH), and take only a complete
# stream of exactly the declared size, as uncompress2's caller does.
ZNG_STREAM_BYTES = 104          # sizeof(zng_stream) on LP64
ZNG_NEXT_IN, ZNG_AVAIL_IN, ZNG_NEXT_OUT, ZNG_AVAIL_OUT, ZNG_TOTAL_OUT = 0, 8, 24, 32, 40
Z_FINISH, Z_STREAM_END = 4, 1
_zng: Any = None


def _zlib() -> Tuple[int, ...]:
    """(uncompress2 or 0, zng_inflateReset or 0, zng_inflate or 0)."""
    global _zng
    try:
        ext = importlib.import_module("zlib_ng.zlib_ng")
        lib = ctypes.CDLL(ext.__file__)
        lib.zng_inflateInit2.argtypes = [ctypes.c_void_p, ctypes.c_int32]
        lib.zng_inflateEnd.argtypes = [ctypes.c_void_p]
        lib.zng_inflateReset.argtypes = [ctypes.c_void_p]
        lib.zng_inflate.argtypes = [ctypes.c_void_p, ctypes.c_int32]
        if _zng_works(lib):
            _zng = lib
            return (0, _address(lib.zng_inflateReset), _address(lib.zng_inflate))
    except (ImportError, OSError, AttributeError):   # no wheel, or not the API we know
        pass
    return _system("z", "uncompress2") + (0, 0)


class _InflateStream:
    """One thread's zng_stream (not thread-safe), ended with the thread's locals."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib
        self.buffer = ctypes.create_string_buffer(ZNG_STREAM_BYTES)
        self.address = ctypes.addressof(self.buffer)
        if lib.zng_inflateInit2(self.address, 15) != 0:
            self.address = 0
            raise MemoryError("zng_inflateInit2 failed")

    def __del__(self) -> None:
        if self.address:
            self.lib.zng_inflateEnd(self.address)


def _zng_inflate(lib: Any, stream: _InflateStream, src: bytes, n: int) -> Optional[bytes]:
    """What a kernel does with one part (`nativekernels._part`), from Python: the check
    that this zlib-ng has the stream layout above."""
    import struct
    out = ctypes.create_string_buffer(max(1, n))
    inp = ctypes.create_string_buffer(src, len(src))
    if lib.zng_inflateReset(stream.address) != 0:
        return None
    struct.pack_into("<Q", stream.buffer, ZNG_NEXT_IN, ctypes.addressof(inp))
    struct.pack_into("<I", stream.buffer, ZNG_AVAIL_IN, len(src))
    struct.pack_into("<Q", stream.buffer, ZNG_NEXT_OUT, ctypes.addressof(out))
    struct.pack_into("<I", stream.buffer, ZNG_AVAIL_OUT, n)
    if lib.zng_inflate(stream.address, Z_FINISH) != Z_STREAM_END or \
            struct.unpack_from("<Q", stream.buffer, ZNG_TOTAL_OUT)[0] != n:
        return None
    return out.raw[:n]


def _zng_works(lib: Any) -> bool:
    import zlib
    plain = bytes(range(256)) * 64
    try:
        stream = _InflateStream(lib)
    except MemoryError:
        return False
    return _zng_inflate(lib, stream, zlib.compress(plain, 6) + b"tail", len(plain)) == plain \
        and _zng_inflate(lib, stream, zlib.compress(plain, 1)[:-9], len(plain)) is None


_LOADERS = {Codec.ZSTD: _zstd, Codec.LZ4: _lz4, Codec.ZLIB: _zlib,
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
                    # (zlib: uncompress2, or zlib-ng's two functions, 0 for the others)
                    whole = got is not None and (all(got) if codec != Codec.ZLIB
                                                 else bool(got[0]) or all(got[1:]))
                    if not whole:
                        got = None
                except Exception:   # no such library or symbol: the Python path
                    got = None
                _found[codec] = got
    return _found[codec]


def context(codec: Codec) -> int:
    """This thread's decompression context for `codec` (0 when it needs none): a libzstd
    context, or zlib-ng's stream. Neither is thread-safe; each is freed when the thread ends. Default parameters: the
    window limit and checksum checks of `zstandard.ZstdDecompressor()`."""
    if codec == Codec.ZLIB:
        fns = functions(Codec.ZLIB)
        if fns is None or not fns[2]:
            return 0   # the system's uncompress2 needs none
        stream = getattr(_local, "inflate", None)
        if stream is None:
            stream = _local.inflate = _InflateStream(_zng)
        return stream.address
    if codec != Codec.ZSTD:
        return 0
    held = getattr(_local, "dctx", None)
    if held is None:
        if functions(Codec.ZSTD) is None:
            raise RuntimeError("libzstd is not available")
        ffi, lib = _zstd_cffi.ffi, _zstd_cffi.lib
        made = ffi.gc(lib.ZSTD_createDCtx(), lib.ZSTD_freeDCtx)
        if made == ffi.NULL:
            raise MemoryError("ZSTD_createDCtx failed")
        held = _local.dctx = made
    return int(_zstd_cffi.ffi.cast("uintptr_t", held))


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
    path = ctypes.util.find_library("crypto")
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
    return (_address(lib.EVP_DecryptInit_ex), _address(lib.EVP_CIPHER_CTX_ctrl),
            _address(lib.EVP_DecryptUpdate), _address(lib.EVP_DecryptFinal_ex),
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

# ---- libzstd called from Python: the Zstd filter's own decoding (compression.Zstd), and
# the Zarr zstd codec's (formats/zarr/codecs/zstd.py) -----------------------------------------
def libzstd() -> Optional[Tuple[Any, Any]]:
    """(ffi, lib) of the libzstd in python-zstandard's wheel, or None when not reachable."""
    if functions(Codec.ZSTD) is None:
        return None
    return _zstd_cffi.ffi, _zstd_cffi.lib


def zstd_dctx() -> Any:
    """This thread's libzstd decompression context (default parameters)."""
    context(Codec.ZSTD)   # made on first use in this thread
    return _local.dctx


_ZSTD_SIZE_ERROR = 2 ** 64 - 2   # ZSTD_CONTENTSIZE_ERROR: sizes from here on are errors


def zstd_decompress(data: Any, capacity: int) -> Optional[Tuple[Optional[bytearray], str]]:
    """`ZSTD_decompressDCtx` over all of `data` into at most `capacity` bytes: the call
    libtiledb's `ZStd::decompress` makes (tiledb/sm/compressors/zstd_compressor.cc), so
    the part is read by libzstd's rule — every frame in turn, skippable frames skipped, an
    error for anything else after them. (the bytes written, "") or (None, libzstd's error
    name); None when libzstd is not reachable here."""
    if functions(Codec.ZSTD) is None:
        return None
    ffi, lib = _zstd_cffi.ffi, _zstd_cffi.lib
    src = ffi.from_buffer(data)
    # never more room than the frames can fill (a declared size is not trusted further):
    # their bound, or when they do not parse (the call fails anyway) room for a usual chunk
    bound = lib.ZSTD_decompressBound(src, len(data))
    capacity = min(capacity, bound if bound < _ZSTD_SIZE_ERROR else 1 << 20)
    out = bytearray(capacity)
    got = lib.ZSTD_decompressDCtx(zstd_dctx(), ffi.from_buffer(out), capacity, src,
                                  len(data))
    if lib.ZSTD_isError(got):
        return None, ffi.string(lib.ZSTD_getErrorName(got)).decode("ascii", "replace")
    del out[got:]
    return out, ""


def zstd_frames(data: Any) -> Tuple[List[Tuple[int, int]], int]:
    """The whole frames at the start of `data` — (bytes, content size or -1 when the frame
    does not say it) each, skippable frames with content 0 — and where the bytes that are
    not one begin (`len(data)` when there are none). libzstd must be reachable."""
    ffi, lib = _zstd_cffi.ffi, _zstd_cffi.lib
    src = ffi.from_buffer(data)
    frames: List[Tuple[int, int]] = []
    pos = 0
    while pos < len(data):
        size = lib.ZSTD_findFrameCompressedSize(src + pos, len(data) - pos)
        if lib.ZSTD_isError(size):
            break
        content = lib.ZSTD_getFrameContentSize(src + pos, len(data) - pos)
        frames.append((int(size), -1 if content >= _ZSTD_SIZE_ERROR else int(content)))
        pos += size
    return frames, pos

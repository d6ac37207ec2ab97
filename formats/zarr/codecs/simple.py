"""zlib, gzip, LZ4 (numcodecs framing), bz2, lzma, the shuffle and delta filters, crc32c."""
from __future__ import annotations

import bz2
import lzma
import struct
import zlib
from typing import Any

import lz4.block
import numpy as np

from ...core.cursor import Cursor
from ...core.fielddoc import doc
from ...core.node import ERROR, Node
from .base import Codec, CodecError, CodecSpec, register
from .shuffle import unshuffle

D_ZLIB_CMF = doc("CMF: compression method 8 (deflate) and window size (0x78 = 32 KiB)",
                 spec="RFC 1950 §2.2")
D_ZLIB_FLG = doc("FLG: check bits (CMF·256+FLG is a multiple of 31), preset dictionary, level",
                 spec="RFC 1950 §2.2")
D_DEFLATE = doc("Deflate data", spec="RFC 1951")
D_ADLER = doc("ADLER32 of the uncompressed data, big-endian", spec="RFC 1950 §2.2")
D_GZ_HDR = doc("gzip member header: ID1 ID2 (1F 8B), CM (8), FLG, MTIME (4), XFL, OS",
               spec="RFC 1952 §2.3")
D_GZ_CRC = doc("CRC32 of the uncompressed data, little-endian", spec="RFC 1952 §2.3")
D_GZ_ISIZE = doc("ISIZE: uncompressed size modulo 2^32, little-endian", spec="RFC 1952 §2.3")
D_LZ4_SIZE = doc("Uncompressed size: numcodecs LZ4 prefixes the raw LZ4 block with the "
                 "decoded size as a 4-byte little-endian integer", spec="numcodecs lz4.pyx")
D_LZ4_BLOCK = doc("LZ4 block (raw format, no frame)", spec="lz4 Block_format.md")
D_PLANE = doc("Byte plane: byte j of every element, element order", spec="numcodecs Shuffle")
D_DELTA = doc("Delta-encoded values: the decoded bytes viewed as `dtype` numbers, stored as "
              "the first value then each difference to the one before, as `astype`",
              spec="numcodecs Delta")
D_CRC32C = doc("CRC32C (Castagnoli) of the bytes before it, little-endian",
               spec="zarr v3 crc32c codec")



def inflate(data: bytes, limit: int, wbits: int, name: str, unit: str) -> bytes:
    """A deflate stream (zlib or gzip framing by `wbits`), never more than `limit` bytes."""
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as e:
        raise CodecError(f"{name}: {e}")
    if len(out) > limit:
        raise CodecError(f"{name}: decompresses to more than {limit} bytes")
    if not d.eof:
        raise CodecError(f"{name}: the {unit} ends before its last block", len(data))
    return out


@register
class Zlib(Codec):
    names = ("zlib",)

    def decode(self, spec, data, limit):
        return inflate(data, limit, zlib.MAX_WBITS, "zlib", "stream")

    def annotate(self, spec, cur: Cursor) -> None:
        cur.u8("CMF", D_ZLIB_CMF)
        cur.u8("FLG", D_ZLIB_FLG)
        if cur.remaining > 4:
            cur.raw("Deflate data", cur.remaining - 4, D_DEFLATE).kind = "payload"
        if cur.remaining >= 4:
            old = cur.endian
            cur.endian = ">"
            cur.u32("ADLER32", D_ADLER, display=f"0x{cur.peek_prim('u32'):08X}")
            cur.endian = old


@register
class Gzip(Codec):
    names = ("gzip",)

    def decode(self, spec, data, limit):
        return inflate(data, limit, 16 + zlib.MAX_WBITS, "gzip", "member")

    def annotate(self, spec, cur: Cursor) -> None:
        flg = cur.source.read(cur.pos + 3, 1)
        hlen = 10
        if flg and flg[0] & ~0x01:  # optional fields: measure the header with zlib's help
            data = cur.source.read(cur.pos, cur.remaining)
            hlen = _gzip_header_len(data)
        cur.raw("gzip header", hlen, D_GZ_HDR).kind = "metadata"
        if cur.remaining > 8:
            cur.raw("Deflate data", cur.remaining - 8, D_DEFLATE).kind = "payload"
        if cur.remaining >= 8:
            cur.u32("CRC32", D_GZ_CRC, display=f"0x{cur.peek_prim('u32'):08X}")
            cur.u32("ISIZE", D_GZ_ISIZE)


def _gzip_header_len(data: bytes) -> int:
    flg = data[3]
    pos = 10
    if flg & 0x04 and len(data) >= pos + 2:
        pos += 2 + struct.unpack_from("<H", data, pos)[0]
    for bit in (0x08, 0x10):
        if flg & bit:
            z = data.find(b"\0", pos)
            pos = len(data) if z < 0 else z + 1
    if flg & 0x02:
        pos += 2
    return min(pos, len(data))


@register
class LZ4(Codec):
    """numcodecs LZ4: `u32 LE decoded size | LZ4 raw block`."""

    names = ("lz4",)

    def decode(self, spec, data, limit):
        if len(data) < 4:
            raise CodecError(f"lz4: expected a 4-byte size prefix, found {len(data)} bytes", 0)
        n = struct.unpack_from("<I", data)[0]
        if n > limit:
            raise CodecError(f"lz4: size prefix {n} is more than the {limit} bytes a chunk holds", 0)
        try:
            return lz4.block.decompress(data[4:], uncompressed_size=n) if n else b""
        except lz4.block.LZ4BlockError as e:
            raise CodecError(f"lz4: {e}", 4)

    def frame(self, spec, cur: Cursor, limit: int):
        cur.u32("Uncompressed size", D_LZ4_SIZE)
        cur.raw("LZ4 block", cur.remaining, D_LZ4_BLOCK).kind = "payload"


@register
class Bz2(Codec):
    names = ("bz2",)

    def decode(self, spec, data, limit):
        try:
            return bz2.BZ2Decompressor().decompress(data, max_length=limit + 1)
        except (OSError, ValueError) as e:
            raise CodecError(f"bz2: {e}")


@register
class Lzma(Codec):
    names = ("lzma",)

    def decode(self, spec, data, limit):
        try:
            return lzma.LZMADecompressor().decompress(data, max_length=limit + 1)
        except lzma.LZMAError as e:
            raise CodecError(f"lzma: {e}")


@register
class Shuffle(Codec):
    """numcodecs `Shuffle` (v2 filter `shuffle`, v3 `numcodecs.shuffle`): byte planes."""

    names = ("shuffle",)

    def elementsize(self, spec: CodecSpec) -> int:
        e = spec.config.get("elementsize", 4)
        if not isinstance(e, int) or isinstance(e, bool) or e < 0:
            raise CodecError(f"shuffle: elementsize must be a positive integer, found {e!r}")
        return e

    def decode(self, spec, data, limit):
        return unshuffle(data, self.elementsize(spec))

    def frame(self, spec, cur: Cursor, limit: int):
        e = self.elementsize(spec)
        n = cur.remaining // e if e > 1 else 0
        if e > 1 and n >= 2:
            src, base = cur.source, cur.pos

            def plane(j: int) -> Node:
                return Node(f"Byte plane {j + 1}", "bytes", src, base + j * n, n,
                            display=f"byte {j} of {n} elements", doc=D_PLANE)
            node = Node("Byte planes", "array", src, base, n * e,
                        display=f"{e} planes × {n} elements", doc=D_PLANE)
            from ...core.node import LazyChildren
            node.set_lazy(LazyChildren(e, plane))
            cur.node.add(node)
            cur.pos += n * e
            if cur.remaining:
                t = cur.raw("Trailing bytes", cur.remaining)
                t.display = f"{t.display_text()} (not shuffled)"
        else:
            u = cur.raw("Unshuffled bytes", cur.remaining)
            u.display = f"{u.display_text()} (fewer than 2 elements: as is)"


@register
class Delta(Codec):
    """numcodecs `Delta` (v2 filter `{"id": "delta", "dtype": …, "astype": …}`).

    The chunk bytes are viewed as `dtype` numbers, whatever the record type (numcodecs cannot
    delta a struct dtype, but `Delta(dtype='<i4')` on 12-byte records works and zarr 2.18.7
    writes it): stored = first value, then the differences, as `astype`. Decoding is
    numcodecs' own `np.cumsum(enc, out=dec)` (integers wrap)."""

    names = ("delta",)

    @staticmethod
    def _dtype(spec, key: str, default=None) -> np.dtype:
        from ..dtype import _TYPESTR
        text = spec.config.get(key, default)
        if not isinstance(text, str) or not _TYPESTR.match(text):
            raise CodecError(f"delta: {key} must be a numeric type string like '<i4', "
                             f"found {text!r}")
        dt = np.dtype(text)
        if dt.kind not in "iuf" or dt.itemsize > 8:
            raise CodecError(f"delta: {key} {text!r} is not an integer or float type")
        return dt

    def encoded_itemsize(self, spec, itemsize):
        return self._dtype(spec, "astype", spec.config.get("dtype")).itemsize

    def decode(self, spec, data, limit):
        dt = self._dtype(spec, "dtype")
        at = self._dtype(spec, "astype", spec.config.get("dtype"))
        if len(data) % at.itemsize:
            raise CodecError(f"delta: {len(data)} bytes is not a whole number of "
                             f"{at.str} values", len(data) - len(data) % at.itemsize)
        n = len(data) // at.itemsize
        if n * dt.itemsize > limit:
            raise CodecError(f"delta: decodes to more than {limit} bytes")
        enc = np.frombuffer(data, dtype=at)
        dec = np.empty(n, dtype=dt)
        with np.errstate(all="ignore"):
            np.cumsum(enc, out=dec)
        return dec.tobytes()

    def frame(self, spec, cur: Cursor, limit: int):
        self._dtype(spec, "dtype")
        at = self._dtype(spec, "astype", spec.config.get("dtype"))
        size = cur.remaining
        if size % at.itemsize:
            raise CodecError(f"delta: {size} bytes is not a whole number of "
                             f"{at.str} values", size - size % at.itemsize)
        n = cur.raw("Delta-encoded values", size, D_DELTA)
        n.kind = "payload"
        n.display = f"{size // at.itemsize} × {at.str}: first value, then differences"


# ---- crc32c ---------------------------------------------------------------------------------
def _crc32c_table() -> np.ndarray:
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ np.uint32(0x82F63B78), t >> 1).astype(np.uint32)
    return t


_TABLE = None


_fast_crc32c: Any
try:  # the C implementation when installed (it comes with zarr); the table loop otherwise
    import google_crc32c as _fast_crc32c
except ImportError:  # pragma: no cover - depends on the environment
    _fast_crc32c = None


def crc32c(data: bytes) -> int:
    global _TABLE
    if _fast_crc32c is not None:
        return int(_fast_crc32c.value(bytes(data)))
    if _TABLE is None:
        _TABLE = [int(x) for x in _crc32c_table()]
    crc = 0xFFFFFFFF
    tab = _TABLE
    for b in data:
        crc = tab[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


@register
class Crc32c(Codec):
    names = ("crc32c",)

    def decode(self, spec, data, limit):
        if len(data) < 4:
            raise CodecError("crc32c: fewer than 4 bytes", 0)
        return bytes(data[:-4])

    def frame(self, spec, cur: Cursor, limit: int):
        if cur.remaining < 4:
            raise CodecError("crc32c: fewer than 4 bytes", 0)
        cur.raw("Data", cur.remaining - 4).kind = "payload"
        return cur.u32("CRC32C", D_CRC32C, display=f"0x{cur.peek_prim('u32'):08X}")

    def finish(self, spec, data, state, limit):
        out = self.decode(spec, data, limit)
        n = state
        want = crc32c(out)
        if n.value != want and n.status != ERROR:
            n.mark(ERROR, f"CRC32C: stored 0x{n.value:08X}, computed 0x{want:08X}")
        return out

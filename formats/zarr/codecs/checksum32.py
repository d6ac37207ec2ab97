"""numcodecs `CRC32` and `Adler32`: a u32 little-endian checksum of the data, before it
(`location` "start", the default) or after it ("end"); `Fletcher32` and `JenkinsLookup3`
(HDF5's): the same, always after it. The data itself is unchanged.

(One module, registered by name: nothing else names these codecs.)"""
from __future__ import annotations

import zlib

import numpy as np

from ...core.cursor import Cursor
from ...core.fielddoc import doc
from ...core.node import ERROR
from .base import Codec, CodecError, CodecSpec, register

D_SUM = doc("Checksum of the data (u32, little-endian): zlib crc32 or adler32",
            spec="numcodecs checksum32")


class _Checksum32(Codec):
    label = ""

    @staticmethod
    def _compute(data: bytes) -> int:  # pragma: no cover - each subclass has its own
        raise NotImplementedError

    def checksum(self, spec: CodecSpec, body: bytes) -> int:
        return self._compute(body)

    def _at_end(self, spec: CodecSpec) -> bool:
        loc = spec.config.get("location", "start")
        if loc not in ("start", "end"):
            raise CodecError(f"{self.label}: location must be 'start' or 'end', found {loc!r}")
        return loc == "end"

    def decode(self, spec, data, limit):
        if len(data) < 4:
            raise CodecError(f"{self.label}: fewer than 4 bytes", 0)
        body = data[:-4] if self._at_end(spec) else data[4:]
        stored = int.from_bytes(data[-4:] if self._at_end(spec) else data[:4], "little")
        want = self.checksum(spec, bytes(body))
        if stored != want:
            raise CodecError(f"{self.label}: stored 0x{stored:08X}, computed 0x{want:08X}",
                             len(data) - 4 if self._at_end(spec) else 0)
        return bytes(body)

    def encode(self, spec, data):
        s = self.checksum(spec, bytes(data)).to_bytes(4, "little")
        return bytes(data) + s if self._at_end(spec) else s + bytes(data)

    def frame(self, spec, cur: Cursor, limit: int):
        if cur.remaining < 4:
            raise CodecError(f"{self.label}: fewer than 4 bytes", 0)
        end = self._at_end(spec)
        if not end:
            node = cur.u32(self.label.upper(), D_SUM, display=f"0x{cur.peek_prim('u32'):08X}")
        cur.raw("Data", cur.remaining - (4 if end else 0)).kind = "payload"
        if end:
            node = cur.u32(self.label.upper(), D_SUM, display=f"0x{cur.peek_prim('u32'):08X}")
        return node

    def finish(self, spec, data, state, limit):
        try:
            return self.decode(spec, data, limit)
        except CodecError as e:
            if state is not None and "computed" in str(e):
                if state.status != ERROR:
                    state.mark(ERROR, str(e))
                raise CodecError(str(e), state.offset, status="marked")
            raise


@register
class Crc32(_Checksum32):
    names = ("crc32",)
    label = "crc32"

    @staticmethod
    def _compute(data: bytes) -> int:
        return zlib.crc32(data)


@register
class Adler32(_Checksum32):
    names = ("adler32",)
    label = "adler32"

    @staticmethod
    def _compute(data: bytes) -> int:
        return zlib.adler32(data)


class _Trailing32(_Checksum32):
    """numcodecs checksums always stored after the data (u32 little-endian)."""

    def _at_end(self, spec: CodecSpec) -> bool:
        return True


@register
class Fletcher32(_Trailing32):
    """HDF5's Fletcher-32: big-endian 16-bit words, sums folded every 360 words."""

    names = ("fletcher32",)
    label = "fletcher32"

    @staticmethod
    def _compute(data: bytes) -> int:
        n = len(data)
        words = np.frombuffer(data, dtype=">u2", count=n // 2).astype(np.uint64)
        s1 = s2 = 0
        for at in range(0, len(words), 360):
            w = words[at:at + 360]
            # sum2 adds sum1 after each word: the block adds len·s1 + Σ (len - i)·w[i]
            s2 += len(w) * s1 + int(np.dot(np.arange(len(w), 0, -1, dtype=np.uint64), w))
            s1 += int(w.sum())
            s1 = (s1 & 0xFFFF) + (s1 >> 16)
            s2 = (s2 & 0xFFFF) + (s2 >> 16)
        if n % 2:
            s1 += data[-1] << 8
            s2 += s1
            s1 = (s1 & 0xFFFF) + (s1 >> 16)
            s2 = (s2 & 0xFFFF) + (s2 >> 16)
        s1 = (s1 & 0xFFFF) + (s1 >> 16)
        s2 = (s2 & 0xFFFF) + (s2 >> 16)
        return ((s2 << 16) | s1) & 0xFFFFFFFF


_M = 0xFFFFFFFF


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M


def lookup3(data: bytes, initval: int = 0) -> int:
    """Bob Jenkins' lookup3 `hashlittle` (HDF5's H5_checksum_lookup3)."""
    n = len(data)
    a = b = c = (0xDEADBEEF + n + initval) & _M
    if n == 0:
        return c
    pad = bytes(data) + bytes(-n % 12)
    w = np.frombuffer(pad, dtype="<u4").reshape(-1, 3).tolist()
    for x, y, z in w[:-1]:
        a, b, c = (a + x) & _M, (b + y) & _M, (c + z) & _M
        a = ((a - c) & _M) ^ _rot(c, 4); c = (c + b) & _M        # noqa: E702
        b = ((b - a) & _M) ^ _rot(a, 6); a = (a + c) & _M        # noqa: E702
        c = ((c - b) & _M) ^ _rot(b, 8); b = (b + a) & _M        # noqa: E702
        a = ((a - c) & _M) ^ _rot(c, 16); c = (c + b) & _M       # noqa: E702
        b = ((b - a) & _M) ^ _rot(a, 19); a = (a + c) & _M       # noqa: E702
        c = ((c - b) & _M) ^ _rot(b, 4); b = (b + a) & _M        # noqa: E702
    x, y, z = w[-1]
    a, b, c = (a + x) & _M, (b + y) & _M, (c + z) & _M
    c ^= b; c = (c - _rot(b, 14)) & _M                           # noqa: E702
    a ^= c; a = (a - _rot(c, 11)) & _M                           # noqa: E702
    b ^= a; b = (b - _rot(a, 25)) & _M                           # noqa: E702
    c ^= b; c = (c - _rot(b, 16)) & _M                           # noqa: E702
    a ^= c; a = (a - _rot(c, 4)) & _M                            # noqa: E702
    b ^= a; b = (b - _rot(a, 14)) & _M                           # noqa: E702
    c ^= b; c = (c - _rot(b, 24)) & _M                           # noqa: E702
    return c


@register
class JenkinsLookup3(_Trailing32):
    names = ("jenkins_lookup3",)
    label = "jenkins_lookup3"

    def checksum(self, spec: CodecSpec, body: bytes) -> int:
        initval, prefix = spec.config.get("initval", 0), spec.config.get("prefix")
        if isinstance(initval, bool) or not isinstance(initval, int):
            raise CodecError(f"jenkins_lookup3: initval must be an integer, found {initval!r}")
        if prefix is not None:
            if not isinstance(prefix, list) or not all(isinstance(x, int) and 0 <= x < 256
                                                       for x in prefix):
                raise CodecError(f"jenkins_lookup3: prefix must be bytes, found {prefix!r}"[:200])
            body = bytes(prefix) + body
        return lookup3(body, initval & _M)

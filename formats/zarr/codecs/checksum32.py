"""numcodecs `CRC32` and `Adler32`: a u32 little-endian checksum of the data, before it
(`location` "start", the default) or after it ("end"); the data itself is unchanged.

(One module, registered by name: nothing else names these codecs.)"""
from __future__ import annotations

import zlib

from ...cursor import Cursor
from ...fielddoc import doc
from ...node import ERROR
from .base import Codec, CodecError, CodecSpec, register

D_SUM = doc("Checksum of the data (u32, little-endian): zlib crc32 or adler32",
            spec="numcodecs checksum32")


class _Checksum32(Codec):
    label = ""

    @staticmethod
    def _compute(data: bytes) -> int:  # pragma: no cover - each subclass has its own
        raise NotImplementedError

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
        if stored != self._compute(bytes(body)):
            raise CodecError(f"{self.label}: stored 0x{stored:08X}, computed "
                             f"0x{self._compute(bytes(body)):08X}",
                             len(data) - 4 if self._at_end(spec) else 0)
        return bytes(body)

    def encode(self, spec, data):
        s = self._compute(bytes(data)).to_bytes(4, "little")
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

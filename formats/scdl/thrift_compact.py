"""A minimal Thrift compact-protocol reader: the scalar fields of one top-level struct,
skipping everything else. Enough to read Parquet's FileMetaData.num_rows."""
from __future__ import annotations

from typing import Dict, Iterable, Optional

MAX_DEPTH = 32
MAX_ITEMS = 1_000_000


class _Err(Exception):
    pass


class _R:
    def __init__(self, data: bytes):
        self.d, self.p = data, 0

    def byte(self) -> int:
        if self.p >= len(self.d):
            raise _Err(f"ends at byte {self.p} inside a value")
        b = self.d[self.p]
        self.p += 1
        return b

    def varint(self) -> int:
        out = shift = 0
        while True:
            b = self.byte()
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                return out
            shift += 7
            if shift > 70:
                raise _Err(f"varint too long at byte {self.p}")

    def zigzag(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def take(self, n: int) -> bytes:
        if n < 0 or self.p + n > len(self.d):
            raise _Err(f"a {n}-byte value at byte {self.p} runs past the end")
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def value(self, t: int, depth: int):
        if t in (1, 2):
            return t == 1
        if t == 3:
            return self.byte()
        if t in (4, 5, 6):
            return self.zigzag()
        if t == 7:
            self.take(8)
            return None
        if t == 8:
            raw = self.take(self.varint())
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                return None
        if depth > MAX_DEPTH:
            raise _Err("nesting too deep")
        if t in (9, 10):
            h = self.byte()
            n, et = h >> 4, h & 0x0F
            if n == 15:
                n = self.varint()
            if n > MAX_ITEMS:
                raise _Err(f"list of {n} items")
            for _ in range(n):
                if et in (1, 2):
                    self.byte()
                else:
                    self.value(et, depth + 1)
            return None
        if t == 11:
            n = self.varint()
            if n:
                kv = self.byte()
                for _ in range(min(n, MAX_ITEMS)):
                    self.value(kv >> 4, depth + 1)
                    self.value(kv & 0x0F, depth + 1)
            return None
        if t == 12:
            self.struct(depth + 1, None)
            return None
        raise _Err(f"unknown compact type {t} at byte {self.p - 1}")

    def struct(self, depth: int, want: Optional[set]) -> Dict[int, object]:
        out: Dict[int, object] = {}
        last = 0
        while True:
            h = self.byte()
            if h == 0:
                return out
            delta, t = h >> 4, h & 0x0F
            fid = last + delta if delta else self.zigzag()
            last = fid
            v = self.value(t, depth)
            if want is not None and fid in want:
                out[fid] = v


def read_struct(data: bytes, want: Iterable[int], names: Dict[int, str]) -> dict:
    """{name: value} of the wanted top-level fields; {'error': text} when the bytes do not
    decode (with whatever was read before)."""
    r = _R(data)
    try:
        got = r.struct(0, set(want))
        return {names.get(k, str(k)): v for k, v in got.items()}
    except _Err as e:
        return {"error": f"Thrift compact: {e}"}
    except RecursionError:
        return {"error": "Thrift compact: nesting too deep"}

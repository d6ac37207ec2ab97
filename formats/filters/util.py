"""Shared helpers of the filter implementations: bounded metadata reading, datatype to
numpy mappings, and byte views. No filter logic lives here."""
from __future__ import annotations

import struct
from typing import Dict, Optional, Tuple

import numpy as np

from ..core.record import Record
from .base import FilterError, FilterSpec, RunContext, Stage
from .enums import DATATYPE_NAMES
from .enums import Datatype as D

_INTS: Dict[int, str] = {D.INT8: "i1", D.UINT8: "u1", D.INT16: "<i2", D.UINT16: "<u2", D.INT32: "<i4",
         D.UINT32: "<u4", D.INT64: "<i8", D.UINT64: "<u8"}
SIGNED_BY_SIZE: Dict[int, np.dtype] = {1: np.dtype("i1"), 2: np.dtype("<i2"), 4: np.dtype("<i4"), 8: np.dtype("<i8")}
UNSIGNED_BY_SIZE: Dict[int, np.dtype] = {1: np.dtype("u1"), 2: np.dtype("<u2"), 4: np.dtype("<u4"), 8: np.dtype("<u8")}
PRIM_OF = {"i1": "i8", "u1": "u8", "<i2": "i16", "<u2": "u16", "<i4": "i32", "<u4": "u32",
           "<i8": "i64", "<u8": "u64"}


def int_dtype(datatype: int) -> Optional[np.dtype]:
    """The integer numpy dtype of a plain integer TileDB datatype, else None."""
    code = _INTS.get(datatype)
    return None if code is None else np.dtype(code)


def prim_kind(dt: np.dtype) -> str:
    """The Cursor primitive name ('i32', 'u64', ...) of an integer dtype."""
    return PRIM_OF[dt.str if dt.itemsize > 1 else dt.str[1:]]


def datatype_name(datatype: int) -> str:
    return DATATYPE_NAMES.get(datatype, f"datatype {datatype}")


def u8(b) -> np.ndarray:
    """A read-only uint8 view of bytes-like data (no copy)."""
    return np.frombuffer(b, dtype=np.uint8)


def data_of(stage: Stage) -> bytes:
    return stage.data[0] if len(stage.data) == 1 else stage.data_bytes


class MetaReader:
    """Sequential little-endian reads over a filter's input metadata; a short read is a
    FilterError at the offset (inside the stage's [metadata][data] bytes)."""

    def __init__(self, md: bytes, name: str):
        self.md = md
        self.pos = 0
        self.name = name

    @property
    def remaining(self) -> int:
        return len(self.md) - self.pos

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > len(self.md):
            raise FilterError(f"{self.name} metadata: expected {what} ({n} bytes) at metadata "
                              f"offset {self.pos}, only {max(0, self.remaining)} bytes left",
                              self.pos)

    def take(self, n: int, what: str) -> bytes:
        self.need(n, what)
        out = self.md[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str, what: str) -> Tuple:
        size = struct.calcsize("<" + fmt)
        self.need(size, what)
        v = struct.unpack_from("<" + fmt, self.md, self.pos)
        self.pos += size
        return v

    def u8(self, what: str) -> int:
        return self.unpack("B", what)[0]

    def u32(self, what: str) -> int:
        return self.unpack("I", what)[0]

    def u64(self, what: str) -> int:
        return self.unpack("Q", what)[0]

    def count(self, what: str, item_size: int) -> int:
        """A u32 count whose items (item_size bytes each) must fit in what is left."""
        n = self.u32(what)
        if item_size and n * item_size > self.remaining:
            raise FilterError(f"{self.name} metadata: {what} = {n} needs {n * item_size} bytes, "
                              f"only {self.remaining} left", self.pos - 4)
        return n

    def record(self, rec: Record, what: str) -> Tuple:
        """One declared record (`formats.core.record`), as its annotator reads it."""
        self.need(rec.size, what)
        v = rec.unpack_from(self.md, self.pos)
        self.pos += rec.size
        return v

    def counts(self, rec: Record, entry: Record, what: str) -> Tuple:
        """A record of counts whose entries (`entry` records, all counts together) must fit
        in what is left."""
        at = self.pos
        v = self.record(rec, what)
        if sum(v) * entry.size > self.remaining:
            raise FilterError(f"{self.name} metadata: {what} = {'+'.join(map(str, v))} needs "
                              f"{sum(v) * entry.size} bytes, only {self.remaining} left", at)
        return v

    def records(self, dtype: np.dtype, n: int, what: str) -> np.ndarray:
        """n fixed-size records (a packed structured dtype) as one array."""
        raw = self.take(n * dtype.itemsize, what)
        return np.frombuffer(raw, dtype=dtype, count=n)

    def rest(self) -> bytes:
        out = self.md[self.pos:]
        self.pos = len(self.md)
        return out


def check_size(n: int, run: RunContext, what: str, where: Optional[int] = None) -> int:
    """A size read from metadata, refused when no real chunk could need it."""
    limit = run.size_limit()
    if n < 0 or n > limit:
        raise FilterError(f"{what}: {n} bytes declared, more than this chunk can hold "
                          f"({limit} bytes at most)", where)
    return n


def ints_be(values: np.ndarray, size: int) -> np.ndarray:
    """Unsigned integers as `size`-byte big-endian rows (n, size) of uint8."""
    return values.astype(UNSIGNED_BY_SIZE[size].newbyteorder(">")).view(np.uint8).reshape(-1, size)


def read_be(buf: np.ndarray, pos: np.ndarray, size: int) -> np.ndarray:
    """Big-endian unsigned integers of `size` bytes at byte positions `pos` of `buf`
    (positions must leave `size` bytes)."""
    out = np.zeros(len(pos), dtype=np.uint64)
    for k in range(size):
        out = (out << np.uint64(8)) | buf[pos + k].astype(np.uint64)
    return out


def spec_option(spec: FilterSpec, key: str, default):
    v = spec.options.get(key, default)
    return default if v is None else v


def segment_index(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenated `arange(start, start + len)` of every segment, without a Python loop."""
    lens = np.asarray(lens, dtype=np.int64)
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    before = np.cumsum(lens) - lens
    return np.repeat(starts - before, lens) + np.arange(total, dtype=np.int64)


def unsigned_of(dt: np.dtype) -> np.dtype:
    return UNSIGNED_BY_SIZE[dt.itemsize]

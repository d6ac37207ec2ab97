"""TileDB enum values as stored on disk (TileDB 2.30, format version 22).

Source: shared/spec/tiledb_enums.md (checked against tiledb-py 0.36.1 bytes)."""
from __future__ import annotations

from enum import IntEnum
from typing import Dict, Tuple, Type

import numpy as np

FORMAT_VERSION = 22
VAR_NUM = 0xFFFFFFFF  # cell_val_num of var-sized values

class Datatype(IntEnum):
    INT32 = 0
    INT64 = 1
    FLOAT32 = 2
    FLOAT64 = 3
    CHAR = 4
    INT8 = 5
    UINT8 = 6
    INT16 = 7
    UINT16 = 8
    UINT32 = 9
    UINT64 = 10
    STRING_ASCII = 11
    STRING_UTF8 = 12
    STRING_UTF16 = 13
    STRING_UTF32 = 14
    STRING_UCS2 = 15
    STRING_UCS4 = 16
    ANY = 17
    DATETIME_YEAR = 18
    DATETIME_MONTH = 19
    DATETIME_WEEK = 20
    DATETIME_DAY = 21
    DATETIME_HR = 22
    DATETIME_MIN = 23
    DATETIME_SEC = 24
    DATETIME_MS = 25
    DATETIME_US = 26
    DATETIME_NS = 27
    DATETIME_PS = 28
    DATETIME_FS = 29
    DATETIME_AS = 30
    TIME_HR = 31
    TIME_MIN = 32
    TIME_SEC = 33
    TIME_MS = 34
    TIME_US = 35
    TIME_NS = 36
    TIME_PS = 37
    TIME_FS = 38
    TIME_AS = 39
    BLOB = 40
    BOOL = 41
    GEOM_WKB = 42
    GEOM_WKT = 43


class FilterType(IntEnum):
    NONE = 0
    GZIP = 1
    ZSTD = 2
    LZ4 = 3
    RLE = 4
    BZIP2 = 5
    DOUBLE_DELTA = 6
    BIT_WIDTH_REDUCTION = 7
    BITSHUFFLE = 8
    BYTESHUFFLE = 9
    POSITIVE_DELTA = 10
    INTERNAL_FILTER_AES_256_GCM = 11
    CHECKSUM_MD5 = 12
    CHECKSUM_SHA256 = 13
    DICTIONARY = 14
    SCALE_FLOAT = 15
    XOR = 16
    DEPRECATED = 17
    WEBP = 18
    DELTA = 19


class Compressor(IntEnum):
    """The compressor id a compression filter writes as its first option byte (a separate
    enum from filter types)."""

    NO_COMPRESSION = 0
    GZIP = 1
    ZSTD = 2
    LZ4 = 3
    RLE = 4
    BZIP2 = 5
    DOUBLE_DELTA = 6
    DICTIONARY_ENCODING = 7
    DELTA = 8


class Encryption(IntEnum):
    NO_ENCRYPTION = 0
    AES_256_GCM = 1


class ArrayType(IntEnum):
    DENSE = 0
    SPARSE = 1


class Layout(IntEnum):
    ROW_MAJOR = 0
    COL_MAJOR = 1
    GLOBAL_ORDER = 2
    UNORDERED = 3
    HILBERT = 4


class DataOrder(IntEnum):
    UNORDERED_DATA = 0
    INCREASING_DATA = 1
    DECREASING_DATA = 2


class CurrentDomainType(IntEnum):
    NDRECTANGLE = 0


class WebpFormat(IntEnum):
    WEBP_NONE = 0
    WEBP_RGB = 1
    WEBP_BGR = 2
    WEBP_RGBA = 3
    WEBP_BGRA = 4


class QueryConditionOp(IntEnum):
    LT = 0
    LE = 1
    GT = 2
    GE = 3
    EQ = 4
    NE = 5
    IN = 6
    NOT_IN = 7
    ALWAYS_TRUE = 8
    ALWAYS_FALSE = 9


class QueryConditionCombinationOp(IntEnum):
    AND = 0
    OR = 1
    NOT = 2


def names(enum: Type[IntEnum]) -> Dict[int, str]:
    """{value: name}, the form `Cursor` shows an enum field with (`9 (BYTESHUFFLE)`)."""
    return {int(m): m.name for m in enum}


_D = Datatype
# datatype -> (size in bytes, numpy dtype); byte strings are "S1"
_LAYOUT: Dict[int, Tuple[int, str]] = {
    _D.INT32: (4, "<i4"), _D.INT64: (8, "<i8"), _D.FLOAT32: (4, "<f4"), _D.FLOAT64: (8, "<f8"),
    _D.CHAR: (1, "S1"), _D.INT8: (1, "i1"), _D.UINT8: (1, "u1"), _D.INT16: (2, "<i2"),
    _D.UINT16: (2, "<u2"), _D.UINT32: (4, "<u4"), _D.UINT64: (8, "<u8"),
    _D.STRING_ASCII: (1, "S1"), _D.STRING_UTF8: (1, "S1"), _D.STRING_UTF16: (2, "<u2"),
    _D.STRING_UTF32: (4, "<u4"), _D.STRING_UCS2: (2, "<u2"), _D.STRING_UCS4: (4, "<u4"),
    _D.ANY: (1, "u1"), _D.BLOB: (1, "u1"), _D.BOOL: (1, "u1"), _D.GEOM_WKB: (1, "u1"),
    _D.GEOM_WKT: (1, "u1"),
}
_LAYOUT.update({t: (8, "<i8") for t in range(_D.DATETIME_YEAR, _D.TIME_AS + 1)})
# value: (name, size in bytes, numpy dtype)
DATATYPES = {int(t): (t.name, *_LAYOUT[t]) for t in Datatype}
DATATYPE_NAMES = names(Datatype)

# Datetime / time units for display (numpy unit codes).
_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")
DATETIME_UNITS = {_D.DATETIME_YEAR + i: u for i, u in enumerate(_UNITS)}
TIME_UNITS = {_D.TIME_HR + i: u for i, u in enumerate(_UNITS[4:])}
DATETIME_TYPES = frozenset(DATETIME_UNITS) | frozenset(TIME_UNITS)   # DATETIME_* and TIME_*
# The STRING_* types (no CHAR); TEXT_TYPES adds CHAR: every type a cell of text may have.
STRING_TYPES = frozenset({_D.STRING_ASCII, _D.STRING_UTF8, _D.STRING_UTF16, _D.STRING_UTF32,
                          _D.STRING_UCS2, _D.STRING_UCS4})
TEXT_TYPES = STRING_TYPES | {_D.CHAR}
BYTE_STRING_TYPES = frozenset({_D.CHAR, _D.STRING_ASCII, _D.STRING_UTF8})
FLOAT_TYPES = frozenset({_D.FLOAT32, _D.FLOAT64})

FILTER_TYPES = names(FilterType)
COMPRESSORS = names(Compressor)
ENCRYPTION_TYPES = names(Encryption)
ARRAY_TYPES = names(ArrayType)
LAYOUTS = names(Layout)
DATA_ORDERS = names(DataOrder)
CURRENT_DOMAIN_TYPES = names(CurrentDomainType)
WEBP_FORMATS = names(WebpFormat)
QUERY_CONDITION_OPS = names(QueryConditionOp)
QUERY_CONDITION_COMBINATION_OPS = names(QueryConditionCombinationOp)


def datatype_size(dt: int) -> int:
    return DATATYPES.get(dt, ("?", 1, "u1"))[1]


def numpy_dtype(dt: int) -> np.dtype:
    """The numpy dtype of one value of TileDB datatype `dt` (byte strings as uint8)."""
    code = DATATYPES.get(dt, ("?", 1, "u1"))[2]
    if code == "S1":
        code = "u1"
    return np.dtype(code)


def format_value(dt: int, raw: bytes):
    """(python value, display text) of one or more values of datatype `dt` in `raw`."""
    from ..core.cursor import format_scalar

    if dt not in DATATYPES:
        return None, raw.hex(" ")
    name, size, code = DATATYPES[dt]
    if dt in BYTE_STRING_TYPES:
        text = raw.decode("utf-8", errors="replace") if dt == _D.STRING_UTF8 else raw.decode("latin-1")
        return text, repr(text)
    if dt in (_D.STRING_UTF16, _D.STRING_UCS2):
        text = raw.decode("utf-16-le", errors="replace")
        return text, repr(text)
    if dt in (_D.STRING_UTF32, _D.STRING_UCS4):
        text = raw.decode("utf-32-le", errors="replace")
        return text, repr(text)
    n = len(raw) // size
    if n == 0:
        return None, "(empty)"
    arr = np.frombuffer(raw[: n * size], dtype=numpy_dtype(dt))
    vals = [x.item() for x in arr]
    if dt == _D.BOOL:
        vals = [bool(v) for v in vals]
    texts = [format_scalar(v, size * 8) for v in vals]
    unit = DATETIME_UNITS.get(dt)
    if unit is not None:
        texts = [_dt_text(v, unit) for v in vals]
    elif dt in TIME_UNITS:
        texts = [f"{v} {TIME_UNITS[dt]}" for v in vals]
    if n == 1:
        return vals[0], texts[0]
    return vals, "[" + ", ".join(texts[:16]) + (", …" if n > 16 else "") + "]"


def _dt_text(v: int, unit: str) -> str:
    if v == -(2 ** 63):
        return f"{v} (NaT)"
    try:
        when = np.datetime64(v, unit)  # type: ignore[call-overload]  # a numpy unit code
    except (ValueError, OverflowError):
        return str(v)
    return f"{v} ({when})"


def stage_names(specs) -> tuple:
    """The stage names of a filter pipeline (`FilterSpec`s: their `FilterType` names; a type
    this build does not know: its number), as `core.compiled`'s decision rule reads them."""
    names = []
    for s in specs:
        try:
            names.append(FilterType(s.type).name)
        except ValueError:
            names.append(str(s.type))
    return tuple(names)

"""TileDB enum values as stored on disk (TileDB 2.30, format version 22).

Source: shared/spec/tiledb_enums.md (checked against tiledb-py 0.36.1 bytes)."""
from __future__ import annotations

import numpy as np

FORMAT_VERSION = 22
VAR_NUM = 0xFFFFFFFF  # cell_val_num of var-sized values
OFFSET_SIZE = 8  # offsets are uint64

# value: (name, size in bytes, numpy dtype)
DATATYPES = {
    0: ("INT32", 4, "<i4"), 1: ("INT64", 8, "<i8"), 2: ("FLOAT32", 4, "<f4"),
    3: ("FLOAT64", 8, "<f8"), 4: ("CHAR", 1, "S1"), 5: ("INT8", 1, "i1"), 6: ("UINT8", 1, "u1"),
    7: ("INT16", 2, "<i2"), 8: ("UINT16", 2, "<u2"), 9: ("UINT32", 4, "<u4"),
    10: ("UINT64", 8, "<u8"), 11: ("STRING_ASCII", 1, "S1"), 12: ("STRING_UTF8", 1, "S1"),
    13: ("STRING_UTF16", 2, "<u2"), 14: ("STRING_UTF32", 4, "<u4"), 15: ("STRING_UCS2", 2, "<u2"),
    16: ("STRING_UCS4", 4, "<u4"), 17: ("ANY", 1, "u1"),
    18: ("DATETIME_YEAR", 8, "<i8"), 19: ("DATETIME_MONTH", 8, "<i8"),
    20: ("DATETIME_WEEK", 8, "<i8"), 21: ("DATETIME_DAY", 8, "<i8"), 22: ("DATETIME_HR", 8, "<i8"),
    23: ("DATETIME_MIN", 8, "<i8"), 24: ("DATETIME_SEC", 8, "<i8"), 25: ("DATETIME_MS", 8, "<i8"),
    26: ("DATETIME_US", 8, "<i8"), 27: ("DATETIME_NS", 8, "<i8"), 28: ("DATETIME_PS", 8, "<i8"),
    29: ("DATETIME_FS", 8, "<i8"), 30: ("DATETIME_AS", 8, "<i8"), 31: ("TIME_HR", 8, "<i8"),
    32: ("TIME_MIN", 8, "<i8"), 33: ("TIME_SEC", 8, "<i8"), 34: ("TIME_MS", 8, "<i8"),
    35: ("TIME_US", 8, "<i8"), 36: ("TIME_NS", 8, "<i8"), 37: ("TIME_PS", 8, "<i8"),
    38: ("TIME_FS", 8, "<i8"), 39: ("TIME_AS", 8, "<i8"), 40: ("BLOB", 1, "u1"),
    41: ("BOOL", 1, "u1"), 42: ("GEOM_WKB", 1, "u1"), 43: ("GEOM_WKT", 1, "u1"),
}
DATATYPE_NAMES = {k: v[0] for k, v in DATATYPES.items()}
DATATYPE_BY_NAME = {v[0]: k for k, v in DATATYPES.items()}

# Datetime / time units for display (numpy unit codes).
DATETIME_UNITS = {18: "Y", 19: "M", 20: "W", 21: "D", 22: "h", 23: "m", 24: "s", 25: "ms",
                  26: "us", 27: "ns", 28: "ps", 29: "fs", 30: "as"}
TIME_UNITS = {31: "h", 32: "m", 33: "s", 34: "ms", 35: "us", 36: "ns", 37: "ps", 38: "fs", 39: "as"}
STRING_TYPES = {4, 11, 12, 13, 14, 15, 16}
BYTE_STRING_TYPES = {4, 11, 12}
INTEGER_TYPES = {0, 1, 5, 6, 7, 8, 9, 10} | set(DATETIME_UNITS) | set(TIME_UNITS)

FILTER_TYPES = {
    0: "NONE", 1: "GZIP", 2: "ZSTD", 3: "LZ4", 4: "RLE", 5: "BZIP2", 6: "DOUBLE_DELTA",
    7: "BIT_WIDTH_REDUCTION", 8: "BITSHUFFLE", 9: "BYTESHUFFLE", 10: "POSITIVE_DELTA",
    11: "INTERNAL_FILTER_AES_256_GCM", 12: "CHECKSUM_MD5", 13: "CHECKSUM_SHA256",
    14: "DICTIONARY", 15: "SCALE_FLOAT", 16: "XOR", 17: "DEPRECATED", 18: "WEBP", 19: "DELTA",
}
FILTER_BY_NAME = {v: k for k, v in FILTER_TYPES.items()}
COMPRESSORS = {0: "NO_COMPRESSION", 1: "GZIP", 2: "ZSTD", 3: "LZ4", 4: "RLE", 5: "BZIP2",
               6: "DOUBLE_DELTA", 7: "DICTIONARY_ENCODING", 8: "DELTA"}
# filter type -> compressor id written as the first option byte
COMPRESSOR_OF_FILTER = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 14: 7, 19: 8}
ENCRYPTION_TYPES = {0: "NO_ENCRYPTION", 1: "AES_256_GCM"}
ARRAY_TYPES = {0: "DENSE", 1: "SPARSE"}
LAYOUTS = {0: "ROW_MAJOR", 1: "COL_MAJOR", 2: "GLOBAL_ORDER", 3: "UNORDERED", 4: "HILBERT"}
DATA_ORDERS = {0: "UNORDERED_DATA", 1: "INCREASING_DATA", 2: "DECREASING_DATA"}
CURRENT_DOMAIN_TYPES = {0: "NDRECTANGLE"}
WEBP_FORMATS = {0: "WEBP_NONE", 1: "WEBP_RGB", 2: "WEBP_BGR", 3: "WEBP_RGBA", 4: "WEBP_BGRA"}
QUERY_CONDITION_OPS = {0: "LT", 1: "LE", 2: "GT", 3: "GE", 4: "EQ", 5: "NE", 6: "IN", 7: "NOT_IN",
                       8: "ALWAYS_TRUE", 9: "ALWAYS_FALSE"}
QUERY_CONDITION_COMBINATION_OPS = {0: "AND", 1: "OR", 2: "NOT"}


def datatype_size(dt: int) -> int:
    return DATATYPES.get(dt, ("?", 1, "u1"))[1]


def numpy_dtype(dt: int) -> np.dtype:
    """The numpy dtype of one value of TileDB datatype `dt` (byte strings as uint8)."""
    code = DATATYPES.get(dt, ("?", 1, "u1"))[2]
    if code == "S1":
        code = "u1"
    return np.dtype(code)


def is_float(dt: int) -> bool:
    return dt in (2, 3)


def format_value(dt: int, raw: bytes):
    """(python value, display text) of one or more values of datatype `dt` in `raw`."""
    from ..cursor import format_scalar

    if dt not in DATATYPES:
        return None, raw.hex(" ")
    name, size, code = DATATYPES[dt]
    if dt in BYTE_STRING_TYPES:
        text = raw.decode("utf-8", errors="replace") if dt == 12 else raw.decode("latin-1")
        return text, repr(text)
    if dt in (13, 15):
        text = raw.decode("utf-16-le", errors="replace")
        return text, repr(text)
    if dt in (14, 16):
        text = raw.decode("utf-32-le", errors="replace")
        return text, repr(text)
    n = len(raw) // size
    if n == 0:
        return None, "(empty)"
    arr = np.frombuffer(raw[: n * size], dtype=numpy_dtype(dt))
    vals = [x.item() for x in arr]
    if dt == 41:
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
        return f"{v} ({np.datetime64(v, unit)})"
    except (ValueError, OverflowError):
        return str(v)

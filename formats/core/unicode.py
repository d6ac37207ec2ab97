"""UTF-32 text from untrusted bytes.

numpy builds a `str` from any 32-bit code unit, including values above U+10FFFF and lone
surrogates; such a string breaks later string operations (SystemError in CPython). Every
numpy 'U' array read from a file passes through `safe_unicode` first."""
from __future__ import annotations

import numpy as np

REPLACEMENT = 0xFFFD


def safe_unicode(arr: np.ndarray) -> np.ndarray:
    """`arr` with every invalid code point replaced by U+FFFD (the same array when clean)."""
    if arr.dtype.kind != "U" or arr.dtype.itemsize == 0:
        return arr
    shape = arr.shape
    flat = np.ascontiguousarray(arr).reshape(-1)
    order = ">" if arr.dtype.byteorder == ">" else "<"
    units = flat.view(order + "u4")
    bad = (units > 0x10FFFF) | ((units >= 0xD800) & (units <= 0xDFFF))
    if not bad.any():
        return arr
    units = units.copy()
    units[bad] = REPLACEMENT
    return units.view(flat.dtype).reshape(shape)


def invalid_count(arr: np.ndarray) -> int:
    """How many code units of a 'U' array are not valid Unicode scalar values."""
    if arr.dtype.kind != "U" or arr.dtype.itemsize == 0 or arr.size == 0:
        return 0
    order = ">" if arr.dtype.byteorder == ">" else "<"
    units = np.ascontiguousarray(arr).reshape(-1).view(order + "u4")
    return int(((units > 0x10FFFF) | ((units >= 0xD800) & (units <= 0xDFFF))).sum())

"""The bytes at the cursor read as every common type (the inspector's data table; no Qt)."""
from __future__ import annotations

import datetime as _dt
import struct
from typing import List, Optional, Tuple

import numpy as np

from arrayscope.formats.core.cursor import format_scalar

_INTS = [("u8", "B", 1), ("i8", "b", 1), ("u16", "H", 2), ("i16", "h", 2), ("u32", "I", 4),
         ("i32", "i", 4), ("u64", "Q", 8), ("i64", "q", 8)]
_FLOATS = [("f16", "e", 2), ("f32", "f", 4), ("f64", "d", 8)]


def interpretations(data: bytes, datetime_unit: Optional[str] = None) -> List[Tuple[str, str, str]]:
    """Rows (type, little-endian text, big-endian text) for the bytes starting at the cursor."""
    rows: List[Tuple[str, str, str]] = []
    for name, code, size in _INTS + _FLOATS:
        if len(data) < size:
            rows.append((name, "—", "—"))
            continue
        le = struct.unpack("<" + code, data[:size])[0]
        be = struct.unpack(">" + code, data[:size])[0]
        if code in "efd":
            rows.append((name, format_scalar(float(le)), format_scalar(float(be))))
        else:
            rows.append((name, str(le), str(be)))
    if data:
        b = data[0]
        rows.append(("binary", f"{b:08b}", ""))
        rows.append(("ASCII", _ascii(data[:1]), ""))
        rows.append(("UTF-8", utf8_char(data), ""))
    if len(data) >= 8:
        v = struct.unpack("<q", data[:8])[0]
        ms = epoch_ms_text(v)
        if ms:
            rows.append(("i64 as ms timestamp", ms, ""))
        if datetime_unit:
            rows.append((f"TileDB datetime [{datetime_unit}]", datetime_text(v, datetime_unit), ""))
    return rows


def _ascii(b: bytes) -> str:
    c = b[0]
    if 32 <= c < 127:
        return repr(chr(c))
    names = {0: "NUL", 9: "TAB", 10: "LF", 13: "CR", 27: "ESC", 127: "DEL"}
    return names.get(c, f"\\x{c:02x}")


def utf8_char(data: bytes) -> str:
    for n in (1, 2, 3, 4):
        try:
            s = data[:n].decode("utf-8")
            return f"{s!r} (U+{ord(s):04X}, {n} B)" if s.isprintable() else f"U+{ord(s):04X} ({n} B)"
        except UnicodeDecodeError:
            continue
    return "invalid"


def epoch_ms_text(v: int) -> Optional[str]:
    """TileDB fragment/commit timestamps are milliseconds since 1970: show plausible ones."""
    if 631152000000 <= v <= 4102444800000:  # 1990..2100
        t = _dt.datetime.fromtimestamp(v / 1000, tz=_dt.timezone.utc)
        return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{v % 1000:03d} UTC"
    return None


def datetime_text(v: int, unit: str) -> str:
    if v == -(2 ** 63):
        return "NaT"
    try:
        return str(np.datetime64(v, unit))  # type: ignore[call-overload]  # unit: a numpy code
    except (ValueError, OverflowError):
        return str(v)

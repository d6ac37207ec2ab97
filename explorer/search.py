"""Finding bytes in a source, chunk by chunk (no Qt): hex, text and typed values."""
from __future__ import annotations

import struct
from typing import Optional

CHUNK = 16 << 20

TYPED = {"u8": "B", "i8": "b", "u16": "H", "i16": "h", "u32": "I", "i32": "i", "u64": "Q",
         "i64": "q", "f32": "f", "f64": "d"}
MODES = ("Hex", "Text", "UTF-16LE") + tuple(TYPED)


class PatternError(ValueError):
    pass


def pattern(mode: str, text: str, big_endian: bool = False) -> bytes:
    """The bytes to look for from what the user typed."""
    text = text.strip() if mode != "Text" else text
    if not text:
        raise PatternError("nothing to find")
    if mode == "Hex":
        h = "".join(text.replace("0x", " ").replace(",", " ").split())
        if len(h) % 2:
            raise PatternError("hex needs an even number of digits")
        try:
            return bytes.fromhex(h)
        except ValueError:
            raise PatternError(f"not hex: {text!r}") from None
    if mode == "Text":
        return text.encode("utf-8")
    if mode == "UTF-16LE":
        return text.encode("utf-16-le")
    code = TYPED[mode]
    try:
        v = float(text) if code in "fd" else int(text, 0)
        return struct.pack((">" if big_endian else "<") + code, v)
    except (ValueError, struct.error) as e:
        raise PatternError(f"{text!r} is not a {mode}: {e}") from None


def find(source, pat: bytes, start: int, backward: bool = False, wrap: bool = True,
         cancelled=None) -> Optional[int]:
    """Offset of the next (or previous) occurrence of `pat` from `start`, or None."""
    size = source.size
    if not pat or size < len(pat):
        return None
    if not backward:
        hit = _forward(source, pat, start, size, cancelled)
        if hit is None and wrap and start > 0:
            hit = _forward(source, pat, 0, min(size, start + len(pat) - 1), cancelled)
        return hit
    hit = _backward(source, pat, 0, start, cancelled)
    if hit is None and wrap:
        hit = _backward(source, pat, start, size, cancelled)
    return hit


def _forward(source, pat, lo, hi, cancelled):
    pos = max(0, lo)
    overlap = len(pat) - 1
    while pos < hi:
        if cancelled is not None and cancelled():
            return None
        n = min(CHUNK, hi - pos)
        block = source.read(pos, n + overlap)
        i = block.find(pat)
        if i >= 0 and pos + i + len(pat) <= max(hi, pos + len(block)):
            return pos + i
        pos += n
    return None


def _backward(source, pat, lo, hi, cancelled):
    """Last occurrence starting in [lo, hi)."""
    end = hi
    overlap = len(pat) - 1
    while end > lo:
        if cancelled is not None and cancelled():
            return None
        a = max(lo, end - CHUNK)
        block = source.read(a, end - a + overlap)
        i = block.rfind(pat, 0, end - a + overlap)
        while i >= 0 and a + i >= end:
            i = block.rfind(pat, 0, i + len(pat) - 1)
        if i >= 0:
            return a + i
        end = a
    return None


def parse_offset(text: str, current: int = 0, size: int = 0) -> int:
    """'0x1f', '1234', '1fh', '+16' / '-0x10' (relative to `current`), 'end', 'end-4'."""
    t = text.strip().lower().replace("_", "").replace(" ", "")
    if not t:
        raise ValueError("empty offset")
    base = None
    if t.startswith("end"):
        base, t = size, t[3:] or "+0"
        if t[0] not in "+-":
            raise ValueError(f"not an offset: {text!r}")
    elif t[0] in "+-":
        base = current
    sign = 1
    if t[0] in "+-":
        sign, t = (-1 if t[0] == "-" else 1), t[1:]
    if t.endswith("h"):
        v = int(t[:-1], 16)
    else:
        v = int(t, 0)
    return v if base is None else base + sign * v

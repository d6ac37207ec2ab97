"""Find every occurrence of a pattern in a source (no Qt), in constant memory: the source
is read in blocks with an overlap, never whole. Patterns: hex bytes with `??` wildcards,
a regular expression over the bytes, text, or a typed value (explorer/search.pattern).

A match is reported once, by the block its start lies in; a regular expression's match
longer than the overlap (REGEX_OVERLAP) across a block boundary may be cut at it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Pattern

from . import search

BLOCK = 4 << 20
REGEX_OVERLAP = 4096
MODES = ("Hex (?? = any byte)", "Regex", "Text", "UTF-16LE") + tuple(search.TYPED)


@dataclass(frozen=True)
class Compiled:
    regex: Pattern[bytes]
    overlap: int       # bytes a block is read past its end so matches across it are found
    text: str          # what the user asked for, as shown in the results' title


def compile_pattern(mode: str, text: str, big_endian: bool = False) -> Compiled:
    """Raises search.PatternError with a message for the find bar."""
    if mode.startswith("Hex"):
        return _hex(text)
    if mode == "Regex":
        if not text:
            raise search.PatternError("nothing to find")
        try:
            rx = re.compile(text.encode("latin-1", "backslashreplace"), re.DOTALL)
        except re.error as e:
            raise search.PatternError(f"not a regular expression: {e}") from None
        return Compiled(rx, REGEX_OVERLAP, f"/{text}/")
    pat = search.pattern(mode, text, big_endian)
    return Compiled(re.compile(re.escape(pat)), len(pat) - 1, text)


def _hex(text: str) -> Compiled:
    tokens = "".join(text.replace("0x", " ").replace(",", " ").split())
    if not tokens:
        raise search.PatternError("nothing to find")
    if len(tokens) % 2:
        raise search.PatternError("hex needs two digits (or ??) per byte")
    parts = []
    for i in range(0, len(tokens), 2):
        pair = tokens[i:i + 2]
        if pair == "??":
            parts.append(b".")
            continue
        try:
            parts.append(re.escape(bytes.fromhex(pair)))
        except ValueError:
            raise search.PatternError(f"not hex: {pair!r}") from None
    if all(p == b"." for p in parts):
        raise search.PatternError("a pattern of only wildcards matches everywhere")
    return Compiled(re.compile(b"".join(parts), re.DOTALL), len(parts) - 1, text)


@dataclass(frozen=True)
class Hit:
    offset: int
    length: int


def find_all(source, pat: Compiled, cancelled: Optional[Callable[[], bool]] = None,
             progress: Optional[Callable[[int, int], None]] = None,
             block: int = BLOCK) -> Iterator[Hit]:
    """Every non-overlapping match in `source`, in order. Stops when `cancelled()` says so;
    `progress(done, total)` after each block."""
    size = source.size
    pos = 0
    next_free = 0   # matches do not overlap: the next may start here at the earliest
    while pos < size:
        if cancelled is not None and cancelled():
            return
        n = min(block, size - pos)
        data = source.read(pos, n + pat.overlap)
        i = max(0, next_free - pos)
        while i < n:
            m = pat.regex.search(data, i)
            if m is None or m.start() >= n:
                break        # none, or it starts in the next block: found there
            if m.end() == m.start():
                i = m.start() + 1
                continue
            next_free = pos + m.end()
            i = m.end()
            yield Hit(pos + m.start(), m.end() - m.start())
        pos += n
        if progress is not None:
            progress(pos, size)

"""Text from a dataset (names, values, messages quoting them) made safe to print on one line."""
from __future__ import annotations

import re

# characters that move the cursor, end a line, reorder or hide text on a terminal or in a
# log: C0/C1 controls, DEL, zero-width and bidirectional marks, line/paragraph separators,
# lone surrogates (a name from a dataset holding them could fake other output)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
                          "\ud800-\udfff]")


def _escape(m: "re.Match[str]") -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str) -> str:
    """`text` as one line safe to print: each character that could spoof a terminal or a
    log written as `\\xNN` / `\\uNNNN` (the same string when clean)."""
    return _UNPRINTABLE.sub(_escape, text) if _UNPRINTABLE.search(text) else text


def printable_name(name: str) -> str:
    """A member or file name from a dataset, printed alone: `printable`, and its `/` and
    `\\` written `\\x2f` / `\\x5c`, so that a name never reads as a path (`../x`, `a/b`)."""
    return printable(name.replace("\\", "\\x5c").replace("/", "\\x2f"))


def printable_member_path(path: str) -> str:
    """A member's path in its group (names joined by `/`, as the group walk gives it),
    printed: each name `printable`, and a `.` or `..` name written with `\\x2e`, so the path
    never reads as a step out of the dataset. (A name holding `/` itself cannot be told from
    nesting here: the walk joined it.)"""
    def seg(name: str) -> str:
        return name.replace(".", "\\x2e") if name in (".", "..") else printable(name)
    return "/".join(seg(n) for n in path.split("/"))

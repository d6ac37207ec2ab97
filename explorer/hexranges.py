"""The hex view's cursor, selection and marked ranges, without Qt.

As in Okteta's table ranges, the selection is an anchor and a cursor (the anchor is None
when nothing is marked: the selection is then the cursor's byte); the other ranges are
what the window marks on the bytes: findings, bookmarks and the selected node with its
ancestors. Every method keeps offsets inside the source's `size` bytes."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from .hexlayout import GUTTER_LEVELS

Range = Tuple[int, int, str]  # start, end (exclusive), kind / status / colour


class HexRanges:
    def __init__(self, size: int = 0) -> None:
        self.size = size
        self.cursor = 0
        self.anchor: Optional[int] = None
        self.primary: Optional[Range] = None       # the selected node: (start, end, kind)
        self.ancestors: List[Range] = []           # its ancestors, outermost first
        self.marks: List[Range] = []               # findings: (start, end, status), sorted
        self.bookmarks: List[Range] = []           # (start, end, colour name), sorted

    def reset(self, size: int) -> None:
        """A new source: the cursor at 0, nothing selected; marks and bookmarks stay (their
        owners replace them)."""
        self.size = size
        self.cursor = 0
        self.anchor = None
        self.primary = None
        self.ancestors = []

    # ---- selection ---------------------------------------------------------------------
    def selection(self) -> Tuple[int, int]:
        """(start, end) of the selected bytes, end exclusive (one byte when nothing is marked)."""
        if self.size == 0:
            return 0, 0
        if self.anchor is None:
            return self.cursor, self.cursor + 1
        a, b = sorted((self.anchor, self.cursor))
        return a, b + 1

    @property
    def marked(self) -> bool:
        """Whether a range is selected (not just the cursor's byte)."""
        return self.anchor is not None

    def select_range(self, start: int, end: int) -> bool:
        """Select [start, end) clamped to the bytes, the cursor at its start; False when
        there are no bytes."""
        if self.size == 0:
            return False
        start = max(0, min(start, self.size - 1))
        end = max(start + 1, min(end, self.size))
        self.anchor = end - 1 if end - start > 1 else None
        self.cursor = start
        return True

    def set_cursor(self, offset: int, extend: bool = False) -> bool:
        """Move the cursor (clamped); `extend` keeps or starts a selection from where it was.
        False when there are no bytes."""
        if self.size == 0:
            return False
        offset = max(0, min(int(offset), self.size - 1))
        if extend:
            if self.anchor is None:
                self.anchor = self.cursor
        else:
            self.anchor = None
        self.cursor = offset
        return True

    def drag_to(self, offset: int, pressed: Optional[int]) -> bool:
        """A mouse drag from byte `pressed` reached `offset`; False when the cursor is there."""
        if offset == self.cursor:
            return False
        if self.anchor is None:
            self.anchor = pressed
        self.cursor = offset
        return True

    def select_all(self) -> bool:
        if self.size == 0:
            return False
        self.anchor, self.cursor = 0, self.size - 1
        return True

    # ---- marked ranges -----------------------------------------------------------------
    def set_marks(self, ranges: Sequence[Range]) -> None:
        self.marks = sorted(ranges)

    def set_bookmarks(self, ranges: Sequence[Range]) -> None:
        self.bookmarks = sorted(ranges)

    def set_node_ranges(self, primary: Optional[Range], ancestors: Sequence[Range] = ()) -> None:
        """The selected node's range and its ancestors' (the innermost `GUTTER_LEVELS` kept)."""
        self.primary = primary
        self.ancestors = list(ancestors)[-GUTTER_LEVELS:]

    def gutter(self) -> List[Range]:
        """The node ranges the gutter shows, one level each: ancestors, then the node."""
        return self.ancestors + ([self.primary] if self.primary else [])

    def selection_is_node(self) -> bool:
        """Whether the selection is exactly the selected node (drawn lighter over it)."""
        return self.primary is not None and self.selection() == tuple(self.primary[:2])

"""Where two sources differ, byte for byte at the same offsets (no Qt), in constant memory:
both are read in blocks and compared with numpy. Ranges closer than `join` bytes are
merged (one list entry per changed field, not per byte); a longer source's tail is one
range of its own."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Optional

import numpy as np

BLOCK = 4 << 20


@dataclass(frozen=True)
class DiffRange:
    start: int
    end: int           # exclusive
    tail: bool = False  # only one side has these bytes

    @property
    def size(self) -> int:
        return self.end - self.start


def diff_ranges(a, b, join: int = 4, block: int = BLOCK,
                cancelled: Optional[Callable[[], bool]] = None,
                progress: Optional[Callable[[int, int], None]] = None) -> Iterator[DiffRange]:
    common = min(a.size, b.size)
    cur: Optional[list] = None
    pos = 0
    while pos < common:
        if cancelled is not None and cancelled():
            return
        n = min(block, common - pos)
        x = np.frombuffer(a.read(pos, n), dtype=np.uint8)
        y = np.frombuffer(b.read(pos, n), dtype=np.uint8)
        m = min(len(x), len(y))
        idx = np.flatnonzero(x[:m] != y[:m])
        if len(idx):
            # runs of differing bytes: breaks where the gap exceeds `join`
            gaps = np.flatnonzero(np.diff(idx) > join)
            starts = np.concatenate(([idx[0]], idx[gaps + 1]))
            ends = np.concatenate((idx[gaps], [idx[-1]])) + 1
            for s, e in zip(starts.tolist(), ends.tolist()):
                s, e = s + pos, e + pos
                if cur is not None and s - cur[1] <= join:
                    cur[1] = e
                    continue
                if cur is not None:
                    yield DiffRange(cur[0], cur[1])
                cur = [s, e]
        pos += n
        if progress is not None:
            progress(pos, common)
    if cur is not None:
        yield DiffRange(cur[0], cur[1])
    if a.size != b.size:
        yield DiffRange(common, max(a.size, b.size), tail=True)

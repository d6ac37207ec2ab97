"""Test helper: the GUI thread's turns as a 10 ms QTimer sees them.

Each tick records the wall clock and the GUI thread's own CPU time. A gap between ticks is
what a user waits for (the wall clock: machine load and the interpreter lock included);
the CPU time the GUI thread spent in that gap is the work the window put in one turn,
which another process's load hardly changes: default tests assert that, benchmarks the
wall clock."""
from __future__ import annotations

import time
from typing import List, Tuple


class LoopProbe:
    INTERVAL_MS = 10

    def __init__(self, parent) -> None:
        from PySide6.QtCore import QTimer

        self.ticks: List[Tuple[float, float]] = []   # (wall, GUI thread CPU) seconds
        self._timer = QTimer(parent)
        self._timer.setInterval(self.INTERVAL_MS)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        self.ticks.append((time.perf_counter(), time.thread_time()))

    def start(self) -> None:
        self.ticks.clear()
        self._tick()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._tick()

    def _steps(self) -> List[Tuple[float, float]]:
        return [(b[0] - a[0], b[1] - a[1]) for a, b in zip(self.ticks, self.ticks[1:])]

    def longest_gap_ms(self) -> float:
        """The longest wall-clock time between two ticks."""
        return 1000 * max((w for w, _c in self._steps()), default=0.0)

    def longest_turn_cpu_ms(self) -> float:
        """The most CPU time the GUI thread spent between two ticks."""
        return 1000 * max((c for _w, c in self._steps()), default=0.0)

    def gaps_over(self, ms: float) -> int:
        return sum(1 for w, _c in self._steps() if w * 1000 > ms)

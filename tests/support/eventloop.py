"""Test helper: the GUI thread's turns as a 10 ms QTimer sees them.

Each tick records the wall clock and the GUI thread's own CPU time. A gap between ticks is
what a user waits for (the wall clock: machine load and the interpreter lock included);
the CPU time the GUI thread spent in that gap is the work the window put in one turn,
which another process's load hardly changes: default tests assert that, benchmarks the
wall clock."""
from __future__ import annotations

import gc
import time
from typing import Dict, List, Tuple


class LoopProbe:
    INTERVAL_MS = 10

    def __init__(self, parent) -> None:
        from PySide6.QtCore import QTimer

        self.window = parent                         # what it ticks on (the window)
        self.ticks: List[Tuple[float, float]] = []   # (wall, GUI thread CPU) seconds
        self.phases: List[Tuple[int, str]] = []      # (first tick, what the test drives)
        self.gc_ms: Dict[int, float] = {}            # tick -> the collector's CPU ms before it
        self._gc_began = 0.0
        self._timer = QTimer(parent)
        self._timer.setInterval(self.INTERVAL_MS)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        self.ticks.append((time.perf_counter(), time.thread_time()))

    def phase(self, name: str) -> None:
        """What the test drives from here on (`worst` names the phase of each stall)."""
        self.phases.append((len(self.ticks), name))

    def _collector(self, phase: str, _info) -> None:
        if phase == "start":
            self._gc_began = time.thread_time()
        else:
            n = len(self.ticks)
            self.gc_ms[n] = self.gc_ms.get(n, 0.0) + 1000 * (time.thread_time() - self._gc_began)

    def start(self) -> None:
        self.ticks.clear()
        self.phases.clear()
        self.gc_ms.clear()
        gc.callbacks.append(self._collector)
        self._tick()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._tick()
        gc.callbacks.remove(self._collector)

    def _steps(self) -> List[Tuple[float, float]]:
        return [(b[0] - a[0], b[1] - a[1]) for a, b in zip(self.ticks, self.ticks[1:])]

    def longest_gap_ms(self) -> float:
        """The longest wall-clock time between two ticks."""
        return 1000 * max((w for w, _c in self._steps()), default=0.0)

    def longest_turn_cpu_ms(self) -> float:
        """The most CPU time the GUI thread spent between two ticks."""
        return 1000 * max((c for _w, c in self._steps()), default=0.0)

    def worst(self, k: int = 5) -> List[Tuple[float, float, str, float]]:
        """The `k` longest turns as (wall ms, GUI-thread CPU ms, phase, of the CPU the
        garbage collector's ms), longest first."""
        def phase_of(i: int) -> str:
            return next((name for first, name in reversed(self.phases) if first <= i), "")
        steps = [(1000 * w, 1000 * c, phase_of(i), self.gc_ms.get(i + 1, 0.0))
                 for i, (w, c) in enumerate(self._steps())]
        return sorted(steps, reverse=True)[:k]

    def worst_cpu(self, k: int = 5) -> List[Tuple[float, float, str, float]]:
        """The `k` turns that took the GUI thread the most CPU, as `worst` gives them."""
        return sorted(self.worst(len(self.ticks)), key=lambda s: -s[1])[:k]

    def gaps_over(self, ms: float) -> int:
        return sum(1 for w, _c in self._steps() if w * 1000 > ms)

"""How bad something is: one vocabulary for the tree's nodes, verify's findings, a chunk's
forward check and every view of them (CLI, window, JSON).

A `Status` is a `str` (its value: "ok", "info", "warning", "error"), so JSON, reports and
child processes carry it as the word; `Status(word)` reads it back."""
from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    OK = "ok"
    INFO = "info"            # worth knowing, not damage (a writer's known habit)
    WARNING = "warning"      # unusual, or damage a reader tolerates
    ERROR = "error"          # damage: a reader fails or returns other values

    # the word, wherever it is printed (a str mixin would print "Status.OK" otherwise)
    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def rank(self) -> int:
        """0 (ok) .. 3 (error): `max(statuses, key=rank)` is the worst."""
        return _RANK[self]


_RANK = {Status.OK: 0, Status.INFO: 1, Status.WARNING: 2, Status.ERROR: 3}

"""A salvage run as a task for a worker process (the window's Salvage…): plain data in and
out, the key by name (`context.key_name`; handed to the worker once, never in a task)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional


@dataclass(frozen=True)
class SalvageTask:
    path: str
    out: str
    key_id: Optional[str] = None
    dry: bool = False            # the report alone (the preview), nothing written


@dataclass(frozen=True)
class SalvageResult:
    exit_code: int               # as `arrayscope salvage`: 0 nothing lost, 3 some, 2 none written
    summary: str
    lines: List[str]             # the text report
    written: bool


def run(task: SalvageTask) -> SalvageResult:
    from ..core.verify_tasks import key_named
    from . import salvage

    report = salvage(task.path, task.out, key=key_named(task.key_id), dry=task.dry)
    lines = report.lines() if report.written else [f"nothing written: {report.failure}"]
    return SalvageResult(report.exit_code(), report.summary(), lines, report.written)

"""The window's health computations as tasks for a worker process (formats/core/taskworker.py).

Health reads every fragment's metadata: 1 000 fragments are seconds of Python, which in a
thread of the window's process would hold the interpreter lock the window paints with.
So the window sends a `HealthTask` (plain, picklable: the array's path, its format and the
name of its key, never a node or a document) to a process of its own, which opens a light
document there and answers with plain data (`formats.core.health`'s dataclasses). An encrypted
array's key never travels in a task: it is handed to the worker once
(`context.remember_key`), the task names it (`context.key_name`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from . import health as H
from .context import Context

# what a task asks
MEMBERS = "members"   # a group's member arrays: [(member path, folder or URL)] or None
OPEN = "open"         # the health of the array now (the Fragments tab, the verdict)
EXTENTS = "extents"   # the fragments' extents (the Extents tab: asked when it is shown)
AT = "at"             # the health of the array for a reader at `at`
SPACE = "space"       # where the array's bytes go


@dataclass(frozen=True)
class HealthTask:
    what: str                       # MEMBERS, OPEN, EXTENTS, AT or SPACE
    path: str                       # the array or group opened (a local folder or a URL)
    format: Optional[str] = None
    key_id: Optional[str] = None    # context.key_name of the key, when there is one
    member: Optional[str] = None    # a member array of the group `path` (from MEMBERS)
    at: Optional[int] = None


def run(task: HealthTask) -> Any:
    """The answer to `task` (None when there is none: not an array with fragments)."""
    from .context import key_named
    from .document import Document

    doc = Document(task.path, Context(key=key_named(task.key_id)))
    doc.format = task.format
    array = doc
    try:
        if task.what == MEMBERS:
            return H.group_arrays(doc)
        if task.member is not None:
            array = H.member_document(doc, task.member)
        if task.what == OPEN:
            return H.health(array, None)
        if task.what == EXTENTS:
            return H.extents(array)
        if task.what == AT:
            return H.health(array, task.at)
        if task.what == SPACE:
            return H.space(array)
        raise ValueError(f"unknown health task {task.what!r}")
    finally:
        if array is not doc:
            array.close()
        doc.close()

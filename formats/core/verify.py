"""`arrayscope verify`: every finding of the tree plus each format's own cross-checks.

`verify(document)` gives the findings (the window's diagnostics panel takes them);
`verify_report(document)` also gives what was checked (files, tiles, bytes, time) and what
could not be (`unchecked`), which the command line turns into its summary and exit code.
Format checks count their work through `verify_tally.tally()` (a no-op outside a report);
with an executor the work runs as tasks (formats/core/verify_tasks.py). Plugins never import
this module: what they share with it is in `verify_tally` and `findings`."""
from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from . import registry
from .context import KEY_HINT
from .finding_nodes import with_nodes
from .findings import (
    AES_TAG,
    NO_KEY,
    NOT_VERIFIABLE,
    UNCHECKED,
    WRITER_BUG,
    WRITER_QUIRK,
    WRONG_KEY,
    Finding,
    of_node,
    unique,
)
from .node import OK
from .status import Status
from .verify_tally import ProgressFn, Tally, counting_into, folder_bytes


@dataclass
class Report:
    findings: List[Finding]
    tally: Tally
    seconds: float
    verifiable: bool = True
    why_not: str = ""        # when not verifiable: what to do

    def count(self, status: Status) -> int:
        return sum(1 for f in self.findings if f.status == status)

    @property
    def unchecked(self) -> Dict[str, int]:
        """reason -> number of parts not checked for it."""
        out: Dict[str, int] = Counter()
        for f in self.findings:
            if f.code == UNCHECKED:
                reason = f.hint or f.message
                head = f.message.split(" ", 1)[0]   # "5 chunks: ..." counts 5 parts
                out[reason] += int(head) if head.isdigit() else 1
        return dict(out)

    @property
    def problems(self) -> List[Finding]:
        return [f for f in self.findings if f.status == "error"]

    def exit_code(self) -> int:
        """0 verified and clean, 1 problems found, 2 nothing verifiable, 3 some parts not
        checked (and no problem found)."""
        if not self.verifiable:
            return 2
        if self.problems:
            return 1
        if any(f.code == UNCHECKED for f in self.findings):
            return 3
        return 0

    def summary(self) -> str:
        t = self.tally
        by = ", ".join(f"{self.count(s)} {s}{'s' * (self.count(s) != 1)}"
                       for s in (Status.ERROR, Status.WARNING, Status.INFO))
        text = (f"{len(t.files)} files, {t.tiles} tiles, {_size(t.nbytes)} checked: {by} "
                f"in {self.seconds:.2f} s")
        for reason, n in sorted(self.unchecked.items()):
            text += f"; not checked: {n} × {reason}"
        return text


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def verify(document, executor=None) -> List[Finding]:
    """Every finding of the document, tree order first, then the format's own checks.
    With an `executor` (formats/core/executors.py) the decoding runs as tasks there
    (formats/core/verify_tasks.py): the same findings, in the same order."""
    return verify_report(document, executor=executor).findings


def verify_report(document, progress: Optional[ProgressFn] = None, executor=None) -> Report:
    t0 = time.perf_counter()
    tal = Tally(progress=progress)
    tal.planned = _stored_bytes(document)
    with counting_into(tal):
        found = None
        if executor is not None:
            from .verify_tasks import verify_with

            found = verify_with(document, executor)
        if found is None:   # nothing split into tasks
            found = _collect(document)
    tal.complete(getattr(document, "path", ""))
    for src in getattr(document, "sources", []):   # every file parsed is a file checked
        tal.file(document.source_name(src))
    if not tal.nbytes:   # no tile counted here (formats without tiles, or tasks elsewhere)
        tal.nbytes = tal.planned
    found = with_nodes(_collapse_keys(_aggregate(found), document), document)
    report = Report(found, tal, time.perf_counter() - t0)
    why = _not_verifiable(document, found)
    if why:
        report.verifiable, report.why_not = False, why
        if any(f.code == NO_KEY for f in found):  # the rest follows from the missing key
            report.findings = [f for f in found if f.code == NO_KEY]
    return report


def _collect(document) -> List[Finding]:
    from .remote import build_read_deferred

    plugin = registry.plugin_named(document.format) if document.format else None
    streamed = _streamed(plugin, document)
    if streamed is not None:
        return unique(it if isinstance(it, Finding) else of_node(it, document)
                      for it in streamed if getattr(it, "status", OK) != OK)
    build_read_deferred(document.root)   # a remote dataset's tiles: the tree verify checks
    items: list = list(document.diagnostics())
    extra = getattr(plugin, "verify", None)
    if extra is not None:
        from .verify_tasks import guarded

        items.extend(guarded(lambda: extra(document)))
    return unique(it if isinstance(it, Finding) else of_node(it, document)
                  for it in items if getattr(it, "status", OK) != OK)


def open_for_verify(path: str, key: Optional[bytes] = None, as_format: Optional[str] = None):
    """The document `verify` checks: opened lazily where its format verifies one part of the
    tree at a time (memory bounded by a part: 10 000 fragments), else opened whole."""
    from .. import open as open_document

    doc = open_document(path, key=key, as_format=as_format, lazy=True)
    plugin = registry.plugin_named(doc.format) if doc.format else None
    can = getattr(plugin, "can_stream", None)
    if can is not None and can(doc):
        return doc
    doc.close()
    return open_document(path, key=key, as_format=as_format)


def _streamed(plugin, document) -> Optional[list]:
    """The plugin's diagnostics and checks made one part of the tree at a time (a lazily
    opened dataset: memory for one part, not all), or None: build the whole tree."""
    fn = getattr(plugin, "verify_streamed", None)
    if fn is None:
        return None
    try:
        return fn(document)
    except Exception:  # noqa: BLE001 - the whole-tree path gives the findings (and says why)
        return None


# Findings said once per file with a count: the same writer quirk, writer bug or unchecked
# reason in every chunk of a file is one line, not one per chunk.
_PER_FILE = (WRITER_QUIRK, WRITER_BUG, UNCHECKED)


def _aggregate(found: List[Finding]) -> List[Finding]:
    groups: Dict[Tuple[str, str, str], List[Finding]] = {}
    out: List[Finding] = []
    for f in found:
        if f.code in _PER_FILE and f.message.startswith("chunk: "):
            k = (f.source, f.code, f.message)
            if k not in groups:
                groups[k] = []
                out.append(f)   # placeholder: the group's first place
            groups[k].append(f)
        else:
            out.append(f)
    final: List[Finding] = []
    for f in out:
        k = (f.source, f.code, f.message)
        if f.code in _PER_FILE and k in groups:
            n = len(groups[k])
            text = f.message[len("chunk: "):]
            final.append(Finding(f.status, f.code, f.source, f.offset, f.node,
                                 f"{n} chunk{'s' * (n != 1)}: {text}", f.hint))
        else:
            final.append(f)
    return final


def _stored_bytes(document) -> int:
    opened = sum(int(getattr(s, "size", 0) or 0) for s in getattr(document, "sources", []))
    path = getattr(document, "path", "")
    if getattr(document, "lazy", False) and getattr(document, "is_dir", False):
        # a lazy open has opened few files yet: the progress total is every file's size
        return max(opened, folder_bytes(path))
    return opened


def _collapse_keys(found: List[Finding], document) -> List[Finding]:
    """Key trouble is said once: no key -> one finding for the dataset; a wrong key (the
    schema itself fails its tag) -> one finding per file."""
    no_key = [f for f in found if f.code == NO_KEY]
    tags = [f for f in found if f.code == AES_TAG]
    out = [f for f in found if f.code not in (NO_KEY, AES_TAG)]
    if no_key:
        files = sorted({f.source for f in no_key})
        out.append(Finding(Status.WARNING, NO_KEY, files[0], 0, "",
                           f"encrypted (AES-256-GCM) and no key given: {len(files)} files "
                           f"could not be checked", KEY_HINT))
    if tags:
        wrong = getattr(document.ctx, "key", None) is not None and _schema_unreadable(document)
        by_file: Dict[str, List[Finding]] = {}
        for f in tags:
            by_file.setdefault(f.source, []).append(f)
        for src, fs in by_file.items():
            if wrong:
                out.append(Finding(Status.ERROR, WRONG_KEY, src, fs[0].offset, fs[0].node,
                                   f"the key given does not open this file ({len(fs)} encrypted "
                                   f"part{'s' * (len(fs) != 1)} fail{'s' * (len(fs) == 1)} "
                                   f"{'its' if len(fs) == 1 else 'their'} AES-GCM tag)", KEY_HINT))
            else:
                out.extend(fs)
    return out


def _schema_unreadable(document) -> bool:
    """No schema opened under the key: a TileDB array's `latest_schema` (its model has no
    `schema`: reading that said "wrong key" of every changed tile under the right key)."""
    model = getattr(document, "model", None)
    if model is None:
        return True
    return getattr(model, "latest_schema", getattr(model, "schema", None)) is None


def _not_verifiable(document, found: List[Finding]) -> str:
    """Why nothing here can be verified ('' when something can)."""
    if document.format is None or document.root is None:
        if document.is_dir and not any(os.scandir(document.path)):
            return "an empty folder"
        return "no format arrayscope knows was recognised (not a TileDB array, Zarr store " \
               "or SCDL archive)"
    if any(f.code == NO_KEY for f in found) and getattr(document.ctx, "key", None) is None:
        return f"the array is encrypted and no key was given: {KEY_HINT}"
    if any(f.code == NOT_VERIFIABLE for f in found):
        return next(f.message for f in found if f.code == NOT_VERIFIABLE)
    return ""

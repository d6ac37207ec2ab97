"""`arrayscope salvage`: a new dataset holding everything of an opened one that verifies
clean, and a report of what was lost and why.

One module per job: `damage` (which parts verify finds errors in), `output` (the new
folder, written only by creation), `job` (one run: confined reads, the output, the report),
`tiledb_array`, `tiledb_group`, `zarr_store` (each format's rules), `tiledb_fragment` (a
damaged TileDB fragment rewritten without its damaged tiles), `report` (cells kept and
lost per part). The dataset is only read; nothing leaves its folder."""
from __future__ import annotations

import os
import shutil
from typing import Optional

from ..core.context import KEY_HINT
from ..core.dataset_fs import LocalFS
from ..core.findings import NO_KEY
from ..core.health import now_ms
from .damage import Damage, verify_findings
from .job import Job
from .output import Output, OutputError
from .report import Loss, Part, SalvageReport

__all__ = ["salvage", "SalvageReport", "Part", "Loss", "OutputError"]


def salvage(path: str, out: str, at: Optional[int] = None,
            key: Optional[bytes] = None, dry: bool = False) -> SalvageReport:
    """Write at `out` (which must not exist) what a reader at `at` (ms; default now) sees of
    the dataset at `path`, less the parts `verify` finds damaged. Never raises for what is
    in the dataset: the report says what was written, lost and why (`failure` when nothing
    could be). `dry`: the report alone, nothing written (`written` says what would be)."""
    from .. import open as open_document

    report = SalvageReport(path, out)
    if "://" in path:
        report.failure = "salvage reads local datasets only"
        return report
    if not os.path.isdir(path):
        report.failure = f"{path}: not a dataset folder"
        return report
    if os.path.lexists(out):
        report.failure = f"{out}: already exists (salvage writes a new dataset only)"
        return report
    try:
        findings = verify_findings(path, key)
        doc = open_document(path, key=key, lazy=True)
    except Exception as e:  # noqa: BLE001 - an unreadable dataset is a report, not a crash
        report.failure = f"{path} cannot be opened: {type(e).__name__}: {e}"
        return report
    try:
        fmt, model = doc.format, doc.model
    finally:
        doc.close()
    if key is None and any(f.code == NO_KEY for f in findings):
        report.failure = f"encrypted and no key given: {KEY_HINT}"
        return report
    try:
        output = Output(out, path, dry=dry)
    except OutputError as e:
        report.failure = str(e)
        return report
    job = Job(LocalFS(path), key, now_ms() if at is None else int(at), Damage(findings),
              output, report)
    try:
        report.written = _dispatch(job, path, fmt, model)
    except Exception as e:  # noqa: BLE001 - a half-written OUT is removed, the reason said
        report.written = False
        report.failure = f"salvage stopped: {type(e).__name__}: {e}"
    if not report.written:
        report.failure = report.failure or "; ".join(report.notes) or "nothing to write"
        if not dry:
            shutil.rmtree(output.root, ignore_errors=True)   # only the folder this run made
    return report


def _dispatch(job: Job, path: str, fmt: Optional[str], model) -> bool:
    if fmt == "tiledb":
        from ..tiledb.model import layout
        from .tiledb_array import salvage_array
        from .tiledb_group import salvage_group

        if layout.is_group_dir(path) and not layout.is_array_dir(path):
            return salvage_group(job, path, "")
        return salvage_array(job, path, "")
    if fmt == "zarr":
        from .zarr_store import salvage_zarr

        salvage_zarr(job, path, dict(getattr(model, "arrays", {}) or {}))
        return True
    if fmt == "scdl":
        job.report.failure = SCDL_REFUSED
        return False
    job.report.failure = (f"salvage knows TileDB and Zarr datasets; this one is "
                          f"{fmt or 'no format arrayscope recognises'}")
    return False


# Why an SCDL archive is not salvaged: an empty row could stand for a lost one, but nothing
# locates the lost rows. Its arrays are raw memory maps with no checksum, so verify sees
# structure only (row pointers, column indices, lengths; the first bad index of each row
# block, with a count), never a damaged value: a copy of the rows it does not flag could
# pass damaged values off as intact.
SCDL_REFUSED = ("SCDL archives are not salvaged: their arrays are raw, unchecksummed memory "
                "maps, so verify can flag broken structure but not locate every damaged row "
                "or value; copy the archive and repair it with bionemo-scdl instead")

"""Salvage of a TileDB group: its own files (marker, member lists, metadata) copied, then
each member inside it salvaged one by one to the same place under OUT."""
from __future__ import annotations

import os

from ..tiledb.model import layout
from ..tiledb.parse.group import TileDBGroup
from .job import Job
from .report import Part
from .tiledb_array import salvage_array


def salvage_group(job: Job, path: str, out_rel: str) -> bool:
    from .. import open as open_document
    from ..tiledb.model.group_walk import is_group_document

    rel = job.rel(path)
    doc = open_document(path, key=job.key, lazy=True)
    try:
        group = doc.model
        if not is_group_document(doc) or not isinstance(group, TileDBGroup):
            job.report.notes.append(f"{rel}: not readable as a TileDB group: not written")
            return False
        if out_rel:
            job.out.mkdir(out_rel)
        _own_files(job, path, rel, out_rel)
        for m in group.members:
            if m.path is None:
                job.report.notes.append(f"{rel}: member {m.name!r} not salvaged: "
                                        f"{m.problem[2] if m.problem else 'not followed'}")
                continue
            if not m.entry.relative:
                job.report.notes.append(f"{rel}: member {m.name!r} is named by an absolute URI "
                                        f"({m.entry.uri}): OUT's group still names that place")
            sub = os.path.relpath(m.path, path).replace(os.sep, "/")
            target = "/".join(p for p in (out_rel, sub) if p)
            ok = salvage_group(job, m.path, target) if m.is_group else \
                salvage_array(job, m.path, target)
            if not ok:
                job.report.parts.append(Part(job.rel(m.path), "member", m.name, [], None, False))
    finally:
        doc.close()
    return True


def _own_files(job: Job, path: str, rel: str, out_rel: str) -> None:
    """The marker, every member-list file and the metadata files (one with an error left
    out and reported)."""
    def out(name: str) -> str:
        return "/".join(p for p in (out_rel, name) if p)

    marker = os.path.join(path, layout.GROUP_FILE)
    if job.fs.stat(marker).is_file:
        job.copy(marker, out(layout.GROUP_FILE))
    for folder in (layout.GROUP_DETAILS_DIR, layout.META_DIR):
        full = os.path.join(path, folder)
        if not job.fs.stat(full).is_dir:
            continue
        job.out.mkdir(out(folder))
        for e in job.fs.list(full):
            if not e.is_file:
                continue
            why = job.damage.in_file(e.rel)
            if folder == layout.META_DIR:
                job.report.parts.append(Part(rel, "group-metadata", f"{folder}/{e.name}", [],
                                             None, not why, why))
            if not why:
                job.copy(e.path, out(f"{folder}/{e.name}"))

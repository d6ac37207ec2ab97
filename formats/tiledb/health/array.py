"""`PLUGIN.health(document, at, reader)`: the fragments of one TileDB array as a reader at T
sees them (visibility.py), with the version verdict (compat.py). Per array: a group's
members are each asked in turn."""
from __future__ import annotations

import os
from typing import List, Optional

from ...core.health import ArrayHealth, Extents, FileVerdict, VersionVerdict, now_ms
from ..model import compat
from ..model.names import decode_name
from . import extents, verified_metadata, visibility
from .snapshot import Snapshot, first_u32, take


def array_health(document, at: Optional[int] = None, reader: Optional[str] = None,
                 start: int = 0) -> ArrayHealth:
    """The health of the array `document` was opened on. `reader` (e.g. "2.15") adds what
    that libtiledb release does with each versioned file; a bad `reader` raises ValueError
    before anything is read."""
    release = compat.parse_release(reader) if reader else None
    end = now_ms() if at is None else int(at)
    with take(document, verified_metadata.reader()) as snap:
        rows, conds, open_err, read_err, notes = visibility.fragment_rows(snap, start, end)
        schema = snap.latest_schema
        out = ArrayHealth(document.path, end,
                          [d.name for d in schema.dimensions] if schema is not None else [],
                          rows, conds, open_err, read_err, notes=notes + snap.listing.errors)
        out.versions = verdict(snap, rows, release)
    return out


def _version_of_name(rel: str) -> Optional[int]:
    info = decode_name(rel.rsplit("/", 1)[-1]) or {}
    return info.get("version")


def verdict(snap: Snapshot, rows, release) -> VersionVerdict:
    """Every versioned file with the releases that write and read it; with `release`, what
    that release does with it."""
    files: List[FileVerdict] = []

    def add(path: str, kind: str, v: Optional[int]) -> FileVerdict:
        fv = FileVerdict(path, kind, v, compat.written_by(v), compat.oldest_reader(v))
        files.append(fv)
        return fv

    for rel, v in sorted(snap.schema_versions.items()):
        if "/__enumerations/" in rel:
            continue
        add(rel, "schema", v)
    for r in rows:
        if r.state == "orphan" or r.format_version is None:
            continue
        fd = snap.listing.fragments.get(r.name)
        add(fd.rel if fd else r.name, "fragment", r.format_version)
    for rel in sorted(snap.listing.meta):
        if rel.endswith(".vac"):
            continue
        add(rel, "array metadata", first_u32(os.path.join(snap.path, rel)))
    for rel in sorted(snap.listing.fragment_meta):
        add(rel, "consolidated fragment metadata", _version_of_name(rel))
    for rel in sorted(snap.listing.commits):
        if rel.endswith((".con", ".del", ".upd", ".vac", ".ign")):
            add(rel, "commit", _version_of_name(rel))
    known = [f.format_version for f in files if f.format_version is not None]
    newest = max(known) if known else None
    out = VersionVerdict(compat.oldest_reader(newest), newest)
    out.files = files
    if release is None:
        out.summary = (f"newest format {newest}: needs libtiledb {out.oldest_reader} or later"
                       if newest is not None else "no versioned file found")
        return out
    mine = compat.format_of_release(release)
    out.reader, out.reader_format = compat.vstr(release), mine
    refused = 0
    for f in files:
        v = f.format_version
        if v is None:
            f.message = "version unknown"
            continue
        if f.kind == "schema":
            msg = compat.schema_refusal(v, release)
            if msg is not None:
                f.refused, f.message = True, msg
                refused += 1
            else:
                f.message = f"reads it (format {v} <= {mine})"
        elif mine is not None and v > mine:
            f.message = (f"format {v} is newer than the {mine} libtiledb {out.reader} knows: "
                         f"not refused by a version check, parsed as format {v} with the "
                         f"rules it knows (changes since: " +
                         "; ".join(compat.ARRAY_FORMAT_CHANGE.get(k, "?")
                                   for k in range(mine + 1, v + 1)) + ")")
        else:
            f.message = f"reads it (format {v} <= {mine})"
    out.readable = refused == 0 and mine is not None
    if refused:
        out.summary = (f"libtiledb {out.reader} (format {mine}) cannot open this array: it "
                       f"refuses {refused} schema file(s); needs {out.oldest_reader} or later")
    elif newest is not None and mine is not None and newest > mine:
        out.summary = (f"libtiledb {out.reader} (format {mine}) opens the schema, but files of "
                       f"format {newest} are newer than it knows")
    else:
        out.summary = f"libtiledb {out.reader} (format {mine}) reads every file"
    return out


def array_extents(document) -> Extents:
    with take(document, verified_metadata.reader()) as snap:
        schema = snap.latest_schema
        out = Extents()
        if schema is not None:
            out.dimensions = [d.name for d in schema.dimensions]
            out.domain = [[extents.python_plain(x) for x in d.domain]
                          if d.domain is not None else [None, None] for d in schema.dimensions]
        out.boxes = extents.array_boxes(snap)
    return out

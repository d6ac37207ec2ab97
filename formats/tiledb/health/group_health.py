"""Health and space of a TileDB group: every member array, recursively, each as an array of
its own (health.py, space.py on a light document opened on the member's folder or URL), and
the version verdict of the group's own files (`__group` details, `__meta`, the marker).

libtiledb lists only members (group details in effect), so folders no member names are not
walked: they are reported in the notes. The walk opens groups (their few small files), never
an array's files beyond what the health model of that array reads.
"""
from __future__ import annotations

import os
from typing import List, Optional, Tuple

from ...core.context import Context
from ...core.document import Document
from ...core.health import (
    ArrayHealth,
    FileVerdict,
    GroupHealth,
    GroupSpace,
    SpaceReport,
    VersionVerdict,
    now_ms,
)
from ...core.node import Node
from ..model import compat, layout
from ..parse.group import MemberRef, TileDBGroup, open_group_dir

Walk = Tuple[List[Tuple[str, str]], List[Tuple[str, TileDBGroup]], List[str]]


def _root(document) -> Node:
    """The group's tree (built here when the document was opened without one)."""
    if document.root is None or not isinstance(document.model, TileDBGroup):
        document.root = open_group_dir(document, document.path)
    return document.root


def walk(document) -> Walk:
    """(array members as (member path, folder or URL), groups as (member path, model) with
    the opened group first under "", notes on what is not walked), in member-path order."""
    root = _root(document)
    arrays: List[Tuple[str, str]] = []
    groups: List[Tuple[str, TileDBGroup]] = [("", root.data)]
    notes: List[str] = []
    stack = [root]
    while stack:
        n = stack.pop()
        n.ensure_built()
        for c in n.iter_children():
            ref = c.data
            if not isinstance(ref, MemberRef):
                continue
            if ref.member is None:   # a folder no member names: libtiledb does not list it
                notes.append(f"{ref.member_path}: a {ref.kind} folder that is not a member of "
                             f"the group: not walked (libtiledb does not list it)")
            elif ref.kind == "array" and ref.path is not None:
                arrays.append((ref.member_path, ref.path))
            elif ref.kind == "group":
                c.ensure_built()
                if isinstance(ref.model, TileDBGroup):
                    groups.append((ref.member_path, ref.model))
                stack.append(c)
    return sorted(arrays), sorted(groups, key=lambda g: g[0]), sorted(notes)


def arrays_of(document) -> List[Tuple[str, str]]:
    """The array members of `document`'s group, walked on a document of their own (a
    window's tree is not built further behind its back)."""
    scratch = Document(document.path, Context(key=getattr(document.ctx, "key", None)))
    try:
        return walk(scratch)[0]
    finally:
        scratch.close()


def pick(arrays: List[Tuple[str, str]], member: Optional[str]) -> List[Tuple[str, str]]:
    """The members to report: all, or the one named (LookupError listing the arrays)."""
    if member is None:
        return arrays
    want = member.strip("/")
    hit = [a for a in arrays if a[0] == want]
    if not hit:
        raise LookupError(f"no array member {member!r}; arrays: "
                          f"{', '.join(m for m, _p in arrays) or '(none)'}")
    return hit


def member_document(document, path: str) -> Document:
    """A light document on a member array (nothing parsed: the health model reads what it
    needs), with the group's key."""
    d = Document(path, Context(key=getattr(document.ctx, "key", None)))
    d.format = "tiledb"
    return d


def group_health(document, at: Optional[int] = None, reader: Optional[str] = None,
                 member: Optional[str] = None) -> GroupHealth:
    """Each member array's health at one T (the same for all), and with `reader` the
    verdict on the group files too. ValueError for a bad `reader`, LookupError for an
    unknown `member`, both before any member is read."""
    from .array import array_health

    release = compat.parse_release(reader) if reader else None
    end = now_ms() if at is None else int(at)
    arrays, groups, notes = walk(document)
    chosen = pick(arrays, member)
    out = GroupHealth(document.path, end, notes=notes)
    for mpath, path in chosen:
        d = member_document(document, path)
        try:
            out.members.append((mpath, array_health(d, end, reader)))
        except Exception as e:  # noqa: BLE001 - one member's failure is a note, not the end
            out.members.append((mpath, ArrayHealth(path, end, notes=[
                f"cannot read this member: {type(e).__name__}: {e}"])))
        finally:
            d.close()
    if member is None:
        out.versions = group_verdict(document, groups, release)
    return out


def group_space(document, member: Optional[str] = None) -> GroupSpace:
    from .space import array_space

    arrays, _groups, notes = walk(document)
    out = GroupSpace(document.path, notes=notes)
    for mpath, path in pick(arrays, member):
        d = member_document(document, path)
        try:
            out.members.append((mpath, array_space(d)))
        except Exception as e:  # noqa: BLE001 - one member's failure is a note, not the end
            out.members.append((mpath, SpaceReport(path, notes=[
                f"cannot read this member: {type(e).__name__}: {e}"])))
        finally:
            d.close()
    return out


# ---- the group's own files ---------------------------------------------------------------
def _group_file_verdict(path: str, kind: str, v: Optional[int], release) -> FileVerdict:
    """A details file: its group details version against the releases that read it
    (group_details.cc: a reader that does not know the version throws "Unsupported group
    version N"; before 2.8 there are no details files, only the marker)."""
    table = compat.GROUP_FORMAT_INTRODUCED
    f = FileVerdict(path, kind, v, compat.written_by(v, table), compat.oldest_reader(v, table))
    if release is None:
        return f
    if v is None:
        f.message = "version unknown"
        return f
    mine = compat.format_of_release(release, table)
    if mine is None:   # not a refusal: it knows the group by its marker, not its members
        f.message = (f"libtiledb {compat.vstr(release)} predates group details (2.8): it "
                     f"ignores this file and lists the group's folders instead")
    elif v > mine:
        f.refused = True
        f.message = (f"Unsupported group version {v} "
                     f"(libtiledb {compat.vstr(release)} reads group details up to {mine})")
    else:
        f.message = f"reads it (group details {v} <= {mine})"
    return f


def _u32(document, path: str) -> Optional[int]:
    try:
        b = document.fs.read_bytes(path, 4)[0]
    except OSError:
        return None
    return int.from_bytes(b, "little") if len(b) == 4 else None


def group_verdict(document, groups: List[Tuple[str, TileDBGroup]], release) -> VersionVerdict:
    """Every group's details files (their details version), metadata files (the array
    format version of their generic tile) and marker, with what `release` does."""
    files: List[FileVerdict] = []
    for mpath, g in groups:
        prefix = f"{mpath}/" if mpath else ""
        for fname, gd in g.details:
            files.append(_group_file_verdict(f"{prefix}{layout.GROUP_DETAILS_DIR}/{fname}",
                                             "group details", gd.version if gd else None,
                                             release))
        meta_dir = os.path.join(g.path, layout.META_DIR)
        try:
            metas = sorted(e.name for e in document.fs.list(meta_dir)
                           if e.is_file and not e.name.endswith(".vac"))
        except OSError:
            metas = []
        for name in metas:
            v = _u32(document, os.path.join(meta_dir, name))
            f = FileVerdict(f"{prefix}{layout.META_DIR}/{name}", "group metadata", v,
                            compat.written_by(v), compat.oldest_reader(v))
            if release is not None:
                mine = compat.format_of_release(release)
                f.message = "version unknown" if v is None else \
                    f"reads it (format {v} <= {mine})" if mine is not None and v <= mine else \
                    f"format {v} is newer than the {mine} it knows: parsed with the rules it knows"
            files.append(f)
        marker = os.path.join(g.path, layout.GROUP_FILE)
        st = document.fs.stat(marker)
        if st.is_file:
            f = FileVerdict(f"{prefix}{layout.GROUP_FILE}", "group marker", None,
                            "every release with groups", "1.4")
            if release is not None:
                f.message = "an empty marker: read by every release (only its presence counts)"
            files.append(f)
    details = [f.format_version for f in files
               if f.kind == "group details" and f.format_version is not None]
    newest = max(details, default=None)
    out = VersionVerdict(compat.oldest_reader(newest, compat.GROUP_FORMAT_INTRODUCED), newest,
                         files=files)
    if release is None:
        out.summary = (f"newest group details version {newest}: needs libtiledb "
                       f"{out.oldest_reader} or later" if newest is not None
                       else "no group details file found")
        return out
    mine = compat.format_of_release(release, compat.GROUP_FORMAT_INTRODUCED)
    out.reader, out.reader_format = compat.vstr(release), mine
    refused = [f for f in files if f.refused]
    out.readable = not refused
    out.summary = (f"libtiledb {out.reader} refuses {len(refused)} group details file(s) "
                   f"(reads group details up to {mine}); needs {out.oldest_reader} or later"
                   if refused else f"libtiledb {out.reader} reads every group file "
                                   f"(group details up to {mine})")
    return out

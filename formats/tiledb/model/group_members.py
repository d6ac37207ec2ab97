"""A group's members: the effective list after every details file, and where each one is.

Members are never followed blindly: a URI is resolved against the group's directory (relative
URIs) or read as a local path (`file://` and plain absolute paths); that path must lie strictly
inside the group's own directory by its name, then (through the document's dataset FS,
formats/core/dataset_fs.py) by its real path with every symbolic link resolved, and hold what the
entry says (an array or a group). Anything else is a problem with a stable finding code and
the member is not opened: a member elsewhere (another directory, another store), a member
pointing to nothing, a member of the wrong kind.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple
from urllib.parse import unquote

from ...core.dataset_fs import ALIAS, BROKEN, DIR, FILE, LOOP, MISSING, SYMLINK_OUT, UNREADABLE, DatasetFS
from ...core.findings import GROUP_MEMBER_MISSING, GROUP_MEMBER_OUTSIDE, GROUP_MEMBER_TYPE
from ...core.remote import absolute, normpath
from ...core.status import Status
from ..parse.group_details import ARRAY, GROUP, GroupDetails, MemberEntry
from . import layout

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass
class Member:
    """One member in effect: its last entry, and where it resolves."""

    entry: MemberEntry
    file: str                    # the details file of that entry
    index: int = 0               # its place in that file's member list
    path: Optional[str] = None   # absolute local path, when it resolves inside the group
    problem: Optional[Tuple[Status, str, str]] = None  # (status, code, message)

    @property
    def name(self) -> str:
        """The name the member is shown and looked up by (its URI's last part if unnamed)."""
        if self.entry.name is not None:
            return self.entry.name
        return self.entry.uri.rstrip("/").rsplit("/", 1)[-1] or self.entry.uri

    @property
    def is_group(self) -> bool:
        return self.entry.object_type == GROUP


def effective_members(files: List[Tuple[str, Optional[GroupDetails]]]) -> List[Member]:
    """The members in effect after the details files (in timestamp order), as libtiledb
    computes them: version 1 files each hold the whole list (the latest wins), version 2
    files are change sets applied in order. Returned in name order."""
    readable = [(f, gd) for f, gd in files if gd is not None]
    if not readable:
        return []
    if readable[-1][1].version == 1:
        readable = readable[-1:]
    current: Dict[str, Member] = {}
    for fname, gd in readable:
        for i, e in enumerate(gd.members):
            if e.deleted:
                current.pop(e.key, None)
            else:
                current[e.key] = Member(e, fname, i)
    return sorted(current.values(), key=lambda m: m.name)


def uri_to_path(group_dir: str, entry: MemberEntry) -> Tuple[Optional[str], Optional[str]]:
    """(path in the group's store, None) for a URI there, else (None, why it is not).
    A local group's members are local paths (`file://`, `/...`, relative); a group on an
    object store (`s3://bucket/g`) has members under the same scheme (or relative)."""
    uri = entry.uri
    if entry.relative:
        if _SCHEME.match(uri) or uri.startswith("/"):
            return None, f"a relative URI that is absolute ({uri})"
        return normpath(f"{group_dir.rstrip('/')}/{uri}"), None
    m = _SCHEME.match(uri)
    store = _SCHEME.match(group_dir)
    if store is not None:   # the group is on an object store
        if m is None or m.group(1).lower() != store.group(1).lower():
            return None, f"on another store ({(m.group(1) + '://') if m else uri})"
        return normpath(uri), None
    if m is None:
        if os.path.isabs(uri):
            return os.path.normpath(uri), None
        return None, f"an absolute URI that is not absolute ({uri})"
    if m.group(1).lower() != "file":
        return None, f"on another store ({m.group(1)}://)"
    rest = uri[len(m.group(0)):]
    if rest.startswith("localhost/"):
        rest = rest[len("localhost"):]
    if not rest.startswith("/"):
        return None, f"a file URI with a host ({uri})"
    return os.path.normpath(unquote(rest)), None


def _inside(path: str, directory: str) -> bool:
    """`path` lies strictly inside `directory` (both absolute and normalised alike)."""
    return path != directory and path.startswith(directory.rstrip("/" + os.sep) + "/")


def real_path(fs: DatasetFS, path: str) -> str:
    """Where `path` really is (links resolved; an object store has none)."""
    return fs.stat(path).real or absolute(path)


def resolve(group_dir: str, member: Member, fs: DatasetFS,
            seen: Optional[Dict[str, tuple]] = None) -> Member:
    """Set `member.path` (safe to open) or `member.problem`. Nothing outside the group's
    directory is looked at: the URI is judged by its name first, then the dataset FS says
    what is there (links resolved, confined to the opened dataset)."""
    e = member.entry
    label = f"member {member.name!r} ({e.uri})"
    path, why = uri_to_path(group_dir, e)
    if path is None:
        member.problem = (Status.WARNING, GROUP_MEMBER_OUTSIDE,
                          f"{label} is {why}: not followed; open it on its own")
        return member
    if not _inside(path, absolute(group_dir)):
        member.problem = (Status.WARNING, GROUP_MEMBER_OUTSIDE,
                          f"{label} points outside the group's directory: not followed; open "
                          f"it on its own")
        return member
    # what is at `path`, looked at once however many members name it (`seen`)
    seen = {} if seen is None else seen
    if path not in seen:
        seen[path] = (fs.stat(path), None)
    entry = seen[path][0]
    if entry.kind in (MISSING, BROKEN, UNREADABLE):
        what = {MISSING: f"no file or directory at {path}",
                BROKEN: f"a broken symbolic link at {path} (to {entry.detail})",
                UNREADABLE: f"{path} cannot be examined ({entry.detail})"}[entry.kind]
        member.problem = (Status.ERROR, GROUP_MEMBER_MISSING, f"{label} points to nothing: {what}")
        return member
    real = entry.real or path
    if entry.kind in (SYMLINK_OUT, LOOP) or not _inside(real, real_path(fs, group_dir)):
        member.problem = (Status.WARNING, GROUP_MEMBER_OUTSIDE,
                          f"{label} leads outside the group's directory through a symbolic link "
                          f"(to {entry.detail or real}): not followed")
        return member
    if entry.kind == ALIAS:
        path = real  # a link to a folder of the group: opened where it really is
    elif entry.kind != DIR:
        member.problem = (Status.ERROR, GROUP_MEMBER_TYPE,
                          f"{label} is recorded as {e.type_name}, but {path} is "
                          f"{'a file' if entry.kind == FILE else 'a ' + entry.detail}")
        return member
    kinds = seen.get(path, (None, None))[1]
    if kinds is None:
        kinds = (layout.is_array_dir(path), layout.is_group_dir(path))
        seen[path] = (entry, kinds)
    is_array, is_group = kinds
    want = e.object_type
    if want == ARRAY and not is_array or want == GROUP and not is_group or \
            want not in (ARRAY, GROUP):
        found = "an array" if is_array else "a group" if is_group else \
            "a directory that is neither an array nor a group"
        member.problem = (Status.ERROR, GROUP_MEMBER_TYPE,
                          f"{label} is recorded as {e.type_name}, but {path} is {found}")
        return member
    member.path = path
    return member

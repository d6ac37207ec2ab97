"""A group's members: the effective list after every details file, and where each one is.

Members are never followed blindly: a URI is resolved against the group's directory (relative
URIs) or read as a local path (`file://` and plain absolute paths), then the real path (all
symbolic links resolved) must lie strictly inside the group's own directory and hold what the
entry says (an array or a group). Anything else is a problem with a stable finding code and
the member is not opened: a member elsewhere (another directory, another store), a member
pointing to nothing, a member of the wrong kind.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple
from urllib.parse import unquote

from ..findings import GROUP_MEMBER_MISSING, GROUP_MEMBER_OUTSIDE, GROUP_MEMBER_TYPE
from . import layout
from .group_details import ARRAY, GROUP, GroupDetails, MemberEntry

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass
class Member:
    """One member in effect: its last entry, and where it resolves."""

    entry: MemberEntry
    file: str                    # the details file of that entry
    path: Optional[str] = None   # absolute local path, when it resolves inside the group
    problem: Optional[Tuple[str, str, str]] = None  # (status, code, message)
    history: List[Tuple[str, MemberEntry]] = field(default_factory=list)  # (file, entry)

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
    history: Dict[str, List[Tuple[str, MemberEntry]]] = {}
    for fname, gd in readable:
        for e in gd.members:
            history.setdefault(e.key, []).append((fname, e))
            if e.deleted:
                current.pop(e.key, None)
            else:
                current[e.key] = Member(e, fname)
    for key, m in current.items():
        m.history = history[key]
    return sorted(current.values(), key=lambda m: m.name)


def uri_to_path(group_dir: str, entry: MemberEntry) -> Tuple[Optional[str], Optional[str]]:
    """(local path, None) for a URI naming a local file, else (None, why it is not local)."""
    uri = entry.uri
    if entry.relative:
        if _SCHEME.match(uri) or uri.startswith("/"):
            return None, f"a relative URI that is absolute ({uri})"
        return os.path.normpath(os.path.join(group_dir, uri)), None
    m = _SCHEME.match(uri)
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


def _inside(path: str, directory: str, real: bool = True) -> bool:
    """`path` lies strictly inside `directory` (with every symbolic link resolved, unless
    `real` is false: then by the names alone)."""
    norm = os.path.realpath if real else os.path.abspath
    real_path, base = norm(path), norm(directory)
    return real_path != base and real_path.startswith(base.rstrip(os.sep) + os.sep)


def resolve(group_dir: str, member: Member) -> Member:
    """Set `member.path` (safe to open) or `member.problem`."""
    e = member.entry
    label = f"member {member.name!r} ({e.uri})"
    path, why = uri_to_path(group_dir, e)
    if path is None:
        member.problem = ("warning", GROUP_MEMBER_OUTSIDE,
                          f"{label} is {why}: not followed; open it on its own")
        return member
    outside = ("warning", GROUP_MEMBER_OUTSIDE,
               f"{label} points outside the group's directory: not followed; open it on its own")
    if not _inside(path, group_dir, real=False):
        member.problem = outside  # decided on the name alone: nothing outside is touched
        return member
    if not os.path.lexists(path):
        member.problem = ("error", GROUP_MEMBER_MISSING,
                          f"{label} points to nothing: no file or directory at {path}")
        return member
    if not _inside(path, group_dir):
        member.problem = (outside[0], outside[1],
                          f"{label} leads outside the group's directory through a symbolic link "
                          f"(to {os.path.realpath(path)}): not followed")
        return member
    if not os.path.exists(path):
        member.problem = ("error", GROUP_MEMBER_MISSING,
                          f"{label} points to nothing: a broken symbolic link at {path}")
        return member
    is_array, is_group = layout.is_array_dir(path), layout.is_group_dir(path)
    want = e.object_type
    if want == ARRAY and not is_array or want == GROUP and not is_group or \
            want not in (ARRAY, GROUP):
        found = "an array" if is_array else "a group" if is_group else \
            "a directory that is neither an array nor a group" if os.path.isdir(path) else "a file"
        member.problem = ("error", GROUP_MEMBER_TYPE,
                          f"{label} is recorded as {e.type_name}, but {path} is {found}")
        return member
    member.path = path
    return member

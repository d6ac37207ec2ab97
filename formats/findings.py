"""Findings: what `verify`, the diagnostics panel and the tests report about a dataset.

A finding is plain data (it crosses threads, processes and Dask workers): where (source,
offset, node path), how bad (`status`), what kind (`code`, stable across releases: tools and
tests match on it, never on the message) and what to do (`hint`)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Dict, Literal, Optional

Status = Literal["error", "warning", "info"]

# Stable codes. A new kind of check adds its code here (one definition, used everywhere).
PARSE_ERROR = "parse-error"            # bytes that do not parse as the format says
PARSE_WARNING = "parse-warning"        # bytes that parse, with something unusual
CHECK_CRASHED = "check-crashed"        # a format's checks could not finish (a bug: report it)
NOT_VERIFIABLE = "not-verifiable"      # nothing here that arrayscope can verify
UNCHECKED = "unchecked"                # a part that could not be checked (no key, no codec...)
# The dataset's files (formats/dataset_fs.py) and declared sizes.
OUTSIDE_DATASET = "outside-dataset"    # a link or a named path that leaves the opened dataset
SYMLINK_LOOP = "symlink-loop"          # a link to a folder that contains it
SPECIAL_FILE = "special-file"          # a FIFO, socket or device where a file was expected
BROKEN_LINK = "broken-link"            # a symbolic link to nothing
UNREADABLE_ENTRY = "unreadable-entry"  # a directory entry that cannot be examined
SIZE_OVER_LIMIT = "size-over-limit"    # a declared or decoded size beyond what the format allows
# TileDB groups (formats/tiledb/group_members.py)
GROUP_MEMBER_OUTSIDE = "group-member-outside"  # a group member elsewhere: not followed
GROUP_MEMBER_MISSING = "group-member-missing"  # a group member that points to nothing
GROUP_MEMBER_TYPE = "group-member-type"        # a member that is not what its entry says
PLUGIN_FAILED = "plugin-failed"        # a format plugin could not be imported


@dataclass(frozen=True)
class Finding:
    status: Status
    code: str
    source: str          # path of the file relative to the opened dataset, or a derived source
    offset: int
    node: str            # node path ("/"-joined names) inside the annotation tree
    message: str
    hint: str = ""

    @property
    def is_error(self) -> bool:
        return self.status == "error"

    def to_json(self) -> Dict[str, object]:
        return asdict(self)

    def line(self) -> str:
        """`source:offset: message` (warnings and infos say so), as `verify` prints it."""
        prefix = "" if self.status == "error" else f"{self.status}: "
        return f"{self.source}:{self.offset}: {prefix}{self.message}"


def default_code(status: str, code: Optional[str]) -> str:
    if code:
        return code
    return PARSE_ERROR if status == "error" else PARSE_WARNING

"""Array health as plain typed data: which fragments a reader sees at time T and why, which
library versions can read the array, and where its bytes go.

A format plugin computes these (`PLUGIN.health(document, at, reader)`,
`PLUGIN.space(document)`); the CLI and the window reach them only through `health()` and
`space()` here, so neither imports a format package. Everything is JSON-able through
`to_json()`; nothing holds a file, a node or a numpy array.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Tuple

# A fragment's state (DESIGN.md, `fragments --json`) is one of these.
STATES: Tuple[str, ...] = ("committed", "uncommitted", "consolidated", "vacuumable", "ignored",
                           "missing-files", "orphan")


@dataclass
class FragmentHealth:
    """One row of `arrayscope fragments`: a fragment directory, or an orphan commit/file."""

    name: str
    timestamps: Tuple[Optional[int], Optional[int]]
    format_version: Optional[int]
    schema: Optional[str]
    cell_num: Optional[int]
    state: str
    visible: bool
    reason: str
    commit: Optional[str] = None               # the commit file (or `.con` line) committing it
    dense: Optional[bool] = None
    non_empty_domain: Optional[List[List[Any]]] = None   # per dimension [lo, hi]
    consolidated_into: Optional[str] = None
    missing: List[str] = field(default_factory=list)      # files named but absent
    stored_bytes: int = 0                                 # bytes of its files on disk
    conditions: List[str] = field(default_factory=list)   # delete/update commits applying here

    def to_json(self) -> Dict[str, Any]:
        """The contract of `fragments --json` (DESIGN.md) first, then the details."""
        d = asdict(self)
        d["timestamps"] = list(self.timestamps)
        return d


@dataclass
class ConditionHealth:
    """A delete (`.del`) or update (`.upd`) commit and the fragments it applies to."""

    name: str
    kind: str                          # "delete" or "update"
    timestamp: Optional[int]
    text: str                          # what it does, e.g. "deletes cells where x < 30"
    source: str                        # the file holding it (a `.del`, or a `.con`)
    considered: bool                   # a reader at T applies it
    reason: str
    applies_to: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return asdict(self)


@dataclass
class FileVerdict:
    """What one library version does with one versioned file."""

    path: str
    kind: str                          # schema, fragment, group, metadata, consolidated ...
    format_version: Optional[int]
    written_by: str                    # libtiledb releases that write this format version
    oldest_reader: str                 # the oldest libtiledb release that reads it
    refused: bool = False              # the reader given with --reader refuses it
    message: str = ""                  # what that reader says (or why it is fine)

    def to_json(self) -> Dict[str, Any]:
        return asdict(self)


@dataclass
class VersionVerdict:
    """Which libtiledb versions can read the array; with a reader, what that version does."""

    oldest_reader: str                 # the oldest release that reads every file
    newest_format: Optional[int]
    reader: Optional[str] = None
    reader_format: Optional[int] = None
    readable: Optional[bool] = None    # the given reader opens and reads the array
    summary: str = ""
    files: List[FileVerdict] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        d = asdict(self)
        d["files"] = [f.to_json() for f in self.files]
        return d


@dataclass
class ArrayHealth:
    """Everything `arrayscope fragments` prints for one array."""

    path: str
    at: int                            # the reader's timestamp end (ms since the epoch)
    dimensions: List[str] = field(default_factory=list)
    fragments: List[FragmentHealth] = field(default_factory=list)
    conditions: List[ConditionHealth] = field(default_factory=list)
    open_error: Optional[str] = None   # what a reader at T fails with when opening, if it does
    read_error: Optional[str] = None   # what a full read at T fails with, if it does
    versions: Optional[VersionVerdict] = None
    notes: List[str] = field(default_factory=list)

    @property
    def visible(self) -> List[FragmentHealth]:
        return [f for f in self.fragments if f.visible]

    def to_json(self) -> Dict[str, Any]:
        return {"path": self.path, "at": self.at, "dimensions": self.dimensions,
                "fragments": [f.to_json() for f in self.fragments],
                "conditions": [c.to_json() for c in self.conditions],
                "open_error": self.open_error, "read_error": self.read_error,
                "versions": self.versions.to_json() if self.versions else None,
                "notes": self.notes}


@dataclass
class GroupHealth:
    """`arrayscope fragments` on a group: each member array's health at one T (by member
    path, e.g. `ms/RNA/X/data`) and the verdict on the group's own files."""

    path: str
    at: int
    members: List[Tuple[str, ArrayHealth]] = field(default_factory=list)
    versions: Optional[VersionVerdict] = None
    notes: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"path": self.path, "at": self.at, "group": True,
                "members": [dict(member=m, **h.to_json()) for m, h in self.members],
                "versions": self.versions.to_json() if self.versions else None,
                "notes": self.notes}


@dataclass
class StageBytes:
    """Bytes of a field after reversing one filter (`stage` names the filter reversed)."""

    stage: str
    nbytes: int


@dataclass
class FieldSpace:
    """One data file of one fragment: stored bytes, every reverse stage, decoded bytes."""

    fragment: str
    name: str                          # the attribute or dimension
    part: str                          # fixed, offsets, var, validity
    file: str
    filters: List[str]
    tiles: int
    stored: int                        # the file's bytes on disk
    decoded: int                       # bytes of the cells (every filter reversed)
    stages: List[StageBytes] = field(default_factory=list)   # after reversing each filter
    overhead: int = 0                  # tile and chunk headers and filter metadata
    padding_cells: int = 0             # dense: cells of whole tiles outside the written domain
    padding_bytes: int = 0
    exact: bool = True                 # False: stage sizes extrapolated from the tiles decoded
    error: Optional[str] = None

    @property
    def ratio(self) -> Optional[float]:
        """decoded / stored (the compression ratio), None when nothing is stored."""
        return self.decoded / self.stored if self.stored else None

    def to_json(self) -> Dict[str, Any]:
        d = asdict(self)
        d["ratio"] = None if self.ratio is None else round(self.ratio, 4)
        return d


@dataclass
class FragmentSpace:
    fragment: str
    metadata_bytes: int                # __fragment_metadata.tdb
    data_stored: int
    data_decoded: int
    fields: List[FieldSpace] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"fragment": self.fragment, "metadata_bytes": self.metadata_bytes,
                "data_stored": self.data_stored, "data_decoded": self.data_decoded,
                "fields": [f.to_json() for f in self.fields]}


@dataclass
class SpaceReport:
    """Everything `arrayscope stats` prints for one array."""

    path: str
    fragments: List[FragmentSpace] = field(default_factory=list)
    other: Dict[str, int] = field(default_factory=dict)   # schema, commits, metadata ... bytes
    notes: List[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(f.metadata_bytes + f.data_stored for f in self.fragments) + \
            sum(self.other.values())

    def to_json(self) -> Dict[str, Any]:
        return {"path": self.path, "total_bytes": self.total,
                "fragments": [f.to_json() for f in self.fragments],
                "other": self.other, "notes": self.notes}


@dataclass
class GroupSpace:
    """`arrayscope stats` on a group: each member array's space report."""

    path: str
    members: List[Tuple[str, "SpaceReport"]] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(r.total for _m, r in self.members)

    def to_json(self) -> Dict[str, Any]:
        return {"path": self.path, "group": True, "total_bytes": self.total,
                "members": [dict(member=m, **r.to_json()) for m, r in self.members],
                "notes": self.notes}


@dataclass
class Extents:
    """What the extent plot draws: per fragment, boxes of [lo, hi] per dimension (the MBR of
    each data tile of a sparse fragment, the non-empty domain of a dense one)."""

    dimensions: List[str] = field(default_factory=list)
    domain: List[List[Any]] = field(default_factory=list)       # per dimension [lo, hi]
    boxes: Dict[str, List[List[List[Any]]]] = field(default_factory=dict)


def now_ms() -> int:
    return int(time.time() * 1000)


def _plugin(document):
    from . import registry

    name = getattr(document, "format", None)
    if name:
        return registry.plugin_named(name)
    if getattr(document, "is_dir", False):
        return registry.for_dir(document.path)
    return None


def health(document, at: Optional[int] = None, reader: Optional[str] = None
           ) -> Optional[ArrayHealth]:
    """The fragments a reader opening `document`'s array at `at` (default: now) sees, and
    what libtiledb `reader` (e.g. "2.15") would do with it. None when the format has no
    notion of fragments."""
    p = _plugin(document)
    fn = getattr(p, "health", None) if p is not None else None
    return None if fn is None else fn(document, at, reader)


def extents(document) -> Optional[Extents]:
    """The tile MBRs / non-empty domains of `document`'s fragments (None: not a format with
    fragments)."""
    p = _plugin(document)
    fn = getattr(p, "extents", None) if p is not None else None
    return None if fn is None else fn(document)


def space(document) -> Optional[SpaceReport]:
    """Where the bytes of `document`'s array go (None when the format does not say)."""
    p = _plugin(document)
    fn = getattr(p, "space", None) if p is not None else None
    return None if fn is None else fn(document)


def group_health(document, at: Optional[int] = None, reader: Optional[str] = None,
                 member: Optional[str] = None) -> Optional[GroupHealth]:
    """The health of every member array of the group `document` was opened on (or of
    `member`, a member path: LookupError listing the arrays when there is none), at one T;
    None when `document` is not a group of a format with fragments."""
    p = _plugin(document)
    fn = getattr(p, "group_health", None) if p is not None else None
    return None if fn is None else fn(document, at, reader, member)


def group_space(document, member: Optional[str] = None) -> Optional[GroupSpace]:
    """Where the bytes of every member array of a group go (None: not such a group)."""
    p = _plugin(document)
    fn = getattr(p, "group_space", None) if p is not None else None
    return None if fn is None else fn(document, member)


def group_arrays(document) -> Optional[List[Tuple[str, str]]]:
    """(member path, folder or URL) of every member array of the group `document` was opened
    on, recursively, in member-path order; None when it is not a group with such members."""
    p = _plugin(document)
    fn = getattr(p, "group_arrays", None) if p is not None else None
    return None if fn is None else fn(document)


def member_document(document, path: str):
    """A light document on the member array at `path` (from `group_arrays`), with the
    group's key: give it to `health`, `extents`, `space`; close it when done."""
    p = _plugin(document)
    return p.member_document_light(document, path)

"""What an array directory holds, as libtiledb's `ArrayDirectory` lists it (names and sizes,
no parsing): schemas, fragment directories, commit files, consolidated fragment metadata,
array metadata, and whatever else lies there.

Format 12 and later keep fragments in `__fragments/` and commits in `__commits/`; before 12
both lie at the array's root (`<fragment>/` committed by `<fragment>.ok`, vacuum files
`<fragment>.vac`, consolidated fragment metadata `<name>.meta`) (array_file_hierarchy.md,
array_directory.cc `compute_fragment_uris_v1_v11`)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ...core.dataset_fs import DatasetFS, Entry, subdirs
from ...core.filesystems import fs_of
from ...core.remote import absolute
from . import layout
from .names import decode_name

# Root entries libtiledb knows (array_directory.cc `dir_names`, plus the files of old formats
# and of groups/objects that may share the folder).
KNOWN_ROOT = {layout.SCHEMA_DIR, layout.META_DIR, layout.FRAGMENT_META_DIR, layout.FRAGMENTS_DIR,
              layout.COMMITS_DIR, layout.LABELS_DIR, layout.LEGACY_SCHEMA_FILE,
              "__lock.tdb", "__tiledb_group.tdb"}


@dataclass
class FragmentDir:
    name: str                      # the directory's (timestamped) name
    rel: str                       # its path relative to the array ("__fragments/<name>")
    path: str
    files: Dict[str, int] = field(default_factory=dict)   # file name -> size
    t1: Optional[int] = None
    t2: Optional[int] = None
    version: Optional[int] = None  # from the name (format 5 and later)


@dataclass
class ArrayListing:
    path: str
    schemas: Dict[str, int] = field(default_factory=dict)          # rel path -> size
    fragments: Dict[str, FragmentDir] = field(default_factory=dict)  # name -> dir
    commits: Dict[str, int] = field(default_factory=dict)          # rel path -> size
    fragment_meta: Dict[str, int] = field(default_factory=dict)
    meta: Dict[str, int] = field(default_factory=dict)
    other: Dict[str, int] = field(default_factory=dict)            # rel path -> size
    errors: List[str] = field(default_factory=list)

    def rel(self, *parts: str) -> str:
        return "/".join(p for p in parts if p)


def _list(fs: DatasetFS, path: str) -> List[Entry]:
    try:
        return fs.list(path)
    except OSError:
        return []


def _files(fs: DatasetFS, path: str) -> Dict[str, int]:
    """Regular files only (a FIFO, a link out of the array or a loop is not a file of it:
    the tree shows those as findings)."""
    return {e.name: e.size for e in _list(fs, path) if e.is_file}


def _walk_sizes(fs: DatasetFS, path: str, rel: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    stack = [(path, rel)]
    while stack:
        d, r = stack.pop()
        entries = _list(fs, d)
        for e in entries:
            if e.is_file:
                out[f"{r}/{e.name}"] = e.size
        stack.extend((e.path, f"{r}/{e.name}") for e in reversed(entries) if e.is_dir)
    return out


def _fragment(fs: DatasetFS, name: str, rel: str, path: str) -> FragmentDir:
    info = decode_name(name) or {}
    return FragmentDir(name, rel, path, _files(fs, path), info.get("t1"), info.get("t2"),
                       info.get("version"))


def list_array(path: str, fs: Optional[DatasetFS] = None) -> ArrayListing:
    """The listing of the array directory `path` (never raises; unreadable parts are noted).
    `fs`: the dataset it belongs to (default: the array directory itself)."""
    fs = fs_of(None, path) if fs is None else fs
    out = ArrayListing(absolute(path))   # a URL stays a URL
    try:
        root = fs.list(path)
    except OSError as e:
        out.errors.append(f"cannot list {path}: {e.strerror or e}")
        return out
    for entry in root:
        name, full = entry.name, entry.path
        if not (entry.is_file or entry.is_dir):
            continue  # links out, loops, FIFOs: findings of the tree, never listed here
        if name == layout.SCHEMA_DIR and entry.is_dir:
            for f, size in _files(fs, full).items():
                out.schemas[f"{name}/{f}"] = size
        elif name == layout.LEGACY_SCHEMA_FILE:
            out.schemas[name] = entry.size
        elif name == layout.FRAGMENTS_DIR and entry.is_dir:
            for d in _list(fs, full):
                if d.is_dir:
                    out.fragments[d.name] = _fragment(fs, d.name, f"{name}/{d.name}", d.path)
                elif d.is_file:
                    out.other[f"{name}/{d.name}"] = d.size
        elif name == layout.COMMITS_DIR and entry.is_dir:
            for f, size in _files(fs, full).items():
                out.commits[f"{name}/{f}"] = size
        elif name == layout.FRAGMENT_META_DIR and entry.is_dir:
            for f, size in _files(fs, full).items():
                out.fragment_meta[f"{name}/{f}"] = size
        elif name == layout.META_DIR and entry.is_dir:
            for f, size in _files(fs, full).items():
                out.meta[f"{name}/{f}"] = size
        elif name == layout.LABELS_DIR:
            continue  # dimension-label arrays: arrays of their own
        elif entry.is_dir:
            if layout.TIMESTAMPED_RE.match(name) or decode_name(name):
                out.fragments[name] = _fragment(fs, name, name, full)   # format < 12
            else:
                out.other.update(_walk_sizes(fs, full, name))
        else:
            size = entry.size
            if name.endswith((".ok", ".vac")):
                out.commits[name] = size          # format < 12 commit and vacuum files
            elif name.endswith(".meta"):
                out.fragment_meta[name] = size    # format < 12 consolidated metadata
            elif name not in KNOWN_ROOT:
                out.other[name] = size
    return out


def fragment_entries(fs: DatasetFS, array_dir: str) -> List[Entry]:
    """The fragment folders of the array, as `array._fragment_dirs` finds them (those in
    `__fragments/`, then timestamped folders at the root: format < 12), each listed once
    with no stat per entry (`dataset_fs.subdirs`)."""
    out: List[Entry] = []
    fd = os.path.join(array_dir, layout.FRAGMENTS_DIR)
    if fs.stat(fd).is_dir:
        try:
            out += subdirs(fs, fd)
        except OSError:
            pass  # shown as an unlistable folder by the tree
    try:
        top = subdirs(fs, array_dir)
    except OSError:
        top = []
    out += [e for e in top if layout.TIMESTAMPED_RE.match(e.name)]
    return out

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

from ..dataset_fs import DatasetFS, fs_of
from ..remote import absolute
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


def _files(fs: DatasetFS, path: str) -> Dict[str, int]:
    """{name: size} of the regular files directly in folder `path`."""
    try:
        entries = fs.list(path)
    except OSError:
        return {}
    return {e.name: e.size for e in entries if e.is_file}


def _walk_sizes(fs: DatasetFS, path: str, rel: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    try:
        entries = fs.list(path)
    except OSError:
        return out
    for e in entries:
        if e.is_file:
            out[f"{rel}/{e.name}"] = e.size
    for e in entries:
        if e.is_dir:
            out.update(_walk_sizes(fs, e.path, f"{rel}/{e.name}"))
    return out


def _fragment(fs: DatasetFS, name: str, rel: str, path: str) -> FragmentDir:
    info = decode_name(name) or {}
    return FragmentDir(name, rel, path, _files(fs, path), info.get("t1"), info.get("t2"),
                       info.get("version"))


def list_array(path: str) -> ArrayListing:
    """The listing of the array directory `path` (never raises; unreadable parts are noted).
    Through the dataset FS (`fs_of`): a local folder or a URL of an object store."""
    fs = fs_of(None, path)
    out = ArrayListing(absolute(path))
    try:
        root = fs.list(path)
    except OSError as err:
        out.errors.append(f"cannot list {path}: {err.strerror or err}")
        return out
    for e in root:
        name, full = e.name, e.path
        if name == layout.SCHEMA_DIR and e.is_dir:
            for f, size in _files(fs, full).items():
                out.schemas[f"{name}/{f}"] = size
        elif name == layout.LEGACY_SCHEMA_FILE and e.is_file:
            out.schemas[name] = e.size
        elif name == layout.FRAGMENTS_DIR and e.is_dir:
            try:
                inner = fs.list(full)
            except OSError:
                inner = []
            for d in inner:
                if d.is_dir:
                    out.fragments[d.name] = _fragment(fs, d.name, f"{name}/{d.name}", d.path)
                elif d.is_file:
                    out.other[f"{name}/{d.name}"] = d.size
        elif name == layout.COMMITS_DIR and e.is_dir:
            for f, size in _files(fs, full).items():
                out.commits[f"{name}/{f}"] = size
        elif name == layout.FRAGMENT_META_DIR and e.is_dir:
            for f, size in _files(fs, full).items():
                out.fragment_meta[f"{name}/{f}"] = size
        elif name == layout.META_DIR and e.is_dir:
            for f, size in _files(fs, full).items():
                out.meta[f"{name}/{f}"] = size
        elif name == layout.LABELS_DIR:
            continue  # dimension-label arrays: arrays of their own
        elif e.is_dir:
            if layout.TIMESTAMPED_RE.match(name) or decode_name(name):
                out.fragments[name] = _fragment(fs, name, name, full)   # format < 12
            else:
                out.other.update(_walk_sizes(fs, full, name))
        elif e.is_file:
            size = e.size
            if name.endswith((".ok", ".vac")):
                out.commits[name] = size          # format < 12 commit and vacuum files
            elif name.endswith(".meta"):
                out.fragment_meta[name] = size    # format < 12 consolidated metadata
            elif name not in KNOWN_ROOT:
                out.other[name] = size
    return out
    for name in root:
        full = os.path.join(path, name)
        if name == layout.SCHEMA_DIR and os.path.isdir(full):
            for f, size in _files(full).items():
                out.schemas[f"{name}/{f}"] = size
        elif name == layout.LEGACY_SCHEMA_FILE:
            out.schemas[name] = os.path.getsize(full)
        elif name == layout.FRAGMENTS_DIR and os.path.isdir(full):
            for d in sorted(os.listdir(full)):
                fp = os.path.join(full, d)
                if os.path.isdir(fp):
                    out.fragments[d] = _fragment(d, f"{name}/{d}", fp)
                else:
                    out.other[f"{name}/{d}"] = os.path.getsize(fp)
        elif name == layout.COMMITS_DIR and os.path.isdir(full):
            for f, size in _files(full).items():
                out.commits[f"{name}/{f}"] = size
        elif name == layout.FRAGMENT_META_DIR and os.path.isdir(full):
            for f, size in _files(full).items():
                out.fragment_meta[f"{name}/{f}"] = size
        elif name == layout.META_DIR and os.path.isdir(full):
            for f, size in _files(full).items():
                out.meta[f"{name}/{f}"] = size
        elif name == layout.LABELS_DIR:
            continue  # dimension-label arrays: arrays of their own
        elif os.path.isdir(full):
            if layout.TIMESTAMPED_RE.match(name) or decode_name(name):
                out.fragments[name] = _fragment(name, name, full)   # format < 12
            else:
                out.other.update(_walk_sizes(full, name))
        else:
            size = os.path.getsize(full)
            if name.endswith((".ok", ".vac")):
                out.commits[name] = size          # format < 12 commit and vacuum files
            elif name.endswith(".meta"):
                out.fragment_meta[name] = size    # format < 12 consolidated metadata
            elif name not in KNOWN_ROOT:
                out.other[name] = size
    return out

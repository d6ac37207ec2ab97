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


def _files(path: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return out
    for n in names:
        full = os.path.join(path, n)
        if os.path.isfile(full):
            try:
                out[n] = os.path.getsize(full)
            except OSError:
                continue
    return out


def _walk_sizes(path: str, rel: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            try:
                out[rel + "/" + os.path.relpath(full, path).replace(os.sep, "/")] = \
                    os.path.getsize(full)
            except OSError:
                continue
    return out


def _fragment(name: str, rel: str, path: str) -> FragmentDir:
    info = decode_name(name) or {}
    return FragmentDir(name, rel, path, _files(path), info.get("t1"), info.get("t2"),
                       info.get("version"))


def list_array(path: str) -> ArrayListing:
    """The listing of the array directory `path` (never raises; unreadable parts are noted)."""
    out = ArrayListing(os.path.abspath(path))
    try:
        root = sorted(os.listdir(path))
    except OSError as e:
        out.errors.append(f"cannot list {path}: {e.strerror or e}")
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

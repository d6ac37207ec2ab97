"""Where things live in a TileDB array directory (format_spec/array_file_hierarchy.md)."""
from __future__ import annotations

import os
import re
from typing import Optional

from ...core.plugin import Detection
from ...core.registry import declared

SCHEMA_DIR = "__schema"
ENUMERATIONS_DIR = "__enumerations"
FRAGMENTS_DIR = "__fragments"
COMMITS_DIR = "__commits"
FRAGMENT_META_DIR = "__fragment_meta"
META_DIR = "__meta"
LABELS_DIR = "__labels"
FRAGMENT_METADATA_FILE = "__fragment_metadata.tdb"
LEGACY_SCHEMA_FILE = "__array_schema.tdb"   # format versions < 10: the schema at the root
GROUP_FILE = "__tiledb_group.tdb"           # a group's (empty) marker file (group.md)
GROUP_DETAILS_DIR = "__group"               # a group's member lists, one file per write

# Data file names inside a fragment: a<N>[_var|_validity].tdb, d<N>[_var].tdb, and the
# timestamp / delete-metadata slots (t, dt, dci).
DATA_FILE_RE = re.compile(r"^(a|d)(\d+)(_var|_validity)?\.tdb$|^(t|dt|dci)(_var|_validity)?\.tdb$")
# `__t1_t2_uuid[_v][.ext]`, or the `__uuid_t1[_t2]` of formats 1–2 (TileDB 1.4–1.5)
TIMESTAMPED_RE = re.compile(r"^__(?:(\d+)_(\d+)_([0-9a-fA-F]{32})(?:_(\d+))?|"
                            r"[0-9a-fA-F]{32}_\d+(?:_\d+)?)(?:\.(\w+))?$")


def timestamp_order(name: str):
    """Sort key of timestamped names as libtiledb orders them: (t1, t2), then the name;
    other names after them, by name."""
    m = TIMESTAMPED_RE.match(name)
    return (0, int(m.group(1)), int(m.group(2)), name) if m else (1, 0, 0, name)


# An array directory: a schema folder, or (format versions < 10) the schema file at the root;
# a group: its marker file or its details folder (libtiledb accepts either). A folder with
# fragments or commits but no schema is an array that lost its schema (a partial copy):
# libtiledb says "Array does not exist"; arrayscope opens it to say what is missing.
ARRAY_MARKERS = ((SCHEMA_DIR + "/",), (LEGACY_SCHEMA_FILE,))
SCHEMALESS_MARKERS = ((FRAGMENTS_DIR + "/",), (COMMITS_DIR + "/",))
GROUP_MARKERS = ((GROUP_FILE,), (GROUP_DETAILS_DIR + "/",))
DETECTION = declared("tiledb").detection   # the registry's: matched before import (the same
# markers as above: tests/core/test_plugin.py)
is_array_dir = Detection(dir_markers=ARRAY_MARKERS + SCHEMALESS_MARKERS).matches_dir
is_group_dir = Detection(dir_markers=GROUP_MARKERS).matches_dir


def group_dir_of(path: str) -> Optional[str]:
    """The group whose own file `path` is (its marker, a details or a metadata file)."""
    from ...core.remote import absolute

    d = os.path.dirname(absolute(path))
    if os.path.basename(path) == GROUP_FILE and is_group_dir(d):
        return d
    if os.path.basename(d) in (GROUP_DETAILS_DIR, META_DIR):
        g = os.path.dirname(d)
        if is_group_dir(g) and not is_array_dir(g):
            return g
    return None


def array_dir_of(path: str) -> Optional[str]:
    """The array directory containing `path` (a file up to three levels down), if any."""
    d = os.path.dirname(os.path.abspath(path))
    for _ in range(4):
        if is_array_dir(d):
            return d
        nd = os.path.dirname(d)
        if nd == d:
            return None
        d = nd
    return None


def role_of(array_dir: str, path: str) -> str:
    """What a file in an array directory is: schema, enumeration, fragment_metadata, data,
    commit, fragment_meta, array_metadata, legacy_schema, ok_marker or unknown."""
    rel = os.path.relpath(os.path.abspath(path), array_dir).replace(os.sep, "/")
    parts = rel.split("/")
    name = parts[-1]
    top = parts[0]
    if rel == LEGACY_SCHEMA_FILE:
        return "legacy_schema"
    if top == SCHEMA_DIR:
        return "enumeration" if len(parts) == 3 and parts[1] == ENUMERATIONS_DIR else "schema"
    if top == COMMITS_DIR:
        return "commit"
    if top == FRAGMENT_META_DIR:
        return "fragment_meta"
    if top == META_DIR:
        return "array_metadata_vac" if name.endswith(".vac") else "array_metadata"
    in_fragment = (top == FRAGMENTS_DIR and len(parts) == 3) or \
        (len(parts) == 2 and TIMESTAMPED_RE.match(top))  # pre-v12: fragments at the root
    if in_fragment:
        if name == FRAGMENT_METADATA_FILE:
            return "fragment_metadata"
        if DATA_FILE_RE.match(name) or name.endswith(".tdb"):
            return "data"
    if name.endswith(".ok"):
        return "ok_marker"
    return "unknown"

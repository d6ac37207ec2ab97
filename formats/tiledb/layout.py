"""Where things live in a TileDB array directory (format_spec/array_file_hierarchy.md)."""
from __future__ import annotations

import os
import re
from typing import Optional

SCHEMA_DIR = "__schema"
ENUMERATIONS_DIR = "__enumerations"
FRAGMENTS_DIR = "__fragments"
COMMITS_DIR = "__commits"
FRAGMENT_META_DIR = "__fragment_meta"
META_DIR = "__meta"
LABELS_DIR = "__labels"
FRAGMENT_METADATA_FILE = "__fragment_metadata.tdb"
LEGACY_SCHEMA_FILE = "__array_schema.tdb"   # format versions < 10: the schema at the root

# Data file names inside a fragment: a<N>[_var|_validity].tdb, d<N>[_var].tdb, and the
# timestamp / delete-metadata slots (t, dt, dci).
DATA_FILE_RE = re.compile(r"^(a|d)(\d+)(_var|_validity)?\.tdb$|^(t|dt|dci)(_var|_validity)?\.tdb$")
TIMESTAMPED_RE = re.compile(r"^__(\d+)_(\d+)_([0-9a-fA-F]{32})(?:_(\d+))?(?:\.(\w+))?$")


def is_array_dir(path: str) -> bool:
    from ..dataset_fs import fs_of

    fs = fs_of(None, path)
    return fs.stat(os.path.join(path, SCHEMA_DIR)).is_dir or \
        fs.stat(os.path.join(path, LEGACY_SCHEMA_FILE)).is_file


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

"""Format versions and the libtiledb releases that write and read them: one table.

Sources (TileDB-Inc/TileDB):
- `format_spec/array_format_history.md` (and `history.md`): "Version N — Introduced in TileDB
  X" for arrays (schema, fragments, commits, array metadata: every file of an array carries
  the one array format version of the library that wrote it).
- `format_spec/group.md`: group details and group members have their own version (1, then 2
  with the member's "Deleted" flag). Version 1 came with the group API (PR #2966, TileDB
  2.8), version 2 with in-place member updates (PR #3928, TileDB 2.15).
- `tiledb/sm/array_schema/array_schema.cc` `ArraySchema::deserialize`: a reader refuses a
  schema whose version is above its own `constants::format_version`, with
  "Failed to deserialize array schema; Incompatible format version: got N; expected <= M"
  (the numbers were added by PR #3855, first released in TileDB 2.15; before, the message
  ended at "Incompatible format version."). Opening an array loads every schema.
- libtiledb checks no other file's version against its own: fragments, commits and metadata
  of a newer format are parsed with the layout of the version they name (so a reader older
  than the format meets fields it does not know; the schema check normally stops it first,
  since a library writes fragments only to arrays whose schema it could read).

A library release writes its own format version; it reads every version up to it.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

# array format version -> the first libtiledb release that writes it (array_format_history.md)
ARRAY_FORMAT_INTRODUCED: Dict[int, Tuple[int, ...]] = {
    1: (1, 4), 2: (1, 5), 3: (1, 6), 4: (1, 7), 5: (2, 0), 6: (2, 1), 7: (2, 2), 8: (2, 2, 3),
    9: (2, 3), 10: (2, 4), 11: (2, 7), 12: (2, 8), 13: (2, 9), 14: (2, 10), 15: (2, 11),
    16: (2, 12), 17: (2, 14), 18: (2, 15), 19: (2, 16), 20: (2, 17), 21: (2, 19), 22: (2, 25),
    # array_format_history.md says 23 came with 2.30, but the 2.30.0 that tiledb-py 0.36.1
    # ships still writes 22 (checked on its bytes): 23 is taken as the next minor release.
    23: (2, 31),
}
# The one-line change each version brought (array_format_history.md), for the details view.
ARRAY_FORMAT_CHANGE: Dict[int, str] = {
    1: "initial storage format", 2: "coordinate tiles always split",
    3: "fragment metadata footer and R-tree", 4: "key-value store removed",
    5: "dimensions in their own files; .ok commit markers; allows dups",
    6: "attribute fill values", 7: "nullable attributes (validity files)",
    8: "data files named by percent-encoded name", 9: "data files named by index",
    10: "schema evolution (__schema/), schema name in fragment footers",
    11: "tile min/max/sum/null count; cells never split across chunks",
    12: "__fragments/, __commits/ (.wrt), __fragment_meta/",
    13: "dictionary filter", 14: "consolidation with timestamps (has_timestamps)",
    15: "delete metadata in consolidated fragments", 16: "delete and update commits",
    17: "attribute order; UTF-8 offsets inside RLE/dictionary var tiles",
    18: "dimension labels", 19: "relative URIs in .vac files",
    20: "enumerations", 21: "tile metadata fix for nullable fixed strings (no layout change)",
    22: "current domain", 23: "tile global order min/max",
}
GROUP_FORMAT_INTRODUCED: Dict[int, Tuple[int, ...]] = {1: (2, 8), 2: (2, 15)}
SCHEMA_MESSAGE_WITH_NUMBERS = (2, 15)   # PR #3855


def vstr(v: Tuple[int, ...]) -> str:
    return ".".join(str(x) for x in v)


def parse_release(text: str) -> Tuple[int, ...]:
    """'2.15' / '2.15.4' / 'v2.15' -> (2, 15[, 4]); ValueError otherwise."""
    t = text.strip().lstrip("vV")
    parts = t.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not a libtiledb version: {text!r} (expected e.g. 2.15 or 2.15.4)")
    return tuple(int(p) for p in parts)


def format_of_release(release: Tuple[int, ...], table: Optional[Dict[int, Tuple[int, ...]]] = None
                      ) -> Optional[int]:
    """The newest format version a release writes (and so reads), None before the first."""
    table = ARRAY_FORMAT_INTRODUCED if table is None else table
    best = None
    for v, first in sorted(table.items()):
        if _le(first, release):
            best = v
    return best


def _le(a: Tuple[int, ...], b: Tuple[int, ...]) -> bool:
    n = max(len(a), len(b))
    return tuple(a) + (0,) * (n - len(a)) <= tuple(b) + (0,) * (n - len(b))


def written_by(version: Optional[int], table: Optional[Dict[int, Tuple[int, ...]]] = None) -> str:
    """'2.17 – 2.18' : the releases that write `version`."""
    table = ARRAY_FORMAT_INTRODUCED if table is None else table
    if version is None or version not in table:
        return "unknown" if version is None else f"no known release (newest known: " \
                                                 f"{max(table)})"
    first = table[version]
    nxt = table.get(version + 1)
    if nxt is None:
        return f"{vstr(first)} and later"
    return f"{vstr(first)} – before {vstr(nxt)}" if len(nxt) > 2 else \
        f"{vstr(first)} – {_before(nxt)}"


def _before(nxt: Tuple[int, ...]) -> str:
    major, minor = nxt[0], nxt[1]
    return f"{major}.{minor - 1}" if minor > 0 else f"before {vstr(nxt)}"


def oldest_reader(version: Optional[int], table: Optional[Dict[int, Tuple[int, ...]]] = None
                  ) -> str:
    table = ARRAY_FORMAT_INTRODUCED if table is None else table
    if version is None:
        return "unknown"
    if version not in table:
        return f"none known (format {version} is newer than every release in the table)"
    return vstr(table[version])


def schema_refusal(version: int, release: Tuple[int, ...]) -> Optional[str]:
    """What `release` says when it opens a schema of `version` (None: it reads it)."""
    mine = format_of_release(release)
    if mine is None:
        return f"libtiledb {vstr(release)} predates the format versions in the table"
    if version <= mine:
        return None
    if _le(SCHEMA_MESSAGE_WITH_NUMBERS, release):
        return (f"[TileDB::ArraySchema] Error: Failed to deserialize array schema; Incompatible "
                f"format version: got {version}; expected <= {mine}")
    return "[TileDB::ArraySchema] Error: Failed to deserialize array schema; Incompatible " \
           "format version."

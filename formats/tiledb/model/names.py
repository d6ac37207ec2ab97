"""Timestamped names (format_spec/timestamped_name.md): `__t1_t2_uuid[_v][.ext]`.

Fragments, commits, schemas, metadata and consolidated files are named by the time range
they cover (milliseconds since 1970-01-01 UTC), a UUID and (from format 5) the format
version. Format versions 1–2 (TileDB 1.4–1.5) used `__uuid_t1[_t2]`. Enumeration files are
`__uuid_v` (no timestamps). Everything here is node-free: the directory tree (and anyone
else) calls `decode_name` and builds its own display from the dict.
"""
from __future__ import annotations

import datetime as _dt
import functools
import re
from typing import Optional

from ...core.fielddoc import doc

D_NAME = doc("Timestamped name `__t1_t2_uuid[_v]`: t1 and t2 are milliseconds since "
             "1970-01-01 UTC (the time range the file covers), uuid a random 32-hex-digit id, "
             "v the format version (present from format 5; schema files have none). Format "
             "1–2 wrote `__uuid_t1[_t2]`.", spec="timestamped_name.md",
             note="schema file names `__schema/__t_t_uuid` carry no version suffix; "
                  "enumeration files are `__uuid_v` without timestamps")

# Known extensions of files in __commits/, __meta/, __fragment_meta/.
EXTENSIONS = {
    ".wrt": "fragment write (commit) marker",
    ".del": "delete commit",
    ".upd": "update commit",
    ".con": "consolidated commits",
    ".ign": "ignore file (commits consolidated away)",
    ".vac": "vacuum file (fragments or metadata consolidated away)",
    ".meta": "consolidated fragment metadata",
    ".ok": "legacy commit marker (format < 12)",
}

_HEX = r"[0-9a-fA-F]"
_UUID = rf"(?:{_HEX}{{32}}|{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}})"
_NEW = re.compile(rf"^__(\d+)_(\d+)_({_UUID})(?:_(\d+))?$")
_OLD = re.compile(rf"^__({_UUID})_(\d+)(?:_(\d+))?$")
_ENUM = re.compile(rf"^__({_UUID})_(\d+)$")


def ms_to_datetime(ms: int) -> Optional[_dt.datetime]:
    """A timestamp in ms since the epoch as an aware UTC datetime (None if out of range)."""
    try:
        return _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=ms)
    except (OverflowError, ValueError):
        return None


def _split_ext(name: str):
    for ext in EXTENSIONS:
        if name.endswith(ext):
            return name[: -len(ext)], ext
    return name, None


def decode_name(name: str) -> Optional[dict]:
    """`_decode_name`, remembered (a copy each time: callers may change theirs): an array of
    10 000 fragments names each fragment in its listing, its folder and its commit file, and
    formatting the dates is most of the cost."""
    info = _decoded(name)
    return dict(info) if info is not None else None


@functools.lru_cache(maxsize=1 << 15)
def _decoded(name: str) -> Optional[dict]:
    return _decode_name(name)


def _decode_name(name: str) -> Optional[dict]:
    """Decode a timestamped (or enumeration) file/folder name.

    Returns None when `name` is not one, else a dict with
    `t1`, `t2` (int ms or None), `t1_datetime`, `t2_datetime` (UTC datetimes or None),
    `uuid` (str), `version` (int or None), `extension` ('.wrt', ... or None),
    `kind` ('timestamped', 'legacy' for the format 1–2 form, 'enumeration'),
    `display` (one line for the tree, see `describe`).
    A trailing path separator and leading directories are ignored."""
    d = _decode(name)
    if d is not None:
        d["display"] = describe(d)
    return d


def parse_name(name: str) -> Optional[dict]:
    """`decode_name` without the display line and without datetimes (`t1_datetime`,
    `t2_datetime` None): for the model-only path, which reads a thousand fragment names."""
    info = _parsed(name)
    return dict(info) if info is not None else None


@functools.lru_cache(maxsize=1 << 15)
def _parsed(name: str) -> Optional[dict]:
    return _decode(name, dates=False)


def _decode(name: str, dates: bool = True) -> Optional[dict]:
    base = name.rstrip("/").rsplit("/", 1)[-1]
    stem, ext = _split_ext(base)
    m = _NEW.match(stem)
    if m:
        t1, t2 = int(m.group(1)), int(m.group(2))
        return {"t1": t1, "t2": t2, "t1_datetime": ms_to_datetime(t1) if dates else None,
                "t2_datetime": ms_to_datetime(t2) if dates else None, "uuid": m.group(3),
                "version": int(m.group(4)) if m.group(4) is not None else None,
                "extension": ext, "kind": "timestamped"}
    m = _ENUM.match(stem)
    if m and ext is None and len(m.group(2)) < 6:
        # `__<uuid>_<v>` with a small number: an enumeration file (format >= 20)
        return {"t1": None, "t2": None, "t1_datetime": None, "t2_datetime": None,
                "uuid": m.group(1), "version": int(m.group(2)), "extension": None,
                "kind": "enumeration"}
    m = _OLD.match(stem)
    if m:
        # libtiledb (FragmentID, name version one) takes the last number for both ends
        t1 = t2 = int(m.group(3) if m.group(3) is not None else m.group(2))
        return {"t1": t1, "t2": t2, "t1_datetime": ms_to_datetime(t1) if dates else None,
                "t2_datetime": ms_to_datetime(t2) if dates else None, "uuid": m.group(1),
                "version": None,
                "extension": ext, "kind": "legacy"}
    return None


def _fmt_dt(d: Optional[_dt.datetime], ms: Optional[int]) -> str:
    if d is None:
        return str(ms)
    # by hand, not strftime (a fifth of the cost of naming 10 000 fragments); the years of
    # non-negative ms timestamps have four digits (1970…9999), as strftime's %Y gives them
    return (f"{d.year:04d}-{d.month:02d}-{d.day:02d} {d.hour:02d}:{d.minute:02d}:"
            f"{d.second:02d}.{d.microsecond // 1000:03d}Z")


def describe_name(name: str) -> Optional[str]:
    """One line for the tree: `2026-11-21 05:38:00.123Z – … · uuid 6dbe… · v22 · delete commit`."""
    d = decode_name(name)
    return None if d is None else d["display"]


def describe(d: dict) -> str:
    """The display line of a decoded name (see `describe_name`)."""
    parts = []
    if d["t1"] is not None:
        a = _fmt_dt(d["t1_datetime"], d["t1"])
        parts.append(a if d["t1"] == d["t2"] else f"{a} – {_fmt_dt(d['t2_datetime'], d['t2'])}")
    parts.append(f"uuid {d['uuid']}")
    if d["version"] is not None:
        parts.append(f"v{d['version']}")
    if d["extension"]:
        parts.append(EXTENSIONS[d["extension"]])
    return " · ".join(parts)

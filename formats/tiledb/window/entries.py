"""What the array browser says about a folder or file of a TileDB array: the folder's
role, the timestamps and format version a timestamped name carries, and for a data file
the attribute or dimension and part it holds (from its fragment's schema)."""
from __future__ import annotations

import datetime as _dt
import os

from ...core.node import Node
from ...core.plugin import generic_entry_text
from ..model import layout

FOLDERS = {
    layout.SCHEMA_DIR: "Schema versions", layout.FRAGMENTS_DIR: "Fragments",
    layout.COMMITS_DIR: "Commits", layout.META_DIR: "Array metadata",
    layout.ENUMERATIONS_DIR: "Enumerations", layout.LABELS_DIR: "Dimension labels",
    layout.FRAGMENT_META_DIR: "Consolidated fragment metadata",
    layout.GROUP_DETAILS_DIR: "Group members (one list per write)",
}
# the extension of a timestamped name -> what the file is
TIMESTAMPED_KINDS = {"wrt": "commit", "del": "delete commit", "upd": "update commit",
                     "vac": "vacuum list", "meta": "consolidated fragment metadata",
                     "con": "consolidated commits"}
_ROLE_WORDS = {"a": "attribute", "d": "dimension", "t": "timestamps"}


def ms_text(ms: int) -> str:
    try:
        return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (ValueError, OverflowError, OSError):
        return str(ms)


def name_text(name: str) -> str:
    """What an entry's name alone tells (timestamps, format version, file role)."""
    m = layout.TIMESTAMPED_RE.match(name)
    if m:
        t1, t2, _uuid, ver, ext = m.groups()
        a, b = int(t1), int(t2)
        when = ms_text(a) if a == b else f"{ms_text(a)} → {ms_text(b)}"
        extra = f", format v{ver}" if ver else ""
        what = TIMESTAMPED_KINDS.get(ext or "", "")
        return f"{what + ': ' if what else ''}{when}{extra}"
    m = layout.DATA_FILE_RE.match(name)
    if m and m.group(1):
        sub = {"_var": " var data", "_validity": " validity"}.get(m.group(3) or "", " data")
        return f"{_ROLE_WORDS[m.group(1)]} {m.group(2)}{sub}"
    if m and m.group(4) == "t":
        sub = {"_var": " var data", "_validity": " validity"}.get(m.group(5) or "", " data")
        return f"timestamps{sub}"
    if name == layout.FRAGMENT_METADATA_FILE:
        return "fragment metadata"
    return ""


def describe_entry(document, node: Node) -> str:
    if node.kind == "dir":
        what = FOLDERS.get(node.name, "")
        if node.name == layout.META_DIR and node.parent is not None and \
                node.parent.find(layout.GROUP_DETAILS_DIR) is not None:
            what = "Group metadata"
        what = what or name_text(node.name)
        if layout.TIMESTAMPED_RE.match(node.name) and not what.startswith("commit") \
                and node.parent is not None and node.parent.name == layout.FRAGMENTS_DIR:
            what = "fragment: " + what
        # a group member: what opening it found (its root's display)
        return what or generic_entry_text(node)
    what = name_text(node.name)
    m = layout.DATA_FILE_RE.match(node.name)
    if node.kind == "file" and m and m.group(1):
        what = field_text(document, node) or what
    return what


def field_text(document, node: Node) -> str:
    """`attribute 'counts' data` for a data file, from its fragment's schema."""
    from ..model.array_model import FragmentMetadata
    from ..parse.data_files import file_role
    from .tile_cells import array_of

    fm = node.data
    array = array_of(document, node)
    if fm is None and node.pending and array is not None:
        fm = _footer_model(document, array, node)   # not parsed yet (a lazy open)
    if not isinstance(fm, FragmentMetadata) or array is None:
        return ""
    try:
        schema = fm.schema or array.schema_for(fm.schema_name)
        role = file_role(schema, fm, node.name) if schema is not None else None
    except Exception:  # noqa: BLE001 - a label is not worth an exception
        return ""
    if role is None:
        return ""
    kind = "dimension" if node.name[:1] == "d" and node.name[1:2].isdigit() else "attribute"
    part = {"fixed": "offsets" if role.role == "offsets" else "data", "var": "var data",
            "validity": "validity"}[role.part]
    name = getattr(role.obj, "name", "?")
    return f"{kind} '{name}' {part}"


def _footer_model(document, array, node: Node):
    """The metadata model (footer only, no nodes) of the fragment holding data file `node`,
    for a file not parsed yet: its fragment's parsed metadata when there is one."""
    from ...core.context import Context
    from ..model.array_model import TileDBContext
    from ..parse.fragment_metadata import load_fragment_metadata

    path = getattr(node.source, "path", None)
    frag = array.fragment_in(os.path.dirname(os.path.abspath(path))) if path else None
    if frag is None:
        return None
    if frag.metadata is not None:
        return frag.metadata
    try:
        src = document.open_source(os.path.join(frag.path, layout.FRAGMENT_METADATA_FILE))
        ctx = Context(key=getattr(getattr(document, "ctx", None), "key", None),
                      format=TileDBContext(array=array))
        return load_fragment_metadata(src, ctx)
    except Exception:  # noqa: BLE001 - a label is not worth an exception
        return None

"""Array metadata files `__meta/__t1_t2_uuid[_v]` (format_spec/array_metadata.md).

The payload is a run of entries to the end: `u32 key length, key, u8 deletion` and, for an
insertion (deletion 0), `u8 value type, u32 number of values, value` where the value has
`number × datatype size` bytes. Later files (by timestamp) override earlier ones; inside a
file, keys are in byte order (libtiledb serializes a std::map). tiledb-py also writes
deletions of `__np_flat_<key>` / `__np_shape_<key>` keys next to each key it sets.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional

from ...core.cursor import Cursor, ParseStop
from ...core.fielddoc import doc
from ...core.node import Node, hex_preview
from ...filters.enums import DATATYPE_NAMES, DATATYPES, TEXT_TYPES, Datatype, datatype_size, format_value
from .tile import parse_generic_tile_file

SPEC = "array_metadata.md#array-metadata-file"

D_ENTRY = doc("One metadata entry: a key and either its deletion or its typed value", spec=SPEC)
D_KEY_LEN = doc("Key length: bytes of the key", spec=SPEC)
D_KEY = doc("Key: the metadata key (UTF-8)", spec=SPEC)
D_DEL = doc("Deletion: 1 if the entry deletes the key (nothing follows), 0 for an insertion",
            spec=SPEC)
D_TYPE = doc("Value type: the datatype of the values (strings are CHAR/STRING_UTF8 with one "
             "value per character; Python bytes are stored as BLOB)", spec=SPEC,
             note="the document types it `char`; it is a uint8 datatype code")
D_NUM = doc("Number of values: how many values of the type follow (the value has "
            "number × type size bytes)", spec=SPEC)
D_VALUE = doc("Value: the values, typed by the value type", spec=SPEC)


@dataclass
class MetadataEntry:
    key: str
    deleted: bool = False
    datatype: Optional[int] = None
    num: int = 0
    value: Any = None     # str for strings, bytes for BLOB, scalar for num == 1, else list
    raw: bytes = b""


@dataclass
class ArrayMetadata:
    entries: List[MetadataEntry] = field(default_factory=list)



def _value(dt: int, num: int, raw: bytes):
    """(model value, node value, display) of a metadata value."""
    if dt == Datatype.BLOB:
        return raw, None, hex_preview(raw, 32) if raw else "(empty)"
    if num == 0:
        return None, None, "(no value)"
    v, text = format_value(dt, raw)
    if dt in TEXT_TYPES:
        return v, v, text
    if num == 1 and isinstance(v, list):
        v = v[0]
    return v, v, text


def parse_array_metadata(cur: Cursor, ctx=None) -> Optional[ArrayMetadata]:
    """Parse a metadata payload at `cur` (entries to the end); None when it is cut short."""
    md = ArrayMetadata()
    i = 0
    try:
        while not cur.at_end():
            i += 1
            e = MetadataEntry("")

            def entry(c: Cursor, e=e):
                n = c.length("u32", "Key length", 1, D_KEY_LEN, "bytes").value
                e.key = c.string("Key", n, D_KEY).value
                dn = c.u8("Deletion", D_DEL)
                dn.kind = "flag"
                e.deleted = dn.value != 0
                dn.display = "1 (deletion)" if dn.value == 1 else (
                    "0 (insertion)" if dn.value == 0 else f"{dn.value} (deletion: non-zero)")
                if e.deleted:
                    return
                tn = c.u8("Value type", D_TYPE, enum=DATATYPE_NAMES)
                e.datatype = tn.value
                size = datatype_size(e.datatype) if e.datatype in DATATYPES else 1
                e.num = c.length("u32", "Number of values", size, D_NUM, "values").value
                nbytes = e.num * size
                e.raw = c.source.read(c.pos, nbytes)
                e.value, nv, text = _value(e.datatype, e.num, e.raw)
                c.field("Value", nbytes, nv, text, "string" if e.datatype in TEXT_TYPES
                        else "bytes" if e.datatype == Datatype.BLOB else "field", D_VALUE,
                        f"{DATATYPE_NAMES.get(e.datatype, '?')}[{e.num}]")

            g = cur.group(f"Entry {i}", entry, doc=D_ENTRY)
            md.entries.append(e)
            g.value = e.key
            g.display = (f"{e.key!r} deleted" if e.deleted else
                         f"{e.key!r} = {g.children[-1].display_text()}")
    except ParseStop:
        return None
    return md


def parse_array_metadata_file(document, source, ctx=None) -> Node:
    """The whole `__meta` file (a generic tile); the node's `data` is the ArrayMetadata."""
    return parse_generic_tile_file(
        document, source, ctx, parse_array_metadata, "Array metadata",
        lambda md: f"{len(md.entries)} entr{'y' if len(md.entries) == 1 else 'ies'}")

"""Group details files `__group/__t1_t2_uuid_v` (format_spec/group.md): who the members are.

Each file is one generic tile whose payload is `u32 version, u64 number of members` and the
members one after the other. A member is `u32 member version, u8 object type, u8 relative,
u64 URI length, URI, u8 name set, [u64 name length, name]` and, from member version 2,
`u8 deleted`. The document gives both counts as uint32 and has no name; libtiledb 2.30 writes
(and tiledb-py 0.36 / tiledbsoma 2.3 produce) the layout above (group_details_v2.cc,
group_member_v2.cc).

Version 1 files each hold the whole member list (only the latest counts); from version 2
every file is a change set applied in timestamp order: a member entry adds (or replaces) the
member of the same key, a deleted entry removes it. The key is the member's name, or its URI
when it has none.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ...core.cursor import Cursor, ParseStop
from ...core.fielddoc import doc
from ...core.node import Node
from .tile import parse_generic_tile_file

SPEC = "group.md#group-file"
MEMBER_SPEC = "group.md#group-member"
OBJECT_TYPES = {0: "INVALID", 1: "GROUP", 2: "ARRAY"}
GROUP, ARRAY = 1, 2
DETAILS_VERSIONS = (1, 2)
MEMBER_VERSIONS = (1, 2)
_MEMBER_MIN = 4 + 1 + 1 + 8 + 1  # a member with an empty URI and no name (version 1)

D_VERSION = doc("Version: format version of the group details (libtiledb 2.30 writes 2, "
                "2.12 wrote 1; version 1 files each hold the whole member list)", spec=SPEC)
D_COUNT = doc("Number of group members: member entries that follow", spec=SPEC,
              note="the document says uint32; libtiledb writes a uint64")
D_MEMBER = doc("Group member: one member entry (an addition, or from version 2 a deletion)",
               spec=MEMBER_SPEC)
D_M_VERSION = doc("Version: format version of this member entry (2 adds the Deleted flag)",
                  spec=MEMBER_SPEC)
D_M_TYPE = doc("Object type: 1 = GROUP, 2 = ARRAY (ObjectType of libtiledb)", spec=MEMBER_SPEC)
D_M_RELATIVE = doc("Relative: 1 if the URI is relative to the group's own URI, 0 if absolute "
                   "(file://, s3://, tiledb://...)", spec=MEMBER_SPEC)
D_M_URI_LEN = doc("URI length: bytes of the URI", spec=MEMBER_SPEC,
                  note="the document says uint32; libtiledb writes a uint64")
D_M_URI = doc("URI: where the member is (relative to the group, or absolute)", spec=MEMBER_SPEC)
D_M_NAME_SET = doc("Name set: 1 if a name follows (the name the member is looked up by)",
                   spec=MEMBER_SPEC, note="not in the document; written by libtiledb since "
                                          "member version 1")
D_M_NAME_LEN = doc("Name length: bytes of the name", spec=MEMBER_SPEC,
                   note="not in the document; a uint64")
D_M_NAME = doc("Name: the member's name in the group (tiledbsoma: the SOMA key, e.g. `obs`)",
               spec=MEMBER_SPEC, note="not in the document")
D_M_DELETED = doc("Deleted: 1 if this entry removes the member of the same name (or URI)",
                  added_in=2, spec=MEMBER_SPEC)


@dataclass(frozen=True)
class MemberEntry:
    """One member entry, as written. Immutable: entries written alike (a member added and
    removed by 1 000 commits) are one object (`read_group_details`'s `shared`)."""

    version: int
    object_type: Optional[int] = None
    relative: bool = False
    uri: str = ""
    name: Optional[str] = None
    deleted: bool = False

    @property
    def key(self) -> str:
        """What libtiledb matches entries by: the name, or the URI when there is none."""
        return self.name if self.name is not None else self.uri

    @property
    def type_name(self) -> str:
        return OBJECT_TYPES.get(self.object_type or 0, "unknown").lower()


@dataclass
class GroupDetails:
    version: int
    members: List[MemberEntry] = field(default_factory=list)
    complete: bool = False  # every declared member was read


def _member(c: Cursor) -> MemberEntry:
    v = c.u32("Version", D_M_VERSION).value
    if v not in MEMBER_VERSIONS:
        c.fail("Member (unknown version)", f"group member version {v} is not known "
                                           f"(known: {', '.join(map(str, MEMBER_VERSIONS))}); "
                                           f"the rest of the list cannot be read")
    object_type = c.u8("Object type", D_M_TYPE, enum=OBJECT_TYPES).value
    relative = bool(c.boolean("Relative", D_M_RELATIVE).value)
    n = c.length("u64", "URI length", 1, D_M_URI_LEN, "bytes").value
    uri = c.string("URI", n, D_M_URI).value
    name = None
    if c.boolean("Name set", D_M_NAME_SET).value:
        n = c.length("u64", "Name length", 1, D_M_NAME_LEN, "bytes").value
        name = c.string("Name", n, D_M_NAME).value
    deleted = bool(c.boolean("Deleted", D_M_DELETED).value) if v >= 2 else False
    return MemberEntry(v, object_type, relative, uri, name, deleted)


def _member_display(e: MemberEntry) -> str:
    where = f"{e.uri} ({'relative' if e.relative else 'absolute'})"
    name = repr(e.name) if e.name is not None else "(no name)"
    return f"{name} {'deleted' if e.deleted else e.type_name} → {where}"


def parse_group_details(cur: Cursor, ctx=None) -> Optional[GroupDetails]:
    """A details payload at `cur`; None when it cannot be read at all (cut before the list)."""
    vn = cur.u32("Version", D_VERSION)
    gd = GroupDetails(vn.value)
    if gd.version not in DETAILS_VERSIONS:
        vn.mark("error", f"group details version {gd.version} is not known (known: 1, 2)")
        cur.fail("Members (unknown version)", "the member list of an unknown group details "
                                              "version is not read")
    count = cur.length("u64", "Number of group members", _MEMBER_MIN, D_COUNT, "members").value
    try:
        for i in range(count):
            read: List[MemberEntry] = []
            g = cur.group(f"Member {i + 1}", lambda c: read.append(_member(c)), doc=D_MEMBER)
            e = read[0]
            gd.members.append(e)
            g.value = e.key
            g.display = _member_display(e)
        gd.complete = True
    except ParseStop:
        pass  # the error node is in place; the members read so far still count
    return gd


def member_nodes(file_node: Node) -> List[Node]:
    """The member entry nodes of a parsed details file, in file order."""
    for n in file_node.walk():
        if n is not file_node and isinstance(n.data, GroupDetails):
            return [c for c in n.iter_children() if c.name.startswith("Member ")]
    return []


# ---- the member list without nodes -----------------------------------------------------
_U32, _U64 = struct.Struct("<I"), struct.Struct("<Q")


def read_group_details(payload: bytes, shared: Dict[bytes, MemberEntry]) -> Optional[GroupDetails]:
    """The member list of a details payload read without nodes, when every byte of it is
    as libtiledb writes it (known versions, flags 0 or 1, known object types, UTF-8 text,
    nothing after the last member); None otherwise (`parse_group_details` then shows where
    it is not). Entries written alike are one object (`shared`: bytes -> entry), so 1 000
    files that add and remove the same members cost one entry each, plus a reference."""
    end = len(payload)
    if end < 12:
        return None
    version, count = _U32.unpack_from(payload, 0)[0], _U64.unpack_from(payload, 4)[0]
    if version not in DETAILS_VERSIONS or count * _MEMBER_MIN > end - 12:
        return None
    gd = GroupDetails(version)
    pos = 12
    try:
        for _ in range(count):
            start = pos
            v = _U32.unpack_from(payload, pos)[0]
            otype, relative = payload[pos + 4], payload[pos + 5]
            n = _U64.unpack_from(payload, pos + 6)[0]
            pos += 14 + n
            name_set = payload[pos]
            pos += 1
            if name_set == 1:
                pos += 8 + _U64.unpack_from(payload, pos)[0]
            if v >= 2:
                if payload[pos] > 1:
                    return None
                pos += 1
            if v not in MEMBER_VERSIONS or otype not in OBJECT_TYPES or relative > 1 or \
                    name_set > 1 or pos > end:
                return None
            raw = payload[start:pos]
            e = shared.get(raw)
            if e is None:
                e = shared[raw] = _entry_of(raw)
            gd.members.append(e)
    except (struct.error, IndexError):
        return None
    except UnicodeDecodeError:
        return None
    if pos != end:
        return None
    gd.complete = True
    return gd


def _entry_of(raw: bytes) -> MemberEntry:
    """The entry of one member's bytes (already bounds-checked by `read_group_details`)."""
    v, otype, relative = _U32.unpack_from(raw, 0)[0], raw[4], raw[5]
    n = _U64.unpack_from(raw, 6)[0]
    uri = raw[14:14 + n].decode("utf-8")
    pos = 14 + n
    name = None
    if raw[pos] == 1:
        k = _U64.unpack_from(raw, pos + 1)[0]
        name = raw[pos + 9:pos + 9 + k].decode("utf-8")
        pos += 9 + k
    else:
        pos += 1
    deleted = bool(raw[pos]) if v >= 2 else False
    return MemberEntry(v, otype, bool(relative), uri, name, deleted)


def parse_group_details_file(document, source, ctx=None) -> Node:
    """The whole details file (a generic tile); the node's `data` is the GroupDetails."""
    return parse_generic_tile_file(document, source, ctx, parse_group_details, "Group details",
                                   _describe)


def _describe(gd) -> str:
    n = len(gd.members)
    return f"version {gd.version}, {n} member entr{'y' if n == 1 else 'ies'}"

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

from dataclasses import dataclass, field
from typing import List, Optional

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


@dataclass
class MemberEntry:
    """One member entry of one details file, as written."""

    version: int
    object_type: Optional[int] = None
    relative: bool = False
    uri: str = ""
    name: Optional[str] = None
    deleted: bool = False
    node: Optional[Node] = field(default=None, repr=False, compare=False)

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


def _member(c: Cursor, entry: MemberEntry) -> None:
    v = c.u32("Version", D_M_VERSION).value
    entry.version = v
    if v not in MEMBER_VERSIONS:
        c.fail("Member (unknown version)", f"group member version {v} is not known "
                                           f"(known: {', '.join(map(str, MEMBER_VERSIONS))}); "
                                           f"the rest of the list cannot be read")
    entry.object_type = c.u8("Object type", D_M_TYPE, enum=OBJECT_TYPES).value
    entry.relative = bool(c.boolean("Relative", D_M_RELATIVE).value)
    n = c.length("u64", "URI length", 1, D_M_URI_LEN, "bytes").value
    entry.uri = c.string("URI", n, D_M_URI).value
    if c.boolean("Name set", D_M_NAME_SET).value:
        n = c.length("u64", "Name length", 1, D_M_NAME_LEN, "bytes").value
        entry.name = c.string("Name", n, D_M_NAME).value
    if v >= 2:
        entry.deleted = bool(c.boolean("Deleted", D_M_DELETED).value)


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
            e = MemberEntry(0)

            def one(c: Cursor, e: MemberEntry = e) -> None:
                _member(c, e)
            g = cur.group(f"Member {i + 1}", one, doc=D_MEMBER)
            e.node = g
            gd.members.append(e)
            g.value = e.key
            g.display = _member_display(e)
        gd.complete = True
    except ParseStop:
        pass  # the error node is in place; the members read so far still count
    return gd


def parse_group_details_file(document, source, ctx=None) -> Node:
    """The whole details file (a generic tile); the node's `data` is the GroupDetails."""
    return parse_generic_tile_file(document, source, ctx, parse_group_details, "Group details",
                                   _describe)


def _describe(gd) -> str:
    n = len(gd.members)
    return f"version {gd.version}, {n} member entr{'y' if n == 1 else 'ies'}"

"""TileDB groups written by tiledb-py 0.36.1 (libtiledb 2.30): the group's own files
annotated to the byte, members as libtiledb lists them, nested groups, relative and
absolute member URIs, deleted members across versions, group metadata; members that point
outside the group or to nothing are findings, never followed."""
from __future__ import annotations

import os
import shutil
import struct

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core import registry
from arrayscope.formats.core.engine import run_parser
from arrayscope.formats.core.findings import (
    GROUP_MEMBER_MISSING,
    GROUP_MEMBER_OUTSIDE,
    GROUP_MEMBER_TYPE,
)
from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.core.verify import verify
from arrayscope.formats.tiledb.model.group_walk import member_document
from arrayscope.formats.tiledb.parse.group import TileDBGroup
from arrayscope.formats.tiledb.parse.group_details import GroupDetails, parse_group_details
from tests.support.groups import open_all

PLUGIN = registry.plugin_named("tiledb")


def _array(uri: str, start: float = 0.0) -> None:
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=5, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.float64)]))
    with tiledb.open(uri, "w") as A:
        A[:] = np.arange(10.0) + start


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A group `g`: `one` (relative → arr1), `three` (absolute file:// inside → arr3),
    `sub` (a nested group with `inner`), `out` (an array outside the group), `gone` (its
    array deleted afterwards), `two` (added, then removed: arr2 stays as a non-member),
    `link` (relative, a symbolic link leading outside), group metadata."""
    base = str(tmp_path_factory.mktemp("groups"))
    g = os.path.join(base, "g")
    tiledb.Group.create(g)
    for name, start in (("arr1", 0), ("arr2", 10), ("arr3", 20), ("gone", 30)):
        _array(os.path.join(g, name), start)
    outside = os.path.join(base, "outside")
    _array(outside, 40)
    os.symlink(outside, os.path.join(g, "link"))
    tiledb.Group.create(os.path.join(g, "sub"))
    _array(os.path.join(g, "sub", "inner"), 50)
    with tiledb.Group(os.path.join(g, "sub"), "w") as s:
        s.add("inner", name="inner", relative=True)
    with tiledb.Group(g, "w") as grp:
        grp.add("arr1", name="one", relative=True)
        grp.add("file://" + os.path.join(g, "arr2"), name="two")
        grp.add("file://" + os.path.join(g, "arr3"), name="three")
        grp.add("sub", name="sub", relative=True)
        grp.add(outside, name="out")
        grp.add("gone", name="gone", relative=True)
        grp.add("link", name="link", relative=True)
        grp.meta["title"] = "hello"
        grp.meta["n"] = 3
        grp.meta["f"] = np.array([1.5, 2.5])
    with tiledb.Group(g, "w") as grp:
        grp.remove("two")
    with tiledb.Group(g) as grp:
        listed = {m.name: (m.uri, "group" if m.type is tiledb.Group else "array") for m in grp}
        meta = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in grp.meta.items()}
    shutil.rmtree(os.path.join(g, "gone"))
    return g, listed, meta


def _details_files(g):
    d = os.path.join(g, "__group")
    return sorted(os.listdir(d))


def test_group_model_equals_tiledb_py(made):
    g, listed, meta = made
    doc = formats.open(g)
    group = doc.model
    assert isinstance(group, TileDBGroup)
    assert [f for f, _ in group.details] == _details_files(g)
    assert all(isinstance(gd, GroupDetails) and gd.version == 2 and gd.complete
               for _, gd in group.details)
    assert {m.name for m in group.members} == set(listed) == \
        {"one", "three", "sub", "out", "gone", "link"}
    for m in group.members:
        assert m.entry.type_name == listed[m.name][1]
        assert ("file://" + os.path.realpath(m.path) if m.path else None) in \
            (listed[m.name][0], None)
    assert group.metadata["title"] == meta["title"] == "hello"
    assert group.metadata["n"] == meta["n"] == 3
    # tiledb-py stores a numpy array under `__np_flat_<key>` (the raw key on disk)
    assert group.metadata["__np_flat_f"] == meta["f"] == [1.5, 2.5]
    assert set(group.metadata) == {"title", "n", "__np_flat_f"}


def test_member_entries_annotated_to_the_byte(made):
    g, _listed, _meta = made
    doc = formats.open(g)
    latest = doc.root["__group"][_details_files(g)[-1]]
    payload = latest.resolve("Generic tile/Tile/Group details")
    assert payload is not None and payload.size == payload.source.size
    entries = {e.value: e for e in payload.iter_children() if e.name.startswith("Member ")}
    two = entries["two"]
    assert [c.name for c in two.iter_children()] == [
        "Version", "Object type", "Relative", "URI length", "URI", "Name set", "Name length",
        "Name", "Deleted"]
    assert two["Deleted"].value is True and two["URI"].value == "file://" + os.path.join(g, "arr2")
    assert two["Relative"].value is False and two["Object type"].display == "2 (ARRAY)"
    assert two.display.endswith("removes the member")
    one = entries["one"]
    assert one["Relative"].value is True and one["URI"].value == "arr1"
    assert one.display.endswith("in effect")
    # the first write's entry for `two` was removed by the later one
    first = doc.root["__group"][_details_files(g)[0]].resolve("Generic tile/Tile/Group details")
    two0 = next(e for e in first.iter_children() if e.value == "two")
    assert two0.display.endswith("removed by a later entry")
    # every byte of the group's own files
    cov = doc.coverage()
    assert {n: c for n, c in cov.items() if c[0] != c[1]} == {}
    assert payload.source.read(0, 4) == struct.pack("<I", 2)
    assert payload["Number of group members"].size == 8


def test_outside_and_missing_members_are_findings_never_followed(made):
    g, _listed, _meta = made
    doc = formats.open(g)
    kids = {c.name: c for c in doc.root.iter_children()}
    findings = verify(doc)
    assert {(f.code, f.status) for f in findings} == {
        (GROUP_MEMBER_OUTSIDE, "warning"), (GROUP_MEMBER_MISSING, "error")}
    by_code: dict = {}
    for f in findings:
        by_code.setdefault(f.code, []).append(f)
    # one finding per member, named by the member's path
    assert sorted(f.node for f in findings) == ["g/gone", "g/link", "g/out"]
    assert len(by_code[GROUP_MEMBER_MISSING]) == 1
    assert len(by_code[GROUP_MEMBER_OUTSIDE]) == 2
    latest = _details_files(g)[-1]
    for f in findings:
        # located on the entry's URI, in the details file's (decompressed) payload
        assert f.source == f"__group/{latest} (group details payload)"
        uri = doc.root["__group"][latest].resolve("Generic tile/Tile/Group details")
        assert any(c["URI"].offset == f.offset for c in uri.iter_children()
                   if c.name.startswith("Member "))
    assert "points to nothing" in by_code[GROUP_MEMBER_MISSING][0].message
    msgs = sorted(f.message for f in by_code[GROUP_MEMBER_OUTSIDE])
    assert "member 'link' (link) leads outside the group's directory through a symbolic link" \
        in msgs[0] and "member 'out'" in msgs[1]
    # not followed: no node, no source of the outside array
    assert not kids["out"].pending and kids["out"].child_count() == 0
    assert not kids["link"].pending
    open_all(doc.root)
    assert not any("outside" in s.name or s.name.startswith("link/") for s in doc.sources)


def test_members_open_with_their_own_context(made, tmp_path):
    g, _listed, _meta = made
    doc = formats.open(g)
    members = {n.data.member_path: n for n in open_all(doc.root)}
    assert {p for p, n in members.items() if n.data.member is not None} == \
        {"one", "three", "sub", "sub/inner"}
    # arr2 was removed from the group: shown (and parsed) as a folder that is no member
    assert members["arr2"].data.member is None and members["arr2"].data.kind == "array"
    assert "not a member of the group" in members["arr2"].display
    assert members["sub"].data.kind == "group" and isinstance(members["sub"].data.model, TileDBGroup)
    for path, start in (("one", 0), ("three", 20), ("sub/inner", 50)):
        view = member_document(doc, path)
        entries = PLUGIN.values(view, "a")
        with tiledb.open(view.model.path) as A:
            want = A[:]["a"].tolist()
        assert [v for e in entries for v in e["values"]] == want == list(np.arange(10.0) + start)
    assert members["sub/inner"].path() == "g/sub/inner"
    # every file inside the group's folder is parsed and covered (none outside it)
    cov = doc.coverage()
    assert {n: c for n, c in cov.items() if c[0] != c[1]} == {}
    on_disk = {os.path.relpath(os.path.join(d, f), g) for d, _, fs in os.walk(g) for f in fs}
    assert {s.name for s in doc.sources} == on_disk - {
        n for n in on_disk if n.startswith("link/")}


def test_verify_names_the_member_path_of_a_damaged_member(made, tmp_path):
    g, _listed, _meta = made
    copy = str(tmp_path / "g")
    shutil.copytree(g, copy, symlinks=True)
    frag_dir = os.path.join(copy, "sub", "inner", "__fragments")
    frag = os.path.join(frag_dir, os.listdir(frag_dir)[0])
    data = os.path.join(frag, "a0.tdb")
    os.truncate(data, os.path.getsize(data) - 8)
    doc = formats.open(copy)
    errs = [f for f in verify(doc) if f.status == "error" and f.code != GROUP_MEMBER_MISSING]
    assert errs, "a data file of a member cut short must be found"
    rel = os.path.relpath(data, copy).replace(os.sep, "/")
    assert all(f.source == rel for f in errs)
    assert all(f.node.startswith("g/sub/inner/") or f.node == "verify" for f in errs)


def test_member_of_the_wrong_type_and_a_file_opened_alone(made, tmp_path):
    g, _listed, _meta = made
    base = str(tmp_path)
    grp = os.path.join(base, "w")
    tiledb.Group.create(grp)
    _array(os.path.join(grp, "arr"))
    tiledb.Group.create(os.path.join(grp, "sub"))
    with tiledb.Group(grp, "w") as w:
        w.add("arr", name="arr", relative=True)
        w.add("sub", name="sub", relative=True)
    # swap the two folders: each entry now names the other kind
    os.rename(os.path.join(grp, "arr"), os.path.join(grp, "tmp"))
    os.rename(os.path.join(grp, "sub"), os.path.join(grp, "arr"))
    os.rename(os.path.join(grp, "tmp"), os.path.join(grp, "sub"))
    doc = formats.open(grp)
    codes = sorted((f.code, f.message.split(" (")[0]) for f in verify(doc))
    assert codes == [(GROUP_MEMBER_TYPE, "member 'arr'"), (GROUP_MEMBER_TYPE, "member 'sub'")]
    # one details file opened on its own is parsed as one
    details = os.path.join(g, "__group", _details_files(g)[0])
    one = formats.open(details)
    assert one.format == "tiledb" and isinstance(one.root.data, GroupDetails)
    assert one.diagnostics() == []


def _payload(*parts: bytes) -> BytesSource:
    return BytesSource(b"".join(parts), "payload")


def _member(version=2, otype=2, rel=1, uri=b"a", name=b"a", deleted=0) -> bytes:
    out = struct.pack("<IBBQ", version, otype, rel, len(uri)) + uri
    out += struct.pack("<BQ", 1, len(name)) + name if name is not None else b"\x00"
    return out + (struct.pack("<B", deleted) if version >= 2 else b"")


@pytest.mark.parametrize("payload, message", [
    (struct.pack("<IQ", 2, 10**12), "Number of group members: 1000000000000 members"),
    (struct.pack("<IQ", 7, 0), "group details version 7 is not known"),
    (struct.pack("<IQ", 2, 1) + _member(version=9), "group member version 9 is not known"),
    (struct.pack("<IQ", 2, 1) + _member()[:-3], "expected"),
    (struct.pack("<IQ", 2, 1) + struct.pack("<IBBQ", 2, 2, 1, 2**40) + b"x" * 20,
     "URI length: 1099511627776 bytes"),
])
def test_damaged_details_payload_is_a_located_error(payload, message):
    src = _payload(payload)
    holder = []
    root = run_parser("payload", "struct", src, lambda c: holder.append(parse_group_details(c)))
    errors = [n for n in root.walk() if n.status == "error"]
    assert errors and any(message in (n.message or "") for n in errors), \
        [(n.name, n.message) for n in errors]
    assert all(0 <= n.offset <= src.size for n in errors)


def test_version_1_members_and_relative_flag_read_from_bytes():
    src = _payload(struct.pack("<IQ", 1, 2), _member(version=1, uri=b"x", name=None),
                   _member(version=1, otype=1, rel=0, uri=b"file:///tmp/y", name=b"y"))
    holder = []
    run_parser("payload", "struct", src, lambda c: holder.append(parse_group_details(c)))
    gd = holder[0]
    assert gd.complete and [(e.key, e.type_name, e.relative, e.deleted) for e in gd.members] == [
        ("x", "array", True, False), ("y", "group", False, False)]


def test_consolidated_group_metadata(tmp_path):
    uri = str(tmp_path / "cg")
    tiledb.Group.create(uri)
    for i in range(3):
        with tiledb.Group(uri, "w") as w:
            w.meta[f"k{i}"] = i
            if i == 2:
                del w.meta["k0"]
    tiledb.Group.consolidate_metadata(uri)
    with tiledb.Group(uri) as grp:
        want = dict(grp.meta.items())
    doc = formats.open(uri)
    assert doc.model.metadata == want == {"k1": 1, "k2": 2}
    meta = doc.root["__meta"]
    vac = [c for c in meta.iter_children() if c.name.endswith(".vac")]
    assert len(vac) == 1 and len(vac[0].data) == 3
    away = [c for c in meta.iter_children()
            if "consolidated away (listed in" in (c.display or "")]
    assert sorted(c.name for c in away) == sorted(u.rsplit("/", 1)[-1] for u in vac[0].data)
    assert verify(doc) == []
    tiledb.Group.vacuum_metadata(uri)
    doc = formats.open(uri)
    assert doc.model.metadata == want and verify(doc) == []
    assert [c.name for c in doc.root["__meta"].iter_children()] == \
        [n for n in os.listdir(os.path.join(uri, "__meta"))]


def test_links_in_the_group_folder_are_never_followed(tmp_path):
    from arrayscope.formats.core.findings import OUTSIDE_DATASET

    grp = str(tmp_path / "lg")
    tiledb.Group.create(grp)
    _array(os.path.join(grp, "arr"))
    _array(str(tmp_path / "elsewhere"))
    with tiledb.Group(grp, "w") as w:
        w.add("arr", name="arr", relative=True)
    os.symlink(str(tmp_path / "elsewhere"), os.path.join(grp, "stray_link"))  # no member
    os.symlink("arr", os.path.join(grp, "alias"))                            # no member
    doc = formats.open(grp)
    open_all(doc.root)
    found = [(f.code, f.node) for f in verify(doc)]
    assert found == [(OUTSIDE_DATASET, "lg/stray_link")]
    assert not any("elsewhere" in s.name or s.name.startswith("stray_link")
                   for s in doc.sources)


def test_version_1_group_written_by_libtiledb_2_12():
    """tests/data/tiledb_groups (tiledb-py 0.18.3): details and members of version 1, where
    each file holds the whole list and only the latest counts (the removal of `two`)."""
    import json

    from tests.support.paths import DATA

    base = os.path.join(DATA, "tiledb_groups", "v1_2.12.3")
    with open(os.path.join(base, "expected.json")) as fh:
        expected = json.load(fh)
    g = os.path.join(base, "g")
    doc = formats.open(g)
    group = doc.model
    assert [gd.version for _, gd in group.details] == [1, 1]
    assert all(e.version == 1 and not e.deleted for _, gd in group.details for e in gd.members)
    got = sorted(([m.entry.name, m.entry.uri, m.entry.type_name] for m in group.members),
                 key=lambda x: x[1])
    assert got == expected["members"]
    assert group.metadata == expected["metadata"]
    first = doc.root["__group"][_details_files(g)[0]].resolve("Generic tile/Tile/Group details")
    assert all(c.display.endswith("superseded: only the latest version-1 file counts")
               for c in first.iter_children() if c.name.startswith("Member "))
    members = {n.data.member_path: n for n in open_all(doc.root)}
    assert members["arr2"].data.member is None  # removed by the second write
    assert verify(doc) == [] and doc.diagnostics() == []
    cov = doc.coverage()
    on_disk = {os.path.relpath(os.path.join(d, f), g) for d, _, fs in os.walk(g) for f in fs}
    assert set(cov) == on_disk and {n: c for n, c in cov.items() if c[0] != c[1]} == {}
    view = member_document(doc, "one")
    assert PLUGIN.values(view, "a")[0]["values"] == list(np.arange(10.0))


def test_verify_on_workers_equals_one_process(made, capsys):
    """`--workers` on a group: the same findings, in the same order (a group is verified
    member by member in the calling process)."""
    import json

    from arrayscope.explorer.cli import main

    g, _listed, _meta = made
    assert main(["verify", g, "--json"]) == 1
    one = json.loads(capsys.readouterr().out)
    assert main(["verify", g, "--json", "--workers", "2"]) == 1
    two = json.loads(capsys.readouterr().out)
    assert two == one and len(one["findings"]) == 3

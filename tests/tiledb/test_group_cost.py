"""Cost proportional to what is distinct: a group whose members all name one array opens
that array once, and `dump` walks a tree as deep as the dataset makes it without recursion."""
from __future__ import annotations

import io
import os

import numpy as np
import tiledb

from arrayscope import formats
from arrayscope.explorer.commands.dump import _dump_text
from arrayscope.formats.core.node import Node
from arrayscope.formats.core.verify import verify
from arrayscope.formats.tiledb.model.group_walk import verify_group
from arrayscope.formats.tiledb.parse import array as array_mod

MEMBERS = 2_000   # the count opened is what matters: one, whatever the members


def test_members_naming_one_array_open_it_once(tmp_path, monkeypatch):
    g = str(tmp_path / "g")
    tiledb.Group.create(g)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.int32))
    tiledb.Array.create(f"{g}/arr", tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int64)]))
    with tiledb.open(f"{g}/arr", "w") as A:
        A[:] = np.arange(10)
    with tiledb.Group(g, "w") as G:
        for i in range(MEMBERS):
            G.add("arr", name=f"m{i:05d}", relative=True)
    with tiledb.Group(g) as G:   # the library lists every member, all at the one array
        assert len(G) == MEMBERS and G[f"m{MEMBERS - 1:05d}"].uri == G["m00000"].uri
    opened = []
    real = array_mod.open_array_dir

    def counting(document, path, ctx=None):
        opened.append(path)
        return real(document, path, ctx)
    monkeypatch.setattr(array_mod, "open_array_dir", counting)
    doc = formats.open(g)
    members = [c for c in doc.root.iter_children() if c.name.startswith("m")]
    assert len(members) == MEMBERS
    assert members[1].display == "array member · the same array as member 'm00000': opened and shown there"
    findings = verify_group(doc) + verify(doc)
    assert len(opened) <= 2 and set(opened) == {f"{g}/arr"}   # one array, not one a member
    assert [f for f in findings if getattr(f, "status", "") == "error"] == []


def test_dump_walks_a_tree_deeper_than_recursion_allows():
    root = node = Node("n0", "dir", None, 0, 0)
    for i in range(1, 5000):
        node = node.add(Node(f"n{i}", "dir", None, 0, 0))
    out = io.StringIO()
    _dump_text(root, out, 0, None)
    lines = out.getvalue().splitlines()
    assert len(lines) == 5000 and lines[-1] == " " * 2 * 4999 + "n4999 <dir> @0+0"
    out = io.StringIO()
    _dump_text(root, out, 0, 3)
    assert out.getvalue().splitlines()[-1] == "      n3 <dir> @0+0"


# ---- many details files ---------------------------------------------------------------
DETAILS_FILES, ENTRIES = 1_000, 20


def _many_details(root: str) -> str:
    """A group whose `__group/` holds DETAILS_FILES details files of ENTRIES entries each:
    libtiledb writes two (one commit adds ENTRIES members, the next removes them), the others
    are copies of those two under later timestamps (the bytes are libtiledb's; 1 000 commits
    through tiledb-py cost ~15 CPU-s). The last file adds: the library lists ENTRIES members."""
    import shutil
    import time
    import uuid

    g = os.path.join(root, "g")
    tiledb.Group.create(g)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.int32))
    tiledb.Array.create(f"{g}/arr", tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int64)]))
    d = os.path.join(g, "__group")
    with tiledb.Group(g, "w") as G:
        for i in range(ENTRIES):
            G.add("arr", name=f"m{i:03d}", relative=True)
    (add,) = os.listdir(d)
    time.sleep(0.01)   # the removal's timestamp after the addition's
    with tiledb.Group(g, "w") as G:
        for i in range(ENTRIES):
            G.remove(f"m{i:03d}")
    (remove,) = set(os.listdir(d)) - {add}
    t = int(remove.split("_")[2])
    assert t > int(add.split("_")[2])
    for i in range(DETAILS_FILES - 2):   # add, remove, add, ..., add
        t += 1
        shutil.copy(os.path.join(d, (remove, add)[i % 2 == 0 or i == DETAILS_FILES - 3]),
                    os.path.join(d, f"__{t}_{t}_{uuid.uuid4().hex}_2"))
    # a reader opens at now and leaves out later files: wait until the last one is past
    time.sleep(max(0.0, (t + 50) / 1000 - time.time()))
    with tiledb.Group(g) as G:
        assert len(G) == ENTRIES
    return g


def test_details_files_are_read_without_nodes_and_shared(tmp_path):
    """At open a details file's members are read without nodes (its tree is built when
    shown), and entries written alike are one object: 20 000 entries, 40 objects."""
    g = _many_details(str(tmp_path))
    doc = formats.open(g)
    group = doc.model
    files = doc.root.find("__group")
    assert len(group.details) == DETAILS_FILES == len(list(files.iter_children()))
    assert all(f.pending for f in files.iter_children())   # no entry node built
    assert sorted(m.name for m in group.members) == [f"m{i:03d}" for i in range(ENTRIES)]
    entries = [e for _f, gd in group.details for e in gd.members]
    assert len(entries) == DETAILS_FILES * ENTRIES and len({id(e) for e in entries}) == 2 * ENTRIES
    last = files.child(DETAILS_FILES - 1)      # shown: the tree an eager parse makes
    built = [c for c in last.walk(expand_lazy=True) if c.name.startswith("Member ")]
    assert sorted(b.display for b in built) == [f"'m{i:03d}' array → arr (relative) · in effect"
                                                for i in range(ENTRIES)]
    assert files.child(0).find("Generic tile") is not None


def test_many_details_files_cost_what_they_hold(tmp_path):
    """`dump` and `verify` of 1 000 details files (20 000 entries): each file's tree is
    built, shown or checked, and released, so the peak is the program's own plus one file
    (every file held, 4.4 KB an entry: dump 119 MB, verify 204 MB here; 2.0 GB and 3.96 GB
    with 450 entries a file), and the CPU is what the entries cost once. Measured: dump
    2.6 CPU-s 37 MB, verify 2.3 CPU-s 41 MB (2 cores); the bounds are ~2× that."""
    from tests.support.child_cost import command_cost

    g = _many_details(str(tmp_path))
    report = str(tmp_path / "cost.json")
    for command, cpu_bound in (("dump", 6.0), ("verify", 5.0)):
        rc, cpu, peak_mb = command_cost([command, g], report)
        assert rc == 0, command
        assert cpu < cpu_bound and peak_mb < 80, (command, cpu, peak_mb)


def test_members_read_without_nodes_are_the_parsed_ones(tmp_path):
    """On every committed details file (tiledbsoma 2.3, libtiledb 2.12's version 1), the
    members read without nodes are the ones the annotated parse reads; a file cut short
    or with a flag that is not 0/1 is not read that way (it is parsed at open, where it
    shows what is wrong)."""
    import glob

    from arrayscope.formats.tiledb.parse.decode import decode_generic_tile
    from arrayscope.formats.tiledb.parse.group_details import parse_group_details_file, read_group_details

    here = os.path.dirname(os.path.dirname(__file__))
    files = sorted(glob.glob(os.path.join(here, "data", "**", "__group", "__*"), recursive=True))
    assert len(files) >= 10
    for path in files:
        doc = formats.open(path)
        src = doc.open_source(path)
        payload, _enc = decode_generic_tile(src, 0)
        fast = read_group_details(payload, {})
        parsed = parse_group_details_file(doc, src).data
        assert fast is not None and fast == parsed and parsed.members, path
    flag = payload.rfind(b"\x00")   # the last member's last byte: its Deleted (v2) or name flag
    for bad in (payload[:-1], payload[:flag] + b"\x02" + payload[flag + 1:], payload + b"\0"):
        assert read_group_details(bad, {}) is None

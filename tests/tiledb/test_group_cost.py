"""Cost proportional to what is distinct: a group whose members all name one array opens
that array once, and `dump` walks a tree as deep as the dataset makes it without recursion."""
from __future__ import annotations

import io

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

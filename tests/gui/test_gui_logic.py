"""The window's Qt-free helpers: byte → node index, search, offsets, interpretations."""
from __future__ import annotations

import struct

import pytest

from arrayscope.formats.core.node import LazyChildren, Node
from arrayscope.formats.core.source import BytesSource


def _tree():
    src = BytesSource(bytes(range(256)) * 4, "t")
    root = Node("root", "struct", src, 0, 1024)
    hdr = Node("Header", "struct", src, 0, 16)
    hdr.add(Node("Magic", "field", src, 0, 4))
    hdr.add(Node("Count", "field", src, 4, 4))
    hdr.add(Node("Pad", "padding", src, 8, 8))
    root.add(hdr)
    arr = Node("Items", "array", src, 16, 800)
    arr.set_lazy(LazyChildren(100, lambda i: Node(f"{i + 1}", "field", src, 16 + 8 * i, 8)))
    root.add(arr)
    root.add(Node("Tail", "bytes", src, 816, 208))
    return src, root, arr


def test_node_at_finds_deepest_and_lazy_children():
    from arrayscope.explorer.intervals import DocumentIndex, child_position

    src, root, arr = _tree()
    idx = DocumentIndex(root)
    assert idx.node_at(src, 5).name == "Count"
    assert idx.node_at(src, 16 + 8 * 42 + 7).name == "43"
    assert idx.node_at(src, 1000).name == "Tail"
    assert child_position(arr, arr.child(77)) == 77
    leaves = list(idx.for_source(src).leaves_in(0, 20))
    assert [n.name for n in leaves] == ["Magic", "Count", "Pad", "Items"]


def test_node_at_non_uniform_lazy_uses_binary_search():
    from arrayscope.explorer.intervals import DocumentIndex

    src = BytesSource(bytes(1000), "s")
    root = Node("r", "struct", src, 0, 1000)
    sizes = [1 + (i % 7) for i in range(100)]
    starts = [sum(sizes[:i]) for i in range(100)]
    arr = Node("var", "array", src, 0, sum(sizes))
    arr.set_lazy(LazyChildren(100, lambda i: Node(f"v{i}", "field", src, starts[i], sizes[i]), uniform=False))
    root.add(arr)
    idx = DocumentIndex(root)
    assert idx.node_at(src, starts[63] + sizes[63] - 1).name == "v63"


@pytest.mark.parametrize("text,expect", [("0x10", 16), ("16", 16), ("10h", 16), ("+4", 104),
                                         ("-0x4", 96), ("end", 1000), ("end-1", 999)])
def test_parse_offset(text, expect):
    from arrayscope.explorer.search import parse_offset

    assert parse_offset(text, 100, 1000) == expect


def test_find_forward_backward_and_across_chunks(monkeypatch):
    from arrayscope.explorer import search

    monkeypatch.setattr(search, "CHUNK", 7)
    src = BytesSource(b"....abc.....abc...", "f")
    assert search.find(src, b"abc", 0) == 4
    assert search.find(src, b"abc", 5) == 12
    assert search.find(src, b"abc", 13) == 4  # wraps
    assert search.find(src, b"abc", 12, backward=True) == 4
    assert search.find(src, b"zzz", 0) is None
    assert search.pattern("Hex", "0A 0b") == b"\n\x0b"
    assert search.pattern("u32", "258", big_endian=True) == struct.pack(">I", 258)
    with pytest.raises(search.PatternError):
        search.pattern("Hex", "abc")


def test_interpretations():
    from arrayscope.explorer.interpret import interpretations

    data = struct.pack("<q", 1_700_000_000_000)
    rows = {r[0]: r for r in interpretations(data, "ms")}
    assert rows["i64"][1] == "1700000000000"
    assert rows["i64 as ms timestamp"][1].startswith("2023-11-14 22:13:20")
    assert rows["TileDB datetime [ms]"][1].startswith("2023-11-14T22:13:20")
    assert rows["u8"][1] == str(data[0])


def test_copy_formats():
    from arrayscope.explorer import copyfmt

    assert copyfmt.as_hex(b"\x01\xff") == "01 ff"
    assert "0x01, 0xff" in copyfmt.as_c_array(b"\x01\xff")
    assert copyfmt.as_python(b"\x01") == "b'\\x01'"

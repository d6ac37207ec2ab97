"""The engine core: sources, cursor, nodes, coverage — on hand-made bytes and random bytes."""
import os
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrayscope.formats.core.cursor import Cursor, ParseStop
from arrayscope.formats.core.engine import coverage, diagnostics, run_parser
from arrayscope.formats.core.fielddoc import FieldDoc
from arrayscope.formats.core.node import ERROR, WARNING, Node, to_json
from arrayscope.formats.core.source import BytesSource, FileSource


def test_file_source_is_mmapped_read_only_and_clamped(tmp_path):
    p = tmp_path / "f.bin"
    big = FileSource.PREAD_MAX + FileSource.BLOCK
    p.write_bytes(bytes(range(10)) + bytes(big))
    s = FileSource(str(p))
    assert s.size == 10 + big
    assert s.read(8, 2) == bytes([8, 9])
    assert s.read(s.size - 1, 100) == b"\0"      # clamped at the end
    assert s.read(s.size + 10, 4) == b""
    assert s.array(2, 4, "<u2").tolist() == [0x0302, 0x0504, 0x0706, 0x0908]
    assert s._mm is None                          # small windows are read, not mapped
    assert len(s.view(0, s.size)) == s.size       # a large one is mapped
    assert s._mm is not None
    try:
        s._mm[0] = 1
        raise AssertionError("mapping must be read-only")
    except TypeError:
        pass
    s.close()


def test_empty_file_source(tmp_path):
    p = tmp_path / "empty"
    p.write_bytes(b"")
    s = FileSource(str(p))
    assert s.size == 0 and s.read(0, 4) == b""


def test_cursor_reads_typed_fields_and_enums():
    src = BytesSource(struct.pack("<IQbd", 7, 1 << 40, -3, -0.0) + b"\x09", "t")
    root = Node("r", "struct", src, 0, src.size)
    c = Cursor(src, node=root)
    assert c.u32("A").value == 7
    assert c.u64("B").value == 1 << 40
    assert c.i8("C").value == -3
    n = c.f64("D")
    assert n.display == "-0.0"
    e = c.u8("Filter type", enum={9: "BYTESHUFFLE"})
    assert (e.value, e.display, e.kind) == (9, "9 (BYTESHUFFLE)", "enum")
    assert c.at_end()


def test_short_read_is_a_located_error_node():
    src = BytesSource(b"\x01\x02\x03", "t")
    root = run_parser("r", "file", src, lambda c: (c.u16("first"), c.u32("second")))
    errs = [n for n in root.walk() if n.status == ERROR]
    assert len(errs) == 1
    assert errs[0].offset == 2 and errs[0].size == 1
    assert "expected uint32 (4 bytes), found 1" in errs[0].message
    assert coverage(root, src) == (3, 3)


def test_impossible_length_never_allocates():
    src = BytesSource(struct.pack("<I", 0xFFFFFFFF) + b"abc", "t")
    root = run_parser("r", "file", src, lambda c: c.string("name", c.length("u32", "len").value))
    length = root["len"]
    assert length.status == ERROR and "only 3 bytes remain" in length.message
    assert coverage(root, src) == (7, 7)


def test_group_with_size_contains_failure_and_continues():
    src = BytesSource(b"\x01\x00" + b"\xff" * 6 + b"\x05", "t")

    def body(c):
        c.group("G", lambda g: g.u64("too big for 4"), size=4)
        c.raw("after", 4)
        c.u8("last")
    root = run_parser("r", "file", src, body)
    assert root["G"].size == 4 and root["G"].children[0].status == ERROR
    assert root["last"].value == 5
    assert coverage(root, src) == (9, 9)


def test_gaps_become_unparsed_warnings():
    src = BytesSource(bytes(10), "t")
    root = run_parser("r", "file", src, lambda c: c.u32("x"))
    gap = root.children[-1]
    assert gap.kind == "unparsed" and gap.status == WARNING and (gap.offset, gap.size) == (4, 6)


def test_parser_bug_becomes_error_node():
    src = BytesSource(bytes(8), "t")

    def bad(c):
        c.u32("x")
        raise ZeroDivisionError("boom")
    root = run_parser("r", "file", src, bad)
    assert any("ZeroDivisionError" in (n.message or "") for n in root.walk())


def test_lazy_children_and_json():
    src = BytesSource(np.arange(5000, dtype="<u8").tobytes(), "t")
    root = run_parser("r", "file", src, lambda c: c.array("Tile offsets", "u64", 5000))
    arr = root["Tile offsets"]
    assert arr.is_lazy and arr.child_count() == 5000
    assert arr.child(4999).value == 4999 and arr.child(4999).offset == 4999 * 8
    assert arr.value is None  # too long to copy into value
    j = to_json(root, lambda s: s.name, max_depth=1)
    assert j["children"][0]["name"] == "Tile offsets" and j["children"][0]["children"] == []


def test_fielddoc_presence():
    d = FieldDoc("Allows dups", added_in=5)
    assert not d.present_in(4) and d.present_in(5)
    assert "absent in this file (version 4)" in d.presence_text(4)
    assert FieldDoc("x", removed_in=5).present_in(5) is False


def test_diagnostics_collects_warnings_and_errors():
    src = BytesSource(b"\x07", "t")
    root = run_parser("r", "file", src, lambda c: (c.boolean("flag"), c.u8("more")))
    kinds = sorted(n.status for n in diagnostics(root))
    assert kinds == [ERROR, WARNING]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_cursor_never_raises_on_random_bytes(data):
    src = BytesSource(data, "r")

    def body(c):
        n = c.length("u32", "count", 5).value
        for i in range(n):
            c.group(f"item {i}", lambda g: (g.u8("t", enum={1: "a"}),
                                            g.string("s", g.length("u32", "len").value)))
        c.array("rest", "u16", c.remaining // 2)
    root = run_parser("r", "file", src, body)
    assert coverage(root, src) == (len(data), len(data))


def test_depth_limit_gives_warning_leaf_not_recursion_error():
    src = BytesSource(bytes(1000), "t")

    def nest(c):
        c.u8("byte")
        c.group("inner", nest)
    root = run_parser("r", "file", src, nest)
    hit = [n for n in root.walk() if n.name == "depth limit reached"]
    assert len(hit) == 1 and hit[0].status == WARNING and "64 levels" in hit[0].message
    assert coverage(root, src) == (1000, 1000)
    assert not [n for n in root.walk() if n.status == ERROR]


def test_node_limit_gives_warning_leaf():
    from arrayscope.formats.core.cursor import Limits

    src = BytesSource(bytes(5000), "t")
    root = Node("r", "file", src, 0, src.size)
    cur = Cursor(src, node=root, limits=Limits(max_nodes=100))
    try:
        while not cur.at_end():
            cur.u8("b")
    except ParseStop:
        pass
    last = root.children[-1]
    assert last.name == "node limit reached" and last.status == WARNING
    assert last.offset == 100 and last.end == 5000


def test_invalid_utf32_becomes_replacement_character():
    from arrayscope.formats.core.unicode import invalid_count, safe_unicode

    raw = b"\xff\xff\xff\xff" + b"a\x00\x00\x00" + b"\x00\xd8\x00\x00" + b"b\x00\x00\x00"
    arr = np.frombuffer(raw, dtype="<U2")
    assert invalid_count(arr) == 2
    fixed = safe_unicode(arr)
    assert fixed.tolist() == ["\ufffda", "\ufffdb"]
    assert safe_unicode(np.array(["ok"])).tolist() == ["ok"]
    rec = np.frombuffer(raw, dtype=[("s", "<U1"), ("t", "<U1")])
    assert safe_unicode(rec["s"]).tolist() == ["\ufffd", "\ufffd"]


def test_file_removed_after_open_reads_what_was_opened(tmp_path):
    """The descriptor the open checked (regular, beneath the root) is the one read: a file
    removed after its open still reads the bytes it held, and no path is opened again."""
    p = tmp_path / "gone.bin"
    p.write_bytes(b"\x01\x02\x03\x04")
    s = FileSource(str(p))
    p.unlink()
    root = run_parser("r", "file", s, lambda c: c.u32("x"))
    assert not [n for n in root.walk() if n.status == ERROR]
    assert [n.value for n in root.walk() if n.name == "x"] == [0x04030201]


def test_a_file_source_nobody_holds_is_freed_and_its_descriptor_closed(tmp_path):
    """The LRU of open files bounds descriptors; it never keeps a source alive (a closed
    document's sources outlived it there: test_window_document_released)."""
    import gc
    import weakref

    p = tmp_path / "held.bin"
    p.write_bytes(b"abcd")
    s = FileSource(str(p))
    assert bytes(s.view(0, 4)) == b"abcd"
    fd, ref = s._fd, weakref.ref(s)
    assert fd is not None and id(s) in FileSource._mapped
    key = id(s)
    del s
    gc.collect()
    assert ref() is None and key not in FileSource._mapped
    with pytest.raises(OSError):
        os.fstat(fd)

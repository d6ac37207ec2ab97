"""Diff (pytest-qt, offscreen): differing ranges of two sources (blocks, joins, tails)
match a direct comparison; the diff tab of two fragments' files lists them, marks them in
both views and selects a range in both."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from arrayscope.explorer.bytediff import DiffRange, diff_ranges  # noqa: E402
from arrayscope.explorer.diffs import same_file_elsewhere  # noqa: E402
from arrayscope.formats.core.source import BytesSource  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import SAMPLES  # noqa: E402
from tests.support.waits import WAIT_MS


def _direct(a: bytes, b: bytes, join: int):
    """Reference: differing offsets, runs joined when the gap is at most `join`."""
    n = min(len(a), len(b))
    idx = [i for i in range(n) if a[i] != b[i]]
    out = []
    for i in idx:
        if out and i - out[-1][1] <= join:
            out[-1][1] = i + 1
        else:
            out.append([i, i + 1])
    res = [DiffRange(s, e) for s, e in out]
    if len(a) != len(b):
        res.append(DiffRange(n, max(len(a), len(b)), tail=True))
    return res


def test_diff_ranges_match_direct_comparison():
    rng = np.random.default_rng(5)
    a = bytearray(rng.integers(0, 256, 5000, dtype=np.uint8).tobytes())
    b = bytearray(a)
    for off in (0, 63, 64, 65, 70, 127, 128, 1000, 1003, 4999):
        b[off] ^= 0x5A
    b += b"tail!"
    for join in (0, 4):
        got = list(diff_ranges(BytesSource(bytes(a), "a"), BytesSource(bytes(b), "b"), join=join, block=64))
        assert got == _direct(bytes(a), bytes(b), join)
    assert list(diff_ranges(BytesSource(bytes(a), "a"), BytesSource(bytes(a), "a"))) == []


def test_diff_two_fragments_files(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    frags = list(win.session.document.root.find("__fragments").iter_children())
    a0 = frags[0].find("a0.tdb")
    others = same_file_elsewhere(a0)
    assert [o.parent.name for o in others] == [frags[1].name]
    labels = []
    menu = win.context_menus.node_menu(a0)
    for act in menu.actions():
        if act.menu() is not None and act.text() == "Compare with":
            labels = [x.text() for x in act.menu().actions()]
    assert labels == [f"{frags[1].name}/a0.tdb", "Another file…"]
    dv = win.diffs.compare(a0.source, others[0].source)
    if not dv.done:
        with qtbot.waitSignal(dv.finished, timeout=WAIT_MS):
            pass
    x = open(a0.source.path, "rb").read()
    y = open(others[0].source.path, "rb").read()
    assert dv.ranges == _direct(x, y, 4)
    assert len(dv.ranges) > 0 and dv.table.rowCount() == len(dv.ranges)
    assert win.tabs.currentWidget() is dv
    assert dv.left.marks == [(r.start, r.end, "warning") for r in dv.ranges]
    assert dv.right.marks == dv.left.marks
    assert "differing range" in dv.summary.text()
    # a row selects the range in both views; scrolling one scrolls the other
    row = max(i for i, r in enumerate(dv.ranges) if not r.tail)
    dv.table.setCurrentCell(row, 0)
    r = dv.ranges[row]
    assert dv.left.selection() == (r.start, r.end)
    assert dv.right.selection() == (r.start, r.end)
    dv.left.set_top_row(3)
    assert dv.right.top_row == min(3, dv.right.max_top)


def test_structural_diff_names_fields_and_titles_panes_by_path(qtbot, tmp_path):
    """Issue 28 item 9: comparing a file with the same file of another fragment lists the
    differing fields by path with both values (tiledb-py's own non-empty domains differ
    between the two writes), and the panes are titled with each file's path in the
    dataset (both read `a1.tdb` before)."""
    import tiledb

    uri = str(tmp_path / "two")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int64)]))
    for t, lo in ((1, 0), (2, 50)):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[lo:lo + 10] = np.arange(10) + lo
    win = open_window(qtbot, tmp_path)
    assert win.open_path(uri, sync=True)
    f1, f2 = list(win.session.document.root.find("__fragments").iter_children())
    left, right = f1.find("__fragment_metadata.tdb"), f2.find("__fragment_metadata.tdb")
    dv = win.diffs.compare_nodes(left, right)
    assert dv.title_a.text().startswith(f"<b>{left.path()}</b>")
    assert dv.title_b.text().startswith(f"<b>{right.path()}</b>") and left.path() != right.path()
    assert dv.lists.tabText(0).startswith("Fields") and dv.field_table.rowCount() == len(dv.fields)
    # the non-empty domain tiledb-py reports for each fragment is a field that differs
    doms = [tuple(int(x) for x in fi.nonempty_domain[0]) for fi in tiledb.array_fragments(uri)]
    assert doms == [(0, 9), (50, 59)]
    named = {d.path: (d.shown(d.left), d.shown(d.right)) for d in dv.fields}
    dom_rows = [p for p, (x, y) in named.items() if "0" in x and "50" in y and "omain" in p]
    assert dom_rows, named
    # a field's row selects its own bytes on each side
    row = next(i for i, d in enumerate(dv.fields) if d.path == dom_rows[0])
    dv.field_table.setCurrentCell(row, 0)
    d = dv.fields[row]
    assert dv.left.selection() == (d.left.offset, d.left.end)
    assert dv.right.selection() == (d.right.offset, d.right.end)
    for x in dv.fields:   # every listed field really differs
        assert x.left is None or x.right is None or x.left.display_text() != x.right.display_text() \
            or x.left.source.read(x.left.offset, x.left.size) != x.right.source.read(x.right.offset, x.right.size)


def test_compare_files_titles_tell_the_fragments_apart(tmp_path):
    from arrayscope.explorer.diffs import distinct_titles

    a = str(tmp_path / "arr" / "__fragments" / "f1" / "a1.tdb")
    b = str(tmp_path / "arr" / "__fragments" / "f2" / "a1.tdb")
    assert distinct_titles(a, b) == (os.path.join("f1", "a1.tdb"), os.path.join("f2", "a1.tdb"))


def test_compare_files_lists_fields_of_any_two_files(qtbot, tmp_path):
    """Issue 28: File ▸ Compare Files on two files picked by path, one in the open array and
    one in another array that is not open, lists the differing fields by name (not only the
    bytes), and titles the panes with distinct names."""
    import tiledb

    def array(name: str, lo: int) -> str:
        uri = str(tmp_path / name)
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom,
                                                    attrs=[tiledb.Attr("a", dtype=np.int64)]))
        with tiledb.open(uri, "w", timestamp=1) as A:
            A[lo:lo + 10] = np.arange(10) + lo
        return uri

    one, two = array("one", 0), array("two", 50)

    def meta(uri: str) -> str:
        frag = os.listdir(os.path.join(uri, "__fragments"))[0]
        return os.path.join(uri, "__fragments", frag, "__fragment_metadata.tdb")

    win = open_window(qtbot, tmp_path)
    assert win.open_path(one, sync=True)
    dv = win.diffs.compare_paths(meta(one), meta(two))
    assert dv is not None and dv.fields, "no field listed"
    assert dv.lists.tabText(0).startswith("Fields")
    assert dv.title_a.text() != dv.title_b.text()
    assert "one" in dv.title_a.text() and "two" in dv.title_b.text()
    named = {d.path: (d.shown(d.left), d.shown(d.right)) for d in dv.fields}
    assert any("0" in x and "50" in y and "omain" in p for p, (x, y) in named.items()), named
    # two files of the same array picked by path (not through the tree)
    assert win.open_path(two, sync=True)
    with tiledb.open(two, "w", timestamp=2) as A:
        A[80:90] = np.arange(10)
    assert win.open_path(two, sync=True)
    frags = sorted(os.listdir(os.path.join(two, "__fragments")))
    a, b = (os.path.join(two, "__fragments", f, "__fragment_metadata.tdb") for f in frags)
    dv = win.diffs.compare_paths(a, b)
    assert dv.fields and dv.title_a.text() != dv.title_b.text()

"""Long names at 1024×700 (issue 28 item 4, pytest-qt offscreen, arrays and groups tiledb-py
writes): fragment names lose their uuid's middle first, so their timestamp stays whole and
two fragments are told apart (Qt's middle elision showed `__17000…bf0e_22` for both); the
Value column keeps a readable share; Diagnostics' Source keeps a member's path and its file
(`ms/RNA/X/data/…/a0.tdb`, not `ms/…/a0.tdb` or `…/a0.tdb`) and Node the path in the file."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tiledb  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QFontMetrics  # noqa: E402

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from arrayscope.explorer.diagnostics import node_in_source  # noqa: E402
from arrayscope.explorer.elide import elide_path, elide_words  # noqa: E402
from arrayscope.explorer.windowfit import share_docks  # noqa: E402
from tests.support.groups import group_with_damaged_member  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS  # noqa: E402

T1, T2 = 1700000000001, 1700000000002
FRAG = "__1700000000001_1700000000001_484de469588c17395714346bf0e1f2a3_22"
MEMBER = "ms/RNA/X/data/__fragments/" + FRAG + "/a0.tdb"


@pytest.fixture
def fm(qapp):
    return QFontMetrics(qapp.font())


def test_fragment_name_keeps_its_timestamp_and_uuid_ends(fm):
    other = FRAG.replace("_1700000000001_1700000000001_484d", "_1700000000002_1700000000002_484d")
    short = "__1700000000001_1…1_4…3_22"   # every word after the first at two characters
    for width in (fm.horizontalAdvance(short), fm.horizontalAdvance(FRAG) * 2 // 3):
        a, b = elide_words(FRAG, fm, width), elide_words(other, fm, width)
        assert fm.horizontalAdvance(a) <= width and a != b
        assert a.startswith("__1700000000001_") and b.startswith("__1700000000002_")
        assert a.endswith("_22") and "…" in a
    assert elide_words(FRAG, fm, fm.horizontalAdvance(short)) == short
    assert elide_words(FRAG, fm, 10_000) == FRAG                      # fits: unchanged
    assert elide_words("a0.tdb", fm, 10_000) == "a0.tdb"
    # the uuid goes first: while it has characters to give, both timestamps stay whole
    wide = elide_words(FRAG, fm, fm.horizontalAdvance("__1700000000001_1700000000001_48…a3_22"))
    assert wide == "__1700000000001_1700000000001_48…a3_22"
    # narrower than that: the first timestamp still leads, whole
    tight = elide_words(FRAG, fm, fm.horizontalAdvance("__1700000000001_1…"))
    assert tight.startswith("__1700000000001") and not tight[15:16].isdigit(), tight


def test_member_path_keeps_the_member_and_the_file(fm):
    assert elide_path(MEMBER, fm, fm.horizontalAdvance("ms/RNA/X/data/…/a0.tdb")) \
        == "ms/RNA/X/data/…/a0.tdb"
    one = elide_path(MEMBER, fm, fm.horizontalAdvance("ms/RNA/X/data/__fragments/…/a0.tdb"))
    assert one == "ms/RNA/X/data/__fragments/…/a0.tdb"               # the fragment first
    narrow = elide_path(MEMBER, fm, fm.horizontalAdvance("ms/RNA/…/a0.tdb"))
    assert narrow.startswith("ms/") and narrow.endswith("/a0.tdb")
    assert elide_path(MEMBER, fm, 10_000) == MEMBER
    assert node_in_source(f"exp/{MEMBER}/Tile 1/Chunk 1", MEMBER) == "Tile 1/Chunk 1"
    assert node_in_source(f"exp/x{MEMBER}/Tile 1", MEMBER) == f"exp/x{MEMBER}/Tile 1"
    assert node_in_source("(verify check)", MEMBER) == "(verify check)"


@pytest.fixture(scope="module")
def two_fragments(tmp_path_factory):
    """Dense int64, written twice by tiledb-py: fragments at T1 and T2 (their names differ
    in the timestamps and the uuid)."""
    path = str(tmp_path_factory.mktemp("elide") / "arr")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=10, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False,
                                                 attrs=[tiledb.Attr("a", dtype=np.int64)]))
    for t in (T1, T2):
        with tiledb.open(path, "w", timestamp=t) as A:
            A[:] = np.arange(10, dtype=np.int64) + t % 10
    return path


def _at_1024(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: (win.width(), win.height()) == (1024, 700), timeout=WAIT_MS)
    return win


def test_tree_fragments_told_apart_and_values_readable_at_1024_by_700(qtbot, tmp_path,
                                                                      two_fragments):
    win = _at_1024(qtbot, tmp_path)
    assert win.open_path(two_fragments, sync=True)
    share_docks(win)
    frags = list(win.session.document.root["__fragments"].iter_children())
    assert len(frags) == 2
    win.select_node(frags[0]["a0.tdb"])          # expands __fragments
    qtbot.wait(50)
    view, model = win.tree.view, win.tree.model
    vw = view.viewport().width()
    assert vw < 420                              # the narrow tree of a 1024-px screen
    shown = []
    for frag, t in zip(frags, (T1, T2)):
        idx = model.index_for_node(frag)
        text = win.tree.name_delegate.shown(view, idx)
        assert text != frag.name                 # it does not fit: elided
        assert text.startswith(f"__{t}") and not text[len(str(t)) + 2].isdigit(), text
        assert view.fontMetrics().horizontalAdvance(text) <= view.columnWidth(0)
        shown.append(text)
    assert shown[0] != shown[1]
    # the Value column: a fragment's value keeps its date (ten characters or more; it showed 1-5)
    value = model.data(model.index_for_node(frags[0]).siblingAtColumn(1))
    assert len(value) > 12
    cut = view.fontMetrics().elidedText(value, view.textElideMode(), view.columnWidth(1) - 8)
    assert len(cut.rstrip("…").strip()) >= 10, cut
    assert view.header().sectionViewportPosition(1) + view.columnWidth(1) <= vw + 1


def test_diagnostics_source_shows_the_member_path_at_1024_by_700(qtbot, tmp_path):
    win = _at_1024(qtbot, tmp_path)
    g = group_with_damaged_member(tmp_path, "zstd")
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(g, sync=True)
    share_docks(win)
    win.d_diag.raise_()
    diag = win.diag
    qtbot.waitUntil(lambda: diag.proxy.rowCount() > 0, timeout=WAIT_MS)
    frag = os.listdir(os.path.join(g, "ms", "X", "__fragments"))[0]
    source = f"ms/X/__fragments/{frag}/a0.tdb"
    rows = [r for r in range(diag.proxy.rowCount())
            if diag.proxy.index(r, 2).data() == source]
    assert rows, "the damaged chunk's finding, in its member's file"
    idx = diag.proxy.index(rows[0], 2)
    view = diag.view
    text = diag.path_delegate.shown(view, idx)
    assert text.startswith("ms/X/") and text.endswith("/a0.tdb"), text
    assert view.fontMetrics().horizontalAdvance(text) <= view.columnWidth(2)
    assert source in idx.data(Qt.ItemDataRole.ToolTipRole)
    # Node: the path inside that file (the file is in Source)
    node = diag.proxy.index(rows[0], 4).data()
    assert node.startswith("Tile ") and "Chunk 1" in node, node


def test_soma_member_path_in_diagnostics_source_at_1024_by_700(qtbot, tmp_path):
    """The damaged SOMA experiment of the screenshots (tiledbsoma wrote it; a zstd frame of
    ms/RNA/X/data's a0.tdb changed): its rows' Source reads `ms/RNA/X/data/…/a0.tdb`."""
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "docs", "screenshots"))
    from real_app import damaged_soma

    win = _at_1024(qtbot, tmp_path)
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(damaged_soma(str(tmp_path)), sync=True)
    share_docks(win)
    win.d_diag.raise_()
    diag = win.diag
    qtbot.waitUntil(lambda: diag.proxy.rowCount() > 0, timeout=WAIT_MS)
    rows = [r for r in range(diag.proxy.rowCount())
            if diag.proxy.index(r, 2).data().startswith("ms/RNA/X/data/__fragments/")]
    assert rows
    for r in rows:
        idx = diag.proxy.index(r, 2)
        assert diag.path_delegate.shown(diag.view, idx) == "ms/RNA/X/data/…/a0.tdb"


def test_a_name_too_long_for_its_words_keeps_its_first_word(fm):
    """Narrower than every word shortened: the middle words go (`…`), the first and the
    last stay while they fit, then the first alone; the end is cut only in a row narrower
    than that (Qt's end elision of the whole name cut the timestamp: `__17955504…`)."""
    from arrayscope.explorer.elide import least_shown

    assert least_shown(FRAG) == "__1700000000001…"
    assert least_shown("a0.tdb") == "a0…" and least_shown("data") == "data"
    for want in ("__1700000000001…_22", "__1700000000001…"):
        assert elide_words(FRAG, fm, fm.horizontalAdvance(want)) == want
    cut = elide_words(FRAG, fm, fm.horizontalAdvance("__17000…"))
    assert fm.horizontalAdvance(cut) <= fm.horizontalAdvance("__17000…")


def test_deep_soma_fragment_rows_keep_their_timestamp_at_1024_by_700(qtbot, tmp_path):
    """The SOMA experiment tiledbsoma wrote, its X/data fragment seven levels down: the
    tree's Name column leaves that row room for its first timestamp whole (it read
    `__17955504…`); the full name stays in the model (and its tooltip)."""
    from tests.support.paths import DATA

    soma = os.path.join(DATA, "soma", "pbmc68k")
    win = _at_1024(qtbot, tmp_path)
    with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
        win.open_path(soma)
    share_docks(win)
    node = win.session.document.root
    for part in ("ms", "RNA", "X", "data", "__fragments"):
        node.ensure_built()
        node = node[part]
    frag = sorted(node.iter_children(), key=lambda n: n.name)[0]
    t1 = frag.name.split("_")[2]
    win.select_node(frag["a0.tdb"])               # expands the tree down to it
    view, model = win.tree.view, win.tree.model
    idx = model.index_for_node(frag)
    qtbot.waitUntil(lambda: view.isExpanded(idx) and
                    view.visualRect(idx).intersects(view.viewport().rect()), timeout=WAIT_MS)
    qtbot.wait(100)
    assert view.viewport().width() < 420          # the narrow tree of a 1024-px screen
    def shown() -> str:
        return win.tree.name_delegate.shown(view, idx)
    # (the docks are shared and the column fitted over a few turns of the event loop)
    qtbot.waitUntil(lambda: shown().startswith(f"__{t1}") and
                    not shown()[len(t1) + 2:len(t1) + 3].isdigit(), timeout=5000)
    text = shown()
    assert text.startswith(f"__{t1}") and text != frag.name, text
    assert not text[len(t1) + 2:len(t1) + 3].isdigit(), text   # the timestamp whole
    assert model.data(idx) == frag.name and frag.name in model.data(
        idx, Qt.ItemDataRole.ToolTipRole)
    # the Value column keeps the start of the fragment's date
    assert view.columnWidth(1) >= 48
    assert view.header().sectionViewportPosition(1) + view.columnWidth(1) <= \
        view.viewport().width() + 1

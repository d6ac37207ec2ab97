"""The window at scale (pytest-qt, offscreen, small arrays libtiledb wrote): an array opens
with one unbuilt node per fragment, a fragment is built when expanded, a byte clicked in a
file not parsed yet selects the deepest node, `--screenshot` cancels the background verify
instead of waiting for it. (How long these take at 10 000 fragments: test_bench_scale.py.)"""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tiledb  # noqa: E402

from tests.support.gui_helpers import open_window  # noqa: E402

FRAGMENTS = 50


@pytest.fixture(scope="module")
def fifty(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("scale") / "fifty")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 10 * FRAGMENTS - 1), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    for i in range(FRAGMENTS):
        with tiledb.open(uri, "w", timestamp=i + 1) as A:
            A[i * 10:(i + 1) * 10] = np.arange(i * 10, (i + 1) * 10, dtype=np.int64)
    return uri


def _built(root) -> int:
    return sum(1 for _ in root.walk())


def _fragment_nodes(win):
    return list(win.session.root["__fragments"].iter_children())


def test_fifty_fragments_open_unbuilt_and_build_on_expansion(qtbot, tmp_path, fifty):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(fifty, sync=True)
    win.verifier.cancel()
    frags = _fragment_nodes(win)
    assert len(frags) == FRAGMENTS
    # the first screen shows the first fragment's metadata: only that fragment is listed
    assert win.current_node.name == "__fragment_metadata.tdb"
    assert win.current_node.parent is frags[0]
    assert sum(f.pending for f in frags) == FRAGMENTS - 1
    # the commits folder (one empty file per write) is listed when expanded, not at open
    commits = win.session.root["__commits"]
    assert commits.pending
    built = _built(win.session.root)
    first = _built(frags[0])              # the file on screen, parsed
    assert built - first < 5 * FRAGMENTS, (built, first)   # about 3 per fragment
    # expanding a fragment in the structure tree lists its files
    target = frags[7]
    model, view = win.tree.model, win.tree.view
    index = model.index_for_node(target)
    assert index.isValid() and target.pending
    view.expand(index)
    model.ensure_fetched(index)
    assert not target.pending
    names = {c.name for c in target.iter_children()}
    assert {"__fragment_metadata.tdb", "a0.tdb"} <= names
    assert model.rowCount(index) == len(names)
    # its files are listed, not parsed: parsing waits until one is shown
    assert all(c.pending for c in target.iter_children() if c.size > 0)
    assert _built(win.session.root) < built + 10
    # expanded, it lists one commit file per write
    index = model.index_for_node(commits)
    view.expand(index)
    model.ensure_fetched(index)
    assert not commits.pending
    assert sum(c.name.endswith(".wrt") for c in commits.iter_children()) == FRAGMENTS
    assert model.rowCount(index) == commits.child_count()


def test_byte_clicked_in_an_unparsed_file_selects_the_deepest_node(qtbot, tmp_path, fifty):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(fifty, sync=True)
    win.verifier.cancel()
    frag = _fragment_nodes(win)[11]
    data = frag["a0.tdb"]                  # listing the fragment, not parsing its files
    assert data.pending
    view = win.tabs.view_for(data.source)  # its bytes on screen, its tree not built
    assert view is not None and data.pending
    offset = data.size - 1                 # the last byte: inside the zstd-compressed chunk
    view.byteClicked.emit(offset)
    node = win.current_node
    assert not data.pending
    assert node is not data and node.source is data.source
    assert node.offset <= offset < node.offset + node.size
    n = node
    while n is not None and n is not data:
        n = n.parent
    assert n is data                       # inside the file clicked
    # the deepest: none of its children of this file holds the byte
    if not node.is_lazy:
        assert not [c for c in node.iter_children() if c.source is data.source
                    and c.offset <= offset < c.offset + c.size]


def test_screenshot_cancels_the_background_verify(tmp_path, fifty, qapp, monkeypatch):
    from arrayscope.explorer import app as A
    from arrayscope.explorer.verifier import Verifier

    runs = []
    cancel = Verifier.cancel

    def counted(self):
        busy = self.busy
        cancel(self)
        runs.append(busy)
    monkeypatch.setattr(Verifier, "cancel", counted)
    out = tmp_path / "shot.png"
    assert A.screenshot(fifty, str(out), None, None) == 0
    assert out.stat().st_size > 0
    # the verify was asked for when the array opened, and cancelled (not awaited) before the
    # picture was taken: nothing of it is left running
    assert True in runs


def test_array_dock_makes_fragment_rows_and_reads_footers_on_expansion(qtbot, tmp_path, fifty,
                                                                       monkeypatch):
    """The Array dock's Fragments row has no children, and no fragment footer was read for
    it, until it is expanded (10 000 fragments: 10 000 footer reads at open); expanding it
    shows each fragment's cell count as tiledb-py reports it."""
    from arrayscope.formats.tiledb.parse import fragment_metadata as fmd

    reads = []
    load = fmd.load_fragment_metadata

    def counted(source, ctx):
        reads.append(source)
        return load(source, ctx)
    monkeypatch.setattr(fmd, "load_fragment_metadata", counted)
    win = open_window(qtbot, tmp_path)
    assert win.open_path(fifty, sync=True)
    win.verifier.cancel()
    top = win.browser.topLevelItem(0)
    rows = {top.child(i).text(0): top.child(i) for i in range(top.childCount())}
    fr = rows["Fragments"]
    assert fr.text(2) == str(FRAGMENTS)
    assert fr.childCount() == 0 and not fr.isExpanded()
    assert reads == []
    fr.setExpanded(True)                   # as a click on its arrow does
    assert fr.childCount() == FRAGMENTS
    assert len(reads) >= FRAGMENTS - 1     # the footers the tree had not parsed yet
    infos = sorted(tiledb.array_fragments(fifty), key=lambda f: f.timestamp_range)
    got = [fr.child(i).text(1).split(" cells")[0] for i in range(FRAGMENTS)]
    assert got == [f"{f.cell_num:,}" for f in infos]
    assert [fr.child(i).data(0, 0x0100).name for i in range(FRAGMENTS)] == \
        [os.path.basename(f.uri.rstrip("/")) for f in infos]
    n = len(reads)
    fr.setExpanded(False)
    fr.setExpanded(True)                   # made once
    assert fr.childCount() == FRAGMENTS and len(reads) == n

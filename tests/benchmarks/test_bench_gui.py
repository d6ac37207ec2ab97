"""GUI performance budget (DESIGN.md), on demand:

    QT_QPA_PLATFORM=offscreen pytest tests/benchmarks/test_bench_gui.py --benchmark-enable -p no:cacheprovider

- open a 1 GiB file and paint the first screen: < 0.5 s, < 100 MiB more resident memory
- paint one hex-view viewport: < 5 ms at offset 0 and at the end of a 10 GiB sparse file
- expand a node with 1 000 000 children: < 50 ms
"""
from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtGui import QImage  # noqa: E402

from tests.support.gui_helpers import open_window  # noqa: E402


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _sparse(path, size):
    with open(path, "wb") as f:
        f.write(b"arrayscope sparse benchmark file")
        f.truncate(size)
    return str(path)


@pytest.fixture
def win(qtbot, tmp_path):
    return open_window(qtbot, tmp_path)


def test_first_paint_of_1gib_file(qtbot, win, tmp_path):
    path = _sparse(tmp_path / "one.bin", 1 << 30)
    qtbot.wait(50)
    rss0 = _rss()
    t0 = time.perf_counter()
    win.open_path(path, sync=True)
    view = win.tabs.current_view()
    img = QImage(view.viewport().size(), QImage.Format_ARGB32)
    view.viewport().render(img)
    secs = time.perf_counter() - t0
    grown = (_rss() - rss0) / 2 ** 20
    print(f"\nfirst paint of 1 GiB: {secs * 1000:.1f} ms, +{grown:.1f} MiB RSS")
    assert secs < 0.5
    assert grown < 100


@pytest.mark.parametrize("where", ["start", "end"])
def test_viewport_paint_10gib(benchmark, qtbot, win, tmp_path, where):
    path = _sparse(tmp_path / "ten.bin", 10 << 30)
    win.open_path(path, sync=True)
    view = win.tabs.current_view()
    if where == "end":
        view.set_cursor(view.size_bytes - 1)
    img = QImage(view.viewport().size(), QImage.Format_ARGB32)

    def paint():
        view.viewport().render(img)

    benchmark.pedantic(paint, rounds=50, iterations=1, warmup_rounds=3)
    mean = benchmark.stats.stats.mean
    print(f"\nviewport paint at {where} of 10 GiB: {mean * 1000:.2f} ms "
          f"({view.visible_rows} rows)")
    assert mean < 0.005


def test_expand_million_children(benchmark, qtbot):
    from PySide6.QtWidgets import QTreeView

    from arrayscope.explorer.treemodel import NodeTreeModel
    from arrayscope.formats.core.node import LazyChildren, Node
    from arrayscope.formats.core.source import BytesSource

    src = BytesSource(bytes(8), "tiny")

    def make():
        root = Node("root", "struct", src, 0, 8)
        arr = Node("Tile offsets", "array", src, 0, 8)
        arr.set_lazy(LazyChildren(1_000_000, lambda i: Node(f"{i + 1}", "field", src, 0, 8, value=i)))
        root.add(arr)
        model = NodeTreeModel(root)
        view = QTreeView()
        view.setUniformRowHeights(True)
        view.setModel(model)
        view.resize(600, 800)
        top = model.index(0, 0)
        model.fetchMore(top)
        view.expand(top)
        return (view, model, model.index(0, 0, top)), {}

    def expand(view, model, idx):
        model.fetchMore(idx)
        view.expand(idx)
        bucket = model.index(0, 0, idx)
        model.fetchMore(bucket)
        view.expand(bucket)
        view.grab()

    benchmark.pedantic(expand, setup=make, rounds=10, iterations=1)
    mean = benchmark.stats.stats.mean
    print(f"\nexpand 1e6 children (+ first bucket, painted): {mean * 1000:.2f} ms")
    assert mean < 0.05

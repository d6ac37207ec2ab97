"""Reads stay inside the dataset whatever changes on disk meanwhile (issue 31, item 2): while
`values` (its bulk reader included: more than compiled.TUNING.min_files fragments) and `verify` run,
a thread keeps swapping fragment folders for links to an outside folder holding canary
values; no canary value is ever printed."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest
import tiledb

from arrayscope.explorer.cli import main
from arrayscope.formats.core import compiled

CANARY = 987_654_321
FRAGMENTS = compiled.TUNING.min_files + 16
CELLS = 16


def _schema(uri: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, CELLS - 1), tile=CELLS, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int32, filters=tiledb.FilterList([tiledb.ZstdFilter(1)]))]))


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    """(array, outside fragment folder): FRAGMENTS fragments of small values; one fragment
    of an array of the same schema holding only CANARY."""
    root = tmp_path_factory.mktemp("swap")
    uri, other = str(root / "array"), str(root / "outside")
    _schema(uri)
    for t in range(1, FRAGMENTS + 1):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[:] = {"a": np.arange(CELLS, dtype=np.int32) + t}
    _schema(other)
    with tiledb.open(other, "w", timestamp=1) as A:
        A[:] = {"a": np.full(CELLS, CANARY, dtype=np.int32)}
    [frag] = os.listdir(os.path.join(other, "__fragments"))
    return uri, os.path.join(other, "__fragments", frag)


class Swapper(threading.Thread):
    """Swaps each fragment folder in turn for a link to `outside` and back, until stopped."""

    def __init__(self, uri: str, outside: str):
        super().__init__(daemon=True)
        self.dir = os.path.join(uri, "__fragments")
        self.names = sorted(n for n in os.listdir(self.dir) if not n.endswith(".swap"))
        self.outside = outside
        self.stop = threading.Event()
        self.swaps = 0

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            path = os.path.join(self.dir, self.names[i % len(self.names)])
            os.rename(path, path + ".swap")
            os.symlink(self.outside, path)
            self.swaps += 1
            self.stop.wait(0.0005)
            os.unlink(path)
            os.rename(path + ".swap", path)
            i += 1


def _swap_all(uri: str, outside: str) -> None:
    d = os.path.join(uri, "__fragments")
    for name in sorted(os.listdir(d)):
        if not name.endswith(".swap"):
            os.rename(os.path.join(d, name), os.path.join(d, name + ".swap"))
            os.symlink(outside, os.path.join(d, name))


def _restore(uri: str) -> None:
    d = os.path.join(uri, "__fragments")
    for name in os.listdir(d):
        if name.endswith(".swap"):
            os.unlink(os.path.join(d, name[:-5]))
            os.rename(os.path.join(d, name), os.path.join(d, name[:-5]))


@pytest.mark.parametrize("command", [["values", "--field", "a", "--json"], ["verify"]])
def test_folders_swapped_for_links_after_the_listing_are_not_followed(arrays, capsys,
                                                                      monkeypatch, command):
    """The swap at the worst moment: right after the fragment folders were listed (and
    judged real folders), before any file in them is opened."""
    from arrayscope.formats.core.dataset_fs import LocalFS

    uri, outside = arrays
    real_list, real_subdirs = LocalFS.list, LocalFS.subdirs
    swapped = []

    def then_swap(real):
        def listing(self, path):
            out = real(self, path)
            if os.path.basename(path.rstrip(os.sep)) == "__fragments" and not swapped:
                _swap_all(uri, outside)
                swapped.append(path)
            return out
        return listing

    monkeypatch.setattr(LocalFS, "list", then_swap(real_list))
    monkeypatch.setattr(LocalFS, "subdirs", then_swap(real_subdirs))
    try:
        main([command[0], uri, *command[1:]])
    finally:
        _restore(uri)
    got = capsys.readouterr()
    assert swapped
    assert str(CANARY) not in got.out and str(CANARY) not in got.err


@pytest.mark.slow
def test_no_canary_while_folders_are_swapped_for_links(arrays, capsys):
    """The swap in a loop, at whatever moments the runs meet it (the test above places it
    at the worst one)."""
    uri, outside = arrays
    assert main(["values", uri, "--field", "a", "--json"]) == 0   # before: the real values
    assert str(CANARY) not in capsys.readouterr().out
    swapper = Swapper(uri, outside)
    swapper.start()
    outs = []
    try:
        for _ in range(4):
            main(["values", uri, "--field", "a", "--json"])
            outs.append(capsys.readouterr())
        for _ in range(2):
            main(["verify", uri])
            outs.append(capsys.readouterr())
    finally:
        swapper.stop.set()
        swapper.join()
    assert swapper.swaps > 10   # the runs raced with many swaps
    for got in outs:
        assert str(CANARY) not in got.out and str(CANARY) not in got.err
    assert main(["values", uri, "--field", "a", "--json"]) == 0   # after: all back, all read
    assert str(CANARY) not in capsys.readouterr().out


def _swap_data_files(uri: str, outside: str) -> int:
    """Each fragment's data file swapped for a link to the outside fragment's (canaries)."""
    d, n = os.path.join(uri, "__fragments"), 0
    for frag in sorted(os.listdir(d)):
        data = os.path.join(d, frag, "a0.tdb")
        if os.path.isfile(data) and not os.path.islink(data):
            os.rename(data, data + ".swap")
            os.symlink(os.path.join(outside, "a0.tdb"), data)
            n += 1
    return n


def _restore_data_files(uri: str) -> None:
    d = os.path.join(uri, "__fragments")
    for frag in os.listdir(d):
        data = os.path.join(d, frag, "a0.tdb")
        if os.path.exists(data + ".swap"):
            os.unlink(data)
            os.rename(data + ".swap", data)


@pytest.mark.parametrize("command", [["values", "--field", "a", "--json"], ["verify"]])
def test_files_swapped_for_links_after_the_listing_are_not_followed(arrays, capsys,
                                                                    monkeypatch, command):
    """The same moment for the files: right after the fragment folders were listed, each
    data file is a link to the outside fragment's data file when it is opened."""
    from arrayscope.formats.core.dataset_fs import LocalFS

    uri, outside = arrays
    swapped = []

    def then_swap(real):
        def listing(self, path):
            out = real(self, path)
            if os.path.basename(path.rstrip(os.sep)) == "__fragments" and not swapped:
                swapped.append(_swap_data_files(uri, outside))
            return out
        return listing

    monkeypatch.setattr(LocalFS, "list", then_swap(LocalFS.list))
    monkeypatch.setattr(LocalFS, "subdirs", then_swap(LocalFS.subdirs))
    try:
        code = main([command[0], uri, *command[1:]])
    finally:
        _restore_data_files(uri)
    got = capsys.readouterr()
    assert swapped and swapped[0] == FRAGMENTS
    assert str(CANARY) not in got.out and str(CANARY) not in got.err
    assert code != 0   # the links were refused, and said so

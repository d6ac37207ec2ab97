"""A listing costs what it keeps: `LocalFS.list` and `subdirs` of a folder of many empty
fragment folders hold one compact Entry each, and never the listing's own objects (a
DirEntry and a stat result each) for all entries at once. tracemalloc counts the bytes."""
from __future__ import annotations

import os
import tracemalloc

from arrayscope.formats.core.dataset_fs import DIR, LocalFS

FOLDERS = 5_000


def _folders(root: str) -> str:
    d = os.path.join(root, "arr", "__fragments")
    os.makedirs(d)
    for i in range(FOLDERS):   # named as libtiledb names fragment folders (format 22)
        t = 1795962269285 + i
        os.mkdir(os.path.join(d, f"__{t}_{t}_{i:032x}_22"))
    return d


def test_a_listing_holds_one_compact_entry_a_folder(tmp_path):
    d = _folders(str(tmp_path))
    fs = LocalFS(str(tmp_path / "arr"))
    for how in ("list", "subdirs"):
        tracemalloc.start()
        try:
            entries = getattr(fs, how)(d)
            held, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(entries) == FOLDERS and all(e.kind == DIR for e in entries)
        assert [e.name for e in entries] == sorted(os.listdir(d))
        assert entries[0].path is entries[0].real   # no link on the way: one string
        # was 520 B held and 1 400 B at the peak a folder (list); now ~340 B and ~460 B
        assert held / FOLDERS < 420 and peak / FOLDERS < 560, (how, held / FOLDERS, peak / FOLDERS)

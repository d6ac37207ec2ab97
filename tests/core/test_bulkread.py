"""`bulkread.read_files`: many files read in compiled calls, by `LocalFS.read_in`'s rules —
a regular file's bytes exactly; anything else (missing, a link, a FIFO, a folder, too big,
a NUL in the name) left unread, never opened, never blocking."""
import os

import numpy as np
import pytest

from arrayscope.formats.accel import bulkread
from arrayscope.formats.core import compiled

# the callers' decision first (it loads numba): read_files never imports it itself
pytestmark = pytest.mark.skipif(not compiled.bulk_wanted(1 << 30)
                                or bulkread.read_files([], 0, "/") is None,
                                reason="no statx (not Linux) or no numba: callers read "
                                       "file by file, tested by every values test")


def _read(paths, root, limit=1 << 20):
    root = os.path.realpath(root)
    blob, starts, sizes = bulkread.read_files([str(p) for p in paths], limit, root)
    return [None if s < 0 else bytes(blob[a:a + s]) for a, s in zip(starts, sizes)]


def test_regular_files_read_exactly_and_everything_else_left(tmp_path):
    files = []
    for i, n in enumerate([0, 1, 4095, 4096, 70_000]):
        p = tmp_path / f"f{i}"
        p.write_bytes(np.random.default_rng(i).integers(0, 256, n, dtype=np.uint8).tobytes())
        files.append(p)
    outside = tmp_path / "elsewhere"
    outside.write_bytes(b"not through a link")
    link = tmp_path / "link"
    link.symlink_to(outside)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    others = [tmp_path / "missing", link, fifo, folder, str(files[1]) + "\0x", "/dev/null"]
    got = _read(files + others, tmp_path)
    assert got[:5] == [p.read_bytes() for p in files]
    assert got[5:] == [None] * len(others)


def test_over_the_limit_left_unread(tmp_path):
    small, big = tmp_path / "small", tmp_path / "big"
    small.write_bytes(b"x" * 100)
    big.write_bytes(b"y" * 101)
    assert _read([small, big], tmp_path, limit=100) == [b"x" * 100, None]


def test_without_libc_nothing_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(bulkread, "libc_functions", lambda: None)
    p = tmp_path / "f"
    p.write_bytes(b"abc")
    assert bulkread.read_files([str(p)], 10, str(tmp_path)) is None


def test_no_jit_nothing_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("ARRAYSCOPE_NO_JIT", "1")
    p = tmp_path / "f"
    p.write_bytes(b"abc")
    assert bulkread.read_files([str(p)], 10, str(tmp_path)) is None


def test_a_folder_swapped_for_a_link_is_not_followed(tmp_path):
    """A folder on the way that is a link now (swapped since it was listed), or a path
    outside the root: left unread, whatever the link points to."""
    root = tmp_path / "ds"
    (root / "frag").mkdir(parents=True)
    (root / "frag" / "a.tdb").write_bytes(b"inside")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.tdb").write_bytes(b"CANARY")
    assert _read([root / "frag" / "a.tdb"], root) == [b"inside"]
    os.rename(root / "frag", tmp_path / "moved")
    (root / "frag").symlink_to(outside)
    assert _read([root / "frag" / "a.tdb", outside / "a.tdb"], root) == [None, None]

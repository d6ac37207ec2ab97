"""`values --raw OUT` decodes the cells straight into a new file beside OUT that becomes OUT
when whole (explorer/commands/raw_output.py): the same bytes as before (each fragment's
cells in order, what tiledb-py wrote), OUT written as before when a fragment fails, and
nothing left behind (no OUT, no partial file) when the decode stops on the way."""
from __future__ import annotations

import os
import stat

import numpy as np
import pytest
import tiledb

from arrayscope.explorer.cli import main
from arrayscope.explorer.commands import raw_output
from arrayscope.explorer.commands.raw_output import OutputFile

TILE = 1000


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _fragments(path: str, parts: int = 3, var: bool = False, nullable: bool = False):
    """A dense array written by tiledb-py in `parts` fragments of two whole tiles each;
    the cells of each fragment, in write order (what `--raw` writes, fragment after
    fragment)."""
    n = parts * 2 * TILE
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=TILE, dtype=np.int64))
    if var:
        attr = tiledb.Attr("a", dtype=str, var=True, filters=[tiledb.ZstdFilter()])
    else:
        attr = tiledb.Attr("a", dtype=np.int64, nullable=nullable, filters=[
            tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()])
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, attrs=[attr]))
    rng = np.random.default_rng(5)
    cells = []
    for k in range(parts):
        lo, hi = 2 * k * TILE, 2 * (k + 1) * TILE
        if var:
            data = np.array([f"w{int(v)}" for v in rng.integers(0, 999, hi - lo)], dtype=object)
            cells.append("".join(data).encode())
        else:
            data = np.cumsum(rng.integers(-9, 9, hi - lo)).astype(np.int64)
            cells.append(data.tobytes())
        with tiledb.open(path, "w", timestamp=k + 1) as A:
            A[lo:hi] = data
    return cells


def _partials(folder) -> list:
    return [n for n in os.listdir(folder) if n.endswith(".partial")]


@pytest.fixture
def holds(monkeypatch):
    """What each `OutputFile.holds` answered (True: the file the cells were decoded into
    became OUT)."""
    seen: list = []
    real = OutputFile.holds

    def spy(self, parts):
        seen.append(real(self, parts))
        return seen[-1]
    monkeypatch.setattr(OutputFile, "holds", spy)
    return seen


@pytest.mark.parametrize("kind", ["fixed", "nullable", "var"])
def test_cells_decoded_into_out(capsys, tmp_path, holds, kind):
    path = str(tmp_path / "arr")
    cells = _fragments(path, var=kind == "var", nullable=kind == "nullable")
    out = tmp_path / "o.raw"
    code, _o, err = run(capsys, "values", path, "--field", "a", "--raw", str(out))
    assert code == 0, err
    assert out.read_bytes() == b"".join(cells)
    assert holds == [True] and not _partials(tmp_path)
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask   # as `open` makes a file


def test_existing_out_keeps_its_mode_and_a_link_is_written_through(capsys, tmp_path, holds):
    path = str(tmp_path / "arr")
    cells = b"".join(_fragments(path))
    out = tmp_path / "o.raw"
    out.write_bytes(b"old" * 10_000)
    out.chmod(0o640)
    assert run(capsys, "values", path, "--field", "a", "--raw", str(out))[0] == 0
    assert out.read_bytes() == cells and stat.S_IMODE(out.stat().st_mode) == 0o640
    target = tmp_path / "target.raw"
    target.write_bytes(b"old")
    link = tmp_path / "link.raw"
    link.symlink_to(target)
    assert run(capsys, "values", path, "--field", "a", "--raw", str(link))[0] == 0
    assert link.is_symlink() and target.read_bytes() == cells
    assert holds == [True] and not _partials(tmp_path)   # (the link: written as before)


def test_a_read_only_out_is_not_replaced(tmp_path, monkeypatch):
    """An OUT we may not write is left to `open` (which refuses it, as before) rather than
    replaced by a rename (which the folder's permission would allow)."""
    out = tmp_path / "o.raw"
    out.write_bytes(b"keep")
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(out)
                        else real(p, mode))   # (as root every file is writable)
    assert OutputFile.create(str(out)) is None and not _partials(tmp_path)
    monkeypatch.setattr(os, "access", real)
    made = OutputFile.create(str(out))
    assert made is not None
    made.discard()


def test_a_failed_fragment_leaves_out_as_before(capsys, tmp_path, holds):
    """The second fragment's first zstd frame broken: OUT holds the first and third
    fragments' cells (what could be decoded, as `--raw` wrote before), exit 1."""
    path = str(tmp_path / "arr")
    cells = _fragments(path)
    frags = os.path.join(path, "__fragments")
    second = sorted(os.listdir(frags))[1]
    a0 = os.path.join(frags, second, "a0.tdb")
    data = bytearray(open(a0, "rb").read())
    at = data.find(b"\x28\xb5\x2f\xfd")
    assert at > 0
    data[at:at + 4] = bytes(4)
    with open(a0, "wb") as fh:
        fh.write(data)
    out = tmp_path / "o.raw"
    code, _o, err = run(capsys, "values", path, "--field", "a", "--raw", str(out))
    assert code == 1 and second in err and "a0.tdb" in err
    assert out.read_bytes() == cells[0] + cells[2]
    assert holds == [False] and not _partials(tmp_path)


def test_a_decode_stopped_on_the_way_leaves_nothing(capsys, tmp_path, monkeypatch):
    path = str(tmp_path / "arr")
    _fragments(path)
    from arrayscope.formats.tiledb.values import field_values

    real = field_values._decode_jobs

    def broken(jobs, key, *buffers):
        real(jobs, key, *buffers)   # the cells decoded into the partial file, then:
        raise MemoryError("stopped")
    monkeypatch.setattr(field_values, "_decode_jobs", broken)
    out = tmp_path / "o.raw"
    code, _o, err = run(capsys, "values", path, "--field", "a", "--raw", str(out))
    assert code == 1 and "MemoryError: stopped" in err
    assert not out.exists() and not _partials(tmp_path)


def test_output_file_holds_only_its_buffers_in_order(tmp_path):
    f = OutputFile.create(str(tmp_path / "o"))
    assert f is not None
    a, b = f.buffer(10), f.buffer(70_000)   # (b: mapped from below its start, page aligned)
    a[:] = 1
    b[:] = 2
    assert f.holds([a[:4], b"", a[4:], b]) and not f.holds([b, a]) and not f.holds([a])
    assert not f.holds([a, bytes(b)])   # equal bytes elsewhere: not the file's
    f.finish([a, b])
    assert (tmp_path / "o").read_bytes() == b"\1" * 10 + b"\2" * 70_000
    assert OutputFile.create(str(tmp_path)) is None   # a folder: not replaced


def test_without_fallocate_out_is_written_as_before(capsys, tmp_path, monkeypatch):
    path = str(tmp_path / "arr")
    cells = b"".join(_fragments(path, parts=1))
    monkeypatch.delattr(os, "posix_fallocate")
    assert OutputFile.create(str(tmp_path / "x")) is None
    out = tmp_path / "o.raw"
    assert run(capsys, "values", path, "--field", "a", "--raw", str(out))[0] == 0
    assert out.read_bytes() == cells and not _partials(tmp_path)


def test_written_in_pieces(tmp_path, monkeypatch):
    monkeypatch.setattr(raw_output, "WRITE_PIECE", 7)
    raw_output.write_parts(str(tmp_path / "o"), [b"abcdefghijklmnop", memoryview(b"q")])
    assert (tmp_path / "o").read_bytes() == b"abcdefghijklmnopq"

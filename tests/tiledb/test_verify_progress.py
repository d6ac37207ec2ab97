"""verify's progress reaches its total: the bar counted chunk bytes against every file's size
and ended near 44 % on arrays of small tiles (chunk headers and fragment metadata are most
of their bytes). Now each fragment checked counts its whole folder, and the run ends at the
total; the command line draws that last report whatever its throttle."""
from __future__ import annotations

import os

import numpy as np
import pytest
import tiledb

from arrayscope.explorer.commands import verify as verify_cmd
from arrayscope.formats.core.verify import open_for_verify, verify_report
from arrayscope.formats.core.verify_tally import folder_bytes

FRAGMENTS = 3
CELLS = 600   # per fragment, one cell a tile


@pytest.fixture(scope="module")
def small_tiles(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("progress") / "a")
    n = FRAGMENTS * CELLS
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=1, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int32, filters=[tiledb.ZstdFilter()])]))
    for k in range(FRAGMENTS):
        with tiledb.open(uri, "w", timestamp=k + 1) as A:
            A[k * CELLS:(k + 1) * CELLS] = np.arange(CELLS, dtype=np.int32) + k
    return uri


def _every_file(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _s, fs in os.walk(path) for f in fs)


def test_progress_reaches_the_total(small_tiles):
    calls = []
    report = verify_report(open_for_verify(small_tiles),
                           lambda done, total, what: calls.append((done, total, what)))
    assert report.findings == [] and report.exit_code() == 0
    total = _every_file(small_tiles)
    assert calls[-1][:2] == (total, total)
    assert all(t == total for _d, t, _w in calls)
    dones = [d for d, _t, _w in calls]
    assert dones == sorted(dones)
    # chunk bytes alone stop well short of the total (where the bar ended before)
    assert report.tally.nbytes < 0.7 * total
    # each fragment counted whole once checked: before the last report, every fragment's
    # folder is in (all but the schema, commits and the like)
    folders = os.path.join(small_tiles, "__fragments")
    frags = sum(folder_bytes(os.path.join(folders, f)) for f in os.listdir(folders))
    assert len(os.listdir(folders)) == FRAGMENTS
    assert dones[-2] >= frags > 0.8 * total


def test_progress_counts_the_tasks_as_they_come_back(small_tiles):
    """With workers: each task's folders are counted when it comes back (the bar stood
    still until the last task had returned), and once — the caller's merge names them
    again."""
    from arrayscope.formats.core.executors import InProcess

    calls: list = []

    class Marking(InProcess):   # tasks run here one after the other; each return marked
        workers = 2

        def map(self, fn, items, done=None):
            def told(i, result):
                if done is not None:
                    done(i, result)
                calls.append(("task back", i))
            return super().map(fn, items, told)

    report = verify_report(open_for_verify(small_tiles),
                           lambda done, total, what: calls.append((done, total, what)),
                           executor=Marking())
    alone = verify_report(open_for_verify(small_tiles)).tally
    assert report.findings == [] and report.tally.tiles == alone.tiles > FRAGMENTS * CELLS
    total = _every_file(small_tiles)
    bar = [c for c in calls if c[0] != "task back"]
    assert bar[-1][:2] == (total, total) and all(t == total for _d, t, _w in bar)
    dones = [d for d, _t, _w in bar]
    assert dones == sorted(dones)
    folders = [k for k, c in enumerate(calls) if c[0] != "task back" and
               c[2].startswith("__fragments/")]
    back = [k for k, c in enumerate(calls) if c[0] == "task back"]
    assert back and folders[0] < back[-1]   # counted before the last task was back
    assert len({calls[k][2] for k in folders}) == FRAGMENTS
    frags = sum(folder_bytes(os.path.join(small_tiles, "__fragments", f))
                for f in os.listdir(os.path.join(small_tiles, "__fragments")))
    assert calls[back[-1] - 1][0] >= frags   # every folder in when the tasks were back


def test_the_command_draws_the_last_report(capsys, monkeypatch):
    # start; a report after the first second; the end 10 ms later (inside the throttle)
    times = iter([0.0, 5.0, 5.01])
    monkeypatch.setattr(verify_cmd.time, "monotonic", lambda: next(times))
    bar = verify_cmd._Progress()
    bar(40, 100, "a0.tdb")
    bar(100, 100, "done")
    bar.close()
    err = capsys.readouterr().err
    assert "40%" in err and "100%" in err


def test_a_log_gets_a_line_a_second_at_most(capsys, monkeypatch):
    """stderr not a terminal (capsys): 1 000 reports over 3 s are 3 lines and the last."""
    times = iter([0.0] + [1.0 + i * 0.003 for i in range(1000)])
    monkeypatch.setattr(verify_cmd.time, "monotonic", lambda: next(times))
    bar = verify_cmd._Progress()
    for i in range(1000):
        bar(min(i * 2, 1000), 1000, f"f{i}")
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["verifying: 0% (f0)", "verifying: 67% (f334)", "verifying: 100% (f668)",
                     "verifying: 100% (f999)"]


def test_a_quick_run_shows_no_bar(capsys, monkeypatch):
    times = iter([0.0, 0.2, 0.3])   # over before the first second: nothing drawn, even the end
    monkeypatch.setattr(verify_cmd.time, "monotonic", lambda: next(times))
    bar = verify_cmd._Progress()
    bar(40, 100, "a0.tdb")
    bar(100, 100, "done")
    assert capsys.readouterr().err == ""

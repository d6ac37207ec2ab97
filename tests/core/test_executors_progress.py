"""An executor tells each result as it comes (`map`'s `done`, in the calling thread), so
verify's progress counts the work the workers have really done: with local processes the
bar stood still until the last task returned."""
from __future__ import annotations

import subprocess

from arrayscope.formats.core.executors import InProcess, LocalProcesses
from arrayscope.formats.core.verify_tally import Tally


def test_local_processes_tell_a_result_while_other_tasks_run(tmp_path):
    # the second task waits (a minute at most) for what the first result's `done` does:
    # it returns 7 only when told before `map` returned
    marker = tmp_path / "first-told"
    wait = ["/bin/sh", "-c", f'for i in $(seq 600); do [ -e "{marker}" ] && exit 7; '
                             f'sleep 0.1; done; exit 1']
    told = []

    def done(i, result):
        told.append((i, result))
        if i == 0:
            marker.touch()

    ex = LocalProcesses(2)
    try:
        got = ex.map(subprocess.call, [["/bin/sh", "-c", "exit 0"], wait], done)
    finally:
        ex.close()
    assert got == [0, 7]
    assert told == [(0, 0), (1, 7)]


def test_in_process_tells_each_result_in_order():
    told = []
    assert InProcess().map(len, ["a", "bcd"], lambda i, r: told.append((i, r))) == [1, 3]
    assert told == [(0, 1), (1, 3)]


def test_a_folder_is_counted_once():
    """A worker's folder comes back with its task, and the caller's merge names it again."""
    shown = []
    tal = Tally(planned=300, progress=lambda done, total, what: shown.append(done))
    tal.finished(100, "__fragments/f1")
    tal.finished(100, "__fragments/f1")
    tal.finished(50, "__fragments/f2")
    assert shown == [100, 100, 150] and tal.folders == {"__fragments/f1": 100,
                                                        "__fragments/f2": 50}

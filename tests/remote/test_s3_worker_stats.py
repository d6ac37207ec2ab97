"""`verify --workers N --stats` on an s3:// URL: the requests and bytes of the worker
processes (each opens the dataset itself) are in the totals, so `--stats` says what the
server received from the whole run — counted by the server itself."""
from __future__ import annotations

import json
import shutil

import pytest

from arrayscope.explorer.cli import main
from arrayscope.formats.core.remote import TOTAL
from tests.remote.test_s3_datasets import _prune_empty_dirs
from tests.support import tiledb_arrays


@pytest.fixture(scope="module")
def url(s3_server, tmp_path_factory):
    built = str(tmp_path_factory.mktemp("worker_stats_built"))
    local = str(tmp_path_factory.mktemp("worker_stats") / "multi_fragment")
    shutil.copytree(tiledb_arrays.build("multi_fragment", built), local)
    _prune_empty_dirs(local)
    s3_server.bucket("workerstats")
    return s3_server.upload(local, "s3://workerstats/multi_fragment")


def _stats_line(err: str):
    last = err.strip().splitlines()[-1]
    req, nbytes = (int(p.split(":")[1]) for p in last.split(","))
    return req, nbytes


def _run(s3_server, capsys, *argv):
    before = TOTAL.snapshot()
    code, seen = s3_server.count(lambda: main(list(argv) + ["--stats"]))
    out = capsys.readouterr()
    req, nbytes = _stats_line(out.err)
    return code, json.loads(out.out), (req - before[0], nbytes - before[1]), seen


def test_worker_transfers_are_in_the_stats(url, s3_server, capsys):
    code1, serial, (req1, bytes1), seen1 = _run(s3_server, capsys, "verify", url, "--json")
    code2, split, (req2, bytes2), seen2 = _run(s3_server, capsys, "verify", url, "--json",
                                               "--workers", "2")
    assert code1 == code2 and split == serial
    # every request the server received, from this process and from each worker
    assert req1 == len(seen1) > 0
    # the workers open the array's model and read their fragments' files (ranged GETs);
    # this process has the dataset in its caches from the first run: without the workers'
    # share the totals would miss what the server counted
    ranged = [r for r in seen2 if r[0] == "GET" and r[3]]
    assert req2 == len(seen2) > 0 and ranged
    assert any("__fragment_metadata.tdb" in r[1] for r in ranged)

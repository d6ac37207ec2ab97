"""`verify` of an array on S3 says what `verify` of the same array on disk says: the same
findings (code, status, file, offset, node, message) and the same tally (files, tiles, bytes
checked), in this process and with `--workers 2` — the S3 array goes through the whole-tree
units, the local one through the lazily opened fragment folders, so this holds the two paths
to one result. The arrays are written by tiledb-py; one of them is damaged (bytes flipped in
a data file and in fragment metadata, a data file truncated) so the findings compared are
real ones."""
from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from arrayscope.explorer.cli import main
from tests.remote.test_s3_datasets import _prune_empty_dirs
from tests.support import tiledb_arrays

ARRAYS = ("multi_fragment", "sparse_multi_fragment")


def _damage(path: str) -> None:
    """Flip a byte in the middle of each fragment's first data file and of the last
    fragment's metadata; cut the last data file short."""
    frags = sorted(os.path.join(path, "__fragments", f)
                   for f in os.listdir(os.path.join(path, "__fragments")))
    for frag in frags:
        data = sorted(f for f in os.listdir(frag) if f.startswith("a") and f.endswith(".tdb"))
        _flip(os.path.join(frag, data[0]), 0.6)
    _flip(os.path.join(frags[-1], "__fragment_metadata.tdb"), 0.5)
    last = os.path.join(frags[0], data[-1])
    raw = open(last, "rb").read()
    open(last, "wb").write(raw[: len(raw) * 2 // 3])


def _flip(path: str, at: float) -> None:
    raw = bytearray(open(path, "rb").read())
    raw[int(len(raw) * at)] ^= 0x5A
    open(path, "wb").write(bytes(raw))


@pytest.fixture(scope="module")
def pairs(s3_server, tmp_path_factory):
    """[(local path, s3 url)] of a dense and a sparse multi-fragment array, each clean and
    damaged."""
    built = str(tmp_path_factory.mktemp("local_equal_built"))
    s3_server.bucket("localequal")
    out = []
    for array, damage in [(a, d) for a in ARRAYS for d in (False, True)]:
        name = f"{array}_{'damaged' if damage else 'clean'}"
        local = str(tmp_path_factory.mktemp("local_equal") / name)
        shutil.copytree(tiledb_arrays.build(array, built), local)
        _prune_empty_dirs(local)
        if damage:
            _damage(local)
        out.append((local, s3_server.upload(local, f"s3://localequal/{name}")))
    return out


def _verify(capsys, target: str, *extra: str):
    """(exit code, the findings as --json gives them, the tally of the summary line)."""
    code = main(["verify", target, "--json", *extra])
    got = capsys.readouterr()
    report = json.loads(got.out)
    summary = got.err.strip().splitlines()[-1]
    tally = re.sub(r" in [0-9.]+ s", "", summary)   # the time differs, the rest must not
    return code, report["findings"], tally


@pytest.mark.parametrize("workers", [(), ("--workers", "2")], ids=["serial", "workers2"])
def test_s3_verify_equals_local(pairs, capsys, workers):
    compared = 0
    for local, url in pairs:
        here = _verify(capsys, local, *workers)
        there = _verify(capsys, url, *workers)
        assert there == here, (local, url)
        compared += 1
    assert compared == 2 * len(ARRAYS)
    for k, (local, _url) in enumerate(pairs):   # clean, damaged, clean, damaged
        found = _verify(capsys, local)[1]
        assert (found == []) if k % 2 == 0 else ("error" in {f["status"] for f in found})


@pytest.mark.parametrize("workers", [None, 2], ids=["serial", "workers2"])
def test_s3_progress_counts_the_work_done(pairs, workers):
    """The bar of a whole-tree verify (an S3 array) counts each fragment folder whole once
    checked, and the workers' chunks: before the last report it stood at 61 % (serial) and
    14 % (--workers 2) of the total on these arrays, their chunk bytes only."""
    from arrayscope.formats.core.executors import executor_for
    from arrayscope.formats.core.verify import open_for_verify, verify_report

    _local, url = pairs[0]
    calls = []
    executor = executor_for(workers) if workers else None
    try:
        report = verify_report(open_for_verify(url), lambda d, t, w: calls.append((d, t)),
                               executor)
    finally:
        if executor is not None:
            executor.close()
    assert report.findings == []
    dones = [d for d, _t in calls]
    total = calls[-1][1]
    assert dones == sorted(dones) and calls[-1] == (total, total)
    assert dones[-2] >= 0.9 * total

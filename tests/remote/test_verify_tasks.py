"""verify split into tasks (formats/core/verify_tasks.py, the plugins' `verify_units`) gives the single-process
findings, in the same order: in this process, on 2 local processes, and on a Dask LocalCluster of 2
worker processes. The datasets are written by tiledb-py and zarr and then damaged, so the
findings compared are many and real."""
from __future__ import annotations

import json
import os
import shutil

import numcodecs
import numpy as np
import pytest
import tiledb
import zarr
from zarr.codecs import ZstdCodec

from arrayscope import formats
from arrayscope.formats.core import verify_tasks
from arrayscope.formats.core.executors import DaskCluster, InProcess, LocalProcesses
from arrayscope.formats.core.verify import verify
from tests.support import tiledb_arrays
from tests.support.zarr_arrays import FLAT, make

TILES = 600          # more than data_files.LAZY_TILES: one data file's tiles are lazy
PER_CHUNK = 4


def _flip(path: str, fractions=(0.2, 0.45, 0.7, 0.9), back: int = 0) -> None:
    raw = bytearray(open(path, "rb").read())
    for f in fractions:
        i = int(len(raw) * f) - back
        raw[i] ^= 0x5A
    open(path, "wb").write(bytes(raw))


def _damage_tiledb(path: str) -> None:
    for d, _dirs, files in os.walk(path):
        for f in sorted(files):
            if f.startswith("a") and f.endswith(".tdb"):
                _flip(os.path.join(d, f))


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """{name: (path, key)}: TileDB arrays (many tiles, several pipelines, encrypted) and a
    lazily opened Zarr array, each with bytes flipped in its data."""
    root = str(tmp_path_factory.mktemp("verify_tasks"))
    out = {}
    many = os.path.join(root, "many_tiles")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, TILES * 4 - 1), tile=4, dtype=np.int64))
    tiledb.Array.create(many, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int32,
                    filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(1)])),
        tiledb.Attr("b", dtype=np.float64,
                    filters=tiledb.FilterList([tiledb.ChecksumMD5Filter()])),
        tiledb.Attr("s", dtype=str, var=True, filters=tiledb.FilterList([tiledb.ZstdFilter(3)]))]))
    for t in (1, 2):
        with tiledb.open(many, "w", timestamp=t) as A:
            n = TILES * 4
            A[:] = {"a": np.arange(n, dtype=np.int32) * t, "b": np.linspace(0, t, n),
                    "s": np.array([f"v{i % 97}" * (i % 5) for i in range(n)], dtype=object)}
    _damage_tiledb(many)
    out["many_tiles"] = (many, None)
    for name in ("filters", "sparse_var_nullable_pipelines", "encrypted"):
        src = tiledb_arrays.build(name, os.path.join(root, "clean"))
        dst = os.path.join(root, name)
        shutil.copytree(src, dst)
        _damage_tiledb(dst)
        out[name] = (dst, tiledb_arrays.KEY.encode() if name == "encrypted" else None)
    out["fragments"] = (_fragments(os.path.join(root, "fragments")), None)
    zpath = os.path.join(root, "zarr_lazy")
    data = make(FLAT, (300 * PER_CHUNK,), seed=5)   # 300 chunk files: opens lazily
    z = zarr.create_array(zpath, shape=data.shape, chunks=(PER_CHUNK,), dtype=FLAT,
                          zarr_format=3, compressors=[ZstdCodec(level=1, checksum=True)])
    z[...] = data
    zc = numcodecs.Zstd(level=1, checksum=True)
    for i in (3, 150, 299):
        _flip(os.path.join(zpath, "c", str(i)), (0.99,))
    open(os.path.join(zpath, "c", "77"), "wb").write(zc.encode(data[77 * 4:77 * 4 + 1].tobytes()))
    out["zarr_lazy"] = (zpath, None)
    return out


FRAG_TILES = 300     # tiles of the big first fragment (lazy: over data_files.LAZY_TILES);
# the others write a few tiles each


def _fragments(uri: str) -> str:
    """A dense array of six fragments, damage planted in four: a big first fragment (more
    than a worker's share: the plan splits it by file and its files into runs of tiles)
    and five small ones; bytes flipped in
    the data files of fragments 1, 3 and 5, a var file cut short in fragment 4 and a section
    of fragment 6's metadata damaged."""
    n = FRAG_TILES * 4
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=4, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int32, filters=tiledb.FilterList([tiledb.ZstdFilter(1)])),
        tiledb.Attr("b", dtype=np.float64, filters=tiledb.FilterList([tiledb.ChecksumMD5Filter()])),
        tiledb.Attr("s", dtype=str, var=True, filters=tiledb.FilterList([tiledb.ZstdFilter(3)]))]))
    for t in range(1, 7):
        lo, hi = (0, n) if t == 1 else ((t - 2) * 8, (t - 2) * 8 + 8)
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[lo:hi] = {"a": np.arange(lo, hi, dtype=np.int32) * t,
                        "b": np.linspace(0, t, hi - lo),
                        "s": np.array([f"w{i % 13}" * (1 + i % 4) for i in range(lo, hi)],
                                      dtype=object)}
    fdir = os.path.join(uri, "__fragments")
    frags = sorted(os.listdir(fdir), key=lambda f: int(f.split("_")[2]))
    for k, name in ((0, "a0.tdb"), (0, "a1.tdb"), (2, "a1.tdb"), (4, "a0.tdb")):
        # 3 bytes before a tile boundary: in cells (a chunk count hit in a lazily listed
        # tile is not reported by verify at all: a gap of the single-process checks)
        _flip(os.path.join(fdir, frags[k], name), (0.5, 0.8), back=3)
    var = os.path.join(fdir, frags[3], "a2_var.tdb")
    os.truncate(var, os.path.getsize(var) - 5)
    _flip(os.path.join(fdir, frags[5], "__fragment_metadata.tdb"), (0.3,))
    return uri


@pytest.fixture(scope="module")
def reference(damaged):
    """The single-process findings of every damaged dataset."""
    return {name: verify(formats.open(p, key=k)) for name, (p, k) in damaged.items()}


def test_the_damage_is_found(reference):
    for name, found in reference.items():
        errors = [f for f in found if f.status == "error"]
        assert len(errors) >= 3, (name, found)


def test_slots_cover_every_chunk_in_verify_order(damaged):
    """Concatenating the slots' chunks is exactly `iter_chunks(root)`; the data files are
    slots named by fragment and file (what a worker checks), and the plan hands each out
    once, with its fragment's cell checks."""
    from arrayscope.formats.tiledb.verify.chunk_walk import iter_chunks
    from arrayscope.formats.tiledb.verify.verify_units import slots

    path, key = damaged["many_tiles"]
    doc = formats.open(path, key=key)
    found = slots(doc, doc.root)
    ordered = [(ci.source.name, ci.metadata_offset) for _w, n in found for ci in iter_chunks(n)]
    assert ordered == [(ci.source.name, ci.metadata_offset) for ci in iter_chunks(doc.root)]
    files = [w for w, _n in found if w is not None]
    frags = sorted(f.name for f in doc.model.fragments)
    assert sorted({f for f, _n in files}) == frags and len(frags) == 2
    # a, b, s (offsets and var data) in each of the two fragments
    assert sorted(n for _f, n in files) == sorted(["a0.tdb", "a1.tdb", "a2.tdb", "a2_var.tdb"] * 2)
    tasks = [t for t, _u in verify_tasks.plan(doc, 2)]
    assert {t.format for t in tasks} == {"tiledb"}
    works = [w for t in tasks for w in t.units]
    assert sorted({(w.fragment, n) for w in works for n in w.files}) == sorted(files)
    assert sorted(w.fragment for w in works if w.cells) == frags
    assert all(st[1] > 0 for w in works for st in w.stamps)


@pytest.fixture(autouse=True)
def small_tasks(monkeypatch):
    """Tasks of any size: these small datasets split into many tasks, as big ones do."""
    monkeypatch.setattr(verify_tasks, "MIN_TASK_BYTES", 1)


def test_damage_in_several_fragments_is_found_by_the_workers(damaged, reference):
    """The planted damage is found in every fragment it is in, and the plan spreads the
    fragments over several tasks: the big one split by file, its cell checks a task part of
    their own, the small ones with their files and cell checks together."""
    path, _ = damaged["fragments"]
    found = reference["fragments"]
    frags = sorted(os.listdir(os.path.join(path, "__fragments")),
                   key=lambda f: int(f.split("_")[2]))
    hit = {k for k, name in enumerate(frags)
           if any(f.status == "error" and name in f.source for f in found)}
    assert {0, 2, 3, 4, 5} <= hit, found
    doc = formats.open(path)
    tasks = [t for t, _u in verify_tasks.plan(doc, 2)]
    works = [w for t in tasks for w in t.units]
    assert len(tasks) >= 4
    big = [w for w in works if w.fragment == frags[0]]
    assert [(w.files, w.cells) for w in big if w.cells] == [((), True)]
    by_file: dict = {}
    for w in big:
        if not w.cells:
            [name] = w.files
            by_file.setdefault(name, []).append(w.part)
    assert sorted(by_file) == ["a0.tdb", "a1.tdb", "a2.tdb", "a2_var.tdb"]
    for name, parts in by_file.items():     # runs of its tiles, in order, end to end
        assert len(parts) >= 2 and parts[0][0] == 0, (name, parts)
        assert all(p[1] == q[0] for p, q in zip(parts, parts[1:])), (name, parts)
    assert all(len(w.files) == 4 and w.cells for w in works if w.fragment != frags[0])
    assert verify(formats.open(path), InProcess()) == found


def test_lazily_opened_arrays_split_by_fragment_folder(damaged):
    """What the command line opens (`open_for_verify`: lazily, for a local array) splits
    into one unit a fragment folder, checked whole by the worker (diagnostics, chunks,
    bookkeeping, cells: the caller builds no fragment's tree): the single-process findings,
    in this process and on 2 local processes."""
    from arrayscope.formats.core.verify import open_for_verify
    from arrayscope.formats.tiledb.verify.verify_units import FolderWork

    for name in ("fragments", "many_tiles", "encrypted"):
        path, key = damaged[name]
        ref = verify(open_for_verify(path, key))
        assert [f for f in ref if f.status == "error"], name
        doc = open_for_verify(path, key)
        assert doc.lazy
        works = [w for t, _u in verify_tasks.plan(doc, 2) for w in t.units]
        assert works and all(isinstance(w, FolderWork) for w in works)
        ex = InProcess()
        ex.workers = 2
        assert verify(open_for_verify(path, key), ex) == ref, name
    ex = LocalProcesses(2)
    try:
        path, key = damaged["fragments"]
        assert verify(open_for_verify(path, key), ex) == verify(open_for_verify(path, key))
    finally:
        ex.close()


def test_in_process_tasks_equal_single_process(damaged, reference):
    for name, (p, k) in damaged.items():   # all: in this process this costs little
        assert verify(formats.open(p, key=k), InProcess()) == reference[name], name


QUICK = ("many_tiles", "fragments", "zarr_lazy")   # the default run; the slow run takes all


@pytest.mark.slow
def test_local_processes_equal_single_process(damaged, reference):
    ex = LocalProcesses(2)
    try:
        for name, (p, k) in damaged.items():
            assert verify(formats.open(p, key=k), ex) == reference[name], name
    finally:
        ex.close()


@pytest.mark.parametrize("names", [QUICK, pytest.param(None, marks=pytest.mark.slow)],
                         ids=["quick", "all"])
def test_dask_local_cluster_equals_single_process(damaged, reference, names, monkeypatch):
    import distributed  # in the test extra

    names = names or tuple(damaged)
    # the key is never sent to a Dask worker: its environment holds it
    monkeypatch.setenv("ARRAYSCOPE_KEY", tiledb_arrays.KEY)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        ex = DaskCluster(cluster.scheduler_address)
        try:
            assert ex.workers == 2
            for name in names:
                p, k = damaged[name]
                assert verify(formats.open(p, key=k), ex) == reference[name], name
        finally:
            ex.close()


@pytest.mark.slow
def test_cli_workers_prints_the_same_json(damaged, capsys):
    from arrayscope.explorer.cli import main

    path, _ = damaged["many_tiles"]
    assert main(["verify", path, "--json"]) == 1
    serial = json.loads(capsys.readouterr().out)
    assert main(["verify", path, "--json", "--workers", "2"]) == 1
    assert json.loads(capsys.readouterr().out) == serial
    assert serial["errors"] >= 3


def test_the_key_never_travels_in_a_task(damaged, reference, monkeypatch):
    """Tasks name the key by a digest; local workers get it once through their pipe, a Dask
    worker from its own environment, and a worker without it leaves its part to the caller."""
    import pickle

    import distributed

    path, key = damaged["encrypted"]
    tasks = [t for t, _u in verify_tasks.plan(formats.open(path, key=key), 2)]
    assert tasks and {t.format for t in tasks} == {"tiledb"}
    blob = pickle.dumps(tasks)
    assert key not in blob and key.hex().encode() not in blob
    assert {t.key_id for t in tasks} == {formats.core.context.key_name(key)}

    ex = LocalProcesses(2)
    try:
        assert verify(formats.open(path, key=key), ex) == reference["encrypted"]
    finally:
        ex.close()

    monkeypatch.delenv("ARRAYSCOPE_KEY", raising=False)
    monkeypatch.setattr(formats.core.context, "_KEYS", {})
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        ex = DaskCluster(cluster.scheduler_address)
        try:
            got = verify(formats.open(path, key=key), ex)   # no key on the workers
            [warn] = [f for f in got if f.code == "check-crashed"]
            assert "ARRAYSCOPE_KEY" in warn.message and warn.status == "warning"
            assert [f for f in got if f is not warn] == reference["encrypted"]
            monkeypatch.setenv("ARRAYSCOPE_KEY", tiledb_arrays.KEY)   # set up by the user
            assert verify(formats.open(path, key=key), ex) == reference["encrypted"]
        finally:
            ex.close()


def test_a_task_that_cannot_open_reports_it():
    """A task gives each unit back not done, with the reason (the caller checks those
    itself and says the workers could not), whatever the format."""
    from arrayscope.formats.core.plugin import NotDone
    from arrayscope.formats.tiledb.verify.verify_units import FragmentWork

    task = verify_tasks.Task("/nonexistent/arrayscope/dataset", "zarr", ((0,),))
    [got] = verify_tasks.run_task(task)
    assert isinstance(got, NotDone) and "cannot open" in got.reason
    work = FragmentWork("__1_1_x_22", ("a0.tdb",), True)
    task = verify_tasks.Task("/nonexistent/arrayscope/dataset", "tiledb", (work, work))
    got = verify_tasks.run_task(task)
    assert len(got) == 2 and all(isinstance(g, NotDone) and "cannot open" in g.reason
                                 for g in got)


def test_unreachable_scheduler_is_a_message(damaged, capsys, monkeypatch):
    import socket

    from arrayscope.explorer.cli import main
    from arrayscope.formats.core import executors

    monkeypatch.setattr(executors, "CONNECT_TIMEOUT", "1s")

    with socket.socket() as s:       # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path, _ = damaged["many_tiles"]
    assert main(["verify", path, "--dask", f"tcp://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert "cannot start the verify workers" in err and str(port) in err


def test_a_group_verifies_member_by_member_with_an_executor(tmp_path):
    """A TileDB group (a SOMA experiment, one member damaged): the same findings with an
    executor (the group's own walk verifies its members, in this process)."""
    from tests.support.paths import REPO

    path = str(tmp_path / "pbmc68k")
    shutil.copytree(os.path.join(REPO, "tests", "data", "soma", "pbmc68k"), path)
    frags = os.path.join(path, "ms", "RNA", "X", "data", "__fragments")
    [frag] = os.listdir(frags)
    for dim in ("d0.tdb", "d1.tdb"):              # zstd-compressed coordinates
        _flip(os.path.join(frags, frag, dim), (0.5,))
    serial = verify(formats.open(path))
    assert [f for f in serial if f.status == "error" and f.source.startswith("ms/RNA/X/data/")]
    assert verify(formats.open(path), InProcess()) == serial
    assert verify_tasks.plan(formats.open(path), 2) == []


def test_a_worker_with_another_copy_leaves_its_part_to_the_caller(damaged, reference, tmp_path):
    """A worker whose copy of a file differs (size) gives its part back with the reason:
    the caller checks those files itself — the findings are the single-process ones, after
    one warning that says the workers could not do it."""
    import dataclasses

    path, _ = damaged["fragments"]
    other = str(tmp_path / "copy")
    shutil.copytree(path, other)
    fdir = os.path.join(other, "__fragments")
    for name in os.listdir(fdir):
        with open(os.path.join(fdir, name, "a0.tdb"), "ab") as f:
            f.write(b"\0" * 8)
    from arrayscope.formats.core.plugin import NotDone

    doc = formats.open(path)
    moved = [dataclasses.replace(t, path=other) for t, _u in verify_tasks.plan(doc, 2)]
    results = [verify_tasks.run_task(t) for t in moved]
    reasons = [r.reason for res in results for r in res if isinstance(r, NotDone)]
    assert reasons and all("a0.tdb is not the caller's file here" in r for r in reasons)

    class Moved(InProcess):   # two workers, reading the other copy
        workers = 2

        def map(self, fn, tasks, done=None):
            return super().map(fn, [dataclasses.replace(t, path=other) for t in tasks], done)

    found = verify(formats.open(path), Moved())
    [warn] = [f for f in found if f.code == "check-crashed"]
    assert warn.status == "warning" and "checked in this process" in warn.message
    assert [f for f in found if f is not warn] == reference["fragments"]


def test_a_task_leaves_the_workers_allocator_as_it_found_it():
    """A Dask worker is the user's process: a task changes no allocator setting there (no
    mallopt), and the library's import no environment variable."""
    import ast
    from pathlib import Path

    called = set()
    for path in Path(verify_tasks.__file__).parent.rglob("*.py"):   # the whole engine
        called |= {n.func.attr for n in ast.walk(ast.parse(path.read_text()))
                   if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert "get" in called   # the walk sees calls
    assert not called & {"mallopt", "malloc_trim"}


@pytest.mark.slow
def test_every_committed_array_verifies_the_same_in_tasks(small_tasks):
    """The arrays every TileDB version wrote (tests/data: formats 1 to 22, updates,
    writer quirks), split into tasks of single files and runs of tiles (one worker's and two
    workers' plans), give the single-process findings in the same order."""
    from arrayscope.formats.tiledb.model import layout
    from tests.support.paths import REPO

    arrays = []
    for sub in ("tiledb_versions", "tiledb_updates", "writer_rules"):
        for d, dirs, _files in os.walk(os.path.join(REPO, "tests", "data", sub)):
            if layout.is_array_dir(d):
                dirs[:] = []
                arrays.append(d)
    assert len(arrays) >= 50
    for d in sorted(arrays):
        ref = verify(formats.open(d))
        for workers in (1, 2):
            ex = InProcess()
            ex.workers = workers
            assert verify(formats.open(d), ex) == ref, (d, workers)

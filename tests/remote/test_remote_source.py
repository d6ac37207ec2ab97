"""RemoteStore / RemoteSource over fsspec's in-memory filesystem: ranged reads through a
bounded block cache, the listing, and the request/byte counts."""
from __future__ import annotations

import fsspec
import pytest

from arrayscope.formats.core import remote


@pytest.fixture
def mem():
    fs = fsspec.filesystem("memory")
    root = "/remote-tests"
    if fs.exists(root):
        fs.rm(root, recursive=True)
    data = bytes(range(256)) * 4096           # 1 MiB, every byte known
    fs.pipe(f"{root}/ds/big.bin", data)
    fs.pipe(f"{root}/ds/sub/small.txt", b"hello")
    fs.pipe(f"{root}/ds/sub/deeper/empty", b"")
    yield f"memory://{root}/ds", data
    fs.rm(root, recursive=True)


def test_is_url():
    assert remote.is_url("s3://bucket/key")
    assert remote.is_url("file:///tmp/x")
    assert remote.is_url("memory://x")
    assert not remote.is_url("/tmp/x")
    assert not remote.is_url("C://x")        # a drive letter, not a scheme
    assert not remote.is_url("relative/path")


def test_listing_answers_from_one_listing(mem):
    url, data = mem
    store = remote.RemoteStore(url)
    assert store.isdir(url)
    assert store.listdir(url) == ["big.bin", "sub"]
    assert store.listdir(url + "/sub") == ["deeper", "small.txt"]
    assert store.getsize(url + "/big.bin") == len(data)
    assert store.isfile(url + "/sub/deeper/empty") and store.getsize(url + "/sub/deeper/empty") == 0
    assert not store.exists(url + "/nope")
    assert store.rel(url + "/../elsewhere") is None          # never outside the dataset
    assert store.rel("memory://other/x") is None
    assert [(e.name, e.kind, e.size) for e in store.list(url + "/sub")] == \
        [("deeper", "dir", 0), ("small.txt", "file", 5)]
    assert store.stat(url + "/nope").kind == "missing"
    assert store.stat(url + "/../elsewhere").kind == "symlink-out"   # outside: never read
    assert store.stats.snapshot() == (1, 0)   # everything above: one listing request
    assert store.read_bytes(url + "/sub/small.txt", 3) == (b"hel", True)
    assert store.stats.snapshot() == (2, 5)   # a small object: one request, whole


def test_reads_fetch_only_the_blocks_they_touch(mem):
    url, data = mem
    store = remote.RemoteStore(url, block_size=64 * 1024, cache_bytes=256 * 1024)
    src = store.open_source(url + "/big.bin")
    assert src.size == len(data) and store.stats.snapshot()[0] == 1   # opening reads nothing
    assert src.read(1000, 10) == data[1000:1010]
    assert store.stats.snapshot() == (2, 64 * 1024)
    assert src.read(2000, 10) == data[2000:2010]            # same block: cached
    assert store.stats.snapshot() == (2, 64 * 1024)
    # a read across three blocks, one of them cached: the two missing runs, one request each
    assert src.read(60 * 1024, 70 * 1024) == data[60 * 1024:130 * 1024]
    assert store.stats.snapshot() == (3, 3 * 64 * 1024)
    # past the end: clamped, like a file
    assert src.read(len(data) - 4, 100) == data[-4:]
    assert src.read(len(data) + 10, 5) == b""


def test_cache_is_bounded_and_big_reads_bypass_it(mem):
    url, data = mem
    store = remote.RemoteStore(url, block_size=64 * 1024, cache_bytes=128 * 1024)
    src = store.open_source(url + "/big.bin")
    for k in range(8):                          # touch 8 blocks, keep at most 2
        assert src.read(k * 64 * 1024, 1) == data[k * 64 * 1024:k * 64 * 1024 + 1]
        assert store.cache.used <= 128 * 1024
    before = store.stats.snapshot()
    whole = src.read(0, len(data))              # bigger than the cache: one direct request
    assert whole == data
    assert store.stats.snapshot() == (before[0] + 1, before[1] + len(data))
    assert store.cache.used <= 128 * 1024


def test_a_failed_read_is_a_short_read(mem):
    url, _data = mem
    store = remote.RemoteStore(url)
    src = store.open_source(url + "/sub/small.txt")
    fsspec.filesystem("memory").rm(src.store._fs_path(src.rel))   # vanished after listing
    assert src.read(0, 5) == b""
    assert "small.txt" in (src.last_error or "")
    assert store.stats.errors == 1


def test_single_object_and_missing_url(mem):
    url, data = mem
    one = remote.RemoteStore(url + "/big.bin")
    assert one.isfile(url + "/big.bin") and not one.isdir(url + "/big.bin")
    assert one.open_source(url + "/big.bin").read(5, 3) == data[5:8]
    assert remote.RemoteStore(url + "/missing").entries() == {}


def test_total_counts_every_store(mem):
    url, _ = mem
    before = remote.TOTAL.snapshot()
    store = remote.RemoteStore(url)
    store.open_source(url + "/sub/small.txt").read(0, 5)
    after = remote.TOTAL.snapshot()
    assert (after[0] - before[0], after[1] - before[1]) == (2, 5)
    assert store.stats.line() == "requests: 2, bytes: 5"


def test_file_url_opens_like_the_path(tiledb_array):
    from arrayscope import formats
    from arrayscope.formats.core.node import to_json
    from arrayscope.formats.core.verify import verify

    path = tiledb_array("sparse_var_nullable_pipelines")
    local, url = formats.open(path), formats.open("file://" + path)
    assert url.fs.stats.requests >= 3 and url.path == "file://" + path
    assert to_json(url.root, url.source_name) == to_json(local.root, local.source_name)
    assert verify(url) == verify(local)


def test_the_engine_imports_no_cloud_or_dask_module():
    """The default install stays light: fsspec back ends and Dask load only when used."""
    import subprocess
    import sys

    code = ("import sys, arrayscope.formats, arrayscope.formats.core.remote, arrayscope.formats.core.verify, "
            "arrayscope.formats.core.executors, arrayscope.formats.core.verify_tasks, arrayscope.explorer.cli\n"
            "from arrayscope.explorer.cli import subcommands; subcommands()\n"
            "print(sorted(m for m in ('s3fs', 'gcsfs', 'adlfs', 'aiohttp', 'dask', 'distributed', "
            "'fsspec', 'botocore') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("scheme", ["memory", "file"])
def test_a_same_size_rewrite_after_the_listing_is_named(mem, tmp_path, scheme):
    """A store without ETags (fsspec's memory and local ones) is held against the version
    the listing saw once per object, before its first read: a rewrite of the same size is
    named, never read as the listed object."""
    import os

    if scheme == "memory":
        url, data = mem
        path = url[len("memory://"):] + "/big.bin"
        fs = fsspec.filesystem("memory")
        rewrite = lambda b: fs.pipe(path, b)   # noqa: E731
    else:
        data = bytes(range(256)) * 64
        (tmp_path / "ds").mkdir()
        local = tmp_path / "ds" / "big.bin"
        local.write_bytes(data)
        url = f"file://{tmp_path}/ds"
        stat = os.stat(local)

        def rewrite(b):
            local.write_bytes(b)
            os.utime(local, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    store = remote.RemoteStore(url)
    src = store.open_source(url + "/big.bin")
    rewrite(bytes(b ^ 0xFF for b in data))
    assert src.read(0, 16) == b""
    assert src.last_error == store.changed["big.bin"]
    assert src.last_error.startswith(f"{url}/big.bin: the object changed since the dataset was "
                                     f"listed (listed {len(data)} B, mtime")
    clean = remote.RemoteStore(url)   # listed after the rewrite: read as it is
    assert clean.open_source(url + "/big.bin").read(0, 4) == bytes(b ^ 0xFF for b in data[:4])

"""Servers that stall, trickle, answer late or ignore Range, and objects rewritten after the
listing: every remote read ends within the configured timeouts with a message naming the
object, a server over budget is not asked again, reads stay bounded, and a changed object
is named as changed (not a failed unpack)."""
from __future__ import annotations

import os

import pytest

from arrayscope.explorer.cli import main
from arrayscope.formats.core import remote
from tests.remote.slow_servers import LoopbackServer, never_answers, serves, trickles
from tests.support import tiledb_arrays

FAST = remote.Timeouts(connect=1.0, read=1.0, total=1.5)
CLI_FAST = ["--connect-timeout", "1", "--read-timeout", "1", "--timeout", "1.5"]


@pytest.fixture
def server(request):
    made = []

    def start(handle):
        s = LoopbackServer(handle)
        made.append(s)
        return s
    yield start
    for s in made:
        s.close()


def test_a_server_that_never_answers_ends_the_command_naming_the_url(server, capsys):
    stall = server(never_answers)
    url = f"{stall.url}/ds/array.npy"
    # a budget well past the first "waiting" line (WAIT_REPORT_FIRST): the line is there
    # however late a busy machine wakes the waiting thread
    code = main(["dump", url, "--connect-timeout", "4", "--read-timeout", "4", "--timeout", "4"])
    err = capsys.readouterr().err
    assert code == 2
    assert url in err and "no answer from the server" in err and "--timeout" in err
    assert f"waiting for {url}" in err          # progress while it waited
    assert stall.wait_closed()                  # the request was abandoned, not left running


def test_a_trickling_server_is_bounded_by_the_total_budget(server):
    slow = server(trickles(b"x" * 10_000, every=0.05))   # bytes keep coming: no read timeout
    url = f"{slow.url}/ds/blob.bin"
    store = remote.RemoteStore(url, timeouts=FAST)
    with pytest.raises(remote.RemoteError) as e:
        store.entries()
    assert url in str(e.value) and "1.5 s per request" in str(e.value)
    assert slow.wait_closed()
    asked = len(slow.requests)
    with pytest.raises(remote.RemoteError, match="not tried"):   # stalled: never asked again
        store.fetch("", 0, 10, 10_000)
    assert len(slow.requests) == asked


def test_a_late_answer_within_the_budget_is_read(server):
    body = bytes(range(256)) * 64
    late = server(serves(body, delay=0.3))
    url = f"{late.url}/ds/blob.bin"
    store = remote.RemoteStore(url, timeouts=remote.Timeouts(connect=2, read=2, total=5))
    src = store.open_source(url)
    assert src.size == len(body)
    assert src.read(1000, 16) == body[1000:1016]
    assert store.stalled is None and store.range_ignored is None and src.last_error is None


def test_a_late_answer_over_the_budget_is_named(server):
    late = server(serves(b"abc" * 100, delay=3.0))
    url = f"{late.url}/ds/blob.bin"
    store = remote.RemoteStore(url, timeouts=FAST)
    with pytest.raises(remote.RemoteError, match="no answer from the server"):
        store.entries()
    assert late.wait_closed()


def test_a_stalled_s3_endpoint_is_named(server):
    stall = server(never_answers)
    store = remote.RemoteStore("s3://bucket/ds", timeouts=FAST, storage_options={
        "key": "testing", "secret": "testing",
        "client_kwargs": {"endpoint_url": stall.url, "region_name": "us-east-1"}})
    with pytest.raises(remote.RemoteError) as e:
        store.entries()
    assert "s3://bucket/ds" in str(e.value) and "no answer from the server" in str(e.value)


# ---- on moto's S3 ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def dense(s3_server, tmp_path_factory):
    local = tiledb_arrays.build("dense_1d", str(tmp_path_factory.mktemp("dense")))
    s3_server.bucket("races")
    return local


def _data_file(local: str) -> str:
    for d, _dirs, files in os.walk(local):
        if "a0.tdb" in files:
            return os.path.relpath(os.path.join(d, "a0.tdb"), local).replace(os.sep, "/")
    raise AssertionError("no a0.tdb")


@pytest.mark.parametrize("change", ["shrunk", "grown", "same-size"])
def test_an_object_rewritten_after_the_listing_is_named(change, s3_server, dense, capsys):
    """Held against the ETag the listing saw (each read asks `If-Match`), so a rewrite of
    the same size is named too, with no request of its own."""
    import tiledb

    url = s3_server.upload(dense, f"s3://races/{change}")
    rel = _data_file(dense)
    store = remote.store_for(url)
    old = store.getsize(f"{url}/{rel}")            # listed now: the rewrite comes after
    with open(os.path.join(dense, rel), "rb") as fh:
        data = fh.read()
    new = {"shrunk": data[: len(data) // 2], "grown": data + b"\0" * 64,
           "same-size": bytes(b ^ 0xFF for b in data)}[change]
    s3_server.fs().pipe_file(f"races/{change}/{rel}", new)
    code, sent = s3_server.count(lambda: main(["values", url, "--field", "a"]))
    err = capsys.readouterr().err
    assert code != 0
    assert f"{url}/{rel}: the object changed since the dataset was listed (listed {old} B" in err
    assert "unpack requires" not in err
    assert [r for r in sent if r[0] == "HEAD"] == []     # the reads said it: no extra request
    # the library's own read of the local copy is intact: the change is the object's
    with tiledb.open(dense) as A:
        assert A[:]["a"][:3].tolist() == [-50, -47, -44]
    del store


def test_a_server_that_ignores_range_is_detected_and_reads_are_bounded(s3_server, dense):
    url = s3_server.upload(dense, "s3://races/norange")
    small, big = bytes(range(256)) * 48, bytes(range(256)) * 160     # 12 KiB, 40 KiB
    s3_server.fs().pipe_file("races/norange/small.bin", small)
    s3_server.fs().pipe_file("races/norange/big.bin", big)
    s3_server.ignore_range = True
    try:
        store = remote.RemoteStore(url, block_size=4096, cache_bytes=64 << 10)  # cap 16 KiB
        src = store.open_source(f"{url}/small.bin")
        got, sent = s3_server.count(lambda: src.read(10, 8))
        assert got == small[10:18] and len(sent) == 1 and sent[0][3] == "bytes=0-4095"
        assert "ignores Range" in (store.range_ignored or "")
        got, again = s3_server.count(lambda: src.read(len(small) - 8, 8))   # kept whole
        assert got == small[-8:] and again == []
        # a larger object is then not read at all (each read would transfer it whole)
        large = store.open_source(f"{url}/big.bin")
        got, none = s3_server.count(lambda: large.read(0, 8))
        assert got == b"" and none == []
        assert f"{url}/big.bin: not read ({len(big)} B): the server ignores Range" in large.last_error
        assert any("ignores Range" in p for p in remote.problems())
    finally:
        s3_server.ignore_range = False


# ---- keys that are no path -------------------------------------------------------------
def test_keys_with_dot_segments_are_findings_never_followed(s3_server, dense, capsys):
    url = s3_server.upload(dense, "s3://races/dots")
    client = s3_server.client()
    odd = ["dots/__fragments/../x", "dots/__fragments/./__fragments/y", "dots/__meta/..",
           "dots/a//b", "dots/./__schema/z"]
    for key in odd:
        client.put_object(Bucket="races", Key=key, Body=b"abc")
    listed = {k["Key"] for k in client.list_objects_v2(Bucket="races", Prefix="dots/")["Contents"]}
    assert set(odd) <= listed                     # the store keeps them verbatim
    store = remote.RemoteStore(url)
    assert [k for k, _why in store.bad_keys()] == sorted(k[len("dots/"):] for k in odd)
    assert all(".." not in e and "/./" not in f"/{e}/" and "//" not in e for e in store.entries())
    import json

    for command in (["fragments", url], ["dump", url], ["verify", url, "--json"]):
        code = main(command)
        out = capsys.readouterr()
        assert "Traceback" not in out.err and "internal error" not in out.out + out.err
        assert code in (0, 1), (command, out.err)
    report = json.loads(out.out)
    found = [f for f in report["findings"] if f["code"] == "object-key-not-a-path"]
    assert sorted(f["message"] for f in found) == sorted(
        f"{k[len('dots/'):]!r}: {remote._key_problem(k[len('dots/'):])}, which names no path "
        f"of the dataset: not followed" for k in odd)
    # the array itself reads as before: the same values as the library's
    code = main(["values", url, "--field", "a", "--json"])
    values = json.loads(capsys.readouterr().out)
    assert code == 0 and values["fragments"][0]["values"][:3] == [-50, -47, -44]

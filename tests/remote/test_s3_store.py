"""RemoteStore over a real S3 API (moto on loopback): our request counts are the server's."""
from __future__ import annotations

from arrayscope.formats.core import remote


def test_counts_match_the_server(s3_server, tmp_path):
    s3_server.bucket("store")
    data = bytes(range(251)) * 20_000            # ~5 MB, every byte known
    (tmp_path / "ds" / "sub").mkdir(parents=True)
    (tmp_path / "ds" / "big.bin").write_bytes(data)
    (tmp_path / "ds" / "sub" / "small").write_bytes(b"abc")
    url = s3_server.upload(str(tmp_path / "ds"), "s3://store/ds")

    def work():
        store = remote.RemoteStore(url, block_size=1 << 20)
        assert store.listdir(url) == ["big.bin", "sub"]
        src = store.open_source(url + "/big.bin")
        assert src.read(10, 5) == data[10:15]
        assert src.read(2_500_000, 10) == data[2_500_000:2_500_010]
        assert src.read(20, 5) == data[20:25]          # cached
        assert store.open_source(url + "/sub/small").read(0, 10) == b"abc"
        return store
    store, seen = s3_server.count(work)
    assert store.stats.snapshot()[0] == len(seen) == 4, seen
    ranges = [r[3] for r in seen if r[3]]
    # an object's last block asks one byte past its listed end (a grown object shows)
    assert ranges == ["bytes=0-1048575", "bytes=2097152-3145727", "bytes=0-3"]
    assert store.stats.snapshot()[1] == 2 * (1 << 20) + 3


def test_missing_bucket_is_a_clear_error(s3_server):
    store = remote.RemoteStore("s3://no-such-bucket-arrayscope/x")
    try:
        entries = store.entries()
    except remote.RemoteError as e:
        assert "no-such-bucket-arrayscope" in str(e)
    else:
        assert entries == {}

"""Sharded Zarr v3 arrays (`sharding_indexed`) written by zarr 3.1.6 at test time: the shard
index (at the end or the start, crc32c) annotated and checked, inner chunks decoded as
chunks, missing inner chunks and absent shards read as the fill value, `values` equal to
zarr's read; lazily opened shards decode per inner chunk; damaged indexes are located."""
from __future__ import annotations

import os
import shutil
import struct
import warnings

import numpy as np
import pytest
import zarr
from zarr.codecs import BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, ZstdCodec

from arrayscope import formats
from arrayscope.formats.core.verify import verify
from arrayscope.formats.zarr import PLUGIN
from arrayscope.formats.zarr import tree as ztree
from tests.support.zarr_arrays import check_document, zarr_read

warnings.filterwarnings("ignore", module="zarr")
warnings.filterwarnings("ignore", category=UserWarning)


def values_of(doc, name="value"):
    [entry] = PLUGIN.values(doc, name)
    return entry


def assert_values(doc, truth: np.ndarray):
    entry = values_of(doc)
    assert "error" not in entry, entry.get("error")
    want = np.ascontiguousarray(truth).reshape(-1)
    assert entry["raw"] == want.astype(want.dtype.newbyteorder("<")).tobytes()
    got = np.array(entry["values"], dtype=want.dtype)
    np.testing.assert_array_equal(got, want)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """int32 10×13, shards 4×6 of inner chunks 2×3 (zstd), only part written: absent shards,
    missing inner chunks, edge shards that stick out of the array."""
    path = str(tmp_path_factory.mktemp("shard") / "a")
    z = zarr.create_array(path, shape=(10, 13), chunks=(2, 3), shards=(4, 6), dtype="<i4",
                          fill_value=-7, compressors=[ZstdCodec(level=1)])
    z[:5, 2:9] = np.arange(35, dtype="<i4").reshape(5, 7) * 3 - 50
    z[9, 12] = 99
    return path


def test_sharded_array_opens_clean_and_values_equal_zarrs(sharded):
    doc = check_document(sharded)
    meta = doc.model.arrays["."]
    sp = meta.shard
    assert sp is not None and sp.per_shard == (2, 2) and sp.index_crc and sp.index_at_end
    assert meta.chunks == (4, 6) and sp.inner.chunks == (2, 3) and sp.inner.grid == (5, 5)
    assert not [n for n in doc.diagnostics() if n.status in ("error", "warning")]
    assert_values(doc, zarr_read(sharded))
    shard = doc.root.resolve("c/0/0")
    index = shard["Shard index"]
    assert index.size == 4 * 16 + 4 and index.offset + index.size == shard.size
    crc = index["CRC32C"]
    from arrayscope.formats.zarr.codecs.simple import crc32c
    raw = open(os.path.join(sharded, "c", "0", "0"), "rb").read()
    assert crc.value == crc32c(raw[index.offset:index.offset + 64])
    # inner chunk [0, 0] (rows 0-1, cols 0-2) holds written cells: present; its records
    # are zarr's values
    inner = shard["Inner chunk [0, 0]"]
    recs = inner["Records"]
    assert recs.child_count() == 6
    truth = zarr_read(sharded)
    assert recs.child(2).value == int(truth[0, 2]) == -50


def test_sharded_verify_finds_nothing(sharded):
    doc = formats.open(sharded)
    assert [f for f in verify(doc) if f.status in ("error", "warning")] == []


def test_index_at_start_gzip_float(tmp_path):
    path = str(tmp_path / "s")
    codec = ShardingCodec(chunk_shape=(5,), codecs=[BytesCodec(endian="big"), GzipCodec(level=1)],
                          index_codecs=[BytesCodec(endian="big"), Crc32cCodec()],
                          index_location="start")
    z = zarr.create_array(path, shape=(23,), chunks=(10,), dtype="<f8", serializer=codec,
                          compressors=None, fill_value=0.5)
    z[:] = np.linspace(-3, 7, 23)
    z[4:6] = np.nan
    doc = check_document(path)
    sp = doc.model.arrays["."].shard
    assert sp is not None and not sp.index_at_end and sp.index_endian == ">"
    shard = doc.root.resolve("c/0")
    assert shard["Shard index"].offset == 0
    got = np.array(values_of(doc)["values"], dtype="f8")
    np.testing.assert_array_equal(got, zarr_read(path))
    assert [f for f in verify(doc) if f.status in ("error", "warning")] == []


def test_lazy_shards_decode_per_inner_chunk(sharded, monkeypatch):
    monkeypatch.setattr(ztree, "EAGER_MAX_CHUNKS", 1)
    monkeypatch.setattr(ztree, "EAGER_MAX_BYTES", 16)
    doc = formats.open(sharded)
    inner = doc.root.resolve("c/0/0")["Inner chunk [0, 0]"]
    dec = inner["decoded"]
    assert dec.pending and not [s for s in doc.derived if "[0, 0]" in s.name]
    assert [f for f in verify(doc) if f.status in ("error", "warning")] == []
    assert dec.pending   # verify built it and released it
    assert not [s for s in doc.derived if " ← " in s.name]
    assert dec.child_count() > 0 and dec["Records"].child_count() == 6
    assert_values(doc, zarr_read(sharded))


# ---- damage, on copies --------------------------------------------------------------------
def _copy(src: str, tmp_path) -> str:
    dst = str(tmp_path / "copy")
    shutil.copytree(src, dst)
    return dst


def _patch(path: str, offset: int, data: bytes) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(data)


def _errors(doc):
    """(node path, message) of every error; each is a shard index finding."""
    from arrayscope.formats.core.findings import ZARR_SHARD_INDEX
    out = [n for n in doc.diagnostics() if n.status == "error"]
    assert all(n.code == ZARR_SHARD_INDEX for n in out if "Shard index" in n.path()
               or n.name == "shard index"), [(n.path(), n.code) for n in out]
    return [(n.path(), n.message) for n in out]


def test_index_crc_mismatch(sharded, tmp_path):
    path = _copy(sharded, tmp_path)
    f = os.path.join(path, "c", "0", "0")
    size = os.path.getsize(f)
    _patch(f, size - 1, bytes([open(f, "rb").read()[-1] ^ 0xFF]))
    doc = formats.open(path)
    [(where, msg)] = _errors(doc)
    assert "/c/0/0/Shard index/" in where and "CRC32C" in msg
    assert "CRC32C" in values_of(doc)["error"]


def test_index_entry_outside_and_overlapping(sharded, tmp_path):
    path = _copy(sharded, tmp_path)
    f = os.path.join(path, "c", "0", "0")
    raw = open(f, "rb").read()
    at = len(raw) - 68
    entries = [struct.unpack_from("<QQ", raw, at + 16 * i) for i in range(4)]
    present = [i for i, e in enumerate(entries) if e[0] != 2**64 - 1]
    assert len(present) >= 2
    a, b = present[:2]
    # entry b now starts inside entry a; entry a's size runs into the index
    new = dict(enumerate(entries))
    new[b] = (entries[a][0] + 1, entries[b][1])
    body = b"".join(struct.pack("<QQ", *new[i]) for i in range(4))
    from arrayscope.formats.zarr.codecs.simple import crc32c
    _patch(f, at, body + struct.pack("<I", crc32c(body)))
    doc = formats.open(path)
    errs = _errors(doc)
    assert errs and all("overlap" in m for _, m in errs)
    assert any(m.startswith(f"index entry {b}: bytes {entries[a][0] + 1}..") for _, m in errs)
    new[a] = (entries[a][0], at + 1 - entries[a][0])   # one byte into the index
    body = b"".join(struct.pack("<QQ", *new[i]) for i in range(4))
    _patch(f, at, body + struct.pack("<I", crc32c(body)))
    doc = formats.open(path)
    msgs = [m for _, m in _errors(doc)]
    assert any(f"entry {a}" in m and "not inside" in m for m in msgs), msgs
    assert "error" in values_of(doc)


def test_shard_shorter_than_its_index(sharded, tmp_path):
    path = _copy(sharded, tmp_path)
    f = os.path.join(path, "c", "0", "0")
    with open(f, "r+b") as fh:
        fh.truncate(40)
    doc = formats.open(path)
    [(where, msg)] = _errors(doc)
    assert "/c/0/0/" in where and "index of 4 entries needs 68" in msg
    entry = values_of(doc)
    assert "68" in entry["error"]
    # the other shards still decode: zarr's values outside shard (0, 0)
    truth = zarr_read(sharded)
    got = np.array(entry["values"]).reshape(truth.shape)
    np.testing.assert_array_equal(got[4:], truth[4:])
    np.testing.assert_array_equal(got[:4, :6], -7)


@pytest.mark.parametrize("lazy", [False, True])
def test_chunk_view_of_an_inner_chunk(sharded, monkeypatch, lazy):
    if lazy:
        monkeypatch.setattr(ztree, "EAGER_MAX_CHUNKS", 1)
    doc = formats.open(sharded)
    shard = doc.root.resolve("c/0/0")
    inner = shard["Inner chunk [0, 0]"]
    view = PLUGIN.chunk_view(doc, inner)
    assert view is not None and view.file_node is inner
    assert [r.label for r in view.rows()][1:] == ["⟲ Codec 1: zstd", "Records"]
    table = view.cell_table(None)
    truth = zarr_read(sharded)
    assert table.row_count() == 6 and table.text(2, 0) == "[0, 2]"
    assert table.text(2, 1) == str(truth[0, 2])
    # the shard itself has no stages or records of its own: no chunk view, no error
    assert PLUGIN.chunk_view(doc, shard["Shard index"]) is None


def test_eager_threshold_counts_inner_chunks(tmp_path):
    """4 shards of 100 inner chunks: 400 chunks to decode, over EAGER_MAX_CHUNKS, so the
    shards open lazily though there are only 4 files."""
    path = str(tmp_path / "many")
    z = zarr.create_array(path, shape=(40, 40), chunks=(2, 2), shards=(20, 20), dtype="<u2",
                          compressors=[ZstdCodec(level=1)])
    z[:] = np.arange(1600, dtype="<u2").reshape(40, 40)
    assert 4 < ztree.EAGER_MAX_CHUNKS < 400
    doc = formats.open(path)
    assert sum(1 for n in doc.root.walk() if n.name == "decoded" and n.pending) == 400
    assert not [s for s in doc.derived if " ← " in s.name]
    assert [f for f in verify(doc) if f.status in ("error", "warning")] == []
    assert_values(doc, zarr_read(path))


def test_sharded_strings(tmp_path):
    """zarr 3.1.6 shards a string array: inner chunks encoded vlen-utf8 + zstd."""
    path = str(tmp_path / "s")
    z = zarr.create_array(path, shape=(11,), chunks=(2,), shards=(4,), dtype=str)
    z[:7] = np.array(["a", "bé", "", "日本", "x" * 50, "q", "zz"])
    doc = check_document(path)
    assert doc.model.arrays["."].shard.inner.vlen == "vlen-utf8"
    assert [f for f in verify(doc) if f.status in ("error", "warning")] == []
    entry = values_of(doc)
    assert "error" not in entry and entry["values"] == zarr_read(path).tolist()
    assert entry["values"][3] == "日本" and entry["values"][7:] == ["", "", "", ""]


def test_one_shard_file_opened_alone(sharded):
    doc = formats.open(os.path.join(sharded, "c", "0", "0"))
    root = doc.root
    assert root["Shard index"].offset + root["Shard index"].size == root.size
    assert root["Inner chunk [0, 0]"]["Records"].child_count() == 6
    assert not [n for n in doc.diagnostics() if n.status in ("error", "warning")]


def test_transpose_inside_shards(tmp_path):
    """zarr 3.1.6 puts a transpose filter among the inner chunks' codecs."""
    from zarr.codecs import TransposeCodec

    path = str(tmp_path / "t")
    z = zarr.create_array(path, shape=(6, 5), chunks=(2, 3), shards=(6, 6), dtype="<i2",
                          filters=[TransposeCodec(order=(1, 0))])
    z[:] = np.arange(30, dtype="<i2").reshape(6, 5) * 11 - 100
    doc = check_document(path)
    assert doc.model.arrays["."].shard.inner.perm == (1, 0)
    assert verify(doc) == []
    assert_values(doc, zarr_read(path))


def test_transpose_before_sharding_is_unchecked_not_an_error(tmp_path):
    """A layout the spec allows and arrayscope does not decode (a transpose outside the
    sharding codec): warnings (unchecked), never an error."""
    import json

    from arrayscope.formats.core.findings import UNCHECKED

    path = str(tmp_path / "t")
    z = zarr.create_array(path, shape=(6, 4), chunks=(2, 2), shards=(6, 4), dtype="<i2")
    z[:] = np.arange(24, dtype="<i2").reshape(6, 4)
    with open(os.path.join(path, "zarr.json")) as fh:
        meta = json.load(fh)
    meta["codecs"].insert(0, {"name": "transpose", "configuration": {"order": [1, 0]}})
    with open(os.path.join(path, "zarr.json"), "w") as fh:
        json.dump(meta, fh)
    doc = formats.open(path)
    found = verify(doc)
    assert found and all(f.status == "warning" and f.code == UNCHECKED for f in found), found
    assert any("transpose before sharding_indexed" in f.message for f in found)


def test_unreferenced_bytes_in_a_shard(sharded, tmp_path):
    """Five bytes slipped in before the index: every entry still holds, the bytes are a
    warning of their own code, located, and the values are unchanged."""
    from arrayscope.formats.core.findings import ZARR_SHARD_UNREFERENCED

    path = _copy(sharded, tmp_path)
    f = os.path.join(path, "c", "0", "0")
    raw = open(f, "rb").read()
    with open(f, "wb") as fh:
        fh.write(raw[:-68] + b"\0junk" + raw[-68:])
    doc = formats.open(path)
    [w] = [f for f in verify(doc) if f.status != "info"]
    assert (w.status, w.code, w.source, w.offset) == ("warning", ZARR_SHARD_UNREFERENCED,
                                                      "c/0/0", len(raw) - 68)
    assert_values(doc, zarr_read(sharded))


def test_half_missing_index_entry(sharded, tmp_path):
    from arrayscope.formats.zarr.codecs.simple import crc32c

    path = _copy(sharded, tmp_path)
    f = os.path.join(path, "c", "0", "0")
    raw = open(f, "rb").read()
    at = len(raw) - 68
    body = bytearray(raw[at:at + 64])
    body[8:16] = b"\xff" * 8                      # entry 0: offset kept, nbytes "missing"
    _patch(f, at, bytes(body) + struct.pack("<I", crc32c(bytes(body))))
    doc = formats.open(path)
    [(where, msg)] = _errors(doc)
    assert msg.startswith("index entry 0:") and "only one of them" in msg
    assert "index entry 0" in values_of(doc)["error"]

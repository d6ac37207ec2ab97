"""`arrayscope salvage` on Zarr stores zarr-python wrote (v2, v3, sharded v3, consolidated),
each damaged in one zstd frame so that zarr refuses the read: the copy opens, every kept
value equals the original's, the damaged chunk (or inner chunk) reads as fill, verify is
clean and the damaged store is unchanged."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

from tests.salvage.support import (  # noqa: E402
    break_zstd_frame,
    lost_parts,
    salvage_cli,
    tree_hash,
    verify_exit,
)


def _zstd(fmt: int):
    if fmt == 2:
        import numcodecs
        return numcodecs.Zstd(level=1)
    from zarr.codecs import ZstdCodec
    return ZstdCodec(level=1)


@pytest.mark.parametrize("fmt,key", [(2, "3.4"), (3, "c/3/4")])
def test_chunk_left_out_reads_as_fill(tmp_path, capsys, fmt, key):
    src, out = str(tmp_path / "z"), str(tmp_path / "out")
    a = zarr.create_array(src, shape=(45, 50), chunks=(10, 10), dtype="f8", zarr_format=fmt,
                          compressors=[_zstd(fmt)], fill_value=-1.0)
    data = np.arange(45 * 50, dtype="f8").reshape(45, 50)
    a[:] = data
    break_zstd_frame(os.path.join(src, *key.split("/")))
    with pytest.raises(Exception):   # zarr refuses the chunk (and so the whole read)
        zarr.open_array(src, mode="r")[:]
    h = tree_hash(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert (lost["kind"], lost["name"], lost["cells"]) == ("chunk", key, 100)
    assert rep["totals"]["."]["value"] == {"kept": 45 * 50 - 100, "lost": 100}
    got = zarr.open_array(out, mode="r")[:]
    hole = np.zeros(data.shape, bool)
    hole[30:40, 40:50] = True
    assert np.array_equal(got[~hole], data[~hole]) and (got[hole] == -1.0).all()
    assert verify_exit(out) == (0, [])
    assert tree_hash(src) == h


def test_sharded_inner_chunk_dropped_and_index_rewritten(tmp_path, capsys):
    src, out = str(tmp_path / "g"), str(tmp_path / "out")
    g = zarr.open_group(src, mode="w", zarr_format=3)
    s = g.create_array("s", shape=(64, 60), chunks=(8, 8), shards=(32, 32), dtype="i4",
                       compressors=[_zstd(3)], fill_value=7)
    data = np.arange(64 * 60, dtype="i4").reshape(64, 60)
    s[:] = data
    shard = os.path.join(src, "s", "c", "1", "0")
    # inner chunk [1, 1] of shard (1, 0): entry 1 * 4 + 1 of the index at the shard's end
    # (16 entries of u64 offset, nbytes, then a CRC32C); zarr writes chunks in Morton order
    raw = open(shard, "rb").read()
    index = np.frombuffer(raw[-(16 * 16 + 4):-4], "<u8").reshape(16, 2)
    off = int(index[5, 0])
    assert raw[off:off + 4] == b"\x28\xb5\x2f\xfd"
    with open(shard, "r+b") as f:
        f.seek(off + 4)
        f.write(bytes([raw[off + 4] | 0x08]))   # a reserved bit of its frame header
    with pytest.raises(Exception):
        zarr.open_array(os.path.join(src, "s"), mode="r")[:]
    h = tree_hash(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert (lost["kind"], lost["name"], lost["cells"]) == ("inner-chunk", "c/1/0 [1, 1]", 64)
    assert rep["totals"]["s"]["value"] == {"kept": 64 * 60 - 64, "lost": 64}
    assert os.path.getsize(os.path.join(out, "s", "c", "1", "0")) < os.path.getsize(shard)
    got = zarr.open_array(os.path.join(out, "s"), mode="r")[:]
    hole = np.zeros(data.shape, bool)
    hole[40:48, 8:16] = True
    assert np.array_equal(got[~hole], data[~hole]) and (got[hole] == 7).all()
    assert verify_exit(out) == (0, [])
    assert tree_hash(src) == h


def test_v2_consolidated_metadata_names_what_out_holds(tmp_path, capsys):
    src, out = str(tmp_path / "g"), str(tmp_path / "out")
    g = zarr.open_group(src, mode="w", zarr_format=2)
    for name in ("a", "b"):
        arr = g.create_array(name, shape=(20,), chunks=(10,), dtype="i8",
                             compressors=[_zstd(2)], fill_value=0)
        arr[:] = np.arange(20) + 1
    zarr.consolidate_metadata(src)
    with open(os.path.join(src, "b", ".zarray"), "r+b") as f:
        f.write(b"{{{{")                # b's metadata no longer parses
    break_zstd_frame(os.path.join(src, "a", "1"))
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    assert sorted((p["kind"], p["array"], p["cells"]) for p in lost_parts(rep)) == \
        [("array", "b", None), ("chunk", "a", 10)]   # b's shape is not known
    assert not os.path.exists(os.path.join(out, "b"))
    meta = json.load(open(os.path.join(out, ".zmetadata")))["metadata"]
    assert "a/.zarray" in meta and not [k for k in meta if k.startswith("b/")]
    got = zarr.open_consolidated(out, mode="r")
    assert list(got["a"][:]) == list(range(1, 11)) + [0] * 10
    assert verify_exit(out) == (0, [])


def test_clean_store_copied_whole(tmp_path, capsys):
    src, out = str(tmp_path / "z"), str(tmp_path / "out")
    zarr.create_array(src, shape=(30,), chunks=(10,), dtype="u2", zarr_format=3)[:] = 5
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 0 and not lost_parts(rep)
    assert tree_hash(src) == tree_hash(out)


def test_v3_consolidated_metadata_loses_a_dropped_array(tmp_path, capsys):
    src, out = str(tmp_path / "g"), str(tmp_path / "out")
    g = zarr.open_group(src, mode="w", zarr_format=3)
    for name in ("a", "b"):
        g.create_array(name, shape=(20,), chunks=(10,), dtype="i8", fill_value=0)[:] = 3
    zarr.consolidate_metadata(src)
    with open(os.path.join(src, "b", "zarr.json"), "r+b") as f:
        f.write(b"{{{{")
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3 and [(p["kind"], p["array"]) for p in lost_parts(rep)] == [("array", "b")]
    cm = json.load(open(os.path.join(out, "zarr.json")))["consolidated_metadata"]["metadata"]
    assert sorted(cm) == ["a"]
    got = zarr.open_group(out, mode="r", use_consolidated=True)
    assert sorted(got.array_keys()) == ["a"] and list(got["a"][:]) == [3] * 20
    assert verify_exit(out) == (0, [])


def test_damaged_attributes_left_out_text_report(tmp_path, capsys):
    from arrayscope.explorer.cli import main

    src, out = str(tmp_path / "g"), str(tmp_path / "out")
    g = zarr.open_group(src, mode="w", zarr_format=2)
    a = g.create_array("a", shape=(20,), chunks=(10,), dtype="i4", fill_value=0,
                       attributes={"unit": "m"})
    a[:] = 5
    with open(os.path.join(src, "a", ".zattrs"), "w") as f:
        f.write('{"unit": ')
    assert main(["salvage", src, out]) == 3
    text = capsys.readouterr().out.splitlines()
    assert text[0] == "left out: attributes a/.zattrs" and text[1].startswith("  parse-error: a/.zattrs:")
    assert "a: value: 20 cells kept, 0 lost" in text
    got = zarr.open_array(os.path.join(out, "a"), mode="r")
    assert list(got[:]) == [5] * 20 and dict(got.attrs) == {}
    assert verify_exit(out) == (0, [])


def test_dry_run_on_a_sharded_store_writes_nothing(tmp_path, capsys):
    src, out = str(tmp_path / "s"), str(tmp_path / "out")
    zarr.create_array(src, shape=(16,), chunks=(4,), shards=(8,), dtype="i2",
                      compressors=[_zstd(3)], zarr_format=3)[:] = 1
    break_zstd_frame(os.path.join(src, "c", "1"))
    code, dry = salvage_cli(src, out, "--dry-run", capsys=capsys)
    assert code == 3 and not os.path.exists(out)
    code, real = salvage_cli(src, out, capsys=capsys)
    assert code == 3 and dry["parts"] == real["parts"]
    assert [p["cells"] for p in lost_parts(real)] == [4]

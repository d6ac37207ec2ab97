"""Robustness of this session's surfaces (sharding, crc codecs, `.upd` commits, group health,
writer rules, the chunk view): hand cases found by tests/fuzz/run_fuzz.py --surfaces, and a
small sample of its campaign (~100 mutations per target family) in the default suite."""
import json
import os
import shutil
import struct
import zlib

import pytest

from arrayscope import formats
from arrayscope.formats.core import registry
from arrayscope.formats.core.verify import verify
from arrayscope.formats.zarr.codecs.simple import crc32c
from arrayscope.formats.zarr.records import inside_mask
from tests.fuzz.surfaces import DATA, exercise_all, run_surface_campaign
from tests.support.mutations import time_limit

TS = os.path.join(DATA, "zarr", "tensorstore_0.1.86")


def _copy(rel: str, tmp_path) -> str:
    dst = str(tmp_path / os.path.basename(rel))
    shutil.copytree(os.path.join(DATA, rel), dst)
    return dst


def _records_table(doc):
    """The cell table of the first chunk view of `doc` that has one."""
    for n in doc.root.walk(expand_lazy=True):
        cv = registry.chunk_view(doc, n)
        if cv is not None:
            cv.open(None)
            table = cv.cell_table(None)
            if table is not None:
                return table
    return None


@pytest.mark.parametrize("chunks", [2 ** 30, 2 ** 31])   # 2^31: meta.MAX_CHUNK_RECORDS
def test_inflated_chunk_shape_allocates_for_the_records_present(tmp_path, chunks):
    """`.zarray` chunks [4] -> [2^31] over a 16-byte chunk file: the edge mask was a grid
    of the declared chunk (np.indices over 2^31 records: 16 GiB, 104 s) sliced to the 4
    records present. Now it is made for the records present only."""
    path = _copy("zarr/tensorstore_0.1.86/v2_f4_none", tmp_path)
    meta = json.load(open(os.path.join(path, ".zarray")))
    meta["chunks"] = [chunks]
    json.dump(meta, open(os.path.join(path, ".zarray"), "w"))
    with time_limit(30):
        doc = formats.open(path)
        findings = verify(doc)
        table = _records_table(doc)
    assert any(f.status == "error" for f in findings)     # 16 bytes for a 2^31-record chunk
    assert table is not None
    assert table.row_count() == 4
    assert table.inside is not None and table.inside.tolist() == [True] * 4
    assert table.text(3, 0) == "[3]"
    doc.close()


def test_inside_mask_is_sized_by_the_count_not_the_declared_chunk():
    class Meta:
        shape, chunks, perm = (10,), (2 ** 40,), (0,)

        def storage_shape(self):
            return self.chunks
    assert inside_mask(Meta(), (0,), 12).tolist() == [True] * 10 + [False] * 2
    assert inside_mask(Meta(), (0,), 0).tolist() == []


def test_shard_entry_covering_two_others_flags_both(tmp_path):
    """Entry 0 over bytes 0..66 covers entry 1 (10..15) and entry 2 (33..66), which do not
    overlap each other: both are reported (comparing neighbours only missed entry 2)."""
    path = _copy("zarr/tensorstore_0.1.86/v3_shard_i4", tmp_path)
    shard = os.path.join(path, "c", "0", "0")
    data = bytearray(open(shard, "rb").read())
    at = len(data) - 4 * 16 - 4                        # 2x2 entries + crc32c, at the end
    assert struct.unpack_from("<QQ", data, at) == (0, 33)      # what tensorstore wrote
    assert struct.unpack_from("<QQ", data, at + 32) == (33, 33)
    struct.pack_into("<QQ", data, at, 0, 66)
    struct.pack_into("<QQ", data, at + 16, 10, 5)
    struct.pack_into("<I", data, at + 64, crc32c(bytes(data[at:at + 64])))
    open(shard, "wb").write(bytes(data))
    doc = formats.open(path)
    msgs = [f.message for f in verify(doc) if f.status == "error" and f.source == "c/0/0"]
    doc.close()
    assert any("index entry 1: bytes 10..15 overlap entry 0's 0..66" in m for m in msgs), msgs
    assert any("index entry 2: bytes 33..66 overlap entry 0's 0..66" in m for m in msgs), msgs


def test_exercise_all_on_intact_surface_fixtures_is_clean():
    """The harness itself on clean bytes: no error on the sharded and crc fixtures."""
    for name in ("v3_shard_i4", "v3_shard_start_f8", "v3_f4_zstd_crc"):
        findings = exercise_all(os.path.join(TS, name))
        assert not [f for f in findings if f.status == "error"], (name, findings[:3])


# the default suite's sample of the campaign: ~100 mutations per target family
SAMPLES = [("zarr/tensorstore_0.1.86/v3_shard_i4", 40), ("zarr/tensorstore_0.1.86/v3_shard_start_f8", 30),
           ("zarr/tensorstore_0.1.86/v3_layout_sharded", 30),
           ("zarr/tensorstore_0.1.86/v3_f4_zstd_crc", 50), ("zarr/tensorstore_0.1.86/v2_struct_blosc", 50),
           ("tiledb_updates/sparse_upd", 50), ("writer_rules/2.30.0/dd_bwr_offsets", 50),
           ("writer_rules/wrapping/1.5.0/bwr_lost_padded", 50)]


@pytest.mark.parametrize("rel,count", SAMPLES, ids=[s[0].rsplit("/", 1)[-1] for s in SAMPLES])
def test_surface_mutations_never_escape(tmp_path, rel, count):
    runs, crashes, hangs, _peak, _slow = run_surface_campaign(
        os.path.join(DATA, rel), str(tmp_path), count, seed=zlib.crc32(rel.encode()),
        budget=30, log=lambda *_: None)
    assert runs == count
    assert not crashes, crashes[:3]
    assert not hangs, hangs[:3]


def test_dense_domain_flip_allocates_for_the_tiles_stored(tmp_path):
    """One flipped bit in a dense fragment's non-empty domain ([0, 2] -> [0, 268435458]):
    verify made a list of 89 M expected tile counts and 2^28 coordinates per dimension
    (158 s, 12 GiB peak RSS in the fuzz run). Now: the same findings, no such allocation."""
    import glob
    import tracemalloc

    path = _copy("writer_rules/2.19.2/dd_bwr_offsets", tmp_path)
    fmd = glob.glob(os.path.join(path, "__fragments", "__1_*", "__fragment_metadata.tdb"))[0]
    data = bytearray(open(fmd, "rb").read())
    data[2772] ^= 1 << 4
    open(fmd, "wb").write(bytes(data))
    tracemalloc.start()
    try:
        with time_limit(30):
            findings = exercise_all(path)
        _cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, f"peak {peak >> 20} MiB"
    msgs = {(f.code, f.message) for f in findings if f.status == "error"}
    assert ("dense-domain-outside-array", "the fragment's domain of 'd' is [0, 268435458], "
            "outside the array domain [0, 2]") in msgs, msgs
    assert any(c == "cell-count-mismatch" and "implies 89478487" in m for c, m in msgs), msgs


def test_dense_coords_refuse_a_domain_beyond_the_stored_tiles():
    from arrayscope.formats.tiledb.values.dense_coords import fragment_dense_coords

    doc = formats.open(os.path.join(DATA, "writer_rules", "2.19.2", "dd_bwr_offsets"))
    frag = doc.model.fragments[0]
    fm, schema = frag.metadata, doc.model.schema_for(frag.metadata.schema_name)
    assert fragment_dense_coords(schema, fm, 0).tolist() == [0, 1, 2]   # intact: as written
    fm.non_empty_domain = [[0, 268435458]]
    with pytest.raises(ValueError, match="spans 89478487 tiles; the fragment stores 1"):
        fragment_dense_coords(schema, fm, 0)
    doc.close()


def test_struct_chunk_with_no_whole_record_has_an_empty_cell_table(tmp_path):
    """Bit 5 of byte 4 of a blosc chunk header (v2 struct array, tensorstore): the chunk
    decodes to 7 bytes, no whole 13-byte record. The cell table made a numpy view at the
    second field's offset into b"" (ValueError to the window); now it has no rows."""
    path = _copy("zarr/tensorstore_0.1.86/v2_struct_blosc", tmp_path)
    p = os.path.join(path, "0")
    data = bytearray(open(p, "rb").read())
    data[4] ^= 1 << 5
    open(p, "wb").write(bytes(data))
    doc = formats.open(path)
    findings = verify(doc)
    tables = []
    for n in doc.root.walk(expand_lazy=True):
        cv = registry.chunk_view(doc, n)
        if cv is not None and getattr(cv.node, "name", "") == "0":
            cv.open(None)
            tables.append(cv.cell_table(None))
    doc.close()
    assert any(f.status == "error" and f.source == "0 ← blosc" and "has 7 bytes" in f.message
               for f in findings)
    assert tables and tables[0] is not None and tables[0].row_count() == 0

"""Damaged archives: each cross-file rule reports at the offending byte, nothing raises."""
from __future__ import annotations

import os
import shutil
import time

import numpy as np
import pytest

from arrayscope import formats
from arrayscope.formats.core import engine
from arrayscope.formats.scdl import PLUGIN
from tests.support.scdl_builders import array_desc, fi_desc, fixture, header_bytes


@pytest.fixture
def basic(tmp_path):
    dst = tmp_path / "basic"
    shutil.copytree(fixture("basic"), dst)
    return dst


def patch(path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(data)


def open_checked(path):
    doc = formats.open(str(path))
    for src in doc.sources:
        assert engine.coverage(doc.root, src) == (src.size, src.size), src.name
    assert not any(n.name.startswith("internal") for n in doc.root.walk())
    return doc


def errors(doc):
    return [n for n in doc.diagnostics() if n.status == "error"]


def test_row_pointers_must_not_decrease(basic):
    patch(basic / "row_ptr.npy", 5, bytes([1]))       # [.., 7, 1, 11, ..]
    doc = open_checked(basic)
    [e] = [n for n in errors(doc) if "non-decreasing" in (n.message or "")]
    assert e.source.name == "row_ptr.npy" and e.offset == 5 and e.size == 1
    assert "ROWPTR[5] = 1 is less than ROWPTR[4] = 7" in e.message


def test_row_pointers_start_at_zero_and_end_at_nnz(basic):
    rp = np.fromfile(basic / "row_ptr.npy", np.uint8)
    patch(basic / "row_ptr.npy", len(rp) - 1, bytes([31]))
    doc = open_checked(basic)
    [e] = errors(doc)
    assert e.offset == len(rp) - 1 and "expected nnz = 32" in e.message and "found 31" in e.message
    patch(basic / "row_ptr.npy", 0, bytes([1]))
    doc = open_checked(basic)
    assert any(n.offset == 0 and "ROWPTR[0]: expected 0, found 1" in n.message
               for n in errors(doc))


def test_column_index_below_feature_count(basic):
    patch(basic / "col_ptr.npy", 7, bytes([10]))      # 10 genes: indices 0..9
    doc = open_checked(basic)
    [e] = errors(doc)
    assert e.source.name == "col_ptr.npy" and e.offset == 7
    assert "must be below 10" in e.message and "var_features/dataframe_0.parquet" in e.message


def test_data_file_shorter_than_the_header_says(basic):
    with open(basic / "data.npy", "r+b") as fh:
        fh.truncate(127)
    doc = open_checked(basic)
    msgs = [(n.source.name, n.offset, n.message) for n in errors(doc)]
    assert any(s == "header.sch" and "data.npy has 127 bytes" in m for s, o, m in msgs)
    partial = doc.root["data.npy"]["partial item"]
    assert partial.status == "error" and partial.offset == 124 and partial.size == 3


def test_data_and_colptr_counts_must_agree(basic):
    # a consistent header for a 31-item col_ptr.npy: DATA has 32 items, COLPTR 31
    with open(basic / "col_ptr.npy", "r+b") as fh:
        fh.truncate(31)
    h = bytearray((basic / "header.sch").read_bytes())
    h[70:78] = (31).to_bytes(8, "big")                  # COLPTR length
    (basic / "header.sch").write_bytes(bytes(h))
    doc = open_checked(basic)
    assert any("31 column indices but data.npy has 32" in n.message for n in errors(doc))


def test_missing_array_file(basic):
    os.remove(basic / "col_ptr.npy")
    doc = open_checked(basic)
    e = doc.root["header.sch"]["Array descriptors"]["Array 3"]
    assert e.status == "error" and "col_ptr.npy is missing" in e.message
    [entry] = PLUGIN.values(doc, "COLPTR")
    assert "missing" in entry["error"]


def test_missing_index_file(basic):
    os.remove(basic / "var_features" / "labels.npy")
    doc = open_checked(basic)
    p = doc.root["header.sch"]["Feature indices"]["Feature index 1"]["index_files"][
        "Index file 2"]["path"]
    assert p.status == "error" and "missing" in p.message


def test_bad_magic_in_an_archive(basic):
    patch(basic / "header.sch", 0, b"XCDL")
    doc = open_checked(basic)
    assert doc.format == "scdl"
    m = doc.root["header.sch"]["magic"]
    assert m.status == "error" and m.offset == 0


def test_truncated_header_in_an_archive(basic):
    with open(basic / "header.sch", "r+b") as fh:
        fh.truncate(50)                               # inside Array 2
    doc = open_checked(basic)
    assert errors(doc)
    # DATA is still typed from the first descriptor; ROWPTR/COLPTR are shown unparsed
    assert doc.root["data.npy"]["DATA"].type == "float32 le[32]"
    assert doc.root["row_ptr.npy"].child(0).kind == "unparsed"


def test_metadata_json_syntax_error(basic):
    (basic / "metadata.json").write_bytes(b'{"num_rows": 20,}')
    doc = open_checked(basic)
    e = doc.root["metadata.json"]["invalid JSON"]
    assert e.status == "error" and e.offset == 16 and "expected a key" in e.message


def test_metadata_num_rows_mismatch_is_a_warning(basic):
    (basic / "metadata.json").write_bytes(b'{"num_rows": 7}')
    doc = open_checked(basic)
    n = doc.root["metadata.json"]["num_rows"]
    assert n.status == "warning" and "20 rows" in n.message
    assert not errors(doc)


def test_cumulative_sum_index_mismatch(basic):
    import io
    buf = io.BytesIO()
    np.save(buf, np.array([-1, 19]))
    (basic / "var_features" / "cumulative_sum_index.npy").write_bytes(buf.getvalue())
    doc = open_checked(basic)
    d = doc.root["var_features"]["cumulative_sum_index.npy"]["data"]
    assert d.status == "error" and "ends at 19 rows" in d.message


def test_damaged_parquet(basic):
    p = basic / "var_features" / "dataframe_0.parquet"
    data = p.read_bytes()
    p.write_bytes(data[:-3])
    doc = open_checked(basic)
    node = doc.root["var_features"]["dataframe_0.parquet"]
    assert node.status == "ok" or errors(doc)
    assert any(n.source.name.endswith("dataframe_0.parquet") for n in errors(doc))
    p.write_bytes(b"PAR1")
    doc = open_checked(basic)
    assert doc.root["var_features"]["dataframe_0.parquet"]["truncated"].status == "error"
    p.write_bytes(data[:-8] + (10**6).to_bytes(4, "little") + b"PAR1")
    doc = open_checked(basic)
    assert doc.root["var_features"]["dataframe_0.parquet"]["footer_length"].status == "error"


def test_foreign_file_is_unparsed_warning(basic):
    (basic / "notes.txt").write_bytes(b"hello")
    doc = open_checked(basic)
    n = doc.root["notes.txt"].child(0)
    assert n.kind == "unparsed" and n.status == "warning"


def test_spec_style_file_name_in_header(basic):
    """The document says names are file names; the library writes member names. A header
    naming 'data.npy' still types the file, with a warning on the name."""
    hdr = header_bytes([array_desc("data.npy", 32, 6), array_desc("ROWPTR", 21, 1),
                        array_desc("COLPTR", 32, 1)], [])
    (basic / "header.sch").write_bytes(hdr)
    doc = open_checked(basic)
    assert doc.root["data.npy"]["data.npy"].type == "float32 le[32]"
    name = doc.root["header.sch"]["Array descriptors"]["Array 1"]["name"]
    assert name.status == "warning" and "KeyError" in name.message
    assert "data.npy" in PLUGIN.field_names(doc)


def test_string_dtype_array_shown_as_bytes(basic):
    hdr = header_bytes([array_desc("DATA", 32, 8), array_desc("ROWPTR", 21, 1),
                        array_desc("COLPTR", 32, 1)], [fi_desc("var_features", 20, 8, [])])
    (basic / "header.sch").write_bytes(hdr)
    doc = open_checked(basic)
    d = doc.root["data.npy"]["DATA"]
    assert d.kind == "bytes" and d.status == "warning"
    assert "error" in PLUGIN.values(doc, "DATA")[0]


def test_header_without_feature_dirs_in_it(basic):
    hdr = header_bytes([array_desc("DATA", 32, 6), array_desc("ROWPTR", 21, 1),
                        array_desc("COLPTR", 32, 1)], [])
    (basic / "header.sch").write_bytes(hdr)
    doc = open_checked(basic)
    assert "var_features/ is not described" in doc.root.message
    assert not errors(doc)


def test_legacy_archive_made_by_removing_the_header(basic):
    os.remove(basic / "header.sch")
    doc = open_checked(basic)
    assert doc.root.status == "warning"
    # 0.1.3 wrote uint8 row pointers: read as the legacy uint64 they make no sense
    assert errors(doc)


def test_big_array_is_lazy_and_checked_fast(tmp_path):
    n_rows, nnz = 200_000, 4_000_000
    d = tmp_path / "big"
    d.mkdir()
    rng = np.random.default_rng(0)
    rp = np.sort(rng.integers(0, nnz, n_rows + 1)).astype(np.uint32)
    rp[0], rp[-1] = 0, nnz
    rp.tofile(d / "row_ptr.npy")
    np.zeros(nnz, np.float32).tofile(d / "data.npy")
    np.zeros(nnz, np.uint16).tofile(d / "col_ptr.npy")
    (d / "header.sch").write_bytes(header_bytes(
        [array_desc("DATA", nnz, 6), array_desc("ROWPTR", n_rows + 1, 3),
         array_desc("COLPTR", nnz, 2)], []))
    t = time.process_time()   # CPU seconds: a busy machine does not inflate them
    doc = formats.open(str(d))
    elapsed = time.process_time() - t
    data = doc.root["data.npy"]["DATA"]
    assert data.is_lazy and data.value is None and data.child_count() == nnz
    assert data.child(nnz - 1).offset == 4 * (nnz - 1)
    assert not errors(doc)
    assert elapsed < 5, elapsed

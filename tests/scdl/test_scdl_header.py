"""header.sch, field by field, from hand-made bytes: every branch, every rule, every cut."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.scdl_builders import (
    array_desc,
    errors,
    fi_desc,
    fixture,
    full_coverage,
    header_bytes,
    parse,
    warnings_,
)

BASIC = [array_desc("DATA", 280, 6), array_desc("ROWPTR", 51, 2), array_desc("COLPTR", 280, 1)]


def test_core_fields_named_as_the_document():
    root, model, src = parse(header_bytes(BASIC, []))
    names = [c.name for c in root.children]
    assert names == ["magic", "version_major", "version_minor", "version_point", "endianness",
                     "backend", "array_count", "Array descriptors", "Feature indices"]
    assert root["magic"].value == "SCDL"
    assert (root["version_major"].value, root["version_minor"].value,
            root["version_point"].value) == (0, 1, 0)
    assert root["endianness"].display == "1 (NETWORK)"
    assert root["backend"].display == "1 (MEMMAP_V0)"
    a1 = root["Array descriptors"]["Array 1"]
    assert [c.name for c in a1.children] == ["name_len", "name", "length", "dtype", "has_shape"]
    assert a1["dtype"].value == 6 and a1["dtype"].display == "6 (FLOAT32_ARRAY)"
    assert a1["name"].value == "DATA" and a1["length"].value == 280
    assert [a.name for a in model.arrays] == ["DATA", "ROWPTR", "COLPTR"]
    assert [a.numpy for a in model.arrays] == ["f4", "u2", "u1"]
    assert not errors(root) and not warnings_(root)
    assert full_coverage(root, src)


def test_field_docs_beside_fields():
    root, _, _ = parse(header_bytes(BASIC, []))
    assert "0.1.0" in root["version_major"].doc.note
    assert "FileNames" in root["Array descriptors"]["Array 1"]["name"].doc.note
    assert root["endianness"].doc.description
    for n in root.walk():
        if n.kind in ("field", "enum", "string", "flag") and n.parent is not None \
                and n.parent.kind != "array":
            assert n.doc is not None, n.path()


def test_library_written_header_matches_hand_made_bytes():
    """The builder used below writes exactly what bionemo-scdl's SCDLHeader writes."""
    made = header_bytes(
        [array_desc("DATA", 6, 5, (1, 2, 3)), array_desc("ROWPTR", 3, 4),
         array_desc("COLPTR", 6, 7), array_desc("gène_ü", 2, 9, (2,))],
        [fi_desc("var_features", 2, 8, ["var_features/labels.npy"], (4, 5)),
         fi_desc("obs_features", 0, 8, [])])
    with open(fixture("header_api/shapes_and_dtypes.sch"), "rb") as fh:
        assert fh.read() == made


def test_shape_branch():
    root, model, src = parse(header_bytes([array_desc("DATA", 6, 5, (1, 2, 3))], []))
    a = root["Array descriptors"]["Array 1"]
    assert [c.name for c in a.children] == ["name_len", "name", "length", "dtype", "has_shape",
                                            "shape_dims", "shape"]
    assert a["has_shape"].value is True and a["shape_dims"].value == 3
    assert a["shape"].value == [1, 2, 3] and a["shape"].display == "(1, 2, 3)"
    assert a["shape"].child(2).name == "dim 3" and a["shape"].child(2).offset == a["shape"].offset + 8
    assert model.arrays[0].shape == (1, 2, 3)
    assert not errors(root) and full_coverage(root, src)


def test_feature_index_with_shape_and_files():
    root, model, src = parse(header_bytes(BASIC, [
        fi_desc("var_features", 50, 8, ["var_features/cumulative_sum_index.npy",
                                        "var_features/labels.npy"], (7,))]))
    fi = root["Feature indices"]["Feature index 1"]
    assert root["Feature indices"]["fi_count"].value == 1
    assert [c.name for c in fi.children] == ["name_len", "name", "length", "dtype",
                                             "files_count", "index_files", "has_shape",
                                             "shape_dims", "shape"]
    assert fi["dtype"].display == "8 (STRING_ARRAY)"
    f2 = fi["index_files"]["Index file 2"]
    assert f2["path_len"].value == len("var_features/labels.npy")
    assert f2["path"].value == "var_features/labels.npy"
    assert model.feature_indices[0].files[1] == "var_features/labels.npy"
    assert model.feature_indices[0].shape == (7,)
    assert not errors(root) and full_coverage(root, src)


def test_feature_index_with_no_files():
    root, model, src = parse(header_bytes(BASIC, [fi_desc("obs_features", 0, 8, [])]))
    fi = root["Feature indices"]["Feature index 1"]
    assert fi["files_count"].value == 0 and fi["index_files"].size == 0
    assert model.feature_indices[0].files == []
    assert not errors(root) and full_coverage(root, src)


def test_fi_count_zero_is_what_the_writer_does():
    root, model, src = parse(header_bytes(BASIC, []))
    assert root["Feature indices"]["fi_count"].value == 0
    assert src.size == 16 + 21 + 23 + 23 + 4


def test_no_fi_count_is_a_warning_not_an_error():
    root, model, src = parse(header_bytes(BASIC, None))
    assert not errors(root)
    assert any("fi_count" in (n.message or "") for n in warnings_(root))
    assert model.complete and full_coverage(root, src)


def test_non_ascii_name():
    root, model, src = parse(header_bytes([array_desc("gène_ü", 2, 6)], []))
    name = root["Array descriptors"]["Array 1"]["name"]
    assert name.value == "gène_ü" and name.size == len("gène_ü".encode())
    assert root["Array descriptors"]["Array 1"]["name_len"].value == 8
    assert name.status == "warning" and "KeyError" in name.message   # not a FileNames member
    assert not errors(root)


def test_invalid_utf8_name_is_an_error():
    root, _, _ = parse(header_bytes([array_desc(b"DA\xffA", 2, 6)], []))
    name = root["Array descriptors"]["Array 1"]["name"]
    assert name.status == "error" and "utf-8" in name.message


def test_bad_magic():
    root, _, src = parse(header_bytes(BASIC, [], magic=b"SCDM"))
    m = root["magic"]
    assert m.status == "error" and "SCDL" in m.message and "SCDM" in m.message
    assert m.offset == 0 and full_coverage(root, src)


@pytest.mark.parametrize("endian", [0, 2, 255])
def test_endianness_must_be_network(endian):
    root, _, _ = parse(header_bytes(BASIC, [], endian=endian))
    e = root["endianness"]
    assert e.status == "error" and "expected 1 (NETWORK)" in e.message and str(endian) in e.message
    assert e.offset == 7


def test_unknown_backend_and_dtype():
    root, _, _ = parse(header_bytes([array_desc("DATA", 1, 0), array_desc("COLPTR", 1, 10)], [],
                                    backend=2))
    assert root["backend"].status == "error"
    assert root["Array descriptors"]["Array 1"]["dtype"].status == "error"
    assert root["Array descriptors"]["Array 2"]["dtype"].display == "10 (unknown)"


def test_zero_length_name():
    root, _, _ = parse(header_bytes([array_desc("", 1, 6)], []))
    nl = root["Array descriptors"]["Array 1"]["name_len"]
    assert nl.status == "error" and "> 0" in nl.message


def test_zero_length_index_path():
    root, _, _ = parse(header_bytes(BASIC, [fi_desc("var_features", 1, 8, [""])]))
    pl = root["Feature indices"]["Feature index 1"]["index_files"]["Index file 1"]["path_len"]
    assert pl.status == "error"


def test_duplicate_and_conflicting_names():
    root, _, _ = parse(header_bytes(BASIC + [array_desc("DATA", 1, 6)], [
        fi_desc("var_features", 1, 8, []), fi_desc("var_features", 1, 8, []),
        fi_desc("ROWPTR", 1, 8, [])]))
    dup = root["Array descriptors"]["Array 4"]["name"]
    assert dup.status == "error" and "duplicate array name 'DATA'" in dup.message
    fis = root["Feature indices"]
    assert fis["Feature index 2"]["name"].status == "error"
    assert fis["Feature index 1"]["name"].status == "ok"
    assert "name conflict" in fis["Feature index 3"]["name"].message


def test_shape_dims_zero_and_zero_dimension():
    root, _, _ = parse(header_bytes([array_desc("DATA", 1, 6, ()), array_desc("ROWPTR", 1, 4,
                                                                              (3, 0))], []))
    a1 = root["Array descriptors"]["Array 1"]
    assert a1["shape_dims"].status == "error" and "> 0" in a1["shape_dims"].message
    sh = root["Array descriptors"]["Array 2"]["shape"]
    assert sh.status == "error" and "dimension 2 is 0" in sh.message
    assert str(sh.offset + 4) in sh.message


def test_has_shape_not_0_or_1_read_as_present():
    root, model, _ = parse(header_bytes([array_desc("DATA", 1, 6, (4,), flag=2)], []))
    hs = root["Array descriptors"]["Array 1"]["has_shape"]
    assert hs.status == "warning" and "expected 0 or 1" in hs.message
    assert model.arrays[0].shape == (4,)


def test_version_0_0_9_per_document_and_0_1_0_as_written():
    for v in ((0, 0, 9), (0, 1, 0)):
        root, model, _ = parse(header_bytes(BASIC, [], version=v))
        assert model.version == v and not errors(root) and not warnings_(root)
    root, _, _ = parse(header_bytes(BASIC, [], version=(1, 0, 0)))
    assert root["version_major"].status == "warning"


def test_trailing_bytes_are_a_warning():
    root, _, src = parse(header_bytes(BASIC, []) + b"\x00\x01\x02")
    t = root["trailing bytes"]
    assert t.status == "warning" and t.size == 3 and full_coverage(root, src)


def test_huge_counts_do_not_allocate():
    root, _, src = parse(header_bytes([], [], array_count=0xFFFFFFFF))
    assert root["array_count"].status == "error"
    root, _, src = parse(header_bytes([s_ for s_ in [b"\xff\xff\xff\xf0DATA"]], []))
    assert errors(root) and full_coverage(root, src)
    root, _, _ = parse(header_bytes([array_desc("DATA", 1, 6)], [], fi_count=0x7FFFFFFF))
    assert root["Feature indices"]["fi_count"].status == "error"


def _full_header() -> bytes:
    return header_bytes(
        [array_desc("DATA", 6, 5, (1, 2, 3)), array_desc("ROWPTR", 3, 4),
         array_desc("gène", 2, 9, (2,))],
        [fi_desc("var_features", 2, 8, ["var_features/labels.npy", "x"], (4, 5)),
         fi_desc("obs_features", 0, 8, [])])


def test_truncated_at_every_offset():
    full = _full_header()
    end_of_arrays = len(header_bytes(
        [array_desc("DATA", 6, 5, (1, 2, 3)), array_desc("ROWPTR", 3, 4),
         array_desc("gène", 2, 9, (2,))], None))
    for cut in range(len(full)):
        root, model, src = parse(full[:cut])   # never raises
        errs = errors(root)
        if cut == end_of_arrays:   # a header that ends after its arrays: legal per document
            assert not errs and warnings_(root), cut
        else:
            assert errs, cut
            # the error sits at or before the cut, and explains the shortfall
            assert any(e.offset <= cut for e in errs), cut
        assert full_coverage(root, src), cut
    root, model, src = parse(full)
    assert not errors(root) and model.complete


def test_truncation_error_says_expected_and_found():
    full = header_bytes(BASIC, [])
    root, _, _ = parse(full[:30])   # inside Array 1's length (8 bytes at 24)
    e = [n for n in errors(root) if n.kind == "error"][0]
    assert e.offset == 24 and "expected uint64 (8 bytes), found 6 bytes" in e.message


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data):
    root, model, src = parse(data)
    assert full_coverage(root, src)
    assert not any(n.name == "internal parser error" for n in root.walk())


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_after_a_valid_core_never_raise(tail):
    root, model, src = parse(b"SCDL\x00\x01\x00\x01" + struct.pack(">I", 1) + tail)
    assert full_coverage(root, src)
    assert not any(n.name == "internal parser error" for n in root.walk())


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(_full_header()) - 1),
       st.integers(min_value=0, max_value=255))
def test_one_corrupted_byte_never_raises(pos, value):
    data = bytearray(_full_header())
    data[pos] = value
    root, model, src = parse(bytes(data))
    assert full_coverage(root, src)
    assert not any(n.name == "internal parser error" for n in root.walk())

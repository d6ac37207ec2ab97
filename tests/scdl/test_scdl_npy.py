"""formats.core.npy: the NPY files of SCDL feature folders, and NPY files in general."""
from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrayscope import formats
from arrayscope.formats.core import engine
from arrayscope.formats.core.npy import parse_npy_source
from arrayscope.formats.core.source import BytesSource


def npy(arr, version=None, **kw) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, version=version, **kw)
    return buf.getvalue()


def parse(data: bytes):
    src = BytesSource(data, "x.npy")
    root = parse_npy_source(src)
    assert engine.coverage(root, src) == (len(data), len(data))
    return root


def errs(root):
    return [n for n in root.walk() if n.status == "error"]


@pytest.mark.parametrize("arr", [
    np.array([-1, 20, 35], np.int64), np.arange(6, dtype=">u2").reshape(2, 3),
    np.array([1.5, -0.0, np.nan], np.float32), np.array([True, False]),
    np.array(["a", "gène"]), np.array("0.1.3"), np.array([1 + 2j]),
    np.zeros((0, 3), np.float64), np.array([b"ab", b"c"]),
    np.zeros(2, [("x", "<i4"), ("y", "<f8")]),
])
def test_round_trip(arr):
    root = parse(npy(arr))
    assert not errs(root)
    assert [c.name for c in root.children][:5] == ["magic", "major_version", "minor_version",
                                                   "HEADER_LEN", "header"]
    data = root["data"]
    assert data.child_count() == arr.size
    assert data.offset % 64 == 0
    if arr.dtype.kind in "uifbU":
        assert repr(data.value) == repr(arr.ravel().tolist())   # NaN-safe
    assert data.size == arr.nbytes


def test_header_fields():
    root = parse(npy(np.array([-1, 20], np.int64)))
    assert root["magic"].value == "\x93NUMPY" and root["major_version"].value == 1
    assert root["HEADER_LEN"].size == 2 and root["HEADER_LEN"].value == 118
    hd = root["header"]
    assert [c.name for c in hd.children] == ["dict", "padding", "newline"]
    assert hd["dict"].data == {"descr": "<i8", "fortran_order": False, "shape": (2,)}
    assert root["data"].child(1).value == 20 and root["data"].child(1).offset == 136


def test_versions_2_and_3():
    root = parse(npy(np.arange(3, dtype=np.uint8), version=(2, 0)))
    assert root["HEADER_LEN"].size == 4 and not errs(root)
    root = parse(npy(np.array(["é"]), version=(3, 0)))
    assert root["major_version"].value == 3 and root["data"].value == ["é"]


def test_fortran_order():
    root = parse(npy(np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))))
    assert root["data"].value == [0, 3, 1, 4, 2, 5] and "Fortran" in root["data"].display


def test_object_array_is_a_pickle_leaf():
    root = parse(npy(np.array(["a", None], dtype=object), allow_pickle=True))
    d = root["data"]
    assert d.kind == "payload" and "pickle" in d.display and not errs(root)


def test_truncated_data_and_trailing_bytes():
    data = npy(np.arange(10, dtype=np.int32))
    root = parse(data[:-6])
    assert root["data"].child_count() == 8
    assert root["data (truncated)"].status == "error"
    root = parse(data + b"xyz")
    assert root["trailing bytes"].status == "warning"


def test_bad_magic_version_and_dict():
    assert errs(parse(b"\x93NUMPX\x01\x00"))
    root = parse(b"\x93NUMPY\x09\x00rest")
    assert root["major_version"].status == "error"
    bad = b"\x93NUMPY\x01\x00" + (12).to_bytes(2, "little") + b"{'descr': 1\n"
    root = parse(bad)
    assert root["header"]["dict"].status == "error"
    header = b"{'descr': 'zz', 'fortran_order': False, 'shape': ()}\n"[:40]
    bad = b"\x93NUMPY\x01\x00" + (40).to_bytes(2, "little") + header
    assert errs(parse(bad))


def test_a_stray_npy_file_opens(tmp_path):
    p = tmp_path / "a.npy"
    p.write_bytes(npy(np.arange(4, dtype=np.float64)))
    doc = formats.open(str(p))
    assert doc.root["data"].value == [0.0, 1.0, 2.0, 3.0]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_after_the_magic_never_raise(tail):
    root = parse(b"\x93NUMPY" + tail)
    assert not any(n.name == "internal parser error" for n in root.walk())


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 160), st.integers(0, 255))
def test_one_corrupted_byte_never_raises(pos, value):
    data = bytearray(npy(np.array([-1, 20, 35], np.int64)))
    data[pos % len(data)] = value
    root = parse(bytes(data))
    assert not any(n.name == "internal parser error" for n in root.walk())


def test_oversized_header_dict_is_not_evaluated(tmp_path):
    import struct

    from arrayscope import formats
    from arrayscope.formats.core.npy import MAX_HEADER_DICT

    text = ("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), 'x': '" +
            "[" * (MAX_HEADER_DICT + 10) + "'}").encode()
    text += b" " * ((-(len(text) + 13)) % 64) + b"\n"
    data = b"\x93NUMPY\x02\x00" + struct.pack("<I", len(text)) + text + b"\x00" * 4
    p = tmp_path / "big.npy"
    p.write_bytes(data)
    doc = formats.open(str(p))
    assert any("not evaluated" in (n.message or "") for n in doc.diagnostics())

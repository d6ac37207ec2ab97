"""The compiled RLE / DICTIONARY string kernels against the numpy reversal, on encodings made
by the filters' own encoders (which reproduce libtiledb's bytes, test_filters_tiledb):
run lengths and string lengths of every byte size, empty strings, long runs; damaged
encodings refused (-1), never written past the output."""
from __future__ import annotations

import numpy as np
import pytest

from arrayscope.formats.accel.strkernels import dict_strings, rle_strings
from arrayscope.formats.core import compiled
from arrayscope.formats.filters import Stage, get
from arrayscope.formats.filters.base import DataInfo, FilterSpec, RunContext
from arrayscope.formats.filters.direct import reverse_strings_into
from arrayscope.formats.filters.enums import Datatype, FilterType


@pytest.fixture(autouse=True)
def jit(monkeypatch):
    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    assert compiled._load() is not None


INFO = DataInfo(Datatype.STRING_UTF8, 2 ** 32 - 1, "attribute", True, format_version=22)


def _cells(kind: str):
    rng = np.random.default_rng(11)
    if kind == "long_runs":       # runs past 255 and 65535: 2- and 4-byte run lengths
        words, reps = [b"a", b"", b"bc"], [70000, 300, 5]
    elif kind == "long_words":    # strings past 255 bytes: 2-byte string lengths
        words, reps = [b"x" * 300, b"", b"y" * 70000, b"z"], [2, 3, 1, 4]
    else:                         # many short words, empties among them
        words = [bytes(rng.integers(97, 123, int(rng.integers(0, 12))).astype(np.uint8))
                 for _ in range(500)]
        reps = rng.integers(1, 6, 500).tolist()
    cells = [w for w, r in zip(words, reps) for _ in range(r)]
    data = b"".join(cells)
    offs = np.cumsum([0] + [len(c) for c in cells[:-1]]).astype("<u8").tobytes()
    return data, offs


@pytest.mark.parametrize("ftype", [FilterType.RLE, FilterType.DICTIONARY])
@pytest.mark.parametrize("kind", ["long_runs", "long_words", "short"])
def test_kernels_equal_numpy(ftype, kind):
    data, offs = _cells(kind)
    spec = FilterSpec(ftype, {})
    f = get(ftype)
    run = RunContext(offsets=offs)
    enc = f.forward(spec, Stage([], [data]), INFO, run)
    numpy_path = f.reverse(spec, enc, INFO, RunContext(original_length=len(data)))
    assert numpy_path.data_bytes == data and numpy_path.offsets == offs
    out = np.full(len(data), 0xEE, np.uint8)
    got = reverse_strings_into(spec, enc, RunContext(original_length=len(data)), out)
    assert got is not None
    assert out.tobytes() == data and got.tobytes() == offs


@pytest.mark.parametrize("ftype", [FilterType.RLE, FilterType.DICTIONARY])
def test_damaged_encodings_refused(ftype):
    """Every single-byte change of the metadata (header, dictionary) or the encoded data:
    the kernel decodes it to what the numpy path gives, or leaves it to that path (it never
    accepts what the numpy path rejects), and never writes past the output."""
    data = _cells("short")[0][:200]
    cells = [data[i:i + 4] for i in range(0, 200, 4)]
    offs = np.arange(0, 200, 4).astype("<u8").tobytes()
    spec = FilterSpec(ftype, {})
    f = get(ftype)
    enc = f.forward(spec, Stage([], [b"".join(cells)]), INFO, RunContext(offsets=offs))
    md, body = enc.metadata_bytes, enc.data_bytes
    both = md + body
    for i in range(len(both)):
        for v in (0, 0xFF, both[i] ^ 1):
            changed = both[:i] + bytes([v]) + both[i + 1:]
            bad = Stage([changed[:len(md)]], [changed[len(md):]])
            try:
                ref = f.reverse(spec, bad, INFO, RunContext(original_length=200))
                want = (ref.data_bytes, ref.offsets) if len(ref.data_bytes) == 200 else None
            except Exception:
                want = None
            guard = np.full(264, 0xEE, np.uint8)
            got = reverse_strings_into(spec, bad, RunContext(original_length=200), guard[:200])
            assert (guard[200:] == 0xEE).all()
            if want is None:
                assert got is None
            elif got is not None:
                assert (guard[:200].tobytes(), got.tobytes()) == want


def test_kernels_run_as_plain_python_too():
    """The kernels' source is plain Python (what numba compiles): tiny inputs agree."""
    enc = np.frombuffer(b"\x02\x02ab\x01\x00", np.uint8)
    out, offs = np.zeros(4, np.uint8), np.zeros(3, np.uint64)
    assert rle_strings.py(enc, 1, 1, out, offs) == 3
    assert out.tobytes() == b"abab" and offs.tolist() == [0, 2, 4]
    d = np.frombuffer(b"\x01q\x02rs", np.uint8)
    out, offs = np.zeros(4, np.uint8), np.zeros(3, np.uint64)
    scratch = (np.zeros(len(d) + 1, np.int64), np.zeros(len(d) + 1, np.int64))
    assert dict_strings.py(d, 1, np.frombuffer(b"\x01\x00\x00", np.uint8), 1, out, offs,
                           *scratch) == 3
    assert out.tobytes() == b"rsqq" and offs.tolist() == [0, 2, 3]

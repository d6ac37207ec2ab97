"""The batched fast path (`formats.filters.batch.reverse_into`) decodes exactly what
`reverse_chunk` decodes, and leaves every chunk it is not sure of to the general path."""
import numpy as np
import pytest

from arrayscope.formats.filters import DataInfo, FilterSpec, RunContext, forward_chunk, reverse_chunk
from arrayscope.formats.filters.batch import plan, reverse_into
from arrayscope.formats.filters.bits import byteshuffle, byteunshuffle, byteunshuffle_rows

PIPELINES = {
    "byteshuffle+zstd": [FilterSpec(9), FilterSpec(2, {"level": -1})],
    "byteshuffle+lz4": [FilterSpec(9), FilterSpec(3, {"level": -1})],
    "byteshuffle+gzip": [FilterSpec(9), FilterSpec(1, {"level": -1})],
    "byteshuffle+bzip2": [FilterSpec(9), FilterSpec(5, {"level": -1})],
    "zstd": [FilterSpec(2, {"level": 3})],
    "lz4": [FilterSpec(3, {"level": -1})],
    "byteshuffle": [FilterSpec(9)],
    "bitshuffle+zstd": [FilterSpec(8), FilterSpec(2, {"level": -1})],
    "bitshuffle+lz4": [FilterSpec(8), FilterSpec(3, {"level": -1})],
    "bitshuffle": [FilterSpec(8)],
    "double_delta": [FilterSpec(6, {"level": -1, "reinterpret": 17})],
}
# INT8, INT16, INT32, INT64, FLOAT32, FLOAT64
DATATYPES = {5: np.int8, 7: np.int16, 0: np.int32, 1: np.int64, 2: np.float32, 3: np.float64}


def _chunks(rng, dt, sizes):
    out = []
    for n in sizes:
        walk = np.cumsum(rng.integers(-3, 4, max(1, n // np.dtype(dt).itemsize + 1)))
        raw = walk.astype(dt).tobytes()[:n] if n else b""
        out.append(raw)
    return out


def _check(specs, info, encoded):
    """encoded: [(md, data, orig)] -> compare reverse_into with reverse_chunk chunk by chunk."""
    total = sum(o for _m, _d, o in encoded)
    out = np.full(total, 0xA5, np.uint8)
    chunks, pos = [], 0
    for md, data, orig in encoded:
        chunks.append((md, data, orig, pos))
        pos += orig
    left = set(reverse_into(specs, info, chunks, out))
    handled = 0
    for i, (md, data, orig, at) in enumerate(chunks):
        r = reverse_chunk(specs, md, data, info, RunContext(None, orig))
        if i in left:
            continue
        handled += 1
        assert r.error is None, f"chunk {i}: fast path decoded what the general path refuses"
        assert out[at:at + orig].tobytes() == r.cells, f"chunk {i} differs"
    return handled


@pytest.mark.parametrize("name", list(PIPELINES))
@pytest.mark.parametrize("datatype", list(DATATYPES))
def test_batch_equals_general_path(name, datatype):
    rng = np.random.default_rng(datatype * 31 + len(name))
    specs = PIPELINES[name]
    if name == "double_delta" and datatype in (2, 3):
        pytest.skip("DOUBLE_DELTA takes integers")
    info = DataInfo(datatype, 1, "attribute", False)
    e = np.dtype(DATATYPES[datatype]).itemsize
    sizes = [4096 * e] * 20 + [4096 * e + 3, 0, 5, 64 * e, 64 * e] + [777] * 3 + [4096 * e] * 5
    encoded = []
    for raw in _chunks(rng, DATATYPES[datatype], sizes):
        st = forward_chunk(specs, raw, info)[-1]
        encoded.append((st.metadata_bytes, st.data_bytes, len(raw)))
    handled = _check(specs, info, encoded)
    if plan(specs, info) is not None and name != "double_delta":
        # (empty chunks may take the general path; so do BITSHUFFLE's split parts)
        assert handled >= len(encoded) - (2 if "bitshuffle" not in name else 6)


@pytest.mark.parametrize("name", ["byteshuffle+zstd", "byteshuffle+lz4", "zstd", "byteshuffle",
                                  "bitshuffle+zstd", "bitshuffle"])
def test_batch_corrupt_chunks_match_general_path(name):
    """Flipped, truncated or extended bytes: the fast path either declines or agrees."""
    rng = np.random.default_rng(5)
    specs = PIPELINES[name]
    info = DataInfo(1, 1, "attribute", False)
    good = []
    for raw in _chunks(rng, np.int64, [8192] * 6):
        st = forward_chunk(specs, raw, info)[-1]
        good.append((st.metadata_bytes, st.data_bytes, len(raw)))
    for trial in range(60):
        encoded = list(good)
        md, data, orig = encoded[trial % len(encoded)]
        mdb, datab = bytearray(md), bytearray(data)
        kind = trial % 5
        if kind == 0 and mdb:
            mdb[rng.integers(0, len(mdb))] ^= 1 << int(rng.integers(0, 8))
        elif kind == 1 and datab:
            datab[rng.integers(0, len(datab))] ^= 1 << int(rng.integers(0, 8))
        elif kind == 2:
            datab = datab[:max(0, len(datab) - int(rng.integers(1, 9)))]
        elif kind == 3:
            datab += b"\0" * int(rng.integers(1, 9))
        else:
            orig = orig + int(rng.choice([-8, -1, 1, 8]))
        encoded[trial % len(encoded)] = (bytes(mdb), bytes(datab), max(0, orig))
        _check(specs, info, encoded)


def test_no_plan_for_other_pipelines():
    info = DataInfo(1, 1, "attribute", False)
    assert plan([FilterSpec(4, {"level": -1})], info) is None       # RLE: own reverse
    assert plan([FilterSpec(2), FilterSpec(9)], info) is None       # shuffle after zstd
    assert plan([FilterSpec(8), FilterSpec(9)], info) is None       # two shuffles
    assert plan([FilterSpec(2), FilterSpec(8)], info) is None       # bitshuffle after zstd
    assert plan([], info) is None
    left = reverse_into([FilterSpec(2)], info, [(b"", b"", 0, 0)], np.zeros(0, np.uint8))
    assert left == [0]


@pytest.mark.parametrize("esize", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("rows", [1, 3, 5, 16])
def test_byteunshuffle_rows(esize, rows):
    rng = np.random.default_rng(esize * 7 + rows)
    for size in (0, 1, 7, 8, 24, 1000, 1003, 8192):
        src = rng.integers(0, 256, (rows, size)).astype(np.uint8)
        out = np.empty_like(src)
        byteunshuffle_rows(src, esize, out)
        for g in range(rows):
            assert out[g].tobytes() == byteunshuffle(src[g], esize).tobytes()
            assert byteshuffle(out[g], esize).tobytes() == src[g].tobytes()
        # strided destination rows (a column slice of a wider array)
        wide = np.zeros((rows, size + 16), np.uint8)
        byteunshuffle_rows(src, esize, wide[:, 8:8 + size])
        assert np.array_equal(wide[:, 8:8 + size], out)


@pytest.mark.parametrize("esize", [1, 2, 4, 8])
def test_bitunshuffle_rows_many_blocks(esize):
    """Whole-block rows run as one flat array through the word transposes: equal to the
    byte-plane transform (`_bytewise`, what one small chunk takes), block by block, and to
    bitshuffle's inverse; so is one long array both ways (plus a short last block and a raw
    tail)."""
    from arrayscope.formats.core.compiled import TUNING
    from arrayscope.formats.filters.bits import (
        _bytewise,
        bitshuffle,
        bitunshuffle,
        bitunshuffle_rows,
        default_block,
    )
    rng = np.random.default_rng(esize)
    b = default_block(esize)
    src = rng.integers(0, 256, (7, 3 * b * esize)).astype(np.uint8)
    out = np.empty_like(src)
    bitunshuffle_rows(src, esize, out)
    for g in range(7):
        for k in range(3):
            seg = src[g, k * b * esize:(k + 1) * b * esize]
            ref = _bytewise(seg, esize, 1, b, False)
            assert out[g, k * b * esize:(k + 1) * b * esize].tobytes() == ref.tobytes()
            assert _bytewise(ref, esize, 1, b, True).tobytes() == seg.tobytes()
        assert bitshuffle(out[g], esize).tobytes() == src[g].tobytes()
        assert bitunshuffle(src[g], esize).tobytes() == out[g].tobytes()
    nb = TUNING.bit_words_min_blocks + 3
    tail = 8 * 5 * esize + 3 * esize + 1   # a short block of 40 elements, 3 raw ones, a byte
    flat = rng.integers(0, 256, nb * b * esize + tail).astype(np.uint8)
    body = nb * b * esize
    for forward, fn in ((False, bitunshuffle), (True, bitshuffle)):
        got = fn(flat, esize)
        assert got[:body].tobytes() == _bytewise(flat[:body], esize, nb, b, forward).tobytes()
        assert got[body:body + 40 * esize].tobytes() == \
            _bytewise(flat[body:body + 40 * esize], esize, 1, 40, forward).tobytes()
        assert got[body + 40 * esize:].tobytes() == flat[body + 40 * esize:].tobytes()


@pytest.mark.parametrize("name", ["byteshuffle+zstd", "bitshuffle+zstd"])
def test_batch_groups_scattered_chunks(name):
    """Equal-sized chunks far apart in the output (the full chunks of many small fragments,
    each followed by its short last chunk, out of order) are grouped and land where they
    belong."""
    rng = np.random.default_rng(11)
    specs = PIPELINES[name]
    info = DataInfo(1, 1, "attribute", False)
    raws = _chunks(rng, np.int64, [8192, 1568] * 9)
    encoded = [(st.metadata_bytes, st.data_bytes, len(raw)) for raw in raws
               for st in [forward_chunk(specs, raw, info)[-1]]]
    order = list(rng.permutation(len(encoded)))
    total = sum(len(r) for r in raws)
    starts = np.cumsum([0] + [len(r) for r in raws])
    chunks = [(encoded[i][0], encoded[i][1], encoded[i][2], int(starts[i])) for i in order]
    out = np.full(total, 0xA5, np.uint8)
    assert reverse_into(specs, info, chunks, out) == []
    assert out.tobytes() == b"".join(raws)

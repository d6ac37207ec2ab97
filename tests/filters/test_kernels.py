"""The compiled kernels (`formats/accel/kernels.py`) and the numpy paths beside them decode
the same bytes: each test runs twice, with numba loaded (kernels taken even for small
inputs) and with `ARRAYSCOPE_NO_JIT=1`, and compares with an independent reference or with
what tiledb-py reads from arrays libtiledb wrote."""
from __future__ import annotations

import numpy as np
import pytest

from arrayscope.formats import open as open_document
from arrayscope.formats.accel import kernels
from arrayscope.formats.core import compiled
from arrayscope.formats.filters.bits import (
    bitshuffle,
    bitunshuffle,
    bitunshuffle_rows,
    bitunshuffle_whole_blocks,
    byteunshuffle,
    byteunshuffle_rows,
    default_block,
)
from arrayscope.formats.tiledb.values import field_values as V
from tests.support.filter_arrays import read_back, tiledb, write_dense


@pytest.fixture(params=["jit", "numpy"])
def path(request, monkeypatch):
    """'jit': numba loaded, so every kernel is taken; 'numpy': ARRAYSCOPE_NO_JIT=1."""
    if request.param == "jit":
        monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
        assert compiled._load() is not None, "numba is a runtime dependency"
    else:
        monkeypatch.setenv("ARRAYSCOPE_NO_JIT", "1")
    return request.param


def test_kernel_taken_only_on_the_jit_path(path):
    assert (kernels.unshuffler(1) is not None) == (path == "jit")
    assert (kernels.bitunshuffle_blocks.get(1) is not None) == (path == "jit")


def _reference_unshuffle(src: np.ndarray, esize: int) -> bytes:
    """Byte j of element i at j*n + i (the transpose of the byte planes), tail unchanged."""
    n = len(src) // esize
    body = src[:n * esize].reshape(esize, n).T.tobytes()
    return body + src[n * esize:].tobytes()


@pytest.mark.parametrize("esize", [1, 2, 3, 4, 5, 8, 16])
@pytest.mark.parametrize("size", [0, 7, 64, 1000, 4099, 65536 + 13])
def test_byteunshuffle_rows(path, esize, size):
    rng = np.random.default_rng(esize * 1000 + size)
    g = 3
    src = rng.integers(0, 256, (g, size), dtype=np.uint8)
    # rows of `out` strided inside a wider array, at an odd start: unaligned rows
    wide = np.full((g, size + 9), 0xA5, np.uint8)
    out = wide[:, 1:1 + size]
    byteunshuffle_rows(src, esize, out)
    for r in range(g):
        assert out[r].tobytes() == _reference_unshuffle(src[r], esize)
    assert (wide[:, 0] == 0xA5).all() and (wide[:, 1 + size:] == 0xA5).all()
    assert byteunshuffle(src[0], esize).tobytes() == _reference_unshuffle(src[0], esize)


def _reference_bitunshuffle(src: np.ndarray, esize: int) -> bytes:
    """The bitshuffle library's layout, one bit at a time (np.unpackbits): blocks of
    default_block elements, then the remainder rounded down to 8 elements, then the last
    n % 8 elements and the tail bytes unchanged; in a block, bit k (LSB first) of byte j of
    element i is bit i (LSB first) of plane 8j + k."""
    n = len(src) // esize
    out = src.copy()
    b = default_block(esize)
    blocks = [(s, b) for s in range(0, n // b * b, b)]
    last = n % b - n % b % 8
    if last:
        blocks.append((n // b * b, last))
    for start, m in blocks:
        seg = src[start * esize:(start + m) * esize]
        planes = np.unpackbits(seg.reshape(8 * esize, m // 8), axis=1, bitorder="little")
        bits = planes.reshape(esize, 8, m).transpose(2, 0, 1)       # element, byte, bit
        out[start * esize:(start + m) * esize] = np.packbits(
            bits.reshape(m * esize, 8), axis=1, bitorder="little").ravel()
    return out.tobytes()


@pytest.mark.parametrize("esize", [1, 2, 4, 8, 3, 16])
@pytest.mark.parametrize("elements", [0, 7, 8, 200, 1024, 8 * 1024 + 3, 3 * 8192 + 77,
                                      32 * 8192])
def test_bitunshuffle(path, esize, elements):
    rng = np.random.default_rng(esize * 7 + elements)
    size = elements * esize + (elements % 3)   # some tail bytes too
    src = rng.integers(0, 256, size, dtype=np.uint8)
    want = _reference_bitunshuffle(src, esize)
    assert bitunshuffle(src, esize).tobytes() == want
    assert bitunshuffle(bitshuffle(src, esize), esize).tobytes() == src.tobytes()
    rows = np.stack([src, src[::-1].copy()])
    out = np.zeros_like(rows)
    bitunshuffle_rows(rows, esize, out)
    assert out[0].tobytes() == want
    assert out[1].tobytes() == _reference_bitunshuffle(rows[1], esize)


@pytest.mark.parametrize("esize", [1, 2, 4, 8, 12])
def test_bitunshuffle_whole_blocks(path, esize):
    """blosc's bitshuffle: each of `nb` blocks one transposed block of all its elements."""
    nb, m = 3, 40
    src = np.random.default_rng(esize).integers(0, 256, nb * m * esize, dtype=np.uint8)
    out = np.empty_like(src)
    bitunshuffle_whole_blocks(src, esize, nb, out)
    ref = b"".join(
        _reference_bitunshuffle_block(src[i * m * esize:(i + 1) * m * esize], esize, m)
        for i in range(nb))
    assert out.tobytes() == ref


def _reference_bitunshuffle_block(seg: np.ndarray, esize: int, m: int) -> bytes:
    planes = np.unpackbits(seg.reshape(8 * esize, m // 8), axis=1, bitorder="little")
    bits = planes.reshape(esize, 8, m).transpose(2, 0, 1)
    return np.packbits(bits.reshape(m * esize, 8), axis=1, bitorder="little").tobytes()


DTYPES = ["int16", "uint16", "int32", "float32", "int64", "float64", "uint8"]


def _decode(uri: str) -> bytes:
    doc = open_document(uri, tree=False)
    (entry,) = V.values(doc, "a", with_values=False)
    assert "error" not in entry, entry.get("error")
    return bytes(entry["raw"])


@pytest.mark.parametrize("dtype", DTYPES)
def test_byteshuffle_zstd_multichunk_tiles(tmp_path, path, dtype):
    """[ByteShuffle, Zstd] tiles of several 64 KiB chunks (the last one short), three
    tiles: the fused path (decompress, unshuffle into the output) equals tiledb-py."""
    dt = np.dtype(dtype)
    tile = 3 * 65536 // dt.itemsize + 123
    rng = np.random.default_rng(dt.itemsize)
    data = (np.cumsum(rng.integers(-9, 50, 3 * tile)) * (1 if dt.kind != "f" else 0.37)).astype(dt)
    uri = str(tmp_path / "a")
    write_dense(uri, data, [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(level=-1)], tile=tile)
    assert _decode(uri) == np.ascontiguousarray(read_back(uri)).tobytes()


@pytest.mark.parametrize("workers", [1, 2])
def test_byteshuffle_zstd_threads(tmp_path, path, monkeypatch, workers):
    """Enough chunks for the thread pool: each thread writes its own chunks of the output."""
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(workers=workers))
    n = 40 * 65536 // 8
    data = np.cumsum(np.random.default_rng(5).integers(0, 1000, n)).astype(np.int64)
    uri = str(tmp_path / "a")
    write_dense(uri, data, [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(level=-1)],
                tile=n // 4)
    assert _decode(uri) == read_back(uri).tobytes()


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float32", "int64", "float64"])
def test_bitshuffle_zstd_multichunk_tiles(tmp_path, path, dtype):
    """[BitShuffle, Zstd] tiles of several chunks, the last chunk of each tile short (not a
    whole block: its remainder block and raw tail elements)."""
    dt = np.dtype(dtype)
    tile = 3 * 65536 // dt.itemsize + 123
    rng = np.random.default_rng(dt.itemsize + 40)
    data = (np.cumsum(rng.integers(-9, 50, 3 * tile)) * (1 if dt.kind != "f" else 0.37)).astype(dt)
    uri = str(tmp_path / "a")
    write_dense(uri, data, [tiledb.BitShuffleFilter(), tiledb.ZstdFilter(level=-1)], tile=tile)
    assert _decode(uri) == np.ascontiguousarray(read_back(uri)).tobytes()


def _series(dt: np.dtype, n: int, kind: str, seed: int) -> np.ndarray:
    """'smooth': a slow walk (narrow deltas); 'wide': big jumps (records that cross words)."""
    rng = np.random.default_rng(seed)
    if dt.kind == "f":
        return (np.cumsum(rng.normal(0, 3, n)) if kind == "smooth"
                else rng.normal(0, 1e6, n)).astype(dt)
    info = np.iinfo(dt)
    if kind == "smooth":
        v = np.cumsum(rng.integers(-5, 40, n)) + (int(info.min) + int(info.max)) // 2
        return np.clip(v, info.min, info.max).astype(dt)
    span = min(int(info.max), 1 << 58)
    lo = max(int(info.min), -span)
    return rng.integers(lo, span, n, endpoint=True).astype(dt)


INT_DTYPES = ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64"]


@pytest.mark.parametrize("kind", ["smooth", "wide"])
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("codec", ["double_delta", "delta"])
def test_delta_codecs(tmp_path, path, codec, dtype, kind):
    """DOUBLE_DELTA and DELTA, then ZSTD: tiles of several chunks (the last short) and a
    tile of 2 cells (no deltas), bit-exact with tiledb-py."""
    dt = np.dtype(dtype)
    tile = 2 * 65536 // dt.itemsize + 37
    data = _series(dt, 3 * tile + 2, kind, dt.itemsize + len(kind))
    f = tiledb.DoubleDeltaFilter() if codec == "double_delta" else tiledb.DeltaFilter()
    uri = str(tmp_path / "a")
    try:
        write_dense(uri, data[:3 * tile], [f, tiledb.ZstdFilter(level=-1)], tile=tile)
    except tiledb.TileDBError as e:   # libtiledb refuses deltas outside int64
        pytest.skip(f"libtiledb refuses this data: {e}")
    assert _decode(uri) == np.ascontiguousarray(read_back(uri)).tobytes()
    small = str(tmp_path / "b")
    write_dense(small, data[:4], [f], tile=2)
    assert _decode(small) == read_back(small).tobytes()


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "float32", "float64"])
def test_xor(tmp_path, path, dtype):
    dt = np.dtype(dtype)
    tile = 2 * 65536 // dt.itemsize + 11
    data = _series(dt, 2 * tile, "smooth", 3)
    uri = str(tmp_path / "a")
    write_dense(uri, data, [tiledb.XORFilter(), tiledb.ZstdFilter(level=-1)], tile=tile)
    assert _decode(uri) == np.ascontiguousarray(read_back(uri)).tobytes()


@pytest.mark.parametrize("width", [1, 2, 4, 8])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_scale(tmp_path, path, dtype, width):
    """SCALE_FLOAT (then XOR and ZSTD, as the benchmark stack): scaled back in double
    precision and rounded to the float type exactly as libtiledb (values out of the
    integer range included)."""
    dt = np.dtype(dtype)
    tile = 2 * 65536 // dt.itemsize + 5
    data = _series(dt, 2 * tile, "smooth", width)
    data[:4] = [1e30, -1e30, 0.5, -0.5]
    uri = str(tmp_path / "a")
    write_dense(uri, data, [tiledb.FloatScaleFilter(0.37, -1.25, width), tiledb.XORFilter(),
                            tiledb.ZstdFilter(level=-1)], tile=tile)
    assert _decode(uri) == np.ascontiguousarray(read_back(uri)).tobytes()


@pytest.mark.parametrize("codec", ["double_delta", "delta"])
def test_delta_stacks_take_the_batch_plan(tmp_path, path, monkeypatch, codec):
    """[DOUBLE_DELTA or DELTA, ZSTD] chunks are decoded by `batch.reverse_into` (no chunk left
    to the per-chunk path) into what tiledb-py reads; a damaged chunk is left to the general
    path, which reports exactly what it reports without the batch plan."""
    import os

    from arrayscope.formats.filters import batch

    dt = np.dtype("int64")
    tile = 3 * 65536 // dt.itemsize + 5
    data = _series(dt, 2 * tile, "smooth", 11)
    f = tiledb.DoubleDeltaFilter() if codec == "double_delta" else tiledb.DeltaFilter()
    uri = str(tmp_path / "a")
    write_dense(uri, data, [f, tiledb.ZstdFilter(level=-1)], tile=tile)
    general: list = []
    from arrayscope.formats.tiledb.parse import decode as D
    real = D.decode_chunk
    monkeypatch.setattr(D, "decode_chunk", lambda *a, **k: general.append(1) or real(*a, **k))
    assert _decode(uri) == np.ascontiguousarray(read_back(uri)).tobytes()
    assert general == []
    # damage: the last chunk's data frame loses its zstd magic
    frags = os.path.join(uri, "__fragments")
    name = os.path.join(frags, os.listdir(frags)[0], "a0.tdb")
    raw = bytearray(open(name, "rb").read())
    at = bytes(raw).rindex(b"\x28\xb5\x2f\xfd")
    raw[at:at + 4] = b"\0\0\0\0"
    open(name, "wb").write(bytes(raw))

    def error() -> str:
        (entry,) = V.values(open_document(uri, tree=False), "a", with_values=False)
        return entry.get("error", "")
    with_plan = error()
    monkeypatch.setattr(batch, "_typed_plan", lambda specs, info: None)
    assert with_plan and with_plan == error()


def _dd_series(bitsize: int, n: int, seed: int) -> np.ndarray:
    """int64 values whose deltas (the first included) and deltas of deltas need at most
    `bitsize` bits of magnitude, exactly that many when n > 6: deltas in pairs r, -r with
    r < 2**(bitsize-1) (the values stay near 0), and one pair giving -(2**bitsize - 1)."""
    half = (1 << bitsize) // 2
    d = np.zeros(n, np.int64)
    if half:
        r = np.random.default_rng(seed).integers(0, half - 1, n, endpoint=True)
        d[0::2] = r[0::2]
        d[1::2] = -r[0:n - 1:2]
        if n > 6:
            d[4], d[5] = half - 1, -half
    return np.cumsum(d) - np.int64(1 << 40)


DD_SPEC = ("reinterpret", 17)


@pytest.mark.parametrize("bitsize", range(63))
def test_double_delta_every_width(path, bitsize):
    """Records of every width 1..63 (bitsize 0..62: the branch-free 8-byte read up to 57
    bits, the two-word read above), part lengths whose records end anywhere in the last
    word, and parts of 0-3 values: the kernel (jit) and the numpy path decode what the
    encoder wrote."""
    from arrayscope.formats.filters.base import DataInfo, FilterSpec
    from arrayscope.formats.filters.deltas import DoubleDelta

    spec, info = FilterSpec(6, {"level": -1, DD_SPEC[0]: DD_SPEC[1]}), DataInfo(1, 1, "a", False)
    codec = DoubleDelta()
    for n in (0, 1, 2, 3, 4, 9, 64 + 3, 1000 + bitsize):
        data = _dd_series(bitsize, n, 1000 * bitsize + n)
        enc = codec.compress_part(data.tobytes(), spec, info)
        if n > 5:
            assert enc[0] == max(bitsize, 1)   # the writer makes no 0-bit records
        back = codec.decompress_part(enc, 8 * n, spec, info)
        assert back == data.tobytes(), (bitsize, n)


def test_double_delta_zero_bit_records(monkeypatch):
    """bitsize 0 (one sign bit a record, magnitudes all zero; the writer makes none, the
    kernel takes them): the deltas stay v1 - v0."""
    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    assert compiled._load() is not None
    fn = kernels.double_delta_decode.get(1)
    assert fn is not None
    n = 70
    words = np.full(2, 0xA5A5A5A5A5A5A5A5, np.uint64)[:-(-(n - 2) // 64)]
    out = np.empty(n, np.int64)
    fn(words.view(np.uint8), n, 0, 5, 12, out, np.empty(words.nbytes + 16, np.uint8))
    assert out.tolist() == [5 + 7 * i for i in range(n)]


@pytest.mark.parametrize("bitsize", [0, 1, 7, 56, 57, 62])
def test_double_delta_widths_tiledb(tmp_path, path, bitsize):
    """DOUBLE_DELTA parts libtiledb wrote with records of 2 (all deltas equal: libtiledb
    makes no 1-bit records), 2, 8, 57 (the widest 8-byte read), 58 (the two-word read) and
    63 bits (the widest): bit-exact with tiledb-py."""
    data = _dd_series(bitsize, 3 * 4099, bitsize)
    uri = str(tmp_path / "a")
    write_dense(uri, data, [tiledb.DoubleDeltaFilter()], tile=4099)
    assert _decode(uri) == read_back(uri).tobytes()


@pytest.mark.parametrize("dtype", ["<i8", "<u8", "<i4"])
def test_double_delta_forward_kernel_is_the_filters_forward(path, dtype):
    """DOUBLE_DELTA's rule is written once as the reference (`deltas.DoubleDelta`); the
    planned check (`deltas.typed_check`: the compiled `double_delta_matches` on the
    jit path) reproduces a part exactly when the reference's forward gives those bytes:
    on parts the reference wrote, on the same parts with one byte of their records changed,
    and on values the writer refuses (deltas beyond int64)."""
    from arrayscope.formats.filters.base import DataInfo, FilterSpec
    from arrayscope.formats.filters.deltas import DoubleDelta, typed_check
    from arrayscope.formats.filters.enums import Datatype

    datatype = {"<i8": Datatype.INT64, "<u8": Datatype.UINT64, "<i4": Datatype.INT32}[dtype]
    spec, info = FilterSpec(6, {"level": -1, "reinterpret": 17}), DataInfo(datatype, 1)
    codec = DoubleDelta()
    check = typed_check(spec, info)
    assert check is not None

    def reference(cells: bytes, enc: bytes) -> bool:
        try:
            return codec.compress_part(cells, spec, info) == enc
        except Exception:  # noqa: BLE001 - a tile the writer refuses: not reproduced
            return False

    rng = np.random.default_rng(6)
    agreed = {True: 0, False: 0}
    for bitsize in range(0, 63, 5):
        for n in (3, 4, 70, 1001):
            cells = _dd_series(bitsize, n, bitsize * 7 + n).astype(dtype).tobytes()
            try:
                enc = codec.compress_part(cells, spec, info)
            except Exception:  # noqa: BLE001 - refused: compared on the edge cases below
                continue
            bad = bytearray(enc)
            if len(bad) > 9 + 16:
                bad[9 + 16 + int(rng.integers(0, len(bad) - 25))] ^= 0x10
            for e in (enc, bytes(bad)):
                want = reference(cells, e)
                assert check(cells, e) == want, (bitsize, n)
                agreed[want] += 1
    edge = np.array([0, np.iinfo(dtype).max, np.iinfo(dtype).min, 5], dtype)
    assert check(edge.tobytes(), b"\x00" * 9) == reference(edge.tobytes(), b"\x00" * 9)
    assert agreed[True] > 20 and agreed[False] > 10, agreed


def test_typed_codec_rule_constants_are_the_batch_paths():
    """The fused kernel's typed-codec framing numbers are `filters.batch`'s (numba takes them
    as constants; `accel` imports no filter module)."""
    from arrayscope.formats.accel import nativekernels
    from arrayscope.formats.filters import batch

    assert nativekernels._TYPED_TABLE == batch._TYPED_TABLE == 16
    assert nativekernels._TYPED_SLACK == batch.TYPED_SLACK

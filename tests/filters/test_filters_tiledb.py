"""Every filter against libtiledb 2.30 (tiledb-py 0.36.1): arrays written by the real
library are decoded by arrayscope's filters (bit for bit equal to what tiledb-py reads), and
the filters applied forward reproduce the stored bytes."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.filter_arrays import (
    DATATYPE,
    KEY,
    OFFSETS_INFO,
    VALIDITY_INFO,
    attr_info,
    check_file,
    read_back,
    spec_of,
    split_cells,
    tiledb,
    write_dense,
)

N = 1000
RNG = np.random.default_rng(20261121)


def _ints(dt, n=N, sorted_=False):
    info = np.iinfo(dt)
    lo, hi = max(info.min, -(1 << 40)), min(info.max, 1 << 40)
    if sorted_ or dt.itemsize >= 4 and RNG.random() < 2:
        step = RNG.integers(0, 7, n)
        base = int(lo) if sorted_ else int(RNG.integers(lo // 2, hi // 2))
        v = np.cumsum(step) + base
        if not sorted_:
            v = v + RNG.integers(-3, 4, n)
        return np.clip(v, info.min, info.max).astype(dt)
    return RNG.integers(lo, hi, n, endpoint=True).astype(dt)


def _floats(dt, n=N):
    v = RNG.normal(0, 100, n).astype(dt)
    v[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dt).max, np.finfo(dt).tiny, 1.5]
    return v


def _dates(unit, n=N, sorted_=True):
    base = np.cumsum(RNG.integers(0, 1000, n)) + 10_000
    return base.astype(np.int64).view(f"M8[{unit}]") if unit[0] != "t" \
        else base.astype(np.int64).view("m8[ms]")


def data_for(name: str, sorted_=False):
    if name in ("float32", "float64"):
        return _floats(np.dtype(name))
    if name == "bool":
        v = RNG.random(N) < 0.3
        return np.sort(v) if sorted_ else v
    if name == "char":
        return np.frombuffer(bytes(RNG.integers(97, 100, N).astype(np.uint8)), "S1")
    if name.startswith("M8") or name == "m8[ms]":
        return _dates(name[3:-1] if name.startswith("M8") else "t")
    return _ints(np.dtype(name), sorted_=sorted_)


DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float32", "float64", "M8[D]", "M8[ns]", "m8[ms]", "bool", "char"]
SINGLE = {
    "byteshuffle": lambda: tiledb.ByteShuffleFilter(),
    "bitshuffle": lambda: tiledb.BitShuffleFilter(),
    "bwr": lambda: tiledb.BitWidthReductionFilter(),
    "bwr64": lambda: tiledb.BitWidthReductionFilter(window=64),
    "positive_delta": lambda: tiledb.PositiveDeltaFilter(),
    "positive_delta100": lambda: tiledb.PositiveDeltaFilter(window=100),
    "double_delta": lambda: tiledb.DoubleDeltaFilter(),
    "delta": lambda: tiledb.DeltaFilter(),
    "rle": lambda: tiledb.RleFilter(),
    "xor": lambda: tiledb.XORFilter(),
    "md5": lambda: tiledb.ChecksumMD5Filter(),
    "sha256": lambda: tiledb.ChecksumSHA256Filter(),
    "gzip": lambda: tiledb.GzipFilter(),
    "zstd": lambda: tiledb.ZstdFilter(),
    "lz4": lambda: tiledb.LZ4Filter(),
    "bzip2": lambda: tiledb.Bzip2Filter(),
    "scale_float": lambda: tiledb.FloatScaleFilter(factor=0.25, offset=-3.0, bytewidth=4),
}


def _numpy_dtype(name):
    return np.dtype("S1") if name == "char" else np.dtype(name)


def _write_or_skip(uri, data, filters, **kw):
    try:
        return write_dense(uri, data, filters, **kw)
    except tiledb.TileDBError as e:
        pytest.skip(f"libtiledb refuses this combination: {e}")


def _same_cells(got: bytes, ref: np.ndarray):
    want = np.ascontiguousarray(ref).tobytes()
    assert got == want  # bit for bit: NaN payloads, -0.0, infinities


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fname", list(SINGLE))
def test_single_filter(tmp_path, fname, dtype):
    data = data_for(dtype, sorted_=fname.startswith("positive"))
    flt = SINGLE[fname]()
    uri = str(tmp_path / "a")
    files = _write_or_skip(uri, data, [flt])
    info = attr_info(DATATYPE[_numpy_dtype(dtype)])
    res = check_file(files["a0.tdb"], [spec_of(flt)], info)
    _same_cells(b"".join(res.cells), read_back(uri))


STACKS = {
    "byteshuffle_zstd": (lambda: [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()], "int64"),
    "bwr_zstd_sha256": (lambda: [tiledb.BitWidthReductionFilter(), tiledb.ZstdFilter(),
                                 tiledb.ChecksumSHA256Filter()], "int32"),
    "pd_bitshuffle_lz4_md5": (lambda: [tiledb.PositiveDeltaFilter(), tiledb.BitShuffleFilter(),
                                       tiledb.LZ4Filter(), tiledb.ChecksumMD5Filter()], "uint64"),
    "dd_bwr_zstd": (lambda: [tiledb.DoubleDeltaFilter(), tiledb.BitWidthReductionFilter(),
                             tiledb.ZstdFilter()], "int64"),
    "floatscale_xor_zstd": (lambda: [tiledb.FloatScaleFilter(factor=0.001, offset=1.0,
                                                             bytewidth=4),
                                     tiledb.XORFilter(), tiledb.ZstdFilter()], "float64"),
    "floatscale2_byteshuffle": (lambda: [tiledb.FloatScaleFilter(factor=0.5, offset=0.0,
                                                                 bytewidth=2),
                                         tiledb.ByteShuffleFilter(), tiledb.BitShuffleFilter()],
                                "float32"),
    "delta_gzip": (lambda: [tiledb.DeltaFilter(), tiledb.GzipFilter()], "int32"),
    "dd_reinterpret": (lambda: [tiledb.DoubleDeltaFilter(reinterp_dtype=np.int32)], "float64"),
    "dd_reinterpret_u16": (lambda: [tiledb.DoubleDeltaFilter(reinterp_dtype=np.uint16),
                                    tiledb.ZstdFilter()], "int64"),
    "delta_reinterpret": (lambda: [tiledb.DeltaFilter(reinterp_dtype=np.int16),
                                   tiledb.BitShuffleFilter()], "float32"),
    "xor_bitshuffle_bzip2": (lambda: [tiledb.XORFilter(), tiledb.BitShuffleFilter(),
                                      tiledb.Bzip2Filter(level=9)], "float64"),
    "md5_sha256_gzip9": (lambda: [tiledb.ChecksumMD5Filter(), tiledb.ChecksumSHA256Filter(),
                                  tiledb.GzipFilter(level=9)], "uint16"),
    "rle_zstd19": (lambda: [tiledb.RleFilter(), tiledb.ZstdFilter(level=19)], "int8"),
    "bitshuffle_rle": (lambda: [tiledb.BitShuffleFilter(), tiledb.RleFilter()], "int64"),
}


@pytest.mark.parametrize("name", list(STACKS))
def test_stack(tmp_path, name):
    make, dtype = STACKS[name]
    filters = make()
    data = data_for(dtype, sorted_=True)
    uri = str(tmp_path / "a")
    files = _write_or_skip(uri, data, filters)
    res = check_file(files["a0.tdb"], [spec_of(f) for f in filters],
                     attr_info(DATATYPE[np.dtype(dtype)]))
    _same_cells(b"".join(res.cells), read_back(uri))


@pytest.mark.parametrize("name", ["byteshuffle_zstd", "dd_bwr_zstd", "floatscale_xor_zstd",
                                  "pd_bitshuffle_lz4_md5"])
def test_stack_multichunk(tmp_path, name):
    """Tiles above 64 KiB are cut into chunks; each chunk runs the whole pipeline."""
    make, dtype = STACKS[name]
    filters = make()
    dt = np.dtype(dtype)
    n = 3 * 65536 // dt.itemsize + 123
    data = (np.cumsum(RNG.integers(0, 50, n)) * (1 if dt.kind != "f" else 0.37)).astype(dt)
    uri = str(tmp_path / "a")
    files = write_dense(uri, data, filters, tile=n)
    res = check_file(files["a0.tdb"], [spec_of(f) for f in filters], attr_info(DATATYPE[dt]))
    assert res.chunks >= 4
    _same_cells(b"".join(res.cells), read_back(uri))


def test_bwr_full_range_windows(tmp_path):
    """A window whose range overflows the type is stored unreduced with an offset the
    writer never sets: decoding is exact, re-encoding matches but for those bytes."""
    data = np.array([-2**62 * 3 // 2, 2**62 * 3 // 2, 5, 7] * 40 + list(range(96)), np.int64)
    uri = str(tmp_path / "a")
    flt = tiledb.BitWidthReductionFilter(window=32)
    files = write_dense(uri, data, [flt])
    res = check_file(files["a0.tdb"], [spec_of(flt)], attr_info(1))
    _same_cells(b"".join(res.cells), read_back(uri))
    assert res.forward_checked == res.chunks


@pytest.mark.parametrize("key", [None, KEY])
def test_var_attribute_offsets_and_validity(tmp_path, key):
    """Offsets (u64) and validity (u8) tiles run their own pipelines."""
    n = 400
    cells = [RNG.integers(0, 1000, RNG.integers(0, 6)).astype(np.int32) for _ in range(n)]
    data = np.empty(n, dtype=object)
    data[:] = cells
    offs = [tiledb.PositiveDeltaFilter(), tiledb.BitWidthReductionFilter(), tiledb.ZstdFilter()]
    val = [tiledb.BitShuffleFilter(), tiledb.RleFilter(), tiledb.ChecksumMD5Filter()]
    flt = [tiledb.ByteShuffleFilter(), tiledb.GzipFilter()]
    uri = str(tmp_path / "a")
    mask = RNG.random(n) < 0.2
    files = write_dense(uri, np.ma.masked_array(data, mask=mask), flt, dtype=np.int32,
                        var=True, nullable=True, offsets_filters=offs, validity_filters=val,
                        key=key)
    var = check_file(files["a0_var.tdb"], [spec_of(f) for f in flt], attr_info(0, var=True), key)
    off = check_file(files["a0.tdb"], [spec_of(f) for f in offs], OFFSETS_INFO, key)
    vld = check_file(files["a0_validity.tdb"], [spec_of(f) for f in val], VALIDITY_INFO, key)
    got = split_cells(b"".join(var.cells), b"".join(off.cells))
    ref = read_back(uri, key)
    validity = np.frombuffer(b"".join(vld.cells), np.uint8)
    assert np.array_equal(validity == 0, np.ma.getmaskarray(ref))
    for i, c in enumerate(got):
        if validity[i]:
            assert c == np.asarray(ref[i], dtype=np.int32).tobytes()


@pytest.mark.parametrize("key", [None, KEY])
def test_default_validity_rle(tmp_path, key):
    data = np.ma.masked_array(np.arange(3000, dtype=np.int16),
                              mask=np.repeat(RNG.random(30) < 0.5, 100))
    uri = str(tmp_path / "a")
    files = write_dense(uri, data, [tiledb.ZstdFilter()], nullable=True, key=key)
    vld = check_file(files["a0_validity.tdb"], [spec_of(tiledb.RleFilter())], VALIDITY_INFO, key)
    got = np.frombuffer(b"".join(vld.cells), np.uint8)
    assert np.array_equal(got == 0, np.ma.getmaskarray(read_back(uri, key)))


def _strings(kind: str, n: int):
    if kind == "long":  # lengths need 2 bytes, runs too
        words = ["x" * 300, "y" * 1000, "z"]
        return [words[i // 400 % 3] for i in range(n)]
    if kind == "utf8":
        words = ["héllo", "wörld", "ß", "日本語", ""]
        return [words[int(i)] for i in np.repeat(RNG.integers(0, 5, n // 4), 4)][:n]
    words = ["alpha", "beta", "gamma", "", "delta-long-string"]
    return [words[int(i)] for i in np.repeat(RNG.integers(0, 5, n // 3 + 1), 3)][:n]


@pytest.mark.parametrize("key", [None, KEY])
@pytest.mark.parametrize("dtype", ["ascii", str])
@pytest.mark.parametrize("kind", ["short", "long", "utf8"])
@pytest.mark.parametrize("enc", ["rle", "dictionary", "rle_zstd", "dictionary_sha256"])
def test_var_strings(tmp_path, enc, kind, dtype, key):
    """RLE / DICTIONARY on var strings: one chunk per tile, offsets rebuilt from the
    encoding, the offsets tile written with 0 chunks."""
    if kind == "utf8" and dtype == "ascii":
        pytest.skip("ASCII attribute")
    strs = _strings(kind, 2000)
    first = tiledb.RleFilter() if enc.startswith("rle") else tiledb.DictionaryFilter()
    filters = [first] + ([tiledb.ZstdFilter()] if enc.endswith("zstd") else
                         [tiledb.ChecksumSHA256Filter()] if enc.endswith("sha256") else [])
    data = np.array(strs, dtype=object)
    uri = str(tmp_path / "a")
    files = write_dense(uri, data, filters, dtype=dtype, var=True, tile=1000, key=key)
    with open(files["a0.tdb"], "rb") as fh:
        assert fh.read() == bytes(8) * 2  # two tiles, each of 0 chunks
    code = 11 if dtype == "ascii" else 12
    res = check_file(files["a0_var.tdb"], [spec_of(f) for f in filters],
                     attr_info(code, var=True), key)
    assert res.chunks == 2 and len(res.offsets) == 2
    got = [c.decode("utf-8") for cells, offs in zip(res.cells, res.offsets)
           for c in split_cells(cells, offs)]
    ref = [x.decode() if isinstance(x, bytes) else x for x in read_back(uri, key)]
    assert got == ref


def test_char_var_rle_runs_bytes(tmp_path):
    """CHAR var data is not a string type for RLE: plain 1-byte runs, offsets filtered."""
    data = np.array([b"aaa", b"ab", b"", b"bbbb"] * 50, dtype=object)
    uri = str(tmp_path / "a")
    files = write_dense(uri, data, [tiledb.RleFilter()], dtype=bytes, var=True)
    var = check_file(files["a0_var.tdb"], [spec_of(tiledb.RleFilter())], attr_info(4, var=True))
    off = check_file(files["a0.tdb"], [spec_of(tiledb.ZstdFilter())], OFFSETS_INFO)
    assert split_cells(b"".join(var.cells), b"".join(off.cells)) == list(read_back(uri))


@pytest.mark.parametrize("stack", ["byteshuffle_zstd", "bwr_zstd_sha256", "dd_bwr_zstd",
                                   "floatscale_xor_zstd"])
def test_encrypted(tmp_path, stack):
    make, dtype = STACKS[stack]
    filters = make()
    data = data_for(dtype, sorted_=True)
    uri = str(tmp_path / "a")
    files = write_dense(uri, data, filters, key=KEY)
    res = check_file(files["a0.tdb"], [spec_of(f) for f in filters],
                     attr_info(DATATYPE[np.dtype(dtype)]), KEY)
    _same_cells(b"".join(res.cells), read_back(uri, KEY))


def test_cell_val_num_rle(tmp_path):
    """RLE runs are whole cells: 2 × int32 = 8 bytes."""
    data = np.array([(1, 1), (1, 1), (2, 3), (2, 3), (2, 3)] * 30, dtype="i4,i4")
    uri = str(tmp_path / "a")
    files = write_dense(uri, data, [tiledb.RleFilter()])
    res = check_file(files["a0.tdb"], [spec_of(tiledb.RleFilter())], attr_info(0, 2))
    _same_cells(b"".join(res.cells), read_back(uri))


def test_double_delta_drops_partial_metadata(tmp_path):
    """[POSITIVE_DELTA, DOUBLE_DELTA]: DOUBLE_DELTA encodes the positive-delta metadata (100
    bytes) as 12 int64 values and drops 4 bytes; libtiledb reads garbage back. arrayscope
    says so instead of inventing the bytes."""
    from arrayscope.formats.filters import RunContext, reverse_chunk
    from tests.support.filter_arrays import walk

    data = np.cumsum(RNG.integers(0, 7, 1000)).astype(np.int64)
    filters = [tiledb.PositiveDeltaFilter(), tiledb.DoubleDeltaFilter()]
    files = write_dense(str(tmp_path / "a"), data, filters)
    (chunks,) = walk(files["a0.tdb"])
    orig, md, d = chunks[0]
    r = reverse_chunk([spec_of(f) for f in filters], md, d, attr_info(1), RunContext(None, orig))
    assert r.error is not None and "dropped the last 4 bytes" in str(r.error)
    assert r.failed_at == 1


def test_webp_images_are_kept(tmp_path):
    """WEBP: the part table parses, the chunk data is a RIFF/WebP image; without an image
    codec the reverse stops with a FilterError that says why (and keeps the bytes)."""
    from arrayscope.formats.filters import DataInfo, FilterSpec, RunContext, reverse_chunk
    from tests.support.filter_arrays import fragment_files, walk

    uri = str(tmp_path / "img")
    dom = tiledb.Domain(tiledb.Dim("y", domain=(0, 15), tile=16, dtype=np.uint32),
                        tiledb.Dim("x", domain=(0, 47), tile=48, dtype=np.uint32))
    flt = tiledb.WebpFilter(input_format=1, quality=90.0, lossless=True)
    attr = tiledb.Attr("rgb", dtype=np.uint8, filters=tiledb.FilterList([flt]))
    try:
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[attr]))
        img = RNG.integers(0, 256, (16, 48), dtype=np.uint8)
        with tiledb.open(uri, "w") as arr:
            arr[:] = img
    except tiledb.TileDBError as e:
        pytest.skip(f"this libtiledb has no WebP: {e}")
    ((orig, md, data),) = walk(fragment_files(uri)["a0.tdb"])[0]
    assert md[:4] == (1).to_bytes(4, "little") and int.from_bytes(md[4:8], "little") == len(data)
    assert data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    r = reverse_chunk([FilterSpec(18, {"format": 1, "lossless": True})], md, data,
                      DataInfo(6), RunContext(None, orig))
    try:
        import PIL  # noqa: F401
    except ImportError:
        assert r.error is not None and "Pillow" in str(r.error)
        assert r.stages[1].data_bytes == data
    else:
        assert r.cells == img.tobytes()

"""`values` through `filters.direct`: encrypted pipelines and RLE / DICTIONARY var-string
tiles decoded straight into the output, bit for bit with tiledb-py, on both kernel paths
(numba, and `ARRAYSCOPE_NO_JIT=1`: the general numpy path); damaged tiles are left to the
general path and reported as before."""
from __future__ import annotations

import os

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core import compiled
from arrayscope.formats.filters import direct
from arrayscope.formats.tiledb.values import field_values as V

KEY = "0123456789abcdeF0123456789abcdeF"


@pytest.fixture(params=["numba", "numpy"])
def jit(request, monkeypatch):
    """Which string kernel path runs: "numba" (loaded first, so small tiles take it too)
    or "numpy" (ARRAYSCOPE_NO_JIT=1). Yields a list collecting, per string chunk the direct
    path tried, whether its kernel decoded it."""
    if request.param == "numpy":
        monkeypatch.setenv("ARRAYSCOPE_NO_JIT", "1")
    else:
        monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
        assert compiled._load() is not None, "numba is a runtime dependency"
    seen: list = []
    real = direct.reverse_strings_into

    def spy(*a, **k):
        r = real(*a, **k)
        seen.append(r is not None)
        return r
    monkeypatch.setattr(direct, "reverse_strings_into", spy)
    return request.param, seen


def _words(n: int) -> np.ndarray:
    """Runs of repeated words, empty strings and multi-byte UTF-8 among them."""
    base = ["", "a", "gene_00001", "é", "日本語テキスト", "x" * 300, "", "tail"]
    return np.array([base[(i // 5) % len(base)] + ("" if i % 11 else str(i % 7))
                     for i in range(n)], dtype=object)


def _write_strings(uri: str, n: int, tile: int, filters, nullable: bool = False):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=tile, dtype=np.int64))
    attr = tiledb.Attr("s", dtype=str, var=True, nullable=nullable, filters=filters)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[attr]))
    data = _words(n)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = np.ma.array(data, mask=np.arange(n) % 9 == 4) if nullable else data
    return data


def _theirs(uri: str, key=None):
    ctx = tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key}) \
        if key else None
    with tiledb.open(uri, ctx=ctx) as A:
        return A.query(attrs=[A.schema.attr(0).name])[:]


STRING_STACKS = {
    "rle": lambda: [tiledb.RleFilter()],
    "dictionary": lambda: [tiledb.DictionaryFilter()],
    "dictionary_zstd": lambda: [tiledb.DictionaryFilter(), tiledb.ZstdFilter()],
    "rle_gzip": lambda: [tiledb.RleFilter(), tiledb.GzipFilter()],
}


@pytest.mark.parametrize("stack", list(STRING_STACKS))
@pytest.mark.parametrize("nullable", [False, True])
def test_string_tiles_match_tiledb(tmp_path, jit, stack, nullable):
    path, seen = jit
    uri = str(tmp_path / f"{stack}_{nullable}")
    n = 4200
    _write_strings(uri, n, 700, STRING_STACKS[stack](), nullable)   # 6 tiles
    got = _theirs(uri)
    ref = got["s"]
    mask = np.ma.getmaskarray(ref) if np.ma.isMaskedArray(ref) else np.zeros(n, bool)
    data = np.ma.getdata(ref)
    doc = formats.open(uri)
    e = V.values(doc, "s")[0]
    assert not e.get("error"), e.get("error")
    vals = e["values"]
    assert [v is None for v in vals] == mask.tolist()
    assert [v for v, m in zip(vals, mask) if not m] == [d for d, m in zip(data, mask) if not m]
    raw_ref = b"".join(d.encode() for d in data)
    if not nullable:
        assert bytes(e["raw"]) == raw_ref
    raw = V.values(doc, "s", with_values=False)[0]["raw"]
    assert bytes(raw) == bytes(e["raw"])
    assert len(seen) == 2 * 6, seen        # every tile, both calls, went to a kernel try
    assert all(seen) if path == "numba" else not any(seen)


def test_large_string_tile(tmp_path, jit):
    """One tile of 40 000 strings (about 1 MiB): libtiledb filters a string tile whole, in
    one chunk far over the 64 KiB chunk size; one kernel call decodes it."""
    path, seen = jit
    uri = str(tmp_path / "big")
    n = 40000
    data = _write_strings(uri, n, n, [tiledb.RleFilter()])
    doc = formats.open(uri)
    e = V.values(doc, "s")[0]
    assert not e.get("error"), e.get("error")
    assert e["values"] == list(data)
    assert bytes(e["raw"]) == "".join(data).encode()
    assert seen == [path == "numba"]


def _var_tile_file(doc) -> str:
    frag = doc.model.fragments[0]
    return os.path.join(frag.path, "a0_var.tdb")


def test_damaged_string_tile_reported_as_before(tmp_path, jit):
    """A run length changed in an RLE string tile: the kernel refuses it, the general path
    reports it — the same error on both kernel paths, the other tiles unaffected."""
    path, seen = jit
    uri = str(tmp_path / "bad")
    _write_strings(uri, 2000, 1000, [tiledb.RleFilter()])
    doc = formats.open(uri)
    p = _var_tile_file(doc)
    raw = bytearray(open(p, "rb").read())
    # the first chunk's data: after the u64 chunk count, the 12-byte chunk header and the
    # RLE metadata (20-byte string header + 2 byte sizes); its first run length is byte 0
    md_len = int.from_bytes(raw[16:20], "little")
    first = 8 + 12 + md_len
    raw[first] ^= 0x40
    with open(p, "wb") as fh:
        fh.write(raw)
    e = V.values(formats.open(uri), "s")[0]
    assert e.get("error") and "tile 1" in e["error"], e
    # tile 1 refused by the kernel, tile 2 decoded by it (in either order: two threads)
    assert sorted(seen) == ([False, True] if path == "numba" else [False, False])


def _write_encrypted(uri: str, filters, dtype=np.int64, n: int = 300_000):
    ctx = tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": KEY})
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=n // 3, dtype=np.int64),
                        ctx=ctx)
    attr = tiledb.Attr("a", dtype=dtype, ctx=ctx, filters=tiledb.FilterList(filters, ctx=ctx))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[attr], ctx=ctx), ctx=ctx)
    data = np.cumsum(np.random.default_rng(5).integers(-9, 9, n)).astype(dtype)
    with tiledb.open(uri, "w", timestamp=1, ctx=ctx) as A:
        A[:] = data
    return data


ENC_STACKS = {
    "none": lambda: [],
    "zstd": lambda: [tiledb.ZstdFilter()],
    "byteshuffle_lz4": lambda: [tiledb.ByteShuffleFilter(), tiledb.LZ4Filter()],
}


@pytest.mark.parametrize("stack", list(ENC_STACKS))
def test_encrypted_matches_tiledb(tmp_path, monkeypatch, stack):
    """Every chunk is decrypted (and decompressed) by the direct path, none left."""
    uri = str(tmp_path / stack)
    data = _write_encrypted(uri, ENC_STACKS[stack]())
    left: list = []
    real = direct._aes

    def spy(*a, **k):
        r = real(*a, **k)
        left.extend(r)
        return r
    monkeypatch.setattr(direct, "_aes", spy)
    e = V.values(formats.open(uri, key=KEY.encode()), "a", KEY.encode(), with_values=False)[0]
    assert not e.get("error"), e.get("error")
    assert bytes(e["raw"]) == data.tobytes() == _theirs(uri, KEY)["a"].tobytes()
    assert left == []


def test_encrypted_damage_reported_as_before(tmp_path):
    """A flipped ciphertext byte: the tag check fails, reported for that tile (the direct
    path leaves the chunk to the general path)."""
    uri = str(tmp_path / "enc")
    _write_encrypted(uri, [tiledb.ZstdFilter()])
    doc = formats.open(uri, key=KEY.encode())
    p = os.path.join(doc.model.fragments[0].path, "a0.tdb")
    raw = bytearray(open(p, "rb").read())
    raw[-5] ^= 1
    with open(p, "wb") as fh:
        fh.write(raw)
    e = V.values(formats.open(uri, key=KEY.encode()), "a", KEY.encode())[0]
    assert e.get("error") and "tile 3" in e["error"] and "tag" in e["error"], e


def _zstd_strings(tmp_path, name: str, n: int = 4200, tile: int = 100, offsets_filters=None):
    uri = str(tmp_path / name)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=tile, dtype=np.int64))
    attr = tiledb.Attr("s", dtype=str, var=True, filters=[tiledb.ZstdFilter()])
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=[attr], offsets_filters=[tiledb.ZstdFilter()] if offsets_filters is None
        else offsets_filters))
    data = _words(n)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = data
    return uri, data


def test_raw_checks_offsets_in_pieces(tmp_path, monkeypatch):
    """`values --raw` of a var field decodes its offsets file a piece at a time (never all of
    it beside the var bytes): the same raw bytes, every piece checked."""
    uri, data = _zstd_strings(tmp_path, "pieces")
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(offsets_piece=3000))   # 800-byte offsets tiles: 3 a piece
    calls: list = []
    real = V._decode_jobs

    def spy(jobs, key, *buffers):
        calls.extend(j.size for j in jobs)
        return real(jobs, key, *buffers)
    monkeypatch.setattr(V, "_decode_jobs", spy)
    e = V.values(formats.open(uri), "s", with_values=False)[0]
    assert not e.get("error"), e.get("error")
    assert bytes(e["raw"]) == "".join(data).encode() == \
        b"".join(s.encode() for s in _theirs(uri)["s"])
    assert calls[0] == len("".join(data).encode())           # the var file, whole
    assert calls[1:] == [2400] * 14                          # 42 offsets tiles, 3 a piece


@pytest.mark.parametrize("at", ["decode", "order"])
def test_raw_reports_offsets_damage_as_values_does(tmp_path, monkeypatch, at):
    """A damaged offsets tile (a broken zstd frame; an offset past its var tile): `--raw`,
    checking in pieces, gives the error `values` gives."""
    uri, _data = _zstd_strings(tmp_path, at, offsets_filters=[tiledb.ZstdFilter()]
                               if at == "decode" else tiledb.FilterList([]))
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(offsets_piece=3000))
    doc = formats.open(uri)
    frag = doc.model.fragments[0]
    p = os.path.join(frag.path, "a0.tdb")
    raw = bytearray(open(p, "rb").read())
    if at == "decode":
        raw[len(raw) // 2:len(raw) // 2 + 8] = b"\xff" * 8    # inside some tile's zstd frame
    else:   # tile 20's second cell offset: far past its var tile
        from arrayscope.formats.tiledb.parse.data_files import file_role
        fm = V._metadata(doc, doc.model, frag)
        job = V._locate(doc, frag, fm, file_role(fm.schema, fm, "a0.tdb"), "a0.tdb")
        c = next(pc.chunk for pc in job.chunks if pc.tile == 19)
        raw[c[4] + 8:c[4] + 16] = (1 << 40).to_bytes(8, "little")
    with open(p, "wb") as fh:
        fh.write(raw)
    full = V.values(formats.open(uri), "s")[0]
    only = V.values(formats.open(uri), "s", with_values=False)[0]
    assert full.get("error") and "tile" in full["error"], full
    if at == "order":
        assert full["error"].startswith("tile 20: cell offsets are not increasing")
    assert only.get("error") == full["error"]


def test_stored_pages_released_as_decoded(tmp_path, monkeypatch):
    """The batch path drops each run of decoded chunks' mapped pages (FileSource.release):
    every stored chunk is covered once, and the cells are still bit-exact (a page touched
    again comes back from the page cache)."""
    from arrayscope.formats.core.source import FileSource

    uri = str(tmp_path / "rel")
    n = 2_000_000   # 16 MB of int64 in 4 tiles: 64 KiB chunks, a mapped file
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=n // 4, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    data = np.random.default_rng(2).integers(0, 1 << 40, n)   # incompressible: a big file
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = data
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(release_every=7))
    spans: list = []
    real = FileSource.release

    def spy(self, offset, length):
        spans.append((offset, offset + length))
        return real(self, offset, length)
    monkeypatch.setattr(FileSource, "release", spy)
    e = V.values(formats.open(uri), "a", with_values=False)[0]
    assert not e.get("error"), e.get("error")
    assert bytes(e["raw"]) == data.tobytes()
    doc = formats.open(uri)
    frag = doc.model.fragments[0]
    assert os.path.getsize(os.path.join(frag.path, "a0.tdb")) > FileSource.PREAD_MAX
    from arrayscope.formats.tiledb.parse.data_files import file_role
    fm = V._metadata(doc, doc.model, frag)
    job = V._locate(doc, frag, fm, file_role(fm.schema, fm, "a0.tdb"), "a0.tdb")
    stored = sorted((pc.chunk.md_offset, pc.chunk.data_offset + pc.chunk.filtered)
                    for pc in job.chunks)
    assert len(spans) >= len(stored) // 7    # a release per run of 7 chunks
    covered = [any(a <= lo and hi <= b for a, b in spans) for lo, hi in stored]
    assert all(covered)

"""verify's chunk windows for [DELTA or DOUBLE_DELTA, compressor] pipelines: the typed
codec's forward check made as each chunk decodes (`filters.deltas.typed_check`,
`tile_batch._checked_typed_plan`) gives exactly what the per-chunk checks give — on arrays
tiledb-py 0.36.1 writes (64 KiB chunks, tiles of 4 chunks), clean and with planted damage
(a compressed byte; padding bits of a DOUBLE_DELTA part that decode fine but are not what
forward makes), on one thread and on two, compiled and numpy only."""
from __future__ import annotations

import glob
import os
import shutil
import struct

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core import compiled
from arrayscope.formats.core.findings import FORWARD_MISMATCH
from arrayscope.formats.core.verify import open_for_verify, verify_report
from arrayscope.formats.filters import FilterSpec, get
from arrayscope.formats.filters.base import DataInfo
from arrayscope.formats.filters.deltas import typed_check
from arrayscope.formats.filters.enums import Datatype as D
from arrayscope.formats.filters.enums import FilterType
from arrayscope.formats.tiledb.verify import verify_chunks
from tests.tiledb.test_verify_chunk_windows import TILE, N, _walk, create_dense


def _wide(n):
    """Deltas of deltas of ~61 bits: records that do not compress (zstd stores them raw)."""
    return np.random.default_rng(8).integers(-2**59, 2**59, n, dtype=np.int64)


ATTRS = {   # name -> (dtype, filters, data); data file a<k>.tdb in this order
    "dd": (np.int64, [tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter()], lambda: _walk(N)),
    "de": (np.int64, [tiledb.DeltaFilter(), tiledb.ZstdFilter()], lambda: _walk(N)),
    "d32": (np.int32, [tiledb.DoubleDeltaFilter(), tiledb.LZ4Filter()],
            lambda: _walk(N).astype(np.int32)),
    "wide": (np.int64, [tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter()], lambda: _wide(N)),
}


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    uri = create_dense(str(tmp_path_factory.mktemp("typedwin") / "dense"), ATTRS)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = {k: d() for k, (_dt, _f, d) in ATTRS.items()}
    return uri


def _run(uri):
    r = verify_report(open_for_verify(uri))
    return [f.to_json() for f in r.findings], r.tally.tiles, r.tally.nbytes


def _chunk_at(path, tile_offset, k):
    """(metadata offset, data offset, filtered length) of chunk k of the tile at
    `tile_offset`."""
    raw = open(path, "rb").read()
    at = tile_offset + 8
    for i in range(k + 1):
        orig, filt, mdl = struct.unpack_from("<III", raw, at)
        if i == k:
            return at + 12, at + 12 + mdl, filt
        at += 12 + mdl + filt
    raise AssertionError


def _tile_offsets(uri, path):
    doc = formats.open(uri)
    try:
        return [n.offset for n in doc.root.walk(expand_lazy=True)
                if n.kind == "tile" and getattr(n.source, "name", "").endswith(
                    os.path.relpath(path, uri))]
    finally:
        doc.close()


def test_typed_windows_taken_and_same_as_per_chunk(typed, jit, threads, monkeypatch):
    """Clean: every typed file's first chunk checked in full, the rest in windows; no
    finding, the same tally as the per-chunk checks."""
    full = {"n": 0}
    real_one = verify_chunks.check_one

    def one(ci, *a, **k):
        if os.path.basename(ci.source.name).startswith("a"):   # the data files' chunks
            full["n"] += 1
        return real_one(ci, *a, **k)
    monkeypatch.setattr(verify_chunks, "check_one", one)
    fast = _run(typed)
    assert fast[0] == []
    # 4 files of 8 tiles (4 chunks of int64, 2 of int32): one probe a file
    assert full["n"] == len(ATTRS)
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(planned=False))
    ref = _run(typed)
    assert fast == ref
    assert full["n"] == len(ATTRS) + 8 * (4 + 4 + 2 + 4)


@pytest.mark.parametrize("case", ["dd-zstd-byte", "de-zstd-byte", "d32-lz4-byte",
                                  "wide-padding-bit"])
def test_typed_planted_damage_same_findings(typed, tmp_path, jit, threads, monkeypatch, case):
    uri = str(tmp_path / "d")
    shutil.copytree(typed, uri)
    (frag,) = glob.glob(os.path.join(uri, "__fragments", "*"))
    name = case.split("-")[0]
    path = os.path.join(frag, f"a{list(ATTRS).index(name)}.tdb")
    offsets = _tile_offsets(uri, path)
    assert len(offsets) == 8
    md, data, filt = _chunk_at(path, offsets[2], 1)   # not the file's first chunk (the probe)
    with open(path, "r+b") as fh:
        if case == "wide-padding-bit":
            # the DOUBLE_DELTA part as zstd stored it (raw: the records do not compress);
            # 8190 records of 62 bits leave 60 padding bits in its last word: set one
            with tiledb.open(uri) as A:
                cells = A[2 * TILE + 8192:2 * TILE + 16384]["wide"]
            part = get(FilterType.DOUBLE_DELTA).compress_part(
                cells.tobytes(), FilterSpec(FilterType.DOUBLE_DELTA), DataInfo(D.INT64))
            fh.seek(data)
            stored = fh.read(filt)
            at = stored.find(part)
            assert at > 0 and part[0] == 61
            fh.seek(data + at + len(part) - 8)   # the last word's low byte: padding only
            fh.write(b"\x01")
        else:   # three bytes of the compressed typed part changed
            fh.seek(data + 30)
            old = fh.read(3)
            fh.seek(data + 30)
            fh.write(bytes(b ^ 0x5A for b in old))
    fast = _run(uri)
    with monkeypatch.context() as m:
        m.setattr(compiled, "TUNING", compiled.tuned(planned=False))
        ref = _run(uri)
    assert fast == ref
    errors = [f for f in fast[0] if f["status"] == "error"]
    assert errors, fast[0]
    assert any(f["source"].endswith(os.path.basename(path)) for f in errors), errors
    if case == "wide-padding-bit":
        assert [f["code"] for f in errors] == [FORWARD_MISMATCH], errors


TYPES = {D.INT8: "i1", D.UINT8: "u1", D.INT16: "<i2", D.UINT16: "<u2", D.INT32: "<i4",
         D.UINT32: "<u4", D.INT64: "<i8", D.UINT64: "<u8"}


@pytest.mark.parametrize("ftype", [FilterType.DOUBLE_DELTA, FilterType.DELTA])
def test_typed_check_is_forward_equality(jit, ftype):
    """The check says True exactly when the filter's forward (newest rule) gives the part:
    every integer type, lengths around the two first values, walks, extremes, constant
    runs and values whose deltas overflow (the writer refuses those: False); and a part
    with any one bit flipped, or a word more, is refused."""
    rng = np.random.default_rng(1)
    spec = FilterSpec(ftype)
    f = get(ftype)
    for dt, name in TYPES.items():
        info = DataInfo(datatype=dt, format_version=22)
        check = typed_check(spec, info)
        assert check is not None
        t = np.dtype(name)
        lim = np.iinfo(t)
        for trial in range(60):
            n = int(rng.choice([0, 1, 2, 3, 4, 17, 64, 65, 1000]))
            mode = trial % 4
            if mode == 0:
                vals = rng.integers(lim.min, lim.max, n, dtype=t, endpoint=True)
            elif mode == 1:
                vals = np.cumsum(rng.integers(-50, 50, n)).astype(t)
            elif mode == 2:
                vals = rng.choice(np.array([lim.min, lim.max, 0, 1], dtype=t), n)
            else:
                vals = np.full(n, lim.max // 3, t)
            cells = vals.tobytes()
            try:
                part = f.compress_part(cells, spec, info)
            except Exception:
                part = None
            if part is None:
                assert not check(cells, b"\0" * 9)
                continue
            assert check(cells, part), (dt, n, mode)
            assert not check(cells, part + bytes(8))
            if ftype == FilterType.DOUBLE_DELTA and len(part) > 9:
                bad = bytearray(part)
                bad[int(rng.integers(0, len(bad)))] ^= 1 << int(rng.integers(0, 8))
                assert not check(cells, bytes(bad)), (dt, n, mode)


def test_older_writer_rule_left_to_per_chunk_checks():
    """A format version whose first rule is not the newest writer's: no check (the
    per-chunk path names the rule that matched)."""
    spec = FilterSpec(FilterType.DOUBLE_DELTA)
    assert typed_check(spec, DataInfo(D.INT64, format_version=21)) is None
    assert typed_check(spec, DataInfo(D.INT64, format_version=22)) is not None

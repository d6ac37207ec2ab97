"""`values` on many fragments through the kernels (`bulk_locate.py`): the bytes tiledb-py
reads, and for every kind of damage or difference the entries — errors included — the
Python path gives, with only the fragments the kernels cannot read handed back to it."""
import dataclasses
import os
import shutil
import struct

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core import compiled
from arrayscope.formats.tiledb import PLUGIN
from arrayscope.formats.tiledb.parse.rawtile import GT_HEAD_SIZE, chunk_table, peek_generic_tile
from arrayscope.formats.tiledb.values import bulk_locate
from arrayscope.formats.tiledb.values import field_values as V

pytestmark = pytest.mark.skipif(not bulk_locate.FastValues.available(1 << 30),
                                reason="no statx (not Linux) or no numba: the Python path "
                                       "alone, tested by every values test")

N = 70   # past compiled.TUNING.min_files: the kernels' path
M = 300  # cells per fragment
DAMAGED = (5, 40, N - 1)   # in the first, a middle and the last batch


def _write_dense(uri, n, filters, dtype=np.int64):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n * M - 1), tile=M, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=dtype, filters=filters)]))
    rng = np.random.default_rng(11)
    data = np.cumsum(rng.integers(-5, 6, n * M)).astype(dtype)
    for i in range(n):
        with tiledb.open(uri, "w", timestamp=i + 1) as A:
            A[i * M:(i + 1) * M] = data[i * M:(i + 1) * M]
    return data


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """N dense fragments of [ByteShuffle, Zstd] int64 cells, written by tiledb-py."""
    uri = str(tmp_path_factory.mktemp("bulk") / "arr")
    _write_dense(uri, N, [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()])
    return uri


@pytest.fixture
def fast_batches(monkeypatch):
    """Small batches (several per array); records each batch's statuses."""
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(bulk_fragments=8))
    seen: list = []
    real = bulk_locate.run_batch

    def spy(plan, folders, root):
        b = real(plan, folders, root)
        seen.append(b.status.copy())
        return b
    monkeypatch.setattr(bulk_locate, "run_batch", spy)
    return seen


def _entries(uri, field="a", fast=True, tree=False, monkeypatch=None):
    saved = compiled.TUNING
    if not fast:   # the Python path: the bulk reader never pays
        compiled.TUNING = dataclasses.replace(saved, min_files=10 ** 9)
    try:
        doc = formats.open(uri, tree=tree)
        return [(e["name"], bytes(e["raw"]), repr(e["values"]), e.get("error"))
                for e in PLUGIN.values(doc, field)]
    finally:
        compiled.TUNING = saved


def _frags(uri):
    return sorted(formats.open(uri, tree=False).model.fragments, key=lambda f: f.order_key())


def test_many_fragments_through_the_kernels_equal_tiledb_py(many, fast_batches, monkeypatch):
    got = _entries(many)
    decoded = sum(int((s == 0).sum()) for s in fast_batches)
    assert decoded == N - 1   # the first fragment read by Python, its plan the others'
    assert len(fast_batches) == -(-(N - 1) // 8)
    with tiledb.open(many) as A:
        assert b"".join(e[1] for e in got) == A[:]["a"].tobytes()
    assert not any(e[3] for e in got)
    assert got == _entries(many, fast=False, monkeypatch=monkeypatch)


def _footer(path):
    with open(path, "rb") as fh:
        data = fh.read()
    flen = struct.unpack_from("<Q", data, len(data) - 8)[0]
    return data, len(data) - 8 - flen


def _toff_section(doc, frag):
    fm = V._metadata(doc, doc.model, frag)
    return fm, fm.footer.sections["tile_offsets"][0]


def _edit(path, at, new: bytes):
    with open(path, "r+b") as fh:
        fh.seek(at)
        fh.write(new)


def _damage(kind, uri, frag, doc):
    """Damage fragment `frag` of the copy at `uri` one way; True when that fragment must
    then carry an error."""
    meta = os.path.join(frag.path, "__fragment_metadata.tdb")
    data = os.path.join(frag.path, "a0.tdb")
    if kind == "chunk-bytes":
        with open(data, "r+b") as fh:
            fh.seek(-8, os.SEEK_END)
            fh.write(b"\xff" * 8)
        return True
    if kind == "chunk-count":
        _edit(data, 0, struct.pack("<Q", 1 << 40))
        return True
    if kind == "chunk-too-big":   # the first chunk's original length past the tile's cells
        _edit(data, 8, struct.pack("<I", 10 * M * 8))
        return True
    if kind == "data-appended":
        with open(data, "ab") as fh:
            fh.write(b"\0" * 24)
        return False
    if kind == "data-missing":
        os.remove(data)
        return True
    if kind == "data-fifo":
        os.remove(data)
        os.mkfifo(data)
        return True
    if kind == "data-link-out":
        outside = os.path.join(os.path.dirname(uri), "outside-" + frag.name)
        shutil.copy(data, outside)
        os.remove(data)
        os.symlink(outside, data)
        return True
    if kind == "meta-folder":
        os.remove(meta)
        os.mkdir(meta)
        return True
    if kind == "meta-truncated":
        with open(meta, "r+b") as fh:
            fh.truncate(os.path.getsize(meta) // 2)
        return True
    fm, off = _toff_section(doc, frag)
    raw, fstart = _footer(meta)
    if kind == "footer-schema-name":   # another (unknown) schema name: the latest schema
        at = raw.index(fm.schema_name.encode(), fstart)
        _edit(meta, at + 2, b"#")
        return False
    if kind == "toff-offset-beyond":
        at = raw.index(struct.pack("<Q", off), fstart)   # the footer's tile-offsets entry
        _edit(meta, at, struct.pack("<Q", len(raw) + 100))
        return True
    if kind == "toff-bytes":
        head = peek_generic_tile(fm.loader.source, off)
        start = off + GT_HEAD_SIZE + head[1]
        (_o, filt, _md, _mdl, at), = chunk_table(fm.loader.source, start, start + head[2])
        _edit(meta, at, b"\xff" * filt)
        return True
    if kind == "encrypted-flag":   # the R-tree tile says AES: the key is asked for
        _edit(meta, fm.footer.rtree + 29, b"\x01")
        return True
    raise AssertionError(kind)


KINDS = ["chunk-bytes", "chunk-count", "chunk-too-big", "data-appended", "data-missing",
         "data-fifo", "data-link-out", "meta-folder", "meta-truncated", "footer-schema-name",
         "toff-offset-beyond", "toff-bytes", "encrypted-flag"]


@pytest.mark.parametrize("kind", KINDS)
def test_damage_gives_the_python_paths_entries(many, tmp_path, fast_batches, monkeypatch,
                                               kind):
    uri = str(tmp_path / "arr")
    shutil.copytree(many, uri)
    doc = formats.open(uri, tree=False)
    frags = _frags(uri)
    erring = [_damage(kind, uri, frags[k], doc) for k in DAMAGED]
    fast = _entries(uri)
    assert fast == _entries(uri, fast=False, monkeypatch=monkeypatch)
    if kind not in ("meta-folder", "data-fifo"):   # (the tree shows those as other nodes)
        assert fast == _entries(uri, tree=True)
    errs = [e[0] for e in fast if e[3]]
    assert errs == [frags[k].name for k, bad in zip(DAMAGED, erring) if bad]
    # the undamaged fragments all went through the kernels
    assert sum(int((s == 0).sum()) for s in fast_batches) >= N - 1 - len(DAMAGED)


def test_fragments_of_two_schemas(tmp_path, fast_batches, monkeypatch):
    """A schema evolution halfway: the new schema's fragments differ from the first plan (a
    footer naming another schema), are handed back once, and make a plan of their own."""
    uri = str(tmp_path / "evolved")
    n = 2 * N
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n * M - 1), tile=M, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    data = np.arange(n * M, dtype=np.int64) * 3 - 7
    for i in range(N):
        with tiledb.open(uri, "w", timestamp=i + 1) as A:
            A[i * M:(i + 1) * M] = data[i * M:(i + 1) * M]
    evo = tiledb.ArraySchemaEvolution(tiledb.default_ctx())
    evo.add_attribute(tiledb.Attr("b", dtype=np.int32, filters=[tiledb.LZ4Filter()]))
    evo.array_evolve(uri)
    for i in range(N, n):
        with tiledb.open(uri, "w", timestamp=i + 10) as A:
            A[i * M:(i + 1) * M] = {"a": data[i * M:(i + 1) * M],
                                    "b": (data[i * M:(i + 1) * M] % 1000).astype(np.int32)}
    a = _entries(uri)
    assert sum(int((s == 0).sum()) for s in fast_batches) >= n - 3
    with tiledb.open(uri) as A:
        assert b"".join(e[1] for e in a) == A[:]["a"].tobytes()
        b_ref = A[N * M:]["b"].tobytes()
    assert a == _entries(uri, fast=False, monkeypatch=monkeypatch)
    b = _entries(uri, "b")
    assert b == _entries(uri, "b", fast=False, monkeypatch=monkeypatch)
    assert [bool(e[3]) for e in b] == [True] * N + [False] * N
    assert b"".join(e[1] for e in b) == b_ref


def test_sparse_fragments_dimension_and_attribute(tmp_path, fast_batches, monkeypatch):
    """Sparse fragments: a dimension's file and an attribute's, each cell as written (one
    sorted run of coordinates per fragment: the stored order)."""
    uri = str(tmp_path / "sparse")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, N * M - 1), tile=64, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=128, attrs=[
        tiledb.Attr("a", dtype=np.float64, filters=[tiledb.ZstdFilter()])]))
    coords = np.arange(N * M, dtype=np.int64)
    vals = np.sin(coords / 7.0)
    for i in range(N):
        with tiledb.open(uri, "w", timestamp=i + 1) as A:
            A[coords[i * M:(i + 1) * M]] = vals[i * M:(i + 1) * M]
    for field, want in (("d", coords), ("a", vals)):
        fast_batches.clear()
        got = _entries(uri, field)
        assert sum(int((s == 0).sum()) for s in fast_batches) == N - 1, field
        assert b"".join(e[1] for e in got) == want.tobytes()
        assert got == _entries(uri, field, fast=False, monkeypatch=monkeypatch)


@pytest.mark.parametrize("filters", [
    [tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter()],
    [tiledb.BitShuffleFilter(), tiledb.LZ4Filter()],
    [tiledb.Bzip2Filter()],
    [],   # no filters: no fused plan, the Python path throughout
], ids=["doubledelta-zstd", "bitshuffle-lz4", "bzip2", "none"])
def test_other_pipelines(tmp_path, fast_batches, monkeypatch, filters):
    uri = str(tmp_path / "arr")
    data = _write_dense(uri, N, filters)
    got = _entries(uri)
    assert b"".join(e[1] for e in got) == data.tobytes()
    assert got == _entries(uri, fast=False, monkeypatch=monkeypatch)
    decoded = sum(int((s == 0).sum()) for s in fast_batches)
    assert decoded == (N - 1 if filters else 0)


def test_consolidated_fragment_metadata(many, tmp_path, monkeypatch):
    """Fragment metadata consolidated into `__fragment_meta`: the entries are the Python
    path's, whichever way each fragment's metadata is found."""
    uri = str(tmp_path / "arr")
    shutil.copytree(many, uri)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragment_meta"}))
    got = _entries(uri)
    with tiledb.open(uri) as A:
        assert b"".join(e[1] for e in got) == A[:]["a"].tobytes()
    assert got == _entries(uri, fast=False, monkeypatch=monkeypatch)


def test_a_batch_that_raises_is_read_by_python(many, monkeypatch):
    """Whatever goes wrong inside a batch stays there: its fragments are read by Python."""
    def broken(plan, folders):
        raise RuntimeError("boom")
    monkeypatch.setattr(bulk_locate, "run_batch", broken)
    got = _entries(many)
    with tiledb.open(many) as A:
        assert b"".join(e[1] for e in got) == A[:]["a"].tobytes()
    assert not any(e[3] for e in got)


def test_a_plan_reads_like_another_made_from_a_fragment_of_the_same_layout(many):
    """Two fragments of one layout give plans that read alike (their footers differ only in
    values: domain, sizes, offsets), so reading one more fragment makes no new plan."""
    doc = formats.open(many, tree=False)
    roles: dict = {}
    frags = _frags(many)
    plans = [bulk_locate.plan_from(V._fragment_values(doc, doc.model, f, "a", None,
                                                      defer=True, roles=roles))
             for f in (frags[0], frags[9])]
    assert plans[0] is not None and plans[1] is not None
    assert not np.array_equal(plans[0].template, plans[1].template)
    assert plans[0].reads_like(plans[1])
    other = bulk_locate.Plan(**{**plans[1].__dict__, "toff_at": plans[1].toff_at + 8})
    assert not plans[0].reads_like(other)


def test_a_tile_past_its_schema_bound_is_refused_before_anything_is_allocated(
        many, tmp_path, fast_batches):
    """A chunk declaring more cells than the tile holds: the locate kernel refuses the
    fragment (status 2) before the batch's output is sized from it."""
    uri = str(tmp_path / "arr")
    shutil.copytree(many, uri)
    frag = _frags(uri)[12]
    _edit(os.path.join(frag.path, "a0.tdb"), 8, struct.pack("<I", 0xFFFFFF00))
    got = _entries(uri)
    assert [e[0] for e in got if e[3]] == [frag.name]
    statuses = np.concatenate(fast_batches)
    assert sorted(statuses.tolist()).count(2) == 1 and statuses.max() == 2

"""Large Zarr arrays open in time proportional to their metadata: each chunk file gets only its
on-disk codec framing at open, and is decoded when shown (the "decoded" node's deferred
children), by `values` (chunk by chunk into one output array) and by `verify` (every chunk,
released after checking). The lazy path is forced with a lowered threshold."""
from __future__ import annotations

import io
import json
import os
import warnings
from contextlib import redirect_stdout

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import BloscCodec, ZstdCodec  # noqa: E402

from arrayscope import formats  # noqa: E402
from arrayscope.formats.core import engine  # noqa: E402
from arrayscope.formats.core.document import Document  # noqa: E402
from arrayscope.formats.core.node import to_json  # noqa: E402
from arrayscope.formats.core.verify import verify  # noqa: E402
from arrayscope.formats.zarr import PLUGIN  # noqa: E402
from arrayscope.formats.zarr import chunk as zchunk  # noqa: E402
from arrayscope.formats.zarr import tree as ztree  # noqa: E402
from tests.support.zarr_arrays import FLAT, NESTED, check_values, make, zarr_read  # noqa: E402

warnings.filterwarnings("ignore", module="zarr")
warnings.filterwarnings("ignore", category=UserWarning)

N_CHUNKS = 600
PER_CHUNK = 4


def chunk_sources(doc):
    """Derived sources made by decoding chunks (not the fill record)."""
    return [s for s in doc.derived if " ← " in s.name]


@pytest.fixture
def lazy(monkeypatch):
    """Every array opens lazily (thresholds lowered); counts the stages decoded."""
    monkeypatch.setattr(ztree, "EAGER_MAX_CHUNKS", 16)
    monkeypatch.setattr(ztree, "EAGER_MAX_BYTES", 1 << 10)
    calls = []
    real = zchunk.finish_stage

    def counting(st, limit, errors):
        calls.append(st.src.name)
        return real(st, limit, errors)
    monkeypatch.setattr(zchunk, "finish_stage", counting)
    return calls


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """600 chunks of 4 FLAT records, zstd with checksums (zarr v3)."""
    path = str(tmp_path_factory.mktemp("lazy") / "big")
    data = make(FLAT, (N_CHUNKS * PER_CHUNK - 2,))   # an edge chunk too
    z = zarr.create_array(path, shape=data.shape, chunks=(PER_CHUNK,), dtype=FLAT,
                          zarr_format=3, compressors=[ZstdCodec(level=1, checksum=True)])
    z[...] = data
    return path, data


def _chunk(doc, i):
    return doc.root.resolve(f"c/{i}")


def test_open_large_array_decodes_nothing(big, lazy):
    path, data = big
    doc = formats.open(path)
    assert doc.format == "zarr"
    assert lazy == []                      # no codec decoded anything
    assert chunk_sources(doc) == []        # no decoded chunk kept
    assert not [n for n in doc.diagnostics() if n.status == "error"]
    # every byte of every chunk file is explained by its on-disk framing
    for s in doc.sources:
        cov = engine.coverage(doc.root, s)
        assert cov[0] == cov[1], (s.name, cov)
    chunk = _chunk(doc, 3)
    frame = chunk["Codec 1: zstd"]["Zstandard frame"]
    assert frame["Magic_Number"].value == 0xFD2FB528
    assert frame["Block 1"]["Block_Header"].size == 3
    assert frame["Content_Checksum"].size == 4
    dec = chunk["decoded"]
    assert dec.pending and "not decoded yet" in dec.display_text()
    assert sum(1 for n in doc.root.walk() if n.name == "decoded" and n.pending) == N_CHUNKS
    # the window's start: dumping the first levels builds nothing either
    to_json(doc.root, doc.source_name, max_depth=3)
    assert chunk_sources(doc) == [] and lazy == []


def test_the_default_threshold_makes_600_chunks_lazy(big):
    assert N_CHUNKS > ztree.EAGER_MAX_CHUNKS
    doc = formats.open(big[0])
    assert chunk_sources(doc) == []
    assert _chunk(doc, 0)["decoded"].pending


def test_expanding_one_chunk_decodes_only_that_chunk(big, lazy):
    path, data = big
    doc = formats.open(path)
    chunk = _chunk(doc, 7)
    dec = chunk["decoded"]
    assert dec.child_count() > 0           # what a view does on expansion
    assert not dec.pending and lazy == ["c/7"]
    [src] = chunk_sources(doc)
    assert src.name == "c/7 ← zstd" and src.size == PER_CHUNK * FLAT.itemsize
    recs = dec["Records"]
    assert recs.source is src and recs.child_count() == PER_CHUNK
    r = recs.child(1)
    assert r["age"].value == int(data[7 * PER_CHUNK + 1]["age"])
    assert r["name"].value == str(data[7 * PER_CHUNK + 1]["name"])
    assert engine.coverage(doc.root, src) == (src.size, src.size)
    assert "decoded" in dec.display_text()
    assert chunk["Codec 1: zstd"].display_text() == f"{chunk.size} B → {src.size} B"
    # the others stay as they were
    assert _chunk(doc, 8)["decoded"].pending and _chunk(doc, 6)["decoded"].pending
    # a node path through a pending chunk decodes it (--select, verify findings)
    assert doc.root.resolve("c/9/decoded/Records") is not None and len(lazy) == 2
    # released: the derived source goes, a later access decodes again, the same way
    assert dec.release_deferred() and dec.pending
    assert [s.name for s in chunk_sources(doc)] == ["c/9 ← zstd"]
    assert dec["Records"].child(1)["age"].value == int(data[7 * PER_CHUNK + 1]["age"])
    assert chunk["Codec 1: zstd"]["Zstandard frame"]["Content_Checksum"].status == "ok"


def test_values_exact_without_touching_the_tree(big, lazy):
    path, data = big
    doc = formats.open(path)
    check_values(doc, data)
    assert chunk_sources(doc) == [] and lazy == []   # values decodes on its own fast path


def test_values_decode_into_one_output_array(big, monkeypatch):
    """`values` keeps at most one decoded chunk besides the output (and no whole-record
    array: only the field's own)."""
    from arrayscope.formats.zarr import values as zv

    path, data = big
    doc = formats.open(path)
    live = []
    real = zv.decode_chunk

    def tracking(meta, raw):
        out = real(meta, raw)
        live.append(len(out))
        return out
    monkeypatch.setattr(zv, "decode_chunk", tracking)
    meta = doc.model.arrays["."]
    f, errors = zv.read_field(meta, "age")
    assert not errors and len(live) == N_CHUNKS
    assert f.dtype == np.dtype("<i4") and f.shape == data.shape
    assert f.tobytes() == data["age"].tobytes()


@pytest.mark.parametrize("order", ["C", "F"])
def test_values_of_one_chunk_that_is_the_array_peak_near_the_field(tmp_path, order):
    """A consistent chunk as large as the array: the decoded chunk is the output, nothing
    beside it but the stored bytes (was twice the field: 2.27 GB for a 1 GiB chunk). An F
    order chunk is transposed into an output of its own (the bound is then twice the field)."""
    path = str(tmp_path / "one.zarr")
    data = np.arange(4 << 20, dtype="<i8").reshape(2048, 2048)   # 32 MiB
    z = zarr.create_array(path, shape=data.shape, chunks=data.shape, dtype=data.dtype,
                          zarr_format=2, order=order)
    z[...] = data
    assert (zarr.open_array(path, mode="r")[...] == data).all()   # what zarr itself reads
    stored = os.path.getsize(os.path.join(path, "0.0"))
    meta = formats.open(path).model.arrays["."]
    f, errors, peak = _read_traced(meta)
    assert not errors and f.shape == data.shape and (f == data).all()
    bound = (1 if order == "C" else 2) * data.nbytes + stored + (1 << 20)
    assert peak < bound, (peak, data.nbytes, stored)


@pytest.mark.parametrize("zarr_format,chunks", [(2, (512, 2048)), (3, (1024, 1024))])
def test_values_over_several_chunks_peak_at_the_field_and_one_chunk(tmp_path, zarr_format,
                                                                       chunks):
    """Several chunks: each decoded chunk is placed and let go before the next is read (the
    reader held the last one while decoding the next: the field plus 2.13 chunks, 49 MiB
    here; now the field plus one chunk and its stored bytes, 41 MiB)."""
    path = str(tmp_path / "multi.zarr")
    data = np.arange(4 << 20, dtype="<i8").reshape(2048, 2048)   # 32 MiB, 4 chunks of 8
    z = zarr.create_array(path, shape=data.shape, chunks=chunks, dtype=data.dtype,
                          zarr_format=zarr_format)
    z[...] = data
    assert (zarr.open_array(path, mode="r")[...] == data).all()   # what zarr itself reads
    stored = max(os.path.getsize(os.path.join(d, f)) for d, _s, fs in os.walk(path) for f in fs)
    chunk = int(np.prod(chunks)) * data.itemsize
    meta = formats.open(path).model.arrays["."]
    f, errors, peak = _read_traced(meta)
    assert not errors and f.shape == data.shape and (f == data).all()
    assert peak < data.nbytes + chunk + stored + (2 << 20), (peak, data.nbytes, chunk, stored)


def _plant(path, data):
    """Chunk 5: a bad checksum; chunk 11: decodes 2 records short; chunk 12: 3 bytes extra."""
    c5 = os.path.join(path, "c", "5")
    raw = bytearray(open(c5, "rb").read())
    raw[-1] ^= 0xFF
    open(c5, "wb").write(bytes(raw))
    zc = numcodecs.Zstd(level=1, checksum=True)
    short = data[11 * PER_CHUNK: 11 * PER_CHUNK + 2].tobytes()
    open(os.path.join(path, "c", "11"), "wb").write(zc.encode(short))
    extra = data[12 * PER_CHUNK: 13 * PER_CHUNK].tobytes() + b"\x01\x02\x03"
    open(os.path.join(path, "c", "12"), "wb").write(zc.encode(extra))


@pytest.fixture
def planted(tmp_path):
    path = str(tmp_path / "planted")
    data = make(FLAT, (40 * PER_CHUNK,), seed=3)
    z = zarr.create_array(path, shape=data.shape, chunks=(PER_CHUNK,), dtype=FLAT,
                          zarr_format=3, compressors=[ZstdCodec(level=1, checksum=True)])
    z[...] = data
    _plant(path, data)
    return path, data


def test_verify_finds_planted_errors_and_keeps_no_chunk(planted, lazy, monkeypatch):
    path, data = planted
    doc = formats.open(path)
    assert not [n for n in doc.diagnostics() if n.status == "error"]   # nothing decoded yet
    peak = []
    real_add = Document.add_derived

    def add(self, *a, **kw):
        src = real_add(self, *a, **kw)
        peak.append(len(chunk_sources(self)))
        return src
    monkeypatch.setattr(Document, "add_derived", add)
    found = verify(doc)
    errors = [f for f in found if f.status == "error"]
    by_node = {f.node: f for f in errors}
    ck = by_node.get("planted/c/5/Codec 1: zstd/Zstandard frame/Content_Checksum")
    assert ck is not None and "does not match" in ck.message, errors
    assert ck.source == "c/5" and ck.offset == os.path.getsize(os.path.join(path, "c", "5")) - 4
    short = by_node.get("planted/c/11/decoded/missing records")
    assert short is not None and "bytes missing" in short.message
    assert short.source == "c/11 ← zstd" and short.offset == 2 * FLAT.itemsize
    extra = by_node.get("planted/c/12/decoded/extra bytes")
    assert extra is not None and "3 bytes too many" in extra.message
    assert len(errors) == 3, errors
    # every chunk was decoded, one at a time, and none is kept
    assert len(lazy) == 40 and max(peak) == 1
    assert chunk_sources(doc) == []
    assert all(n.pending for n in doc.root.walk() if n.name == "decoded")
    # the same findings in the tree, at their places, once a chunk is shown
    dec = _chunk(doc, 11)["decoded"]
    err = dec["missing records"]
    assert err.status == "error" and err.source.name == "c/11 ← zstd"
    assert dec["Records"].child_count() == 2
    dec5 = _chunk(doc, 5)["decoded"]
    assert dec5.child_count() == 0 and "checksum" in dec5.display_text().lower()
    cks = _chunk(doc, 5)["Codec 1: zstd"]["Zstandard frame"]["Content_Checksum"]
    assert cks.status == "error" and cks.message.count("does not match") == 1   # marked once
    # values report the bad chunks and keep the rest exact
    [entry] = PLUGIN.values(doc, "age")
    assert "5:" in entry["error"] or "c/5" in entry["error"]
    got = np.array(entry["values"], "<i4")
    assert got[:5 * PER_CHUNK].tobytes() == data["age"][:5 * PER_CHUNK].tobytes()


def test_verify_cli_exit_code_on_lazy_array(planted, lazy):
    from arrayscope.explorer.cli import main

    path, _ = planted
    out = io.StringIO()
    with redirect_stdout(out):
        rc = main(["verify", path, "--json"])
    assert rc == 1
    text = json.dumps(json.loads(out.getvalue()), ensure_ascii=False)
    assert "c/11 ← zstd" in text and "Content_Checksum" in text and "c/12 ← zstd" in text


def test_lazy_blosc_and_filters_match_eager(tmp_path, monkeypatch):
    """Blosc framing (header, bstarts, streams) at open; decoding on demand gives the very
    nodes the eager path gives (same names, places, values), 2-d and v2 filters included."""
    path = str(tmp_path / "bl")
    data = make(NESTED, (50, 41))
    z = zarr.create_array(path, shape=data.shape, chunks=(16, 20), dtype=NESTED, zarr_format=3,
                          compressors=[BloscCodec(cname="lz4", shuffle="shuffle")])
    z[...] = data
    eager = formats.open(path)
    monkeypatch.setattr(ztree, "EAGER_MAX_CHUNKS", 0)
    lazy_doc = formats.open(path)
    assert chunk_sources(lazy_doc) == [] and chunk_sources(eager)
    for s in lazy_doc.sources:
        assert engine.coverage(lazy_doc.root, s)[0] == s.size
    for key in ("c/0/0", "c/3/2", "c/1/2"):
        e, lz = eager.root.resolve(key), lazy_doc.root.resolve(key)
        hdr = lz["Codec 1: blosc"]["Blosc header"]
        assert hdr["typesize"].value == NESTED.itemsize
        assert lz["Codec 1: blosc"].find("bstarts") is not None
        dec = lz["decoded"]
        got = [(n.name, n.offset, n.size, n.display_text()) for n in e.walk()
               if n.name != "decoded"]
        dec.ensure_built()
        want = [(n.name, n.offset, n.size, n.display_text()) for n in lz.walk()
                if n.name != "decoded"]
        assert got == want
    check_values(lazy_doc, zarr_read(path))
    # v2 with a filter: the chain continues under "decoded"
    p2 = str(tmp_path / "v2")
    d2 = make(FLAT, (20,))
    z = zarr.create_array(p2, shape=d2.shape, chunks=(3,), dtype=FLAT, zarr_format=2,
                          compressors=numcodecs.Zstd(level=1),
                          filters=[numcodecs.Shuffle(elementsize=FLAT.itemsize)])
    z[...] = d2
    doc = formats.open(p2)
    dec = doc.root["2"]["decoded"]
    assert [c.name for c in doc.root["2"].iter_children()] == ["Codec 2: zstd", "decoded"]
    assert [c.name for c in dec.iter_children()][:2] == ["Codec 1: shuffle", "Records"]
    assert len(chunk_sources(doc)) == 2
    for s in doc.sources + doc.derived:
        assert engine.coverage(doc.root, s)[0] == s.size, s.name
    check_values(doc, zarr_read(p2))


def test_dump_json_of_lazy_array_keeps_nothing(big, lazy):
    from arrayscope.explorer.cli import main

    path, _ = big
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["dump", path, "--json", "--max-depth", "4"]) == 0
    root = json.loads(out.getvalue())
    c = next(x for x in root["children"] if x["name"] == "c")
    first = c["children"][0]
    assert [x["name"] for x in first["children"]] == ["Codec 1: zstd", "decoded"]
    assert first["children"][1]["children"][0]["name"] == "Records"


# ---- the window ---------------------------------------------------------------------------
def test_gui_tree_expands_a_lazy_chunk(qtbot, tmp_path, big, lazy):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import arrayscope.explorer.qtfix  # noqa: F401
    from tests.support.gui_helpers import open_window

    path, data = big
    win = open_window(qtbot, tmp_path)
    assert win.open_path(path, sync=True)
    doc = win.session.document
    # the window selects the first chunk file: its pipeline decodes that one chunk only
    assert [s.name for s in chunk_sources(doc)] == ["c/0 ← zstd"]
    assert win.pipeline.state is not None and win.pipeline.cells.rowCount() == PER_CHUNK
    chunk = _chunk(doc, 42)
    model, view = win.tree.model, win.tree.view
    file_idx = model.index_for_node(chunk)
    view.expand(file_idx)
    dec = chunk["decoded"]
    idx = model.index_for_node(dec)
    assert idx.isValid() and model.node(idx) is dec
    assert dec.pending and model.hasChildren(idx)       # an expander, nothing decoded
    assert len(chunk_sources(doc)) == 1
    view.expand(idx)
    assert not dec.pending and model.rowCount(idx) >= 1
    names = [model.node(model.index(r, 0, idx)).name for r in range(model.rowCount(idx))]
    assert names == ["Records"]
    assert sorted(s.name for s in chunk_sources(doc)) == ["c/0 ← zstd", "c/42 ← zstd"]
    # a record on the decoded source: selected, its bytes in a tab, a byte click finds it
    rec = dec["Records"].child(2)
    assert win.tree.select_node(rec, emit=True)
    hv = win.tabs.current_view()
    assert hv.source is rec.source and hv.selection() == (rec.offset, rec.end)
    node = win.session.node_at(rec.source, rec.offset + FLAT.fields["age"][1])
    assert node is not None and node.name == "age"
    assert node.value == int(data[42 * PER_CHUNK + 2]["age"])
    # the pipeline panel shows this chunk's chain and records
    assert win.pipeline.state.node is chunk
    stages = [win.pipeline.tree.topLevelItem(i).text(0)
              for i in range(win.pipeline.tree.topLevelItemCount())]
    assert stages == ["Stored chunk", "⟲ Codec 1: zstd", "Records"]
    # selecting another chunk file decodes it too (its pipeline is shown)
    other = _chunk(doc, 100)
    win.select_node(other)
    assert not other["decoded"].pending and win.pipeline.state.node is other


def test_thousands_of_chunk_files_hold_few_descriptors(big):
    """Each chunk file is a FileSource; at most FileSource.MAX_MAPPED are mapped (one
    descriptor each) at once, so an array of many chunks opens under the usual soft limit of
    1 024 descriptors (before: two per file, and the open failed with EMFILE)."""
    resource = pytest.importorskip("resource")
    from arrayscope.formats.core.source import FileSource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    in_use = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 64
    limit = in_use + FileSource.MAX_MAPPED + 64
    if limit >= N_CHUNKS or (hard != resource.RLIM_INFINITY and limit > hard):
        pytest.skip("cannot lower the descriptor limit below the chunk count here")
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        doc = formats.open(big[0])
        assert doc.root.message is None, doc.root.message
        assert not [n for n in doc.diagnostics() if n.status == "error"]
        assert len(FileSource._mapped) <= FileSource.MAX_MAPPED
        first = doc.root.resolve("c/0")
        assert first.source.read(0, 4) == b"\x28\xb5\x2f\xfd"   # unmapped, mapped again
        assert len(doc.sources) > N_CHUNKS
        doc.close()
        with pytest.raises(ValueError):
            first.source.read(0, 4)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _read_traced(meta):
    """`read_field(meta, "value")` and the peak of the Python memory it took (tracemalloc)."""
    import tracemalloc

    from arrayscope.formats.zarr import values as zv

    tracemalloc.start()
    try:
        f, errors = zv.read_field(meta, "value")
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return f, errors, peak

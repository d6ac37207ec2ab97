"""Fragment metadata, consolidated `.meta` files and data files against tiledb-py.

For every catalogue array: the fragment metadata parses with no error node; every byte of
every fragment file is covered; non-empty domain, cell count, sparse flag, version and schema
name equal `tiledb.array_fragments`; R-tree leaves equal its MBRs (sparse) and tile counts
agree with the tile offsets; the footer's file sizes are the real sizes. Then: parsing
without a schema, encrypted without a key, lazy sections and tiles, and hypothesis runs of
the parsers on random and mutated bytes."""
from __future__ import annotations

import glob
import os
import struct

import numpy as np
import pytest
import tiledb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arrayscope import formats
from arrayscope.formats.core.context import Context
from arrayscope.formats.core.document import Document
from arrayscope.formats.core.engine import coverage
from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.tiledb.model.array_model import FragmentMetadata, TileDBContext
from arrayscope.formats.tiledb.parse import data_files as DF
from arrayscope.formats.tiledb.parse import fragment_metadata as FM
from arrayscope.formats.tiledb.parse.consolidated_meta import parse_consolidated_meta_file
from tests.support import tiledb_arrays
from tests.support.schema_from_tiledb import schema_from_tiledb
from tests.support.tiledb_oracle import ctx_for

ARRAYS = sorted(tiledb_arrays.CATALOG)


def _key(name):
    return tiledb_arrays.KEY if name == "encrypted" else None


def _frag_nodes(doc):
    """{fragment dir name: {file name: node}} from the document tree."""
    out = {}
    for n in doc.root.walk():
        src = getattr(n.source, "name", "")
        if n.kind == "file" and isinstance(src, str) and src.startswith("__fragments/"):
            parts = src.split("/")
            out.setdefault(parts[1], {})[parts[-1]] = n
    return out


def _errors(node):
    return [(x.path(), x.message) for x in node.walk(expand_lazy=True)
            if x.status == "error"]


def _py(v):
    if isinstance(v, np.generic):
        if isinstance(v, (np.datetime64, np.timedelta64)):
            return int(v.astype("int64"))
        return v.item()
    return v


@pytest.mark.parametrize("name", ARRAYS)
def test_fragments_match_tiledb(tiledb_array, name):
    uri = tiledb_array(name)
    key = _key(name)
    doc = formats.open(uri, key=key.encode() if key else None)
    nodes = _frag_nodes(doc)
    infos = {os.path.basename(f.uri): f for f in
             tiledb.array_fragments(uri, include_mbrs=True, ctx=ctx_for(key))}
    frags = {f.name: f for f in doc.model.fragments}
    assert set(infos) <= set(frags)
    for fname, frag in frags.items():
        files = nodes[fname]
        fmd = files["__fragment_metadata.tdb"]
        assert not _errors(fmd), _errors(fmd)[:5]
        fm: FragmentMetadata = frag.metadata
        assert fm is not None and fm.footer.complete
        # every byte of every file of the fragment is explained
        for fn, node in files.items():
            assert not _errors(node), (fn, _errors(node)[:3])
            cov, size = coverage(node, node.source)
            assert cov == size, f"{fname}/{fn}: {cov} of {size} bytes covered"
        # file sizes in the footer are the real ones
        slots = fm.slots
        schema = fm.schema
        for fn in os.listdir(frag.path):
            if fn == "__fragment_metadata.tdb":
                continue
            role = DF.file_role(schema, fm, fn)
            assert role is not None, fn
            assert DF.expected_size(fm, role) == os.path.getsize(os.path.join(frag.path, fn)), fn
            offs = DF.tile_offsets_for(fm, role)[0]
            assert len(offs) == fm.tile_num, (fn, len(offs), fm.tile_num)
        if fname not in infos:
            continue  # consolidated away but not vacuumed: tiledb-py does not list it
        info = infos[fname]
        assert fm.version == info.version
        assert fm.schema_name == info.array_schema_name
        assert fm.dense == (not info.sparse)
        exp_ned = [tuple(_py(x) for x in r) for r in info.nonempty_domain]
        got_ned = [tuple(_py(x) for x in r) for r in fm.non_empty_domain]
        assert got_ned == exp_ned
        assert fm.cell_num == info.cell_num
        assert len(slots) == len(schema.attributes) + 1 + len(schema.dimensions) + \
            fm.has_timestamps + 2 * fm.has_delete_meta
        if info.sparse:
            assert fm.sparse_tile_num == len(info.mbrs) == fm.tile_num
            leaves = _rtree_leaves(fmd)
            exp = [[tuple(_py(x) for x in r) for r in mbr] for mbr in info.mbrs]
            assert leaves == exp
        else:
            assert len(fm.tile_offsets[0]) == fm.tile_num


def _rtree_leaves(fmd):
    rt = fmd["R-Tree"]
    payload = rt["Tile"]["Payload"]
    levels = [c for c in payload.iter_children() if c.name.startswith("Level ")]
    last = levels[-1]
    mbrs = last["MBRs"] if last.find("MBRs") else last
    out = []
    for m in mbrs.iter_children():
        if not m.name.startswith("MBR "):
            continue
        out.append([tuple(r.value) for r in m.iter_children()])
    return out


@pytest.mark.parametrize("name", ["dense_2d_row_row", "sparse_2d", "string_dim", "var_nullable",
                                  "deletes", "sparse_var_nullable_pipelines"])
def test_without_schema(tiledb_array, name):
    """No schema: the slot count is inferred, nothing is an error, everything is covered."""
    uri = tiledb_array(name)
    schema = schema_from_tiledb(uri)
    for path in glob.glob(os.path.join(uri, "__fragments", "*", "__fragment_metadata.tdb")):
        doc = Document(uri, Context())
        src = doc.open_source(path)
        node, fm = FM.parse_fragment_metadata_file(doc, src, doc.ctx)
        assert not _errors(node)
        assert coverage(node, src) == (src.size, src.size)
        assert len(fm.slots) == len(schema.slot_names(fm.has_timestamps,
                                                               fm.has_delete_meta))
        assert any("no array schema" in (x.message or "") for x in node.walk())
        # and the per-slot tile offsets still decode
        doc2 = Document(uri, Context(format=TileDBContext(schema=schema)))
        _n2, fm2 = FM.parse_fragment_metadata_file(doc2, doc2.open_source(path), doc2.ctx)
        for i in range(len(fm.tile_offsets)):
            assert list(fm.tile_offsets[i]) == list(fm2.tile_offsets[i])


def test_test_helper_schema_equals_parsed_schema(tiledb_array):
    """The hand-built schema of the tests and the schema helper's parse give the same slots."""
    uri = tiledb_array("sparse_var_nullable_pipelines")
    doc = formats.open(uri)
    parsed = doc.model.latest_schema
    ours = schema_from_tiledb(uri)
    assert parsed.slot_names() == ours.slot_names()
    assert [(a.datatype, a.cell_val_num, a.nullable) for a in parsed.attributes] == \
        [(a.datatype, a.cell_val_num, a.nullable) for a in ours.attributes]


def test_consolidated_meta_footers_equal_fragment_footers(tiledb_array):
    uri = tiledb_array("consolidated_fragment_meta")
    doc = formats.open(uri)
    metas = [n for n in doc.root.walk() if n.kind == "file" and
             str(getattr(n.source, "name", "")).startswith("__fragment_meta/")]
    assert len(metas) == 1
    meta = metas[0]
    assert not _errors(meta)
    assert coverage(meta, meta.source) == (meta.source.size, meta.source.size)
    payload = meta["Generic tile"]["Tile"]["Payload"]
    assert payload["Num fragments"].value == 3
    footers = [c for c in payload.iter_children() if c.name.startswith("Footer of ")]
    assert len(footers) == 3
    nodes = _frag_nodes(doc)
    for f in footers:
        fname = f.name[len("Footer of "):]
        own = nodes[fname]["__fragment_metadata.tdb"]["Footer"]
        # the same bytes, so the same field values
        assert [(c.name, c.value) for c in f.iter_children()] == \
            [(c.name, c.value) for c in own.iter_children()]
        assert f.source.read(f.offset, f.size) == own.source.read(own.offset, own.size)


def test_encrypted_without_key(tiledb_array):
    uri = tiledb_array("encrypted")
    schema = schema_from_tiledb(uri, tiledb_arrays.KEY)
    path = glob.glob(os.path.join(uri, "__fragments", "*", "__fragment_metadata.tdb"))[0]
    doc = Document(uri, Context(format=TileDBContext(schema=schema)))
    src = doc.open_source(path)
    node, fm = FM.parse_fragment_metadata_file(doc, src, doc.ctx)
    assert not _errors(node)                     # a missing key is a warning, not an error
    assert fm.encrypted and fm.footer.complete
    assert fm.non_empty_domain == [(0, 49)]      # the footer is plaintext
    assert fm.tile_offsets[0] is None and "no key" in fm.tile_offsets.error(0)
    warn = [x for x in node.walk() if x.status == "warning"]
    assert warn and all("key" in (x.message or "") for x in warn)
    data = doc.open_source(os.path.join(os.path.dirname(path), "a0.tdb"))
    dnode = DF.parse_data_file(doc, data, doc.ctx, fm, schema, "a0.tdb")
    assert not _errors(dnode) and coverage(dnode, data) == (data.size, data.size)
    # with the key, everything decodes
    doc = Document(uri, Context(key=tiledb_arrays.KEY.encode(),
                                format=TileDBContext(schema=schema)))
    node, fm = FM.parse_fragment_metadata_file(doc, doc.open_source(path), doc.ctx)
    assert not [x for x in node.walk() if x.status != "ok"]
    assert list(fm.tile_offsets[0]) == [0, list(fm.tile_offsets[0])[1]]


def _big_sparse(path, n, capacity=1):
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 10 ** 9), tile=1000, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=True, capacity=capacity, attrs=[
        tiledb.Attr("v", dtype=np.float64), tiledb.Attr("s", dtype=str, var=True)]))
    with tiledb.open(path, "w", timestamp=1) as A:
        x = np.arange(n, dtype=np.int64) * 3
        A[x] = {"v": x / 2.0, "s": np.array([f"s{i}" for i in range(n)], dtype=object)}


def test_lazy_sections_and_tiles(tmp_path, monkeypatch):
    """Big sections parse on expansion; big data files show lazy tiles; both explain the
    same bytes as the eager parse."""
    uri = str(tmp_path / "big")
    _big_sparse(uri, 1000)
    schema = schema_from_tiledb(uri)
    path = glob.glob(os.path.join(uri, "__fragments", "*", "__fragment_metadata.tdb"))[0]

    def parse():
        doc = Document(uri, Context(format=TileDBContext(schema=schema)))
        src = doc.open_source(path)
        return doc, src, FM.parse_fragment_metadata_file(doc, src, doc.ctx)
    _d, src, (eager, fm_e) = parse()
    monkeypatch.setattr(FM, "LAZY_BYTES", 512)
    doc, src2, (lazy, fm_l) = parse()
    lazy_nodes = [c for c in lazy.iter_children() if c.is_lazy]
    assert lazy_nodes, "no section went lazy"
    assert coverage(lazy, src2) == (src2.size, src2.size)
    assert fm_l.tile_num == 1000 and len(fm_l.tile_offsets[0]) == 1000
    assert list(fm_l.tile_offsets[1]) == list(fm_e.tile_offsets[1])
    def flat(n):
        return [(x.name, x.offset, x.size, x.status) for x in n.walk(expand_lazy=True)]

    for a, b in zip(eager.iter_children(), lazy.iter_children()):
        assert a.name == b.name
        assert flat(a)[1:] == flat(b)[1:]
    # a data file with 1000 tiles: lazy "Tiles", covering the file
    data = doc.open_source(os.path.join(os.path.dirname(path), "a1_var.tdb"))
    dnode = DF.parse_data_file(doc, data, doc.ctx, fm_l, schema, "a1_var.tdb")
    tiles = dnode["Tiles"]
    assert tiles.is_lazy and tiles.child_count() == 1000
    assert coverage(dnode, data) == (data.size, data.size)
    t = tiles.child(999)
    assert t.name == "Tile 1000" and t.end == data.size and not _errors(t)


def test_data_file_bad_offsets(tiledb_array):
    """A tile offset beyond the file and offsets going backwards are error nodes."""
    uri = tiledb_array("sparse_2d")
    doc = formats.open(uri)
    frag = doc.model.fragments[0]
    fm, schema = frag.metadata, frag.metadata.schema
    src = doc.open_source(os.path.join(frag.path, "a0.tdb"))
    good = np.array(fm.tile_offsets[0])
    for bad in (np.append(good[:-1], src.size + 100), good[::-1].copy()):
        fm.tile_offsets.loader.cache[("tile_offsets", 0)] = bad
        node = DF.parse_data_file(doc, src, doc.ctx, fm, schema, "a0.tdb")
        assert any(x.status == "error" for x in node.walk())
    fm.tile_offsets.loader.cache[("tile_offsets", 0)] = good
    node = DF.parse_data_file(doc, src, doc.ctx, fm, schema, "zz.tdb")
    assert node.status == "error" or any(x.status == "error" for x in node.walk())


def test_slot_inference_matches_tail_size():
    for v in (7, 11, 12, 16, 22):
        for n in (2, 5, 9):
            assert FM.footer_tail_size(v, n) > 0
    assert FM.footer_tail_size(22, 4) == 16 + 2 + 8 * 4 * 3 + 8 + 8 * 4 * 8 + 16


# ---- hypothesis: never raise -------------------------------------------------------------
_SAMPLES = {}


def _sample(tmp_dir_factory, name):
    if name not in _SAMPLES:
        uri = tiledb_arrays.build(name, str(tmp_dir_factory.mktemp("hyp")))
        fmd = glob.glob(os.path.join(uri, "__fragments", "*", "__fragment_metadata.tdb"))[0]
        meta = glob.glob(os.path.join(uri, "__fragment_meta", "*.meta"))
        _SAMPLES[name] = (schema_from_tiledb(uri), open(fmd, "rb").read(),
                          open(meta[0], "rb").read() if meta else None,
                          {f: open(os.path.join(os.path.dirname(fmd), f), "rb").read()
                           for f in os.listdir(os.path.dirname(fmd))})
    return _SAMPLES[name]


def _no_internal_errors(node):
    """Parser bugs surface as 'internal' error nodes (run_parser's net): there must be none."""
    bugs = [(x.path(), x.message) for x in node.walk(expand_lazy=True)
            if "internal" in x.name or "internal error" in (x.message or "")]
    assert not bugs, bugs[:3]


def _run_all(schema, data: bytes, meta: bytes, files: dict, use_schema: bool):
    doc = Document("/nonexistent",
                   Context(format=TileDBContext(schema=schema if use_schema else None)))
    src = BytesSource(data, "__fragment_metadata.tdb")
    node, fm = FM.parse_fragment_metadata_file(doc, src, doc.ctx)
    _no_internal_errors(node)
    coverage(node, src)
    for i in range(len(fm.tile_offsets)):
        fm.tile_offsets[i]
    if meta is not None:
        _no_internal_errors(parse_consolidated_meta_file(doc, BytesSource(meta, "x.meta"),
                                                         doc.ctx))
    if use_schema and fm.footer is not None and fm.footer.complete:
        for fn, b in files.items():
            if fn != "__fragment_metadata.tdb":
                dn = DF.parse_data_file(doc, BytesSource(b, fn), doc.ctx, fm, schema, fn)
                _no_internal_errors(dn)


SETTINGS = settings(max_examples=int(os.environ.get("AS_HYP_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@SETTINGS
@given(data=st.binary(max_size=600), use_schema=st.booleans())
def test_random_bytes_never_raise(tmp_path_factory, data, use_schema):
    schema, _fmd, _meta, _files = _sample(tmp_path_factory, "sparse_2d")
    _run_all(schema, data, data, {}, use_schema)


@SETTINGS
@given(name=st.sampled_from(["sparse_2d", "var_nullable", "consolidated_fragment_meta",
                             "string_dim"]),
       edits=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1,
                      max_size=6),
       cut=st.one_of(st.none(), st.integers(0, 1 << 20)),
       tail=st.one_of(st.none(), st.integers(0, (1 << 64) - 1)),
       use_schema=st.booleans())
def test_mutated_bytes_never_raise(tmp_path_factory, name, edits, cut, tail, use_schema):
    schema, fmd, meta, files = _sample(tmp_path_factory, name)
    b = bytearray(fmd)
    for pos, val in edits:
        b[pos % len(b)] = val
    if tail is not None:
        b[-8:] = struct.pack("<Q", tail)
    if cut is not None:
        b = b[:cut % (len(b) + 1)]
    m = None
    if meta is not None:
        m = bytearray(meta)
        for pos, val in edits:
            m[pos % len(m)] = val
    _run_all(schema, bytes(b), bytes(m) if m is not None else None, files, use_schema)


def test_timestamps_and_delete_metadata_slots(tmp_path):
    """A consolidation that keeps deleted cells writes t.tdb, dt.tdb and dci.tdb: the footer
    flags add their slots, and their tiles (uint64, coords filters) decode."""
    from arrayscope.formats.tiledb.parse.decode import decode_tile

    uri = str(tmp_path / "del")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=8,
                                                attrs=[tiledb.Attr("v", dtype=np.int32)]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.arange(0, 20, 2, dtype=np.int32)] = np.arange(10, dtype=np.int32) - 5
    with tiledb.open(uri, "d", timestamp=2) as A:
        A.query(cond="v < 0").submit()
    with tiledb.open(uri, "w", timestamp=3) as A:
        A[np.arange(1, 20, 2, dtype=np.int32)] = np.arange(10, dtype=np.int32)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.purge_deleted_cells": "false"}))
    doc = formats.open(uri)
    frag = next(f for f in doc.model.fragments if f.name.startswith("__1_3_"))
    fm = frag.metadata
    assert fm.has_timestamps and fm.has_delete_meta
    assert fm.slots[-3:] == ["__timestamps", "__delete_timestamps",
                                      "__delete_condition_index"]
    files = _frag_nodes(doc)[frag.name]
    assert {"t.tdb", "dt.tdb", "dci.tdb"} <= set(files)
    for fn, node in files.items():
        assert not _errors(node), (fn, _errors(node)[:3])
        assert coverage(node, node.source) == (node.source.size, node.source.size)
    decoded = {}
    for fn in ("t.tdb", "dt.tdb", "dci.tdb"):
        role = DF.file_role(fm.schema, fm, fn)
        src = doc.open_source(os.path.join(frag.path, fn))
        offs = fm.tile_offsets[role.slot]
        ends = DF.tile_bounds(offs, src.size)
        decoded[fn] = np.frombuffer(b"".join(decode_tile(src, int(o), int(e), role.specs, role.info)[0]
                                             for o, e in zip(offs, ends)), "<u8")
    assert sorted(set(decoded["t.tdb"].tolist())) == [1, 3]
    deleted = decoded["dt.tdb"] != np.uint64(2 ** 64 - 1)
    assert set(decoded["dt.tdb"][deleted].tolist()) == {2}     # deleted at timestamp 2
    assert set(decoded["dci.tdb"][deleted].tolist()) == {0}    # by delete condition 0
    v = np.array(__import__("arrayscope.formats.tiledb.values.field_values", fromlist=["values"]).values(doc, "v")[1]
                 ["values"])
    assert np.all(v[deleted] < 0) and np.all(v[~deleted] >= 0)


def test_data_file_trailing_bytes_and_size_mismatch(tiledb_array, tmp_path):
    """Bytes after the size the footer gives the file are one 'unparsed' warning leaf
    (`fragment-file-size`: libtiledb never reads them), not part of the last tile."""
    uri = tiledb_array("sparse_2d")
    doc = formats.open(uri)
    frag = doc.model.fragments[0]
    fm, schema = frag.metadata, frag.metadata.schema
    data = open(os.path.join(frag.path, "a0.tdb"), "rb").read() + b"\xee" * 13
    src = BytesSource(data, "a0.tdb")
    node = DF.parse_data_file(doc, src, doc.ctx, fm, schema, "a0.tdb")
    assert coverage(node, src) == (len(data), len(data))
    assert not _errors(node)
    [tail] = [x for x in node.walk() if x.kind == "unparsed"]
    assert (tail.offset, tail.size, tail.status, tail.code) == \
        (len(data) - 13, 13, "warning", "fragment-file-size")
    assert "the fragment metadata gives a0.tdb" in tail.message and node.status == "ok"


@SETTINGS
@given(payload=st.binary(max_size=400),
       kind=st.sampled_from(["rtree", "tile_offsets", "tile_var_offsets", "tile_var_sizes",
                             "tile_validity_offsets", "tile_mins", "tile_maxs", "tile_sums",
                             "tile_null_counts", "fmmsn", "processed"]),
       slot=st.integers(0, 6), name=st.sampled_from(["sparse_2d", "string_dim", "var_nullable"]),
       use_schema=st.booleans())
def test_section_payload_parsers_never_raise(tmp_path_factory, payload, kind, slot, name,
                                            use_schema):
    from arrayscope.formats.core.engine import run_parser

    schema, fmd, _meta, _files = _sample(tmp_path_factory, name)
    doc = Document("/nonexistent", Context(format=TileDBContext(schema=schema)))
    _n, fm = FM.parse_fragment_metadata_file(doc, BytesSource(fmd, "f"), doc.ctx)
    footer = fm.footer
    loader = fm.loader
    fn = FM.section_parser(kind, slot % len(footer.slots), footer,
                            schema if use_schema else None, loader)
    src = BytesSource(payload, "payload")
    node = run_parser("Payload", "struct", src, fn)
    _no_internal_errors(node)
    assert coverage(node, src)[0] == len(payload)

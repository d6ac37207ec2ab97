"""Enumerations, array metadata, commit files (.wrt/.vac/.ign/.con/.del/.upd) and
timestamped names, against tiledb-py; and every payload parser under random and mutated
bytes."""
from __future__ import annotations

import os
import struct
import zlib

import numpy as np
import pytest
import tiledb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arrayscope.formats.core.context import Context
from arrayscope.formats.core.document import Document
from arrayscope.formats.core.engine import coverage, run_parser
from arrayscope.formats.core.node import ERROR
from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.tiledb.model.array_model import TileDBContext
from arrayscope.formats.tiledb.model.names import decode_name, describe_name
from arrayscope.formats.tiledb.parse import array_metadata as M
from arrayscope.formats.tiledb.parse import commits as C
from arrayscope.formats.tiledb.parse import condition as Q
from arrayscope.formats.tiledb.parse import enumeration as E
from arrayscope.formats.tiledb.parse import schema as S
from tests.support import metadata_dict, tiledb_arrays
from tests.support.parse_checks import assert_clean


def _doc(path, key=None, schema=None):
    doc = Document(path, Context(key=key, format=TileDBContext(schema=schema)))
    return doc, doc.open_source(path)


def _files(uri, sub, ext=None):
    d = os.path.join(uri, sub)
    if not os.path.isdir(d):
        return []
    return [os.path.join(d, f) for f in sorted(os.listdir(d))
            if os.path.isfile(os.path.join(d, f)) and (ext is None or f.endswith(ext))]


def _schema(uri, key=None):
    path = _files(uri, "__schema")[-1]
    doc, src = _doc(path, key)
    return S.parse_schema_file(doc, src, doc.ctx).data


# ---- enumerations ----------------------------------------------------------------------------
def _check_enumerations(uri):
    files = _files(uri, "__schema/__enumerations")
    assert files
    sch = _schema(uri)
    found = {}  # file name -> Enumeration (an extension writes a second file of the same name)
    for path in files:
        doc, src = _doc(path)
        root = E.parse_enumeration_file(doc, src, doc.ctx)
        assert_clean(doc, src, root)
        e = root.data
        assert e is not None and e.version == 0 and e.path_name == os.path.basename(path)
        found[os.path.basename(path)] = e
    # the schema lists exactly these files (the newest per name after an extension)
    assert {sch.enumerations[n] for n in sch.enumerations} <= {os.path.basename(p) for p in files}
    with tiledb.open(uri) as A:
        for name, fname in sch.enumerations.items():
            e = found[fname]
            te = A.enum(name)
            assert e.name == te.name and e.ordered == te.ordered
            assert e.datatype == int(te.type) and e.cell_val_num == te.cell_val_num
            assert list(e.values) == te.values().tolist()
    return {e.name: e for e in found.values()}, found


def test_enumerations_match_tiledb(tiledb_array):
    found, _ = _check_enumerations(tiledb_array("enumerations"))
    assert found["colors"].values == ["red", "green", "blue"]
    assert found["sizes"].values == [10, 20, 30] and found["sizes"].ordered


def test_enumeration_nodes(tiledb_array):
    path = _files(tiledb_array("enumerations"), "__schema/__enumerations")[0]
    doc, src = _doc(path)
    root = E.parse_enumeration_file(doc, src, doc.ctx)
    p = root["Generic tile"]["Tile"]["Enumeration"]
    names = [c.name for c in p.iter_children()]
    assert names[:8] == ["Version number", "Name length", "Name", "Path name length",
                         "Path name", "Datatype", "Cell Val Num", "Ordered"]
    data = p["Data"]
    assert data.child_count() == len(root.data.values)
    v0 = data.child(0)
    assert v0.name == "Value 0" and v0.value == root.data.values[0]
    if root.data.var:
        assert names[-2:] == ["Offsets Size", "Offsets"]
        assert p["Cell Val Num"].display.startswith("var")


def test_extended_and_float_enumerations(tmp_path):
    uri = str(tmp_path / "ext")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 3), tile=4, dtype=np.int32))
    enmrs = [tiledb.Enumeration("words", False, ["a", "bb", ""]),
             tiledb.Enumeration("reals", True, np.array([0.5, -1.25], dtype=np.float64)),
             tiledb.Enumeration("flags", False, np.array([True, False]))]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, enums=enmrs, attrs=[
        tiledb.Attr("w", dtype=np.int16, enum_label="words"),
        tiledb.Attr("r", dtype=np.uint8, enum_label="reals"),
        tiledb.Attr("f", dtype=np.uint8, enum_label="flags")]))
    with tiledb.open(uri) as A:
        ext = A.enum("words").extend(["ccc", "é"])
    se = tiledb.ArraySchemaEvolution(tiledb.default_ctx())
    se.extend_enumeration(ext)
    se.array_evolve(uri)
    _, by_file = _check_enumerations(uri)
    assert len(_files(uri, "__schema")) == 2  # the evolved schema points at a new file
    words = sorted((e.values for e in by_file.values() if e.name == "words"), key=len)
    assert words == [["a", "bb", ""], ["a", "bb", "", "ccc", "é"]]
    assert [e.values for e in by_file.values() if e.name == "flags"] == [[True, False]]
    assert [e.values for e in by_file.values() if e.name == "reals"] == [[0.5, -1.25]]


# ---- array metadata --------------------------------------------------------------------------
def _merged_metadata(uri, key=None):
    out = {}
    for path in _files(uri, "__meta"):
        if path.endswith(".vac"):
            continue
        doc, src = _doc(path, key)
        root = M.parse_array_metadata_file(doc, src, doc.ctx)
        assert_clean(doc, src, root)
        assert root.data is not None
        for e in root.data.entries:
            if e.deleted:
                out.pop(e.key, None)
            else:
                out[e.key] = e.value
    return out


def _tiledb_meta(uri, ctx=None):
    with (tiledb.open(uri, ctx=ctx) if ctx else tiledb.open(uri)) as A:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in A.meta.items()}


@pytest.mark.parametrize("name", ["metadata", "encrypted"])
def test_metadata_matches_tiledb(tiledb_array, name):
    uri = tiledb_array(name)
    key = tiledb_arrays.KEY.encode() if name == "encrypted" else None
    ctx = tiledb_arrays.enc_ctx() if name == "encrypted" else None
    ours = _merged_metadata(uri, key)
    assert ours == _tiledb_meta(uri, ctx)


def test_metadata_nodes(tiledb_array):
    path = _files(tiledb_array("metadata"), "__meta")[0]
    doc, src = _doc(path)
    root = M.parse_array_metadata_file(doc, src, doc.ctx)
    p = root["Generic tile"]["Tile"]["Array metadata"]
    entries = {c.value: c for c in p.iter_children()}
    ints = entries["ints"]
    assert [c.name for c in ints.iter_children()] == [
        "Key length", "Key", "Deletion", "Value type", "Number of values", "Value"]
    assert ints["Value type"].display == "1 (INT64)" and ints["Value"].value == [1, 2, 3]
    assert entries["blob"]["Value type"].display == "40 (BLOB)"
    assert entries["str"]["Value"].value == "hello"
    assert [c.name for c in entries["__np_flat_int"].iter_children()] == [
        "Key length", "Key", "Deletion"]


def test_consolidated_metadata_and_vac(tmp_path):
    uri = str(tmp_path / "m")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 3), tile=4, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int8)]))
    for t in (1, 2, 3):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A.meta[f"k{t}"] = t * 1.5
            A.meta["shared"] = f"v{t}"
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "array_meta"}))
    vacs = _files(uri, "__meta", ".vac")
    assert vacs
    for path in vacs:
        doc, src = _doc(path)
        root = C.parse_commit_file(doc, src, doc.ctx)
        assert_clean(doc, src, root)
        assert root.data and all(u.startswith("/__meta/__") for u in root.data)
    live = [p for p in _files(uri, "__meta") if not p.endswith(".vac")]
    merged = {}
    for path in live:
        doc, src = _doc(path)
        root = M.parse_array_metadata_file(doc, src, doc.ctx)
        assert_clean(doc, src, root)
        merged.update(metadata_dict(root.data))
    assert merged == _tiledb_meta(uri)


# ---- commits -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["dense_1d", "consolidated", "consolidated_unvacuumed",
                                  "consolidated_commits", "deletes", "multi_fragment"])
def test_every_commit_file_parses(tiledb_array, name):
    uri = tiledb_array(name)
    sch = _schema(uri)
    for path in _files(uri, "__commits"):
        doc, src = _doc(path, schema=sch)
        root = C.parse_commit_file(doc, src, doc.ctx)
        assert_clean(doc, src, root)
        if path.endswith(".wrt"):
            assert src.size == 0 and root.child_count() == 0
            frag = os.path.join(uri, "__fragments", os.path.basename(path)[:-4])
            assert os.path.isdir(frag) or name == "consolidated_unvacuumed"


def test_vac_lists_consolidated_fragments(tiledb_array):
    uri = tiledb_array("consolidated_unvacuumed")
    vac = _files(uri, "__commits", ".vac")[0]
    doc, src = _doc(vac)
    root = C.parse_commit_file(doc, src, doc.ctx)
    assert root.data and all(u.startswith("/__fragments/__") for u in root.data)
    frags = sorted(os.listdir(os.path.join(uri, "__fragments")))
    assert {u.rsplit("/", 1)[1] for u in root.data} < set(frags)
    assert root["URI 1"].size == len(root.data[0]) + 1  # the new line belongs to the URI


def test_con_lists_commits(tiledb_array):
    uri = tiledb_array("consolidated_commits")
    con = _files(uri, "__commits", ".con")[0]
    doc, src = _doc(con)
    root = C.parse_commit_file(doc, src, doc.ctx)
    wrts = [os.path.basename(p) for p in _files(uri, "__commits", ".wrt")]
    assert [c["uri"] for c in root.data] == [f"__commits/{w}" for w in wrts]


def test_delete_condition_matches_tiledb(tiledb_array):
    uri = tiledb_array("deletes")
    sch = _schema(uri)
    path = _files(uri, "__commits", ".del")[0]
    doc, src = _doc(path, schema=sch)
    root = C.parse_commit_file(doc, src, doc.ctx)
    assert_clean(doc, src, root)
    cond = root.data
    # DELETE WHERE v < 0 is stored negated: v >= 0 (the cells to keep)
    assert (cond.is_expr, cond.field_name, cond.op, cond.value) == (False, "v", 3, 0)
    p = root["Generic tile"]["Tile"]["Delete condition payload"]["Delete condition"]
    assert [c.name for c in p.iter_children()] == [
        "Node type", "Op", "Field name size", "Field name value", "Value size", "Value content"]
    assert p["Op"].display == "3 (GE)"
    with tiledb.open(uri) as A:
        kept = A.query()[:]["v"]
    assert kept.size and (kept >= 0).all()


@pytest.fixture(scope="module")
def commits_with_deletes(tmp_path_factory):
    """Deletes with OR, strings and a set; commits consolidated (the .con embeds .del tiles),
    then fragments consolidated and vacuumed (an .ign appears)."""
    uri = str(tmp_path_factory.mktemp("cd") / "a")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("v", dtype=np.int32), tiledb.Attr("s", dtype=str, var=True)]))
    for t in (1, 2):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[np.arange(6) + 10 * t] = {"v": np.arange(6, dtype=np.int32) - 2,
                                        "s": np.array(["a", "bb", "", "ccc", "d", "é"], dtype=object)}
    with tiledb.open(uri, "d", timestamp=3) as A:
        A.query(cond="v == 1 or s == 'bb'").submit()
    with tiledb.open(uri, "d", timestamp=4) as A:
        A.query(cond="v in [2, 3]").submit()
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "commits"}))
    dels = {os.path.basename(p): open(p, "rb").read() for p in _files(uri, "__commits", ".del")}
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragments"}))
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "fragments"}))
    return uri, dels


def test_con_embeds_delete_tiles(commits_with_deletes):
    uri, dels = commits_with_deletes
    sch = _schema(uri)
    con = _files(uri, "__commits", ".con")[0]
    doc, src = _doc(con, schema=sch)
    root = C.parse_commit_file(doc, src, doc.ctx)
    assert_clean(doc, src, root)
    embedded = [c for c in root.data if c["uri"].endswith(".del")]
    assert len(embedded) == len(dels) == 2
    texts = sorted(c["condition"].text() for c in embedded)
    assert texts == ["(v != 1 AND s != 'bb')", "v not in [2, 3]"]
    # the embedded bytes are the .del files, byte for byte
    for i, c in enumerate(root.iter_children(), start=1):
        if c["URI"].value.endswith(".del"):
            tile = c["Delete condition tile"]
            assert src.read(tile.offset, tile.size) == dels[c["URI"].value.rsplit("/", 1)[1]]
            assert c["Delete condition size"].value == tile.size
    # the set op carries offsets (not in the document)
    for path in _files(uri, "__commits", ".del"):
        doc, src = _doc(path, schema=sch)
        root = C.parse_commit_file(doc, src, doc.ctx)
        assert_clean(doc, src, root)
        if root.data.op == 7:
            p = root["Generic tile"]["Tile"]["Delete condition payload"]["Delete condition"]
            assert p["Offsets"].value == [0, 4] and root.data.value == [2, 3]


def test_ign_lists_commits(commits_with_deletes):
    uri, _ = commits_with_deletes
    igns = _files(uri, "__commits", ".ign")
    assert igns
    for path in igns:
        doc, src = _doc(path)
        root = C.parse_commit_file(doc, src, doc.ctx)
        assert_clean(doc, src, root)
        assert root.data and all(u.startswith("__commits/__") and u.endswith(".wrt")
                                 for u in root.data)


def _tile(payload: bytes) -> bytes:
    """A generic tile as libtiledb writes it (GZIP level 1, one chunk)."""
    z = zlib.compress(payload, 1)
    md = struct.pack("<IIII", 0, 1, len(payload), len(z))
    tile = struct.pack("<Q", 1) + struct.pack("<III", len(payload), len(z), len(md)) + md + z
    pipe = struct.pack("<II", 65536, 1) + struct.pack("<BIBi", 1, 5, 1, 1)
    hdr = struct.pack("<IQQBQBI", 22, len(tile), len(payload), 4, 1, 0, len(pipe))
    return hdr + pipe + tile


def test_update_commit_file(tmp_path):
    cond = b"\x01\x02" + struct.pack("<I", 1) + b"v" + struct.pack("<Q", 4) + struct.pack("<i", 5)
    vals = struct.pack("<Q", 2)
    vals += struct.pack("<Q", 1) + b"v" + struct.pack("<Q", 4) + struct.pack("<i", -1)
    vals += struct.pack("<Q", 1) + b"s" + struct.pack("<Q", 2) + b"hi"
    path = tmp_path / "__1_1_0123456789abcdef0123456789abcdef_22.upd"
    path.write_bytes(_tile(cond + vals))
    from arrayscope.formats.tiledb.model.array_model import ArraySchema, Attribute
    sch = ArraySchema(22, attributes=[Attribute("v", 0), Attribute("s", 12, 0xFFFFFFFF)])
    doc, src = _doc(str(path), schema=sch)
    root = C.parse_commit_file(doc, src, doc.ctx)
    assert_clean(doc, src, root)
    c, uv = root.data
    assert c.text() == "v > 5"
    assert [(u.field_name, u.value) for u in uv] == [("v", -1), ("s", "hi")]


def test_unknown_commit_kind_and_dirty_wrt(tmp_path):
    p = tmp_path / "__1_1_0123456789abcdef0123456789abcdef_22.wrt"
    p.write_bytes(b"x")
    doc, src = _doc(str(p))
    root = C.parse_commit_file(doc, src, doc.ctx)
    assert root.child(0).kind == "unparsed" and root.child(0).status == "warning"
    q = tmp_path / "__1_1_0123456789abcdef0123456789abcdef_22.zzz"
    q.write_bytes(b"abc")
    doc, src = _doc(str(q))
    assert C.parse_commit_file(doc, src, doc.ctx).child(0).kind == "unparsed"


# ---- names -----------------------------------------------------------------------------------
def test_timestamped_names(tiledb_array):
    uri = tiledb_array("multi_fragment")
    frags = sorted(os.listdir(os.path.join(uri, "__fragments")))
    decoded = [decode_name(f) for f in frags]
    assert [(d["t1"], d["t2"], d["version"]) for d in decoded] == [(1, 1, 22), (2, 2, 22), (3, 3, 22)]
    assert all(len(d["uuid"]) == 32 and d["extension"] is None for d in decoded)
    assert decoded[0]["t1_datetime"].isoformat() == "1970-01-01T00:00:00.001000+00:00"
    wrt = decode_name(os.listdir(os.path.join(uri, "__commits"))[0])
    assert wrt["extension"] == ".wrt" and "commit" in wrt["display"]
    sch = decode_name(os.path.basename(_files(uri, "__schema")[0]))
    assert sch["version"] is None and sch["t1"] == sch["t2"] and sch["t1_datetime"].year >= 2024
    enm = decode_name(os.listdir(os.path.join(tiledb_array("enumerations"), "__schema",
                                              "__enumerations"))[0])
    assert enm["kind"] == "enumeration" and enm["version"] == 0 and enm["t1"] is None
    old = decode_name("__0c1ac5b0e2bd4d4fa5ab32a1e1b8e0e1_1545309813442")
    assert old["kind"] == "legacy" and old["t1"] == old["t2"] == 1545309813442
    assert decode_name("__fragment_metadata.tdb") is None and decode_name("a0.tdb") is None
    assert describe_name("__5_9_0123456789abcdef0123456789abcdef_22.del").endswith("delete commit")
    assert decode_name("__99999999999999999999_1_0123456789abcdef0123456789abcdef")["t1_datetime"] is None


# ---- robustness: random and mutated payloads -------------------------------------------------
PAYLOAD_PARSERS = {
    "schema": S.parse_schema,
    "enumeration": E.parse_enumeration,
    "metadata": M.parse_array_metadata,
    "delete": Q.parse_delete_condition,
    "update": Q.parse_update,
    "uri_list": C.parse_uri_list,
    "con": C.parse_consolidated_commits,
}


def _run(kind, data: bytes, ctx=None):
    import time
    src = BytesSource(data, kind)
    t0 = time.process_time()   # CPU seconds: a busy machine does not inflate them
    root = run_parser(kind, "struct", src, lambda c: PAYLOAD_PARSERS[kind](c, ctx), ctx)
    assert time.process_time() - t0 < 2.0
    crashes = [n.message for n in root.walk() if n.name == "internal parser error"]
    assert not crashes, crashes
    assert coverage(root, src) == (src.size, src.size)
    return root


@pytest.fixture(scope="module")
def real_payloads(tiledb_array, commits_with_deletes):
    """kind -> list of decoded payloads (and raw text files) from real arrays."""
    out = {k: [] for k in PAYLOAD_PARSERS}

    def payloads_of(path, fn, kind):
        doc, src = _doc(path)
        fn(doc, src, doc.ctx)
        out[kind].extend(d.data for d in doc.derived)

    for name in ("var_nullable", "dim_labels", "current_domain", "enumerations", "string_dim"):
        payloads_of(_files(tiledb_array(name), "__schema")[-1], S.parse_schema_file, "schema")
    for path in _files(tiledb_array("enumerations"), "__schema/__enumerations"):
        payloads_of(path, E.parse_enumeration_file, "enumeration")
    for path in _files(tiledb_array("metadata"), "__meta"):
        payloads_of(path, M.parse_array_metadata_file, "metadata")
    uri, _ = commits_with_deletes
    for path in _files(uri, "__commits", ".del"):
        payloads_of(path, C.parse_del_file, "delete")
    for path in _files(uri, "__commits", ".con") + _files(uri, "__commits", ".ign"):
        data = open(path, "rb").read()
        out["con" if path.endswith(".con") else "uri_list"].append(data)
    out["update"].append(out["delete"][0] + struct.pack("<Q", 1) + struct.pack("<Q", 1) + b"v"
                         + struct.pack("<Q", 4) + b"\x01\x00\x00\x00")
    assert all(out.values()), {k: len(v) for k, v in out.items()}
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(sorted(PAYLOAD_PARSERS)), data=st.binary(max_size=300))
def test_random_bytes_never_crash(kind, data):
    _run(kind, data)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_payloads_never_crash(real_payloads, data):
    kind = data.draw(st.sampled_from(sorted(PAYLOAD_PARSERS)))
    base = bytearray(data.draw(st.sampled_from(real_payloads[kind])))
    for _ in range(data.draw(st.integers(1, 4))):
        if not base:
            break
        op = data.draw(st.sampled_from(["flip", "big", "cut", "insert", "zero"]))
        i = data.draw(st.integers(0, len(base) - 1))
        if op == "flip":
            base[i] ^= 1 << data.draw(st.integers(0, 7))
        elif op == "big":
            w = data.draw(st.sampled_from([4, 8]))
            base[i:i + w] = data.draw(st.sampled_from([b"\xff" * w, (2 ** (8 * w - 1)).to_bytes(w, "little"),
                                                       (1000).to_bytes(w, "little")]))
        elif op == "cut":
            del base[i:]
        elif op == "insert":
            base[i:i] = data.draw(st.binary(min_size=1, max_size=8))
        else:
            base[i] = 0
    sch = None
    if kind in ("delete", "update", "con"):
        from arrayscope.formats.tiledb.model.array_model import ArraySchema, Attribute
        sch = ArraySchema(22, attributes=[Attribute("v", 0), Attribute("s", 12, 0xFFFFFFFF)])
    _run(kind, bytes(base), Context(format=TileDBContext(schema=sch)))


def test_deep_condition_is_bounded():
    data = (b"\x00\x00" + struct.pack("<Q", 1)) * 5000
    root = _run("delete", data)
    assert any(n.status == ERROR and "deeper" in (n.message or "") for n in root.walk())

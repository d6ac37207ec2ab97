"""Array schema payloads (formats/tiledb/parse/schema.py) against tiledb-py, and every format
version's field set (synthesised payloads for the versions tiledb-py can no longer write)."""
from __future__ import annotations

import os
import struct

import numpy as np
import pytest
import tiledb

from arrayscope.formats.core.context import Context
from arrayscope.formats.core.document import Document
from arrayscope.formats.core.engine import coverage, run_parser
from arrayscope.formats.core.node import ERROR
from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.filters.enums import DATATYPES, VAR_NUM
from arrayscope.formats.tiledb.parse import schema as S
from tests.support import tiledb_arrays
from tests.support.parse_checks import assert_clean

# Every catalogue array whose schema has something to check (encrypted needs the key).
SCHEMA_ARRAYS = [
    "dense_1d", "dense_2d_row_row", "dense_2d_row_col", "dense_2d_col_row", "dense_2d_col_col",
    "dense_partial", "sparse_2d", "sparse_2d_col_col", "sparse_hilbert", "sparse_dups",
    "sparse_float_dim", "string_dim", "sparse_var_nullable_pipelines", "dtypes", "datetimes",
    "var_nullable", "filters", "filter_stacks_array", "string_filters", "chunked_large_tile",
    "encrypted", "enumerations", "metadata", "dim_labels", "current_domain",
    "schema_evolution", "fill_values", "sparse_coords_filters",
]

FILTER_CLASSES = {
    "NoOpFilter": 0, "GzipFilter": 1, "ZstdFilter": 2, "LZ4Filter": 3, "RleFilter": 4,
    "Bzip2Filter": 5, "DoubleDeltaFilter": 6, "BitWidthReductionFilter": 7,
    "BitShuffleFilter": 8, "ByteShuffleFilter": 9, "PositiveDeltaFilter": 10,
    "ChecksumMD5Filter": 12, "ChecksumSHA256Filter": 13, "DictionaryFilter": 14,
    "FloatScaleFilter": 15, "XORFilter": 16, "WebpFilter": 18, "DeltaFilter": 19,
}
# numpy dtype -> TileDB datatype (plain numbers; the first code wins over datetime aliases)
NP_TO_DT = {}
for _k in sorted(DATATYPES):
    if _k in (4, 11, 12, 17, 40, 41, 42, 43):
        continue
    NP_TO_DT.setdefault(np.dtype(DATATYPES[_k][2]), _k)
LAYOUT_NAMES = {0: "row-major", 1: "col-major", 4: "hilbert"}
ORDER_NAMES = {0: "unordered", 1: "increasing", 2: "decreasing"}


def parse_schema_path(path, key=None):
    doc = Document(path, Context(key=key))
    src = doc.open_source(path)
    root = S.parse_schema_file(doc, src, doc.ctx)
    return doc, src, root


def schema_files(uri):
    d = os.path.join(uri, "__schema")
    return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.startswith("__")
            and os.path.isfile(os.path.join(d, f))]


def filter_key(f):
    t = FILTER_CLASSES[type(f).__name__]
    opts = {}
    if hasattr(f, "level"):
        opts["level"] = f.level
    if t in (6, 19):
        rd = f.reinterp_dtype
        opts["reinterpret"] = 17 if rd is None else NP_TO_DT[np.dtype(rd)]
    if hasattr(f, "window"):
        opts["max_window"] = f.window
    if t == 15:
        opts.update(scale=f.factor, offset=f.offset, byte_width=f.bytewidth)
    return t, opts


def spec_key(spec):
    o = spec.options
    keep = {k: o[k] for k in ("level", "reinterpret", "max_window", "scale", "offset",
                              "byte_width") if k in o}
    return spec.type, keep


def same_filters(theirs, ours):
    assert [filter_key(f) for f in theirs] == [spec_key(s) for s in ours]


def compare_schema(ts, ours, uri):
    assert ours.version == ts.version
    assert ours.array_type == (1 if ts.sparse else 0)
    assert ours.allows_dups == (ts.allows_duplicates if ts.sparse else False)
    assert ours.capacity == ts.capacity
    assert LAYOUT_NAMES[ours.cell_order] == ts.cell_order
    if ours.cell_order == 4:
        assert ts.tile_order is None and ours.tile_order == 0  # FORMAT trap: Hilbert
    else:
        assert LAYOUT_NAMES[ours.tile_order] == ts.tile_order
    same_filters(ts.coords_filters, ours.coords_filters)
    same_filters(ts.offsets_filters, ours.offsets_filters)
    same_filters(ts.validity_filters, ours.validity_filters)
    # domain
    assert len(ours.dimensions) == ts.ndim
    for i, d in enumerate(ours.dimensions):
        td = ts.domain.dim(i)
        assert d.name == td.name
        assert d.datatype == int(td._tiledb_dtype)
        assert d.cell_val_num == td._ncell
        if d.var:
            assert d.domain is None and d.tile_extent is None
        else:
            assert d.domain == tuple(td._domain)
            assert d.tile_extent == td._tile
        # trap: Dim.filters reports the coords filters when the dimension's own is empty
        same_filters(td.filters, d.filters or ours.coords_filters)
    # attributes
    assert [a.name for a in ours.attributes] == [ts.attr(i).name for i in range(ts.nattr)]
    for a in ours.attributes:
        ta = ts.attr(a.name)
        assert a.datatype == int(ta._tiledb_dtype)
        assert a.cell_val_num == ta._ncell
        assert a.nullable == ta.isnullable
        assert a.enumeration == ta.enum_label
        same_filters(ta.filters, a.filters)
        if a.nullable:
            continue  # trap: the fill of nullable attributes is not readable
        if a.var and a.datatype not in (4, 11, 12):
            continue  # trap: reading Attr.fill of a var numeric attribute segfaults
        fill = ta.fill
        raw = fill.encode("utf-8") if isinstance(fill, str) else (
            fill if isinstance(fill, bytes) else np.asarray(fill).tobytes())
        assert a.fill_raw == raw, a.name
    # dimension labels
    for lab in ours.labels:
        tl = ts.dim_label(lab.name)
        assert lab.dim_id == tl.dim_index
        assert tl.uri.endswith("/" + lab.uri) and lab.relative
        assert lab.attr_name == tl.label_attr_name
        assert lab.datatype == int(tl._tiledb_label_dtype)
        assert lab.cell_val_num == tl._label_ncell
        assert ORDER_NAMES[lab.order] == tl.order
    # enumerations named by attributes exist in the schema's list
    for a in ours.attributes:
        if a.enumeration:
            assert a.enumeration in ours.enumerations
    # current domain
    cd = ts.current_domain
    if cd.is_empty:
        assert ours.current_domain is None
    else:
        ndr = cd.ndrectangle
        assert ours.current_domain == [tuple(ndr.range(i)) for i in range(ts.ndim)]


@pytest.mark.parametrize("name", SCHEMA_ARRAYS)
def test_schema_matches_tiledb(tiledb_array, name):
    uri = tiledb_array(name)
    key = tiledb_arrays.KEY.encode() if name == "encrypted" else None
    ctx = tiledb_arrays.enc_ctx() if name == "encrypted" else None
    files = schema_files(uri)
    assert files
    parsed = []
    for path in files:
        doc, src, root = parse_schema_path(path, key)
        assert_clean(doc, src, root)
        sch = root.data
        assert sch is not None and sch.name == os.path.basename(path)
        assert doc.ctx.format_version == sch.version == 22
        parsed.append(sch)
    latest = parsed[-1]  # names start with the timestamp: the last is the newest
    ts = tiledb.ArraySchema.load(uri, ctx=ctx) if ctx else tiledb.ArraySchema.load(uri)
    compare_schema(ts, latest, uri)


def test_schema_node_names_and_types(tiledb_array):
    """Node names as the documents name the fields; enums as number + name; var cell val num."""
    doc, src, root = parse_schema_path(schema_files(tiledb_array("var_nullable"))[0])
    p = root["Generic tile"]["Tile"]["Array schema"]
    for name in ("Array version", "Allows dups", "Array type", "Tile order", "Cell order",
                 "Capacity", "Coords filters", "Offsets filters", "Validity filters", "Domain",
                 "Num attributes", "Attribute 1", "Num labels", "Num enumerations",
                 "Current domain"):
        assert p[name].doc is not None, name
    assert p["Array type"].display.endswith("(DENSE)") and p["Array type"].value == 0
    dim = p["Domain"]["Dimension 1"]
    assert [c.name for c in dim.iter_children()] == [
        "Dimension name length", "Dimension name", "Dimension datatype", "Cell val num",
        "Filters", "Domain size", "Domain", "Null tile extent", "Tile extent"]
    attrs = {p[f"Attribute {i}"]["Attribute name"].value: p[f"Attribute {i}"]
             for i in range(1, p["Num attributes"].value + 1)}
    s = attrs["s"]
    assert [c.name for c in s.iter_children()] == [
        "Attribute name length", "Attribute name", "Attribute datatype", "Cell val num",
        "Filters", "Fill value size", "Fill value", "Nullable", "Fill value validity", "Order",
        "Enumeration name length"]
    assert s["Cell val num"].display.startswith("var")
    assert s["Attribute datatype"].display == "12 (STRING_UTF8)"
    assert p["Current domain"]["Version number"].value == 0  # FORMAT_NOTES 4
    assert p["Current domain"]["Version number"].doc.note


def test_enumeration_names_and_labels_in_schema(tiledb_array):
    doc, src, root = parse_schema_path(schema_files(tiledb_array("enumerations"))[0])
    sch = root.data
    assert set(sch.enumerations) == {"colors", "sizes"}
    for fname in sch.enumerations.values():
        assert os.path.exists(os.path.join(tiledb_array("enumerations"), "__schema",
                                           "__enumerations", fname))
    p = root["Generic tile"]["Tile"]["Array schema"]
    assert p["Attribute 1"]["Enumeration name"].value == "colors"
    assert p["Enumeration 1"]["Enumeration filename"].value.endswith("_0")

    doc, src, root = parse_schema_path(schema_files(tiledb_array("dim_labels"))[0])
    lab = root["Generic tile"]["Tile"]["Array schema"]["Label 1"]
    assert [c.name for c in lab.iter_children()] == [
        "Dimension index", "Dimension label name length", "Dimension label name",
        "Relative URI", "URI length", "URI", "Label attribute name length",
        "Label attribute name", "Label order", "Label datatype", "Label cell_val_num",
        "Is external"]
    assert lab["Dimension label name length"].size == 4  # u32, the documents say u64


def test_current_domain_ranges(tiledb_array):
    doc, src, root = parse_schema_path(schema_files(tiledb_array("current_domain"))[0])
    cd = root["Generic tile"]["Tile"]["Array schema"]["Current domain"]
    assert cd["Empty"].value is False
    assert cd["Type"].display == "0 (NDRECTANGLE)"
    r2 = cd["NDRectangle"]["Range 2"]
    assert (r2["Start"].value, r2["End"].value) == (-10, 10) and r2["Start"].size == 4


def test_string_dimension_current_domain():
    """A var-sized (string) dimension's NDRectangle range: u64 size, u64 start size, bytes."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        uri = os.path.join(tmp, "a")
        ctx = tiledb.default_ctx()
        dom = tiledb.Domain(tiledb.Dim("k", dtype="ascii"),
                            tiledb.Dim("x", domain=(0, 9), tile=5, dtype=np.int32))
        sch = tiledb.ArraySchema(domain=dom, sparse=True, attrs=[tiledb.Attr("v", dtype=np.int8)])
        ndr = tiledb.NDRectangle(ctx, dom)
        ndr.set_range(0, "apple", "pear")
        ndr.set_range(1, 2, 7)
        cd = tiledb.CurrentDomain(ctx)
        cd.set_ndrectangle(ndr)
        sch.set_current_domain(cd)
        tiledb.Array.create(uri, sch)
        doc, src, root = parse_schema_path(schema_files(uri)[0])
        assert_clean(doc, src, root)
        compare_schema(tiledb.ArraySchema.load(uri), root.data, uri)
        r1 = root["Generic tile"]["Tile"]["Array schema"]["Current domain"]["NDRectangle"]["Range 1"]
        assert [c.name for c in r1.iter_children()] == ["Range size", "Start size", "Start", "End"]
        assert root.data.current_domain[0] == ("apple", "pear")


# ---- older format versions: payloads written by the rules of the C++ serializers -------------
def _pipe(filters=()):
    out = struct.pack("<II", 65536, len(filters))
    for t, level in filters:
        if t in (1, 2, 3, 4, 5):
            out += struct.pack("<BIBi", t, 5, t, level)
        else:
            out += struct.pack("<BI", t, 0)
    return out


def _s32(s: bytes):
    return struct.pack("<I", len(s)) + s


def synth_schema(v: int) -> bytes:
    """A sparse 2-D schema (int64 x, int64 y; attributes a: int32, s: var UTF-8) serialized
    as format version `v` would be (array_schema.cc / domain.cc / dimension.cc /
    attribute.cc / dimension_label.cc / current_domain.cc)."""
    b = struct.pack("<I", v)
    if v >= 5:
        b += b"\x01"                                  # allows dups
    b += bytes([1, 0, 1]) + struct.pack("<Q", 1000)   # sparse, row tiles, col cells, capacity
    b += _pipe([(2, -1)]) + _pipe([(3, 4)])            # coords [ZSTD], offsets [LZ4(4)]
    if v >= 7:
        b += _pipe([(4, -1)])                         # validity [RLE]
    if v < 5:
        b += b"\x01"                                  # domain datatype INT64
    b += struct.pack("<I", 2)
    for name, (lo, hi), ext in ((b"x", (0, 99), 10), (b"y", (-5, 5), None)):
        b += _s32(name)
        if v >= 5:
            b += b"\x01" + struct.pack("<I", 1) + _pipe([(9, 0)] if name == b"x" else [])
            b += struct.pack("<Q", 16)
        b += struct.pack("<qq", lo, hi)
        b += b"\x01" if ext is None else b"\x00" + struct.pack("<q", ext)
    b += struct.pack("<I", 2)
    for name, dt, cvn, fill in ((b"a", 0, 1, struct.pack("<i", -7)),
                                (b"s", 12, VAR_NUM, b"\x00")):
        b += _s32(name) + bytes([dt]) + struct.pack("<I", cvn) + _pipe([(1, 5)])
        if v >= 6:
            b += struct.pack("<Q", len(fill)) + fill
        if v >= 7:
            b += bytes([name == b"s", 0])
        if v >= 17:
            b += bytes([0])
        if v >= 20:
            b += _s32(b"e" if name == b"a" else b"")
    if v >= 18:
        b += struct.pack("<I", 1) + struct.pack("<I", 0) + _s32(b"lab") + b"\x01"
        b += struct.pack("<Q", 11) + b"__labels/l0" + _s32(b"label") + bytes([1, 3])
        b += struct.pack("<I", 1) + b"\x00"
    if v >= 20:
        b += struct.pack("<I", 1) + _s32(b"e") + _s32(b"__0123456789abcdef0123456789abcdef_0")
    if v >= 22:
        b += struct.pack("<IBB", 0, 0, 0) + struct.pack("<qqqq", 10, 20, -1, 1)
    return b


VERSIONS = [1, 2, 3, 4, 5, 6, 7, 10, 12, 16, 17, 18, 19, 20, 21, 22]
PRESENT = {  # node name -> (added in, removed in) at the payload's top level / attribute 1
    "Allows dups": (5, None), "Validity filters": (7, None), "Num labels": (18, None),
    "Num enumerations": (20, None), "Current domain": (22, None),
}
ATTR_PRESENT = {"Fill value size": (6, None), "Fill value": (6, None), "Nullable": (7, None),
                "Fill value validity": (7, None), "Order": (17, None),
                "Enumeration name length": (20, None), "Enumeration name": (20, None)}


def _present(span, v):
    lo, hi = span
    return (lo is None or v >= lo) and (hi is None or v < hi)


@pytest.mark.parametrize("v", VERSIONS)
def test_every_format_version(v):
    src = BytesSource(synth_schema(v), f"schema v{v}")
    ctx = Context()
    out = []
    root = run_parser("payload", "struct", src, lambda c: out.append(S.parse_schema(c, ctx)), ctx)
    bad = [(n.path(), n.message) for n in root.walk() if n.status != "ok"]
    assert not bad, bad
    assert coverage(root, src) == (src.size, src.size)
    s = out[0]
    assert s is not None and s.version == v == ctx.format_version
    assert [d.name for d in s.dimensions] == ["x", "y"]
    assert all(d.datatype == 1 and d.cell_val_num == 1 for d in s.dimensions)
    assert s.dimensions[0].domain == (0, 99) and s.dimensions[1].domain == (-5, 5)
    assert s.dimensions[0].tile_extent == 10 and s.dimensions[1].tile_extent is None
    assert [f.type for f in s.dimensions[0].filters] == ([9] if v >= 5 else [])
    assert s.allows_dups == (v >= 5)
    assert [f.type for f in s.validity_filters] == ([4] if v >= 7 else [])
    a, st = s.attributes
    assert (a.name, a.datatype, st.name, st.cell_val_num) == ("a", 0, "s", VAR_NUM)
    assert a.fill_value == (-7 if v >= 6 else None)
    assert st.nullable == (v >= 7)
    assert a.enumeration == ("e" if v >= 20 else None)
    assert len(s.labels) == (1 if v >= 18 else 0)
    if v >= 18:
        lab = s.labels[0]
        assert (lab.name, lab.uri, lab.attr_name, lab.order, lab.datatype) == \
            ("lab", "__labels/l0", "label", 1, 3)
    assert s.enumerations == ({"e": "__0123456789abcdef0123456789abcdef_0"} if v >= 20 else {})
    assert s.current_domain == ([(10, 20), (-1, 1)] if v >= 22 else None)
    top = {c.name for c in root.iter_children()}
    for name, span in PRESENT.items():
        assert (name in top) == _present(span, v), name
    assert ("Domain datatype" in {c.name for c in root["Domain"].iter_children()}) == (v < 5)
    dim_fields = {c.name for c in root["Domain"]["Dimension 1"].iter_children()}
    for name in ("Dimension datatype", "Cell val num", "Filters", "Domain size"):
        assert (name in dim_fields) == (v >= 5)
    attr_fields = {c.name for c in root["Attribute 1"].iter_children()}
    for name, span in ATTR_PRESENT.items():
        assert (name in attr_fields) == _present(span, v), name
    # every field's doc agrees with the version it was found in
    for n in root.walk():
        if n.doc is not None and n.source is src:
            assert n.doc.present_in(v), (n.path(), v)


def test_newer_version_and_truncation_are_reported():
    raw = bytearray(synth_schema(22))
    raw[0] = 23
    src = BytesSource(bytes(raw), "v23")
    root = run_parser("payload", "struct", src, lambda c: S.parse_schema(c))
    assert root["Array version"].status == "warning"
    for cut in (3, 20, 60, 150, len(raw) - 1):
        src = BytesSource(bytes(raw[:cut]), "cut")
        out = []
        root = run_parser("payload", "struct", src, lambda c: out.append(S.parse_schema(c)))
        assert out == [None]
        assert any(n.status == ERROR for n in root.walk())
        assert coverage(root, src) == (src.size, src.size)


def test_impossible_counts_do_not_allocate():
    b = bytearray(synth_schema(22))
    # Num dimensions sits right after the three pipelines
    off = 4 + 1 + 3 + 8 + 18 + 18 + 18
    b[off:off + 4] = struct.pack("<I", 0xFFFFFFFF)
    src = BytesSource(bytes(b), "huge")
    root = run_parser("payload", "struct", src, lambda c: S.parse_schema(c))
    n = root["Domain"]["Num dimensions"]
    assert n.status == ERROR and "remain" in n.message

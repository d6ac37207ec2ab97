"""The array schema (format_spec/array_schema.md, current_domain.md), every format version.

The payload of `__schema/__t_t_uuid` (format >= 10) or `__array_schema.tdb` (format <= 9) is
parsed field by field; fields appear or disappear by the version the payload itself starts
with ("Array version"), so older arrays parse as they were written:

| version | change |
| --- | --- |
| < 5 | a "Domain datatype" before the dimensions; dimensions have no datatype, cell val num, filters or domain size |
| 5 | "Allows dups"; per-dimension datatype, cell val num, filters, domain size |
| 6 | attribute fill values |
| 7 | validity filters; attribute "Nullable", "Fill value validity" |
| 17 | attribute "Order" |
| 18 | dimension labels |
| 20 | enumerations (schema list + a name at the end of each attribute) |
| 22 | current domain |

Where the bytes differ from the documents, the FieldDoc `note` says so (FORMAT_NOTES).
"""
from __future__ import annotations

import os
from typing import List, Optional

from ...core.cursor import Cursor, ParseStop
from ...core.fielddoc import doc
from ...core.findings import GENERIC_TILE_VERSION
from ...core.node import ERROR, WARNING, Node
from ...filters.enums import (
    ARRAY_TYPES,
    CURRENT_DOMAIN_TYPES,
    DATA_ORDERS,
    DATATYPE_NAMES,
    FORMAT_VERSION,
    LAYOUTS,
    TEXT_TYPES,
    VAR_NUM,
    datatype_size,
    format_value,
)
from ..model.array_model import ArraySchema, Attribute, Dimension, DimensionLabel
from .pipeline import parse_pipeline
from .tile import parse_generic_tile_file

SPEC = "array_schema.md"

# ---- array schema ---------------------------------------------------------------------------
D_VERSION = doc("Array version: format version number of the array schema; every field "
                "below is present or absent according to it", spec=f"{SPEC}#array-schema-file")
D_ALLOWS_DUPS = doc("Allows dups: whether a sparse array may hold several cells with the same "
                    "coordinates", added_in=5, spec=f"{SPEC}#array-schema-file")
D_ARRAY_TYPE = doc("Array type: dense (0) or sparse (1)", spec=f"{SPEC}#array-schema-file")
D_TILE_ORDER = doc("Tile order: the order of the space tiles (row or column major). A "
                   "Hilbert cell-order array stores 0 (ROW_MAJOR) here; tiledb-py reports "
                   "its tile order as None", spec=f"{SPEC}#array-schema-file")
D_CELL_ORDER = doc("Cell order: the order of cells inside a tile (row/col major, Hilbert)",
                   spec=f"{SPEC}#array-schema-file")
D_CAPACITY = doc("Capacity: for sparse fragments, the number of cells in a data tile",
                 spec=f"{SPEC}#array-schema-file")
D_COORDS_FILTERS = doc("Coords filters: the filter pipeline used by default for coordinate "
                       "tiles (a dimension whose own pipeline is empty uses this one)",
                       spec=f"{SPEC}#array-schema-file",
                       note="tiledb-py's Dim.filters reports this pipeline when the "
                            "dimension's own on-disk pipeline is empty")
D_OFFSETS_FILTERS = doc("Offsets filters: the filter pipeline of the uint64 offsets tiles of "
                        "var-sized attributes and dimensions", spec=f"{SPEC}#array-schema-file")
D_VALIDITY_FILTERS = doc("Validity filters: the filter pipeline of the validity tiles "
                         "(one byte per cell) of nullable attributes", added_in=7,
                         spec=f"{SPEC}#array-schema-file")
D_DOMAIN = doc("Domain: the dimensions of the array", spec=f"{SPEC}#domain")
D_NUM_ATTRS = doc("Num attributes: number of attributes in the array",
                  spec=f"{SPEC}#array-schema-file")
D_ATTRIBUTE = doc("Attribute: one attribute of the array", spec=f"{SPEC}#attribute")
D_NUM_LABELS = doc("Num labels: number of dimension labels in the array", added_in=18,
                   spec=f"{SPEC}#array-schema-file")
D_LABEL = doc("Dimension label: a label array indexing one dimension", added_in=18,
              spec=f"{SPEC}#dimension-label")
D_NUM_ENUMS = doc("Num enumerations: number of enumerations in the array (their values live "
                  "in __schema/__enumerations/)", added_in=20, spec=f"{SPEC}#array-schema-file",
                  note="upstream's array_schema.md does not list the enumeration fields at all")
D_ENUM = doc("Enumeration: the name of an enumeration and the file holding its values",
             added_in=20, spec=f"{SPEC}#array-schema-file")
D_ENUM_NAME_LEN = doc("Enumeration name length: number of characters in the enumeration's name",
                      added_in=20, spec=f"{SPEC}#array-schema-file")
D_ENUM_NAME = doc("Enumeration name: the name attributes use to refer to the enumeration",
                  added_in=20, spec=f"{SPEC}#array-schema-file")
D_ENUM_FILE_LEN = doc("Enumeration filename length: number of characters in the file name",
                      added_in=20, spec=f"{SPEC}#array-schema-file")
D_ENUM_FILE = doc("Enumeration filename: the file in __schema/__enumerations/ that holds the "
                  "enumeration's values (`__<uuid>_<enumeration version>`)", added_in=20,
                  spec=f"{SPEC}#array-schema-file")
D_CURRENT_DOMAIN = doc("Current domain: the part of the domain currently in use (the array's "
                       "shape, which can be grown by schema evolution)", added_in=22,
                       spec="current_domain.md")

# ---- domain / dimension ---------------------------------------------------------------------
D_DOMAIN_TYPE = doc("Domain datatype: the datatype of every dimension (before version 5 all "
                    "dimensions shared one type)", removed_in=5, spec=f"{SPEC}#domain")
D_NUM_DIMS = doc("Num dimensions: dimensionality (rank) of the domain", spec=f"{SPEC}#domain")
D_DIMENSION = doc("Dimension: one dimension of the domain", spec=f"{SPEC}#dimension")
D_DIM_NAME_LEN = doc("Dimension name length: number of characters in the dimension name",
                     spec=f"{SPEC}#dimension")
D_DIM_NAME = doc("Dimension name", spec=f"{SPEC}#dimension")
D_DIM_TYPE = doc("Dimension datatype: the datatype of the coordinate values", added_in=5,
                 spec=f"{SPEC}#dimension")
D_DIM_CVN = doc("Cell val num: coordinate values per cell; 0xFFFFFFFF (var) for var-sized "
                "(string) dimensions", added_in=5, spec=f"{SPEC}#dimension")
D_DIM_FILTERS = doc("Filters: the dimension's own filter pipeline for its coordinate tiles; "
                    "when empty, the schema's coords filters are used", added_in=5,
                    spec=f"{SPEC}#dimension",
                    note="on disk most dimensions have 0 filters; tiledb-py's Dim.filters "
                         "then reports the coords filters. Schema evolution rewrites the "
                         "schema with the inherited pipeline copied into each dimension")
D_DIM_DOMAIN_SIZE = doc("Domain size: bytes of the domain that follows (2 × the datatype size; "
                        "0 for string dimensions)", added_in=5, spec=f"{SPEC}#dimension",
                        note="before version 5 there is no size field: the domain is always "
                             "2 × the size of the domain datatype")
D_DIM_DOMAIN = doc("Domain: the dimension's [min, max] values", spec=f"{SPEC}#dimension")
D_NULL_EXTENT = doc("Null tile extent: 1 if the dimension has no tile extent (string "
                    "dimensions, or a sparse dimension left without one), else 0",
                    spec=f"{SPEC}#dimension")
D_TILE_EXTENT = doc("Tile extent: the space tile extent of this dimension (one value of the "
                    "dimension's datatype; absent when the null tile extent flag is 1)",
                    spec=f"{SPEC}#dimension")

# ---- attribute ------------------------------------------------------------------------------
D_ATTR_NAME_LEN = doc("Attribute name length: number of characters in the attribute name",
                      spec=f"{SPEC}#attribute")
D_ATTR_NAME = doc("Attribute name", spec=f"{SPEC}#attribute")
D_ATTR_TYPE = doc("Attribute datatype: the datatype of the attribute values",
                  spec=f"{SPEC}#attribute")
D_ATTR_CVN = doc("Cell val num: values per cell; 0xFFFFFFFF (var) for var-sized attributes",
                 spec=f"{SPEC}#attribute")
D_ATTR_FILTERS = doc("Filters: the filter pipeline of the attribute's value tiles",
                     spec=f"{SPEC}#attribute")
D_FILL_SIZE = doc("Fill value size: bytes of the fill value (cell size, or one value for "
                  "var-sized attributes)", added_in=6, spec=f"{SPEC}#attribute")
D_FILL = doc("Fill value: the value read for cells never written (defaults: the type's minimum "
             "for signed ints, maximum for unsigned, NaN for floats, NaT for datetimes, 0x80 "
             "for CHAR, 0 for strings and BOOL)", added_in=6, spec=f"{SPEC}#attribute",
             note="the fill is not stored in dense partial tiles: unwritten cells hold zero "
                  "bytes and the fill is substituted at read time")
D_NULLABLE = doc("Nullable: whether cells of the attribute can be null (then a validity "
                 "file aN_validity.tdb accompanies the values)", added_in=7,
                 spec=f"{SPEC}#attribute")
D_FILL_VALIDITY = doc("Fill value validity: the validity (0 null, 1 valid) of unwritten cells",
                      added_in=7, spec=f"{SPEC}#attribute")
D_ORDER = doc("Order: the order of the data stored in the attribute (unordered, increasing "
              "or decreasing)", added_in=17, spec=f"{SPEC}#attribute")
D_ATTR_ENUM_LEN = doc("Enumeration name length: characters in the name of the enumeration this "
                      "attribute's values index (0: none)", added_in=20, spec=f"{SPEC}#attribute",
                      note="written from format 20 at the end of every attribute; missing from "
                           "both documents (FORMAT_NOTES 1)")
D_ATTR_ENUM = doc("Enumeration name: the enumeration (listed at the end of the schema) whose "
                  "values the attribute's codes index", added_in=20, spec=f"{SPEC}#attribute",
                  note="missing from both documents (FORMAT_NOTES 1)")

# ---- dimension label (as really written: FORMAT_NOTES 2) -------------------------------------
_LABEL_NOTE = ("the bytes are `u32 dim | u32+name | u8 relative | u64+uri | u32+attr name | "
               "u8 order | u8 datatype | u32 cvn | u8 external`; the documents give the name "
               "length as u64, put the label order second and add label-domain fields that "
               "are not written (FORMAT_NOTES 2)")
D_LABEL_DIM = doc("Dimension index: the dimension the label is for", added_in=18,
                  spec=f"{SPEC}#dimension-label")
D_LABEL_NAME_LEN = doc("Dimension label name length: characters in the label name", added_in=18,
                       spec=f"{SPEC}#dimension-label", note="u32 on disk, the documents say "
                                                           "u64; " + _LABEL_NOTE)
D_LABEL_NAME = doc("Dimension label name", added_in=18, spec=f"{SPEC}#dimension-label")
D_LABEL_RELATIVE = doc("Relative URI: whether the URI below is relative to this array",
                       added_in=18, spec=f"{SPEC}#dimension-label")
D_LABEL_URI_LEN = doc("URI length: characters in the URI of the label array", added_in=18,
                      spec=f"{SPEC}#dimension-label")
D_LABEL_URI = doc("URI: where the label array is stored (e.g. `__labels/l0`)", added_in=18,
                  spec=f"{SPEC}#dimension-label")
D_LABEL_ATTR_LEN = doc("Label attribute name length", added_in=18,
                       spec=f"{SPEC}#dimension-label")
D_LABEL_ATTR = doc("Label attribute name: the attribute of the label array holding the labels",
                   added_in=18, spec=f"{SPEC}#dimension-label")
D_LABEL_ORDER = doc("Label order: increasing or decreasing label data", added_in=18,
                    spec=f"{SPEC}#dimension-label",
                    note="written after the attribute name, not second as documented; "
                         + _LABEL_NOTE)
D_LABEL_TYPE = doc("Label datatype", added_in=18, spec=f"{SPEC}#dimension-label")
D_LABEL_CVN = doc("Label cell_val_num: values per label cell; 0xFFFFFFFF (var) for var-sized "
                  "labels", added_in=18, spec=f"{SPEC}#dimension-label",
                  note="the documented 'Label domain size/start size/data' fields that "
                       "should follow are not written")
D_LABEL_EXTERNAL = doc("Is external: whether the label array lives outside this array",
                       added_in=18, spec=f"{SPEC}#dimension-label")

# ---- current domain --------------------------------------------------------------------------
D_CD_VERSION = doc("Version number: current domain format version", added_in=22,
                   spec="current_domain.md",
                   note="libtiledb 2.30 writes 0; the document says the current version is 1 "
                        "(FORMAT_NOTES 4)")
D_CD_EMPTY = doc("Empty: 1 if no current domain is set (then nothing follows)", added_in=22,
                 spec="current_domain.md")
D_CD_TYPE = doc("Type: the representation of the current domain (0 = NDRectangle)",
                added_in=22, spec="current_domain.md")
D_CD_NDRECT = doc("NDRectangle: one range per dimension, in dimension order", added_in=22,
                  spec="current_domain.md",
                  note="the document points to fragment.md#mbr; the bytes are per dimension: "
                       "fixed-size: min and max raw; var-size: u64 range size, u64 start "
                       "size, then the start and end bytes")
D_CD_RANGE = doc("Range: the current [min, max] of one dimension", added_in=22,
                 spec="current_domain.md")
D_CD_RANGE_SIZE = doc("Range size: bytes of start and end together (var-sized dimension)",
                      added_in=22, spec="current_domain.md")
D_CD_START_SIZE = doc("Start size: bytes of the range start (var-sized dimension)",
                      added_in=22, spec="current_domain.md")
D_CD_START = doc("Start of the range", added_in=22, spec="current_domain.md")
D_CD_END = doc("End of the range", added_in=22, spec="current_domain.md")

CURRENT_DOMAIN_VERSION = 0
# Minimum bytes of one serialized item, for counts read from the file.
_MIN_PIPELINE = 8
_MIN_DIM_OLD = 4 + 1
_MIN_DIM = 4 + 1 + 4 + _MIN_PIPELINE + 8 + 1
_MIN_ATTR = 4 + 1 + 4 + _MIN_PIPELINE
_MIN_LABEL = 4 + 4 + 1 + 8 + 4 + 1 + 1 + 4 + 1
_MIN_ENUM = 8


# ---- helpers --------------------------------------------------------------------------------
def _name(cur: Cursor, len_name: str, name: str, len_doc, name_doc, kind: str = "u32") -> str:
    n = cur.length(kind, len_name, 1, len_doc, "bytes").value
    return cur.string(name, n, name_doc).value


def _cell_val_num(cur: Cursor, name: str, d) -> int:
    n = cur.u32(name, d)
    if n.value == VAR_NUM:
        n.display = "var (0xFFFFFFFF)"
    elif n.value == 0:
        n.mark(WARNING, f"{name}: 0 values per cell is not valid")
    return n.value


def _dtype(cur: Cursor, name: str, d) -> int:
    return cur.u8(name, d, enum=DATATYPE_NAMES).value


def typed_field(cur: Cursor, name: str, dt: int, size: int, d=None, kind: str = "field"):
    """A node over `size` bytes decoded as values of datatype `dt` (returns the value)."""
    cur.need(name, size, f"{size} bytes of {DATATYPE_NAMES.get(dt, dt)}")
    raw = cur.source.read(cur.pos, size)
    value, display = format_value(dt, raw) if size else (None, "(empty)")
    n = cur.field(name, size, value, display, kind, d,
                  f"{DATATYPE_NAMES.get(dt, '?')}[{size // max(1, datatype_size(dt))}]")
    if dt in DATATYPE_NAMES and dt not in TEXT_TYPES and size % datatype_size(dt):
        n.mark(WARNING, f"{name}: {size} bytes is not a whole number of "
                        f"{DATATYPE_NAMES[dt]} values ({datatype_size(dt)} B each)")
    return value


def _ctx_of(cur: Cursor, ctx):
    return ctx if ctx is not None else cur.ctx


def _check_tile_version(root: Node, source, version: int) -> None:
    """The generic tile's version and the payload's "Array version" are both the format of
    the libtiledb that wrote the file (it serialises every schema as its own version):
    another is damage, which libtiledb does not notice."""
    if source.size < 4:
        return
    tile_version = int.from_bytes(source.read(0, 4), "little")
    if tile_version == version:
        return
    gt = root.find("Generic tile")
    header = gt.find("Generic tile header") if gt is not None else None
    node = (header.find("Version number") if header is not None else None) or root
    node.mark(ERROR, f"generic tile version {tile_version}, the schema's Array version is "
                     f"{version} (one writer writes both)")
    node.code = GENERIC_TILE_VERSION


# ---- the payload ----------------------------------------------------------------------------
def parse_schema(cur: Cursor, ctx=None) -> Optional[ArraySchema]:
    """Parse an array schema payload at `cur`; return the ArraySchema, or None when the bytes
    stop short (the error node is in the tree). Sets `ctx.format_version` to the payload's
    "Array version" if a context is given."""
    ctx = _ctx_of(cur, ctx)
    schema = ArraySchema(version=0)
    try:
        _parse(cur, schema, ctx)
    except ParseStop:
        return None
    return schema


def _parse(cur: Cursor, s: ArraySchema, ctx) -> None:
    vn = cur.u32("Array version", D_VERSION)
    v = s.version = vn.value
    if ctx is not None:
        ctx.format_version = v
    if v > FORMAT_VERSION:
        vn.mark(WARNING, f"Array version {v} is newer than the newest known format "
                         f"({FORMAT_VERSION}); parsed with the version {FORMAT_VERSION} layout")
    elif v == 0:
        vn.mark(WARNING, "Array version 0 does not exist (format versions start at 1)")
    if v >= 5:
        s.allows_dups = cur.boolean("Allows dups", D_ALLOWS_DUPS).value
    s.array_type = cur.u8("Array type", D_ARRAY_TYPE, enum=ARRAY_TYPES).value
    s.tile_order = cur.u8("Tile order", D_TILE_ORDER, enum=LAYOUTS).value
    s.cell_order = cur.u8("Cell order", D_CELL_ORDER, enum=LAYOUTS).value
    s.capacity = cur.u64("Capacity", D_CAPACITY).value
    s.coords_filters = parse_pipeline(cur, "Coords filters", D_COORDS_FILTERS)
    s.offsets_filters = parse_pipeline(cur, "Offsets filters", D_OFFSETS_FILTERS)
    if v >= 7:
        s.validity_filters = parse_pipeline(cur, "Validity filters", D_VALIDITY_FILTERS)
    g = cur.group("Domain", lambda c: _parse_domain(c, s, v), doc=D_DOMAIN)
    g.display = f"{len(s.dimensions)} dimension(s): " + ", ".join(d.name for d in s.dimensions)

    n = cur.length("u32", "Num attributes", _MIN_ATTR, D_NUM_ATTRS, "attributes").value
    for i in range(n):
        a = Attribute("", 0)
        g = cur.group(f"Attribute {i + 1}", lambda c: _parse_attribute(c, a, v),
                      doc=D_ATTRIBUTE)
        s.attributes.append(a)
        g.value = a.name
        g.display = _attr_text(a)

    if v >= 18:
        n = cur.length("u32", "Num labels", _MIN_LABEL, D_NUM_LABELS, "labels").value
        for i in range(n):
            holder: list = []
            g = cur.group(f"Label {i + 1}", lambda c: holder.append(_parse_label(c)),
                          doc=D_LABEL)
            lab = holder[0]
            s.labels.append(lab)
            g.value = lab.name
            g.display = f"{lab.name!r} on dimension {lab.dim_id} → {lab.uri}"

    if v >= 20:
        n = cur.length("u32", "Num enumerations", _MIN_ENUM, D_NUM_ENUMS, "enumerations").value
        for i in range(n):
            def one(c: Cursor):
                name = _name(c, "Enumeration name length", "Enumeration name",
                             D_ENUM_NAME_LEN, D_ENUM_NAME)
                fname = _name(c, "Enumeration filename length", "Enumeration filename",
                              D_ENUM_FILE_LEN, D_ENUM_FILE)
                s.enumerations[name] = fname
                c.node.value = name
                c.node.display = f"{name!r} → __enumerations/{fname}"
            cur.group(f"Enumeration {i + 1}", one, doc=D_ENUM)
        names = set(s.enumerations)
        for a, node in zip(s.attributes, _children_named(cur.node, "Attribute ")):
            if a.enumeration is not None and a.enumeration not in names:
                node.mark(WARNING, f"attribute {a.name!r} refers to enumeration "
                                   f"{a.enumeration!r}, which the schema does not list")

    if v >= 22:
        cur.group("Current domain", lambda c: _parse_current_domain(c, s), doc=D_CURRENT_DOMAIN)


def _children_named(node: Node, prefix: str) -> List[Node]:
    return [c for c in node.iter_children() if c.name.startswith(prefix)]


def _attr_text(a: Attribute) -> str:
    t = DATATYPE_NAMES.get(a.datatype, str(a.datatype))
    cvn = "var" if a.var else str(a.cell_val_num)
    extra = ", nullable" if a.nullable else ""
    if a.enumeration:
        extra += f", enumeration {a.enumeration!r}"
    return f"{a.name!r}: {t}×{cvn}{extra}"


def _parse_domain(cur: Cursor, s: ArraySchema, v: int) -> None:
    shared_type = None
    if v < 5:
        shared_type = _dtype(cur, "Domain datatype", D_DOMAIN_TYPE)
    n = cur.length("u32", "Num dimensions", _MIN_DIM_OLD if v < 5 else _MIN_DIM, D_NUM_DIMS,
                   "dimensions").value
    if n == 0:
        cur.node.mark(WARNING, "the domain has no dimensions")
    for i in range(n):
        d = Dimension("", shared_type if shared_type is not None else 0)
        g = cur.group(f"Dimension {i + 1}", lambda c: _parse_dimension(c, d, v, shared_type),
                      doc=D_DIMENSION)
        s.dimensions.append(d)
        g.value = d.name
        t = DATATYPE_NAMES.get(d.datatype, str(d.datatype))
        dom = "" if d.domain is None else f" [{_short(d.domain[0])}, {_short(d.domain[1])}]"
        ext = "" if d.tile_extent is None else f", tile {_short(d.tile_extent)}"
        g.display = f"{d.name!r}: {t}{' var' if d.var else ''}{dom}{ext}"


def _short(v) -> str:
    return repr(v) if isinstance(v, str) else str(v)


def _parse_dimension(cur: Cursor, d: Dimension, v: int, shared_type: Optional[int]) -> None:
    d.name = _name(cur, "Dimension name length", "Dimension name", D_DIM_NAME_LEN, D_DIM_NAME)
    if v >= 5:
        d.datatype = _dtype(cur, "Dimension datatype", D_DIM_TYPE)
        d.cell_val_num = _cell_val_num(cur, "Cell val num", D_DIM_CVN)
        d.filters = parse_pipeline(cur, "Filters", D_DIM_FILTERS)
        dsize = cur.length("u64", "Domain size", 1, D_DIM_DOMAIN_SIZE, "bytes").value
    else:
        d.datatype = shared_type if shared_type is not None else 0
        d.cell_val_num = VAR_NUM if shared_type in TEXT_TYPES else 1
        dsize = 2 * datatype_size(d.datatype)
    dt = d.datatype
    if dsize:
        val = typed_field(cur, "Domain", dt, dsize, D_DIM_DOMAIN)
        if isinstance(val, list) and len(val) == 2:
            d.domain = (val[0], val[1])
        else:
            cur.node.children[-1].mark(WARNING, f"Domain: expected 2 values (min, max), "
                                                f"{dsize} bytes of {DATATYPE_NAMES.get(dt, dt)} "
                                                f"hold {val!r}")
        if dsize != 2 * d.cell_size and not d.var:
            cur.node.children[-1].mark(WARNING, f"Domain: {dsize} bytes, expected "
                                                f"2 × {d.cell_size}")
    nte = cur.u8("Null tile extent", D_NULL_EXTENT)
    nte.kind = "flag"
    nte.display = {0: "0 (has a tile extent)", 1: "1 (no tile extent)"}.get(
        nte.value, f"{nte.value} (not 0/1)")
    if nte.value == 0:
        d.tile_extent = typed_field(cur, "Tile extent", dt, datatype_size(dt), D_TILE_EXTENT)


def _parse_attribute(cur: Cursor, a: Attribute, v: int) -> None:
    a.name = _name(cur, "Attribute name length", "Attribute name", D_ATTR_NAME_LEN, D_ATTR_NAME)
    a.datatype = _dtype(cur, "Attribute datatype", D_ATTR_TYPE)
    a.cell_val_num = _cell_val_num(cur, "Cell val num", D_ATTR_CVN)
    a.filters = parse_pipeline(cur, "Filters", D_ATTR_FILTERS)
    if v >= 6:
        fsize = cur.length("u64", "Fill value size", 1, D_FILL_SIZE, "bytes")
        if fsize.value == 0:
            fsize.mark(WARNING, "Fill value size: 0 (libtiledb asserts a non-empty fill value)")
        elif not a.var and fsize.value != a.cell_size:
            fsize.mark(WARNING, f"Fill value size: {fsize.value} bytes, but a cell of "
                                f"{DATATYPE_NAMES.get(a.datatype, a.datatype)}×"
                                f"{a.cell_val_num} has {a.cell_size}")
        a.fill_raw = cur.source.read(cur.pos, min(fsize.value, cur.remaining))
        a.fill_value = typed_field(cur, "Fill value", a.datatype, fsize.value, D_FILL)
    if v >= 7:
        a.nullable = cur.boolean("Nullable", D_NULLABLE).value
        a.fill_validity = cur.u8("Fill value validity", D_FILL_VALIDITY).value
    if v >= 17:
        a.order = cur.u8("Order", D_ORDER, enum=DATA_ORDERS).value
    if v >= 20:
        n = cur.length("u32", "Enumeration name length", 1, D_ATTR_ENUM_LEN, "bytes").value
        if n:
            a.enumeration = cur.string("Enumeration name", n, D_ATTR_ENUM).value


def _parse_label(cur: Cursor) -> DimensionLabel:
    lab = DimensionLabel(0, "", "", False, "", 0, 0, 1, False)
    lab.dim_id = cur.u32("Dimension index", D_LABEL_DIM).value
    lab.name = _name(cur, "Dimension label name length", "Dimension label name",
                     D_LABEL_NAME_LEN, D_LABEL_NAME)
    lab.relative = cur.boolean("Relative URI", D_LABEL_RELATIVE).value
    lab.uri = _name(cur, "URI length", "URI", D_LABEL_URI_LEN, D_LABEL_URI, kind="u64")
    lab.attr_name = _name(cur, "Label attribute name length", "Label attribute name",
                          D_LABEL_ATTR_LEN, D_LABEL_ATTR)
    lab.order = cur.u8("Label order", D_LABEL_ORDER, enum=DATA_ORDERS).value
    lab.datatype = _dtype(cur, "Label datatype", D_LABEL_TYPE)
    lab.cell_val_num = _cell_val_num(cur, "Label cell_val_num", D_LABEL_CVN)
    lab.is_external = cur.boolean("Is external", D_LABEL_EXTERNAL).value
    return lab


def _parse_current_domain(cur: Cursor, s: ArraySchema) -> None:
    vn = cur.u32("Version number", D_CD_VERSION)
    if vn.value > CURRENT_DOMAIN_VERSION:
        vn.mark(WARNING, f"current domain version {vn.value} is newer than the one known "
                         f"({CURRENT_DOMAIN_VERSION}); libtiledb 2.30 refuses it")
    empty = cur.boolean("Empty", D_CD_EMPTY).value
    if empty:
        cur.node.display = "empty"
        return
    t = cur.u8("Type", D_CD_TYPE, enum=CURRENT_DOMAIN_TYPES)
    if t.value != 0:
        t.mark(ERROR, f"Type: unknown current domain type {t.value}; its bytes cannot be read")
        return
    ranges: list = []

    def ndrect(c: Cursor):
        for i, d in enumerate(s.dimensions):
            def one(rc: Cursor, d=d):
                if d.var:
                    size = rc.length("u64", "Range size", 1, D_CD_RANGE_SIZE, "bytes").value
                    start = rc.u64("Start size", D_CD_START_SIZE)
                    if start.value > size:
                        start.mark(ERROR, f"Start size {start.value} exceeds the range size "
                                          f"{size}")
                        rc.fail("Range", f"start size {start.value} > range size {size}", size)
                    lo = typed_field(rc, "Start", d.datatype, start.value, D_CD_START)
                    hi = typed_field(rc, "End", d.datatype, size - start.value, D_CD_END)
                else:
                    cs = d.cell_size
                    lo = typed_field(rc, "Start", d.datatype, cs, D_CD_START)
                    hi = typed_field(rc, "End", d.datatype, cs, D_CD_END)
                ranges.append((lo, hi))
                rc.node.value = [lo, hi]
                rc.node.display = f"{d.name!r}: [{_short(lo)}, {_short(hi)}]"
            c.group(f"Range {i + 1}", one, doc=D_CD_RANGE)
    g = cur.group("NDRectangle", ndrect, doc=D_CD_NDRECT)
    s.current_domain = ranges
    g.display = ", ".join(f"{d.name}: [{_short(r[0])}, {_short(r[1])}]"
                          for d, r in zip(s.dimensions, ranges))
    cur.node.display = g.display


# ---- the whole file -------------------------------------------------------------------------
def parse_schema_file(document, source, ctx=None) -> Node:
    """The schema file: a generic tile whose payload is the schema. The returned node's
    `data` (and its "Array schema" payload node's) is the ArraySchema, or None."""
    name = os.path.basename(getattr(source, "name", "schema").rstrip("/")) or "schema"

    def parse(c: Cursor, ctx):
        sch = parse_schema(c, ctx)
        if sch is not None:
            sch.name = name
        return sch

    root = parse_generic_tile_file(
        document, source, ctx, parse, "Array schema",
        lambda sch: (f"v{sch.version} {ARRAY_TYPES.get(sch.array_type, '?').lower()}, "
                     f"{len(sch.dimensions)} dim(s), {len(sch.attributes)} attr(s)"))
    if root.data is not None:
        _check_tile_version(root, source, root.data.version)
        root.display = "array schema " + (
            f"v{root.data.version}, {len(root.data.dimensions)} dim(s), "
            f"{len(root.data.attributes)} attr(s)")
    return root

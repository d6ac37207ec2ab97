"""header.sch: the SCDL archive header (big-endian), field by field.

Layout and names follow the SCDL schema document (v0.0.9, "Archive Header Spec" and
"FeatureIndex Binary Format"); each field's `note` says where bionemo-scdl 0.1.3 writes or
reads something else. Validation rules of the document become error/warning nodes on the
offending bytes; nothing here raises.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from ..core.cursor import Cursor
from ..core.engine import run_parser
from ..core.fielddoc import doc
from ..core.node import ERROR, WARNING, Node
from .enums import ARRAY_DTYPE, ARRAY_FILES, BACKEND, DTYPE_NUMPY, ENDIANNESS, MAGIC, NUMPY_NAME
from .model import ArrayDesc, FeatureIndexDesc, Header

SPEC = "SCDL schema v0.0.9"
CORE = f"{SPEC}, Archive Header Spec: Core Header"
DESC = f"{SPEC}, Archive Header Spec: Array Descriptors"
FI = f"{SPEC}, FeatureIndex Binary Format"

# ---- field documentation (once, beside the fields) ------------------------------------------
FILE_DOC = doc(
    "The SCDL archive header: core header (16 bytes), array descriptors, then the "
    "feature-index extension. All integers big-endian (network order).", spec=SPEC,
    note="The document says 'Total header size = 16 + sum(array descriptor sizes)' and that "
         "array data follows the descriptors; bionemo-scdl always appends fi_count and the "
         "feature-index descriptors, and the arrays are separate files. The file ends after "
         "the last feature index: no padding, trailer or checksum.")
MAGIC_DOC = doc("Magic number: the 4 ASCII bytes 'SCDL' (0x5343444C).", spec=CORE)
VERSION_MAJOR_DOC = doc(
    "Major version of the SCDL schema (uint8).", spec=CORE,
    note="The document's table calls it version_maj. The document is titled v0.0.9, but "
         "bionemo-scdl 0.1.1-0.1.3 write 0.1.0 (CurrentSCDLVersion). serialize() refuses a "
         "major version > 0; deserialize() checks no version at all.")
VERSION_MINOR_DOC = doc("Minor version of the SCDL schema (uint8).", spec=CORE,
                        note="The document's table calls it version_min; written as 1 (0.1.0).")
VERSION_POINT_DOC = doc("Point version of the SCDL schema (uint8).", spec=CORE,
                        note="The document's table calls it version_pt; written as 0 (0.1.0).")
ENDIANNESS_DOC = doc(
    "Byte order of the header: enum, always 0x01 = NETWORK (big-endian).", spec=CORE,
    note="The library's Python enum is NETWORK = '!', but the byte written is 1; "
         "deserialize() rejects any other value (HeaderReader skips the check). It says "
         "nothing about the array files, which are written in native (little-endian) order.")
BACKEND_DOC = doc("Storage backend enum (uint32); MEMMAP_V0 = 1 is the only member.",
                  spec=f"{SPEC}, Backend Header")
ARRAY_COUNT_DOC = doc("Number of array descriptors that follow (uint32).", spec=CORE,
                      note="bionemo-scdl writes 3: DATA, ROWPTR, COLPTR. Neighbour arrays are "
                           "never listed.")
DESCRIPTORS_DOC = doc("The array descriptors, array_count of them.", spec=DESC)
ARRAY_DOC = doc("One array descriptor: name, element count, dtype, optional shape.", spec=DESC)
NAME_LEN_DOC = doc("Length of the following UTF-8 name in bytes (uint32, no terminator); "
                   "must be > 0.", spec=DESC)
ARRAY_NAME_DOC = doc(
    "The array's name, UTF-8, not NUL-terminated. Names must be unique.", spec=DESC,
    note="The document says 'array filename'; bionemo-scdl writes the FileNames member name "
         "(DATA, ROWPTR, COLPTR), not data.npy, and maps it back with FileNames[name], so "
         "any other name makes its load() fail with KeyError.")
LENGTH_DOC = doc("Number of elements in the array (uint64).", spec=DESC,
                 note="DATA and COLPTR: nnz; ROWPTR: rows + 1. After concatenating a dataset "
                      "re-opened from disk the library keeps the old header, so this can be "
                      "stale: the file size is the truth.")
DTYPE_DOC = doc(
    "Element type: ArrayDType enum (uint32): 1 UINT8, 2 UINT16, 3 UINT32, 4 UINT64, "
    "5 FLOAT16, 6 FLOAT32, 7 FLOAT64, 8 STRING, 9 FIXED_STRING.", spec=DESC,
    note="The document's prose says 'stored as a string based on an enum' and gives no "
         "numbers; the numbers come from scdl_constants.py. No signed types exist; a dtype "
         "the writer cannot map silently becomes FLOAT32_ARRAY.")
HAS_SHAPE_DOC = doc("Shape present flag (uint8): 0x00 or 0x01.", spec=DESC,
                    note="The reader takes any nonzero byte as 'present'. The dataset code "
                         "never writes a shape.")
SHAPE_DIMS_DOC = doc("Number of shape dimensions (uint32), only when has_shape; must be > 0.",
                     spec=DESC)
SHAPE_DOC = doc("The shape, shape_dims × uint32; every dimension must be > 0.", spec=DESC)
FI_BLOCK_DOC = doc(
    "Feature-index extension after the array descriptors: fi_count, then one descriptor per "
    "feature index.", spec=FI,
    note="Optional in the document; bionemo-scdl always writes fi_count (0 when there is "
         "none). Its reader reads this block only when at least 4 bytes remain, and ignores "
         "anything after the last feature index.")
FI_COUNT_DOC = doc("Number of feature indices (uint32).", spec=FI)
FI_DOC = doc("One feature-index descriptor: name, length, dtype, index files, optional shape.",
             spec=FI)
FI_NAME_DOC = doc("Feature index name, UTF-8 (var_features / obs_features as written); "
                  "unique, and no array may have the same name.", spec=FI)
FI_LENGTH_DOC = doc("Number of entries in the index (uint64).", spec=FI,
                    note="Written as the number of matrix ROWS the index covers "
                         "(number_of_rows()), not the number of features.")
FI_DTYPE_DOC = doc("ArrayDType enum (uint32) of the index.", spec=FI,
                   note="Always 8 (STRING_ARRAY) as written, even when the parquet columns "
                        "are integers.")
FILES_COUNT_DOC = doc("Number of index file paths that follow (uint32).", spec=FI,
                      note="0 when the index has no files; the dataset code writes 3 + one "
                           "per parquet block.")
INDEX_FILES_DOC = doc("The index file paths, files_count length-prefixed strings.", spec=FI,
                      note="Relative to the archive root, in the order cumulative_sum_index"
                           ".npy, labels.npy, version.npy, dataframe_*.parquet.")
PATH_LEN_DOC = doc("Length of the path in bytes (uint32); must be > 0.", spec=FI)
PATH_DOC = doc("Index file path, UTF-8, relative to the archive root.", spec=FI)
TRAILING_DOC = doc("Bytes after the last feature index; the library's reader ignores them.",
                   spec=FI)

# An array descriptor is at least name_len(4) + 1 name byte + length(8) + dtype(4) + has_shape(1).
MIN_ARRAY_DESC = 18
# A feature index is at least that plus files_count(4).
MIN_FI_DESC = 22


# ---- entry points ---------------------------------------------------------------------------
def parse_header_source(source, name: Optional[str] = None) -> Tuple[Node, Header]:
    """Annotate a header.sch source; returns its file node and what it says."""
    model = Header()
    root = run_parser(name or source.name, "file", source, lambda cur: _parse(cur, model),
                      endian=">")
    root.doc = FILE_DOC
    root.type = "SCDL header"
    model.node = root
    v = model.version
    root.display = f"SCDL header {v[0]}.{v[1]}.{v[2]}, {len(model.arrays)} arrays, " \
                   f"{len(model.feature_indices)} feature indices"
    return root, model


def parse_header_file(document, path: str) -> Tuple[Node, Header]:
    src = document.open_source(path)
    return parse_header_source(src, os.path.basename(path))


# ---- parsing --------------------------------------------------------------------------------
def _parse(cur: Cursor, model: Header) -> None:
    cur.need("magic", 4, "the magic number 'SCDL'")
    raw = cur.peek(4)
    m = cur.field("magic", 4, raw.decode("latin-1"), repr(raw.decode("latin-1")), "string",
                  MAGIC_DOC, "char[4]")
    if raw != MAGIC:
        m.mark(ERROR, f"magic: expected 'SCDL' (53 43 44 4c), found {raw!r} ({raw.hex(' ')})")

    major_node = cur.u8("version_major", VERSION_MAJOR_DOC)
    major = major_node.value
    minor = cur.u8("version_minor", VERSION_MINOR_DOC).value
    point = cur.u8("version_point", VERSION_POINT_DOC).value
    model.version = (major, minor, point)
    if major > 0:
        major_node.mark(
            WARNING, f"version {major}.{minor}.{point}: bionemo-scdl writes 0.1.0 and its "
                     f"serialize() refuses a major version > 0")

    e = cur.u8("endianness", ENDIANNESS_DOC, enum=ENDIANNESS)
    if e.value != 1:
        e.status, e.message = "ok", None
        e.mark(ERROR, f"endianness: expected 1 (NETWORK), found {e.value}; the reader "
                      f"rejects any other value")
    b = cur.u32("backend", BACKEND_DOC, enum=BACKEND)
    if b.value not in BACKEND:
        b.status, b.message = "ok", None
        b.mark(ERROR, f"backend: expected 1 (MEMMAP_V0), found {b.value}; the reader rejects "
                      f"unknown backends")
    count_node = cur.u32("array_count", ARRAY_COUNT_DOC)
    count = count_node.value
    if count * MIN_ARRAY_DESC > cur.remaining:
        count_node.mark(ERROR, f"array_count: {count} descriptors need at least "
                               f"{count * MIN_ARRAY_DESC} bytes, only {cur.remaining} remain")

    def descriptors(sub: Cursor) -> None:
        for i in range(count):  # a stop inside one keeps those before it
            model.arrays.append(_array_desc(sub, i + 1))

    grp = cur.group("Array descriptors", descriptors, doc=DESCRIPTORS_DOC)
    grp.display = f"{count} arrays"
    _check_unique(model.arrays, "array name")

    # Feature-index extension
    if cur.remaining == 0:
        grp.mark(WARNING, "no fi_count after the array descriptors: valid per the document "
                          "(16 + descriptors), but every bionemo-scdl writer appends fi_count")
        model.complete = True
        return
    if cur.remaining < 4:
        cur.fail("fi_count", f"fi_count: expected uint32 (4 bytes), found {cur.remaining} bytes "
                             f"before the end of file (bionemo-scdl's reader ignores them)")
    cur.group("Feature indices", lambda sub: _feature_indices(sub, model), doc=FI_BLOCK_DOC)
    fis = model.feature_indices
    _check_unique(fis, "feature index name")
    names = {a.name: a for a in model.arrays}
    for f in fis:
        if f.name in names and f.node is not None:
            f.node["name"].mark(ERROR, f"name conflict: feature index {f.name!r} has the name "
                                       f"of an array (the document forbids it)")
    if cur.remaining:
        cur.raw("trailing bytes", cur.remaining, TRAILING_DOC).mark(
            WARNING, f"{cur.remaining} bytes after the last feature index; the reader "
                     f"ignores them")
    model.complete = True


def _string(cur: Cursor, len_name: str, name: str, len_doc, str_doc) -> Node:
    n = cur.length("u32", len_name, 1, len_doc, what="bytes")
    if n.value == 0:
        n.mark(ERROR, f"{len_name}: must be > 0 (the document: all string lengths > 0)")
    s = cur.string(name, n.value, str_doc)
    if s.status == WARNING:  # invalid UTF-8: the document requires valid UTF-8, the reader fails
        s.status = ERROR
    return s


def _shape(cur: Cursor, what: str) -> Optional[Tuple[int, ...]]:
    flag = cur.boolean("has_shape", HAS_SHAPE_DOC)
    if not flag.value:
        return None
    dims = cur.length("u32", "shape_dims", 4, SHAPE_DIMS_DOC, what="dimensions")
    if dims.value == 0:
        dims.mark(ERROR, f"shape_dims: must be > 0 when has_shape = {int(bool(flag.value))} "
                         f"(the document: shape dimensions positive when specified)")
    arr = cur.array("shape", "u32", dims.value, SHAPE_DOC, item_name="dim {i}")
    shape = tuple(int(x) for x in arr.data)
    bad = [i for i, d in enumerate(shape) if d == 0]
    if bad:
        arr.mark(ERROR, f"shape of {what}: dimension {bad[0] + 1} is 0 at offset "
                        f"{arr.offset + 4 * bad[0]}; every dimension must be > 0")
    arr.display = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    return shape


def _array_desc(cur: Cursor, i: int) -> ArrayDesc:
    holder: Dict[str, object] = {}

    def body(sub: Cursor) -> None:
        name = _string(sub, "name_len", "name", NAME_LEN_DOC, ARRAY_NAME_DOC)
        holder["name"] = name
        if name.value and name.value not in ARRAY_FILES:
            name.mark(WARNING, f"name {name.value!r} is not a FileNames member (DATA, ROWPTR, "
                               f"COLPTR, ...): bionemo-scdl's load() fails with KeyError")
        holder["length"] = sub.u64("length", LENGTH_DOC)
        d = sub.u32("dtype", DTYPE_DOC, enum=ARRAY_DTYPE)
        if d.value not in ARRAY_DTYPE:
            d.status, d.message = "ok", None
            d.mark(ERROR, f"dtype: {d.value} is not an ArrayDType (1-9); the reader rejects it")
        holder["dtype"] = d
        holder["shape"] = _shape(sub, f"array {name.value!r}")

    g = cur.group(f"Array {i}", body, doc=ARRAY_DOC)
    return _finish_desc(g, holder)


def _finish_desc(g: Node, holder: dict) -> ArrayDesc:
    name = holder.get("name")
    length = holder.get("length")
    dtype = holder.get("dtype")
    desc = ArrayDesc(name.value if name is not None else "", None if length is None else
                     length.value, None if dtype is None else dtype.value,
                     None if dtype is None else DTYPE_NUMPY.get(dtype.value),
                     holder.get("shape"), g, length, dtype)
    if dtype is not None and length is not None:
        t = NUMPY_NAME.get(dtype.value, ARRAY_DTYPE.get(dtype.value, "?"))
        g.display = f"{desc.name}: {desc.length} × {t}"
    return desc


def _feature_indices(cur: Cursor, model: Header) -> None:
    cnt = cur.u32("fi_count", FI_COUNT_DOC)
    if cnt.value * MIN_FI_DESC > cur.remaining:
        cnt.mark(ERROR, f"fi_count: {cnt.value} feature indices need at least "
                        f"{cnt.value * MIN_FI_DESC} bytes, only {cur.remaining} remain")
    cur.node.display = f"{cnt.value} feature indices"

    for i in range(cnt.value):  # a stop inside one keeps those before it
        model.feature_indices.append(_fi_desc(cur, i + 1))


def _fi_desc(cur: Cursor, i: int) -> FeatureIndexDesc:
    holder: Dict[str, Any] = {"files": [], "file_nodes": []}

    def body(sub: Cursor) -> None:
        holder["name"] = _string(sub, "name_len", "name", NAME_LEN_DOC, FI_NAME_DOC)
        holder["length"] = sub.u64("length", FI_LENGTH_DOC)
        d = sub.u32("dtype", FI_DTYPE_DOC, enum=ARRAY_DTYPE)
        if d.value not in ARRAY_DTYPE:
            d.status, d.message = "ok", None
            d.mark(ERROR, f"dtype: {d.value} is not an ArrayDType (1-9); the reader rejects it")
        holder["dtype"] = d
        fc = sub.length("u32", "files_count", 4, FILES_COUNT_DOC, what="paths")

        def files(fs: Cursor) -> None:
            for k in range(fc.value):
                def one(p: Cursor) -> None:
                    s = _string(p, "path_len", "path", PATH_LEN_DOC, PATH_DOC)
                    holder["files"].append(s.value)
                    holder["file_nodes"].append(s)
                    p.node.display = repr(s.value)

                fs.group(f"Index file {k + 1}", one)

        g = sub.group("index_files", files, doc=INDEX_FILES_DOC)
        g.display = f"{fc.value} paths"
        holder["shape"] = _shape(sub, f"feature index {holder['name'].value!r}")

    g = cur.group(f"Feature index {i}", body, doc=FI_DOC)
    name = holder.get("name")
    length = holder.get("length")
    dtype = holder.get("dtype")
    fi = FeatureIndexDesc(name.value if name is not None else "",
                          length.value if length is not None else 0,
                          dtype.value if dtype is not None else 0, list(holder["files"]),
                          holder.get("shape"), g, length, list(holder["file_nodes"]))
    if name is not None and length is not None:
        g.display = f"{fi.name}: {fi.length} rows, {len(fi.files)} files"
    return fi


def _check_unique(items: List, what: str) -> None:
    first: Dict[str, Node] = {}
    for it in items:
        node = it.node.find("name") if it.node is not None else None
        if node is None:
            continue
        if it.name in first:
            where = first[it.name].parent
            node.mark(ERROR, f"duplicate {what} {it.name!r} (first in "
                             f"{where.name if where is not None else '?'}); names must be unique")
        else:
            first[it.name] = node

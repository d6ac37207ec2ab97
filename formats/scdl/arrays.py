"""The raw array files of an SCDL archive (data.npy, row_ptr.npy, col_ptr.npy, neighbours).

Despite the .npy name they have NO NPY header: the bytes are the array itself, in native
(little-endian) order, typed by the dtype that header.sch gives (or the library's defaults).
Whole items are typed lazily; a size that disagrees with the header's length is an error
at the first byte that disagrees, naming both files.
"""
from __future__ import annotations

import os
from typing import Tuple

import numpy as np

from ..core.cursor import Cursor, ParseStop
from ..core.fielddoc import doc
from ..core.findings import SCDL_LENGTHS
from ..core.node import ERROR, WARNING, LazyChildren, Node, hex_preview
from ..core.npy import typed_items
from .enums import ARRAY_DTYPE, HEADER_FILE
from .model import ArrayDesc, ArrayFile

FILE_DOC = doc(
    "A raw array file: length × dtype items, no header, little-endian (native order of the "
    "writer). Written by np.memmap / tobytes().",
    spec="SCDL schema v0.0.9 (arrays named by the header)",
    note="The name ends in .npy, but there is no NPY header. Nothing in the archive records "
         "the byte order: header.sch is big-endian, the arrays are not.")
ITEMS_DOC = {
    "DATA": doc("The nonzero values of the CSR matrix, row after row (nnz items)."),
    "ROWPTR": doc("CSR row pointers (rows + 1 items): row r is data[ROWPTR[r]:ROWPTR[r+1]]; "
                  "non-decreasing, starts at 0, ends at nnz.",
                  note="dtype = smallest_uint_dtype(nnz) in 0.1.3 (uint8 possible); "
                       "0.1.2 and older always uint64."),
    "COLPTR": doc("CSR column indices (nnz items), each below the number of features of the "
                  "row's block.",
                  note="dtype = smallest_uint_dtype(n_cols - 1) in 0.1.3; 0.1.2 and older "
                       "always uint32."),
    "NEIGHBOR_INDICES_PTR": doc("Neighbour graph CSR row pointers (uint64, hard-coded).",
                                note="Not listed in header.sch."),
    "NEIGHBOR_INDICES": doc("Neighbour graph column indices (uint32, hard-coded).",
                            note="Not listed in header.sch."),
    "NEIGHBOR_VALUES": doc("Neighbour graph weights (float32, hard-coded).",
                           note="Not listed in header.sch."),
}
BEYOND_DOC = doc("Items present in the file beyond the length header.sch records. The "
                 "library's memmap reader reads them anyway (it ignores the length).")
PARTIAL_DOC = doc("Bytes at the end of the file that do not make a whole item of the dtype.")
UNTYPED_DOC = doc("Array bytes whose dtype has no fixed numeric layout (STRING_ARRAY, "
                  "FIXED_STRING_ARRAY or an unknown dtype): shown as bytes.")


def _dtype_text(desc: ArrayDesc) -> str:
    if desc.dtype is not None:
        return f"{np.dtype(desc.numpy).name}" if desc.numpy else ARRAY_DTYPE.get(desc.dtype, "?")
    return np.dtype(desc.numpy).name if desc.numpy else "?"


def parse_array_file(document, path: str, desc: ArrayDesc) -> Tuple[Node, ArrayFile]:
    src = document.open_source(path)
    fname = os.path.basename(path)
    node = Node(fname, "file", src, 0, src.size, doc=FILE_DOC, type="raw array")
    af = ArrayFile(desc, path, src, node)
    cur = Cursor(src, 0, src.size, node, "<")
    try:
        _type(cur, desc, af, fname)
    except ParseStop:
        pass
    return node, af


def _type(cur: Cursor, desc: ArrayDesc, af: ArrayFile, fname: str) -> None:
    src = cur.source
    if not desc.numpy:
        if src.size:
            dname = ARRAY_DTYPE.get(desc.dtype) if desc.dtype is not None else None
            cur.raw(desc.name, src.size, UNTYPED_DOC).mark(
                WARNING, f"{desc.name}: dtype {dname or desc.dtype} has no numeric layout; "
                         f"bytes shown untyped")
        return
    dt = np.dtype(desc.numpy).newbyteorder("<")
    isz = dt.itemsize
    whole = src.size // isz
    af.items = src.array(0, whole, dt)
    declared = desc.length
    first = whole if declared is None else min(declared, whole)
    label = _dtype_text(desc)
    where = f"({desc.source_of_dtype})" if desc.source_of_dtype != HEADER_FILE else ""
    arr = typed_items(cur, desc.name, dt, first, ITEMS_DOC.get(desc.name), item_name="[{i0}]")
    arr.display = f"{label}{(' ' + where) if where else ''}: {arr.display}"
    node = cur.node
    node.display = f"{desc.name}: {whole} × {label}"
    if declared is not None and declared * isz != src.size:
        msg = (f"{desc.name}: {HEADER_FILE} says {declared} × {label} = {declared * isz} bytes, "
               f"but {fname} has {src.size} bytes ({whole} × {label}"
               f"{f' + {src.size % isz} bytes' if src.size % isz else ''}); {HEADER_FILE} is "
               f"stale or {fname} was changed (bionemo-scdl keeps a loaded header when it "
               f"concatenates or casts)")
        if desc.length_node is not None:
            desc.length_node.mark(ERROR, msg).code = SCDL_LENGTHS
        if whole > declared:
            extra = typed_items(cur, "beyond header length", dt, whole - declared, BEYOND_DOC,
                                item_name="[{i0}]")
            # items keep their index in the whole file
            lazy = extra.children
            if isinstance(lazy, LazyChildren):  # typed_items builds its items lazily
                base_factory = lazy.factory

                def renamed(i, f=base_factory, off=declared):
                    n = f(i)
                    n.name = f"[{i + off}]"
                    return n
                lazy.factory = renamed
            extra.mark(ERROR, msg)
        elif whole < declared:
            arr.mark(ERROR, msg)
            node.add(Node("missing items", "error", src, cur.pos, 0, status=ERROR,
                          message=msg + f"; the file ends {declared - whole} items early"))
    if cur.remaining:
        p = cur.raw("partial item", cur.remaining, PARTIAL_DOC)
        p.mark(ERROR, f"{desc.name}: {p.size} bytes at the end of {fname} are not a whole "
                      f"{label} item ({isz} bytes)")
        p.display = hex_preview(src.read(p.offset, 16))

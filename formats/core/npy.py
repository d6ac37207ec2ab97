"""NPY files (numpy.lib.format): magic, version, header length, header dict, typed data.

Also `typed_items`: a run of numpy-typed items as one node with lazy per-item children
(used for NPY data and for the raw arrays of other formats).
"""
from __future__ import annotations

import ast
import math
import os
from typing import Dict, Optional

import numpy as np

from .cursor import MAX_VALUE_LIST, Cursor, format_scalar
from .engine import run_parser
from .fielddoc import FieldDoc, doc
from .node import ERROR, WARNING, LazyChildren, Node, hex_preview
from .unicode import safe_unicode

MAGIC = b"\x93NUMPY"
# numpy's own bound on the header it will evaluate (np.load's max_header_size default):
# a larger one is not read as a literal, which also bounds literal_eval's time and memory.
MAX_HEADER_DICT = 10000
SPEC = "numpy.lib.format (NPY format versions 1.0-3.0)"

MAGIC_DOC = doc("Magic string: byte 0x93 then the ASCII letters 'NUMPY'.", spec=SPEC)
MAJOR_DOC = doc("Major version of the NPY format (uint8): 1, 2 or 3.", spec=SPEC,
                note="2.0 widens HEADER_LEN to 4 bytes; 3.0 allows UTF-8 in the header.")
MINOR_DOC = doc("Minor version of the NPY format (uint8), 0.", spec=SPEC)
HEADER_LEN_DOC = doc("Length of the header that follows, little-endian: uint16 in version 1, "
                     "uint32 in versions 2 and 3.", spec=SPEC)
HEADER_DOC = doc("The header: a Python dict literal, padded with spaces and ended by a "
                 "newline so that the data starts at a multiple of 64 bytes.", spec=SPEC)
DICT_DOC = doc("Python literal dict with keys 'descr' (the dtype, as numpy's descr), "
               "'fortran_order' (bool) and 'shape' (tuple of ints).", spec=SPEC)
PADDING_DOC = doc("Spaces (0x20) that align the data to 64 bytes (16 in old writers).", spec=SPEC)
NEWLINE_DOC = doc("The newline (0x0A) that ends the header.", spec=SPEC)
DATA_DOC = doc("The array's items: prod(shape) items of 'descr', in C order (Fortran order "
               "when fortran_order is True).", spec=SPEC)
PICKLE_DOC = doc("An object array, stored as a pickle stream (np.save with allow_pickle); "
                 "shown as bytes, never unpickled.", spec=SPEC)
TRAILING_DOC = doc("Bytes after prod(shape) items; numpy's reader ignores them.", spec=SPEC)


# ---- typed runs of items ----------------------------------------------------------------------
def item_value(x):
    """A numpy scalar as a JSON-able value."""
    if isinstance(x, np.str_):
        return str(x)
    if isinstance(x, np.bytes_):
        return None
    if isinstance(x, np.void):
        return [item_value(v) for v in x.tolist()] if x.dtype.names else None
    v = x.item() if hasattr(x, "item") else x
    if isinstance(v, complex):
        return str(v)
    return v


def item_display(x) -> str:
    if isinstance(x, np.bytes_):
        return hex_preview(bytes(x), 16) or "''"
    if isinstance(x, np.floating) and x.itemsize < 8 and np.isfinite(x):
        return str(x)  # the shortest text that reads back as the same float16/float32
    v = item_value(x)
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, float):
        return format_scalar(v)
    return str(v)


def typed_items(cur: Cursor, name: str, dtype, count: int, doc_: Optional[FieldDoc] = None,
                item_name: str = "{i}", item_doc: Optional[FieldDoc] = None,
                kind: str = "array") -> Node:
    """`count` items of numpy `dtype` at the cursor as one node with lazy children."""
    dt = np.dtype(dtype)
    size = dt.itemsize
    cur.need(name, count * size, f"{count} × {dt.str}")
    src, base = cur.source, cur.pos
    arr = src.array(base, count, dt) if size else np.zeros(count, dt)
    arr = safe_unicode(arr)  # invalid UTF-32 code points would make broken str objects
    item_kind = "string" if dt.kind in "US" else "field"
    label = _type_label(dt)

    def make(i: int) -> Node:
        x = arr[i]
        return Node(item_name.format(i=i + 1, i0=i), item_kind, src, base + i * size, size,
                    value=item_value(x), display=item_display(x), type=label, doc=item_doc)

    value = None
    if count <= MAX_VALUE_LIST and dt.kind in "uifbU":
        value = [item_value(x) for x in arr] if dt.kind in "U" else arr.tolist()
    n = Node(name, kind, src, base, count * size, value=value, display=summary(arr),
             doc=doc_, type=f"{label}[{count}]", data=arr)
    n.set_lazy(LazyChildren(count, make, elements=True))
    cur.node.add(n)
    cur.pos += count * size
    return n


def summary(arr: np.ndarray) -> str:
    count = len(arr)
    if count == 0:
        return "[]"
    head = ", ".join(item_display(x) for x in arr[:8])
    return f"[{head}{', …' if count > 8 else ''}] ({count} items)"


def _type_label(dt: np.dtype) -> str:
    if dt.kind == "U":
        return f"UTF-32LE[{dt.itemsize // 4}]" if dt.byteorder != ">" else \
            f"UTF-32BE[{dt.itemsize // 4}]"
    order = {"<": "le", ">": "be"}.get(dt.byteorder, "")
    if dt.byteorder == "=":
        order = "le" if np.little_endian else "be"
    return dt.name + (f" {order}" if order and dt.itemsize > 1 else "")


# ---- NPY files --------------------------------------------------------------------------------
def sniff(head: bytes) -> bool:
    return head.startswith(MAGIC)


def parse_npy_source(source, name: Optional[str] = None) -> Node:
    root = run_parser(name or source.name, "file", source, _parse)
    root.type = "NPY"
    return root


def open_npy(document, path: str) -> Node:
    return parse_npy_source(document.open_source(path), os.path.basename(path))


def _parse(cur: Cursor) -> None:
    cur.need("magic", 6, "the NPY magic string \\x93NUMPY")
    raw = cur.peek(6)
    m = cur.field("magic", 6, raw.decode("latin-1"), repr(raw), "string", MAGIC_DOC, "char[6]")
    if raw != MAGIC:
        m.mark(ERROR, f"magic: expected b'\\x93NUMPY', found {raw!r}")
        cur.fail("not NPY", "the rest of the file: not an NPY file")
    major = cur.u8("major_version", MAJOR_DOC)
    cur.u8("minor_version", MINOR_DOC)
    if major.value == 1:
        hl = cur.length("u16", "HEADER_LEN", 1, HEADER_LEN_DOC, what="bytes")
    elif major.value in (2, 3):
        hl = cur.length("u32", "HEADER_LEN", 1, HEADER_LEN_DOC, what="bytes")
    else:
        major.mark(ERROR, f"major_version: expected 1, 2 or 3, found {major.value}")
        cur.fail("unknown NPY version", "bytes of an NPY version this parser does not know")
    encoding = "utf-8" if major.value >= 3 else "latin-1"
    info: Dict[str, object] = {}
    cur.group("header", lambda sub: _header(sub, hl.value, encoding, info), size=hl.value,
              doc=HEADER_DOC)
    if "dtype" not in info:
        if cur.remaining:
            cur.raw("data", cur.remaining, DATA_DOC).mark(
                WARNING, "data not typed: the header could not be read")
        return
    _data(cur, info)


def _header(cur: Cursor, size: int, encoding: str, info: dict) -> None:
    raw = cur.peek(size)
    stripped = raw.rstrip(b"\n")
    text_b = stripped.rstrip(b" ")
    text = text_b.decode(encoding, errors="replace")
    d = cur.field("dict", len(text_b), text, text, "string", DICT_DOC, f"char[{len(text_b)}]")
    if len(stripped) > len(text_b):
        cur.field("padding", len(stripped) - len(text_b), None,
                  f"{len(stripped) - len(text_b)} spaces", "padding", PADDING_DOC)
    if len(raw) > len(stripped):
        nl = cur.field("newline", len(raw) - len(stripped), None, repr("\n"), "padding",
                       NEWLINE_DOC)
        if len(raw) - len(stripped) > 1:
            nl.mark(WARNING, "more than one newline at the end of the header")
    else:
        d.mark(WARNING, "header: does not end with a newline")
    if len(text_b) > MAX_HEADER_DICT:
        d.mark(ERROR, f"header dict: {len(text_b)} bytes; numpy refuses headers over "
                      f"{MAX_HEADER_DICT} bytes (max_header_size), so it is not evaluated")
        return
    try:
        hd = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
        d.mark(ERROR, f"header dict: not a Python literal ({type(e).__name__}: {e})")
        return
    if not isinstance(hd, dict) or not {"descr", "fortran_order", "shape"} <= set(hd):
        d.mark(ERROR, "header dict: expected keys 'descr', 'fortran_order', 'shape'")
        return
    shape = hd["shape"]
    if not isinstance(shape, tuple) or not all(isinstance(x, int) and x >= 0 for x in shape):
        d.mark(ERROR, f"header dict: shape must be a tuple of non-negative ints, found {shape!r}")
        return
    try:
        dt = np.lib.format.descr_to_dtype(hd["descr"])
    except Exception as e:
        d.mark(ERROR, f"header dict: descr {hd['descr']!r} is not a numpy dtype ({e})")
        return
    d.data = hd
    info.update(dtype=dt, shape=shape, fortran=bool(hd["fortran_order"]))
    order = ", Fortran order" if info["fortran"] else ""
    d.display = f"{text}  → {dt.str} {shape}{order}"


def _data(cur: Cursor, info: dict) -> None:
    dt, shape = info["dtype"], info["shape"]
    count = math.prod(shape)
    if dt.hasobject:
        n = cur.raw("data", cur.remaining, PICKLE_DOC, kind="payload")
        n.display = f"pickle stream, {n.size} bytes (object array {shape}; not unpickled)"
        return
    size = dt.itemsize
    need = count * size
    fit = count if need <= cur.remaining else (cur.remaining // size if size else count)
    n = typed_items(cur, "data", dt, fit, DATA_DOC, item_name="[{i0}]")
    if len(shape) == 0 and fit == 1:
        n.display = item_display(n.data[0])
    elif info["fortran"]:
        n.display = f"{n.display} (Fortran order)"
    if fit < count:
        cur.fail("data (truncated)", f"data: shape {shape} of {dt.str} needs {need} bytes, "
                                     f"found {fit * size + cur.remaining}")
    if cur.remaining:
        cur.raw("trailing bytes", cur.remaining, TRAILING_DOC).mark(
            WARNING, f"{cur.remaining} bytes after the {count} items of the array")

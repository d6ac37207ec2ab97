"""The decoded bytes of a chunk as records, each record and field a node with its value.

Records are built lazily (a million-record chunk costs nothing until shown). Records of an
edge chunk that lie outside the array carry a note (they are padding: fill records).
`check_byte_order` finds multi-byte fields whose bytes read plausibly only big-endian while
the metadata says little (zarr 3.1.6 writes such v3 arrays), and the field nodes then show
both readings.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple  # noqa: F401

import numpy as np

from ..core.fielddoc import FieldDoc, doc
from ..core.node import ERROR, WARNING, LazyChildren, Node, hex_preview
from ..core.unicode import invalid_count
from .dtype import Field, RecordType, Struct, to_python

D_RECORDS = doc("Records: the decoded chunk, prod(chunk shape) packed records in storage "
                "order (C, or F for v2 order 'F' / a v3 transpose)", spec="FORMAT_NOTES §3")
D_RECORD = doc("One record: the struct's fields back to back, no padding", spec="FORMAT_NOTES §3")
_FIELD_DOCS: Dict[Tuple[str, str, int], FieldDoc] = {}
SUBARRAY_EAGER = 64


def field_doc(f: Field) -> FieldDoc:
    key = (f.name, f.type_text(), f.offset)
    d = _FIELD_DOCS.get(key)
    if d is None:
        text = {"U": "UTF-32 text, NUL-padded", "S": "bytes, NUL-padded (shown latin-1)",
                "V": "raw bytes", "b": "bool (one byte, 0/1)"}.get(f.base.kind, "number")
        order = {"<": "little-endian", ">": "big-endian"}.get(f.base.byteorder, "")
        d = doc(f"Field {f.name}: {f.type_text()} ({text}{', ' + order if order else ''}), "
                f"bytes {f.offset}..{f.offset + f.size - 1} of the record",
                note=f"declared as {f.written!r}" if f.written else None)
        if len(_FIELD_DOCS) < 10_000:
            _FIELD_DOCS[key] = d
    return d


def _kind(f: Field) -> str:
    return {"U": "string", "S": "string", "V": "bytes", "b": "flag"}.get(f.base.kind, "field")


def _text(v, bits: int = 64) -> str:
    from ..core.cursor import format_scalar
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, list):
        inner = ", ".join(_text(x, bits) for x in v[:8])
        return f"[{inner}{', …' if len(v) > 8 else ''}]"
    return format_scalar(v, bits)


def _float_bits(f: Field) -> int:
    """Display precision of a field's floats (complex parts count half the item size)."""
    if f.base.kind == "f":
        return f.base.itemsize * 8
    if f.base.kind == "c":
        return f.base.itemsize * 4
    return 64


class RecordView:
    """Builds record nodes over `source` for one chunk (or the fill record)."""

    def __init__(self, rt: RecordType, source, count: int, base: int = 0,
                 coords_fn=None, swapped: Optional[set] = None):
        self.rt = rt
        self.src = source
        self.count = count
        self.base = base
        self.coords_fn = coords_fn          # i -> (array coords, inside?) or None
        self.swapped = swapped or set()     # field names shown with their big-endian reading

    def value(self, f: Field, off: int):
        if f.base.itemsize == 0:  # "|V0", "<U0": numpy cannot make items of 0 bytes
            return [] if f.shape else ("" if f.base.kind in "USV" else None)
        raw = self.src.read(off, f.size)
        arr = np.frombuffer(raw, dtype=f.base, count=f.count)
        if f.shape:
            return to_python(arr.reshape(f.shape))
        return to_python(arr[0]) if f.base.kind != "V" else raw.hex()

    def leaf(self, f: Field, rec_off: int, name: Optional[str] = None) -> Node:
        """The node of field `f` of the record at `rec_off`; a value that cannot be decoded
        is one error node (the record's other fields are still shown)."""
        try:
            node = self._leaf(f, rec_off, name)
        except Exception as e:  # noqa: BLE001 - one bad field, never the whole tree
            off = rec_off + f.offset
            return Node(name or f.leaf_name, _kind(f), self.src, off, f.size, status=ERROR,
                        message=f"field {f.name} ({f.type_text()}) cannot be decoded: "
                                f"{type(e).__name__}: {e}", type=f.type_text(),
                        display=hex_preview(self.src.read(off, 16)), doc=field_doc(f))
        if f.base.itemsize == 0 and node.status == "ok":
            node.mark(WARNING, f"field {f.name} ({f.type_text()}) has 0 bytes: it holds nothing")
        elif f.base.kind == "U" and f.size and node.status == "ok":
            bad = invalid_count(np.frombuffer(self.src.read(rec_off + f.offset, f.size),
                                              dtype=f.base, count=f.count))
            if bad:
                node.mark(ERROR, f"field {f.name}: {bad} UTF-32 code unit(s) that are not "
                                 f"Unicode characters (shown as U+FFFD)")
        return node

    def _leaf(self, f: Field, rec_off: int, name: Optional[str] = None) -> Node:
        off = rec_off + f.offset
        v = self.value(f, off)
        kind = _kind(f)
        if f.shape and f.base.itemsize:
            n = Node(name or f.leaf_name, "array", self.src, off, f.size, value=v,
                     display=_text(v, _float_bits(f)), doc=field_doc(f), type=f.type_text())
            esize = f.base.itemsize

            def elem(i: int, off=off, shape=f.shape) -> Node:
                idx = np.unravel_index(i, shape)
                return self.leaf(Field(f.name, 0, f.base, (), f.written), off + i * esize,
                                 "[" + ", ".join(str(int(x)) for x in idx) + "]")
            if f.count <= SUBARRAY_EAGER:
                for i in range(f.count):
                    n.add(elem(i))
            else:
                n.set_lazy(LazyChildren(f.count, elem, elements=True))
            return n
        if f.base.kind == "V":
            n = Node(name or f.leaf_name, "bytes", self.src, off, f.size, value=None,
                     display=hex_preview(self.src.read(off, 16)) if f.size else "(empty)",
                     doc=field_doc(f), type=f.type_text())
            return n
        disp = _text(v, _float_bits(f))
        if f.name in self.swapped and f.base.itemsize > 1:
            other = np.frombuffer(self.src.read(off, f.size),
                                  dtype=f.base.newbyteorder(">" if f.base.byteorder != ">" else "<"))
            disp += f" (big-endian reading: {_text(to_python(other[0]), _float_bits(f))})"
        return Node(name or f.leaf_name, kind, self.src, off, f.size, value=v, display=disp,
                    doc=field_doc(f), type=f.type_text())

    def struct(self, st: Struct, rec_off: int) -> List[Node]:
        out = []
        for m in st.members:
            if isinstance(m, Struct):
                kids = self.struct(m, rec_off)
                n = Node(m.name.rsplit(".", 1)[-1], "struct", self.src, rec_off + m.offset,
                         m.size, children=kids, doc=D_RECORD)
                n.value = {k.name: k.value for k in kids}
                n.display = "(" + ", ".join(k.display_text() for k in kids) + ")"
                out.append(n)
            else:
                out.append(self.leaf(m, rec_off))
        return out

    def record(self, i: int, name: Optional[str] = None) -> Node:
        off = self.base + i * self.rt.itemsize
        kids = self.struct(self.rt.root, off)
        if not self.rt.is_struct:
            k = kids[0]
            n = Node(name or f"Record {i + 1}", k.kind, self.src, off, self.rt.itemsize,
                     value=k.value, display=k.display, doc=k.doc, type=k.type)
            if k.child_count():
                lazy = k.children
                if isinstance(lazy, LazyChildren):
                    n.set_lazy(lazy)
                else:
                    for c in list(lazy):
                        n.add(c)
        else:
            n = Node(name or f"Record {i + 1}", "struct", self.src, off, self.rt.itemsize,
                     children=kids, doc=D_RECORD)
            n.value = {k.name: k.value for k in kids}
            n.display = "(" + ", ".join(k.display_text() for k in kids) + ")"
        if self.coords_fn is not None:
            coords, inside = self.coords_fn(i)
            where = "[" + ", ".join(map(str, coords)) + "]"
            if inside:
                n.display = f"{where} {n.display}"
            else:
                n.display = f"{where} (outside the array) {n.display}"
                n.message = ("outside the array: padding of an edge chunk (the writer stores "
                             "edge chunks full size); not part of the array's values")
        return n

    def node(self, name: str = "Records") -> Node:
        size = self.count * self.rt.itemsize
        n = Node(name, "cells", self.src, self.base, size, doc=D_RECORDS, data=self,
                 display=f"{self.count} records × {self.rt.itemsize} B")
        n.set_lazy(LazyChildren(self.count, self.record, elements=True))
        return n


# ---- byte-order heuristic -------------------------------------------------------------------
def _plausible(arr: np.ndarray) -> np.ndarray:
    k = arr.dtype.kind
    if k == "f":
        with np.errstate(all="ignore"):
            a = np.abs(arr.astype(np.float64))
            return np.isfinite(a) & ((a == 0) | ((a > 1e-30) & (a < 1e30)))
    # integers: the most significant byte is a sign extension (small magnitude)
    size = arr.dtype.itemsize
    le = arr.astype(arr.dtype.newbyteorder("<"))
    top = le.view(np.uint8).reshape(-1, size)[:, -1]
    return (top == 0) | (top == 0xFF)


def check_byte_order(rt: RecordType, data: bytes, count: int,
                     inside: Optional[np.ndarray] = None) -> List[Tuple[Field, int, object, object]]:
    """Fields whose bytes look big-endian while read little-endian:
    [(field, first record index, little reading, big reading)]."""
    found: List[Tuple[Field, int, object, object]] = []
    if count <= 0:
        return found
    recs = np.frombuffer(data, dtype=np.uint8, count=count * rt.itemsize).reshape(count, -1)
    if inside is not None:
        idx = np.nonzero(inside)[0]
    else:
        idx = np.arange(count)
    for f in rt.leaves():
        if f.base.kind not in "iuf" or f.base.itemsize < 2 or f.base.byteorder == ">" or f.shape:
            continue
        raw = np.ascontiguousarray(recs[idx, f.offset:f.offset + f.size])
        nonzero = raw.any(axis=1)
        if nonzero.sum() < 2:
            continue
        raw = raw[nonzero]
        le = raw.view(f.base.newbyteorder("<")).reshape(-1)
        be = raw.view(f.base.newbyteorder(">")).reshape(-1)
        p_le, p_be = _plausible(le), _plausible(be)
        if p_be.mean() >= 0.9 and p_le.mean() <= 0.5 and (p_be & ~p_le).sum() >= 2:
            first = int(np.nonzero(p_be & ~p_le)[0][0])
            rec = int(idx[np.nonzero(nonzero)[0][first]])
            found.append((f, rec, to_python(le[first]), to_python(be[first])))
    return found


def chunk_coords(meta, chunk: Sequence[int]):
    """i (storage order) -> (array coords, inside the array?) for a chunk at grid `chunk`."""
    sshape = meta.storage_shape()
    perm = meta.perm

    def fn(i: int):
        s = np.unravel_index(i, sshape) if sshape else ()
        local = [0] * len(perm)
        for k, p in enumerate(perm):
            local[p] = int(s[k])
        coords = [c * n + loc for c, n, loc in zip(chunk, meta.chunks, local)]
        return coords, all(c < s for c, s in zip(coords, meta.shape))
    return fn


def inside_mask(meta, chunk: Sequence[int], count: int) -> np.ndarray:
    """Boolean per record (storage order) of the first `count` records: inside the array.
    `count` is what the decoded bytes hold: the metadata's chunk shape is untrusted (a
    damaged `chunks` of 2^31 must not make a grid of 2^31 records for 10 present)."""
    if not meta.shape:
        return np.ones(min(1, count), dtype=bool)
    sshape = meta.storage_shape()
    count = max(0, min(count, math.prod(sshape)))
    grids = np.unravel_index(np.arange(count), sshape) if count else \
        tuple(np.zeros(0, dtype=np.intp) for _ in sshape)
    ok = np.ones(count, dtype=bool)
    for k, p in enumerate(meta.perm):
        ok &= chunk[p] * meta.chunks[p] + grids[k] < meta.shape[p]
    return ok


def records_into(parent: Node, meta, src, chunk: Optional[Sequence[int]]) -> None:
    """Add the Records node (and length/byte-order diagnostics) for decoded chunk `src`."""
    if meta.vlen:
        from .vlen import items_into
        items_into(parent, meta, src, chunk)
        return
    rt = meta.rtype
    nrec = meta.records_per_chunk
    expected = nrec * rt.itemsize
    n = src.size
    fit = min(nrec, n // rt.itemsize)
    swapped = set()
    warn = None
    if meta.zarr_format == 3 and meta.endian is None and fit:
        mask = inside_mask(meta, chunk, fit) if chunk is not None else None
        hits = check_byte_order(rt, src.read(0, fit * rt.itemsize), fit, mask)
        if hits:
            swapped = {f.name for f, *_ in hits}
            f, rec, le, be = hits[0]
            names = ", ".join(repr(h[0].name) for h in hits)
            warn = Node("byte order", "error", src, rec * rt.itemsize + f.offset, f.size,
                        status=WARNING,
                        message=f"field(s) {names} look big-endian: the bytes codec gives no "
                                f"endian, so they are read little-endian, but e.g. record "
                                f"{rec + 1} {f.name} reads {le!r} little-endian and {be!r} "
                                f"big-endian (zarr-python 3.1.6 writes big-endian struct fields "
                                f"under such metadata and reads them back little-endian); "
                                f"field nodes show both readings",
                        display=hex_preview(src.read(rec * rt.itemsize + f.offset, f.size)))
    view = RecordView(rt, src, fit, 0, chunk_coords(meta, chunk) if chunk is not None else None,
                      swapped)
    rn = view.node()
    parent.add(rn)
    if warn is not None:
        parent.add(warn)
    if n != expected:
        msg = (f"decoded chunk has {n} bytes; the chunk shape {list(meta.chunks)} holds "
               f"{nrec} records × {rt.itemsize} B = {expected} bytes")
        if n > expected:
            parent.add(Node("extra bytes", "error", src, expected, n - expected, status=ERROR,
                            message=msg + f" ({n - expected} bytes too many)",
                            display=hex_preview(src.read(expected, 16))))
        else:
            tail = n - fit * rt.itemsize
            parent.add(Node("missing records", "error", src, fit * rt.itemsize, tail,
                            status=ERROR, message=msg + f" ({expected - n} bytes missing)",
                            display=hex_preview(src.read(fit * rt.itemsize, 16)) if tail else ""))

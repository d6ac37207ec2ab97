"""Struct data types: the packed field table of a record, from every metadata form.

- v2: a numpy `descr` list (`[name, typestr]`, `[name, typestr, shape]`, `[name, [nested]]`),
  byte order per field in the typestr (`<`, `>`, `|`).
- v3 legacy `structured` (what zarr-python 3.1.6 writes): `fields: [[name, type], ...]`,
  named field types (`int32`, `fixed_length_utf32{length_bytes}`, ...).
- v3 extension draft `struct`: `fields: [{"name": ..., "data_type": ...}, ...]`.

Every form becomes a `Struct` of `Field` leaves with packed offsets (no padding: a record is
the fields back to back, nested structs flattened depth-first). `numpy_dtype()` gives the
matching numpy dtype (explicit offsets), which decodes whole chunks at once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, List, Optional, Tuple, Union

import numpy as np

from ..core.fielddoc import doc
from ..core.unicode import safe_unicode

D_DTYPE_V2 = doc("dtype: the numpy `descr` of the records: a list of [name, typestr] or "
                 "[name, typestr, shape] or [name, [nested fields]]; the typestr carries the "
                 "byte order (<, >, |)", spec="zarr v2 spec: data type encoding",
                 note="zarr 3.1.6 writes nested v2 dtypes but cannot re-open them")
D_DTYPE_V3 = doc("data_type: `structured` (zarr-python 3.1.6, fields as [name, type] tuples) or "
                 "`struct` (extension draft, fields as {name, data_type} objects)",
                 spec="zarr v3 struct dtype extension draft / FORMAT_NOTES §2")
D_FIELD = doc("One struct field: its name and type; it sits at the sum of the sizes of the "
              "fields before it (records are packed, nested structs flattened depth-first)",
              spec="FORMAT_NOTES §3")

# v3 core names -> numpy kind+size (byte order added from the bytes codec)
V3_SCALARS = {
    "bool": "b1", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "float16": "f2", "float32": "f4", "float64": "f8",
    "complex64": "c8", "complex128": "c16",
}
V3_SIZED = {  # named types with configuration.length_bytes
    "fixed_length_utf32": "U", "null_terminated_bytes": "S", "raw_bytes": "V",
    "fixed_length_ascii": "S", "fixed_length_bytes": "V",
}
OBJECT_TYPES = {"string", "variable_length_utf8", "variable_length_bytes", "bytes", "object"}
_TYPESTR = re.compile(r"^[<>|=]?(?:[?bBhHiIlLqQuUfdgeFDGcSVaMmO][0-9]*)(?:\[[0-9]*[A-Za-z]+\])?$")
MAX_FIELDS = 10_000
MAX_UNROLL = 4096            # elements of a subarray of structs, unrolled one struct each
MAX_ITEMSIZE = 1 << 30


class DtypeError(Exception):
    """The metadata cannot describe a record type; `node` is where (may be None)."""

    def __init__(self, message: str, node=None):
        super().__init__(message)
        self.node = node


@dataclass
class Field:
    """A leaf field of the packed record."""

    name: str                 # dotted path: "pos.x"
    offset: int               # bytes from the start of the record
    base: np.dtype            # element type with byte order ('<f4', '<U10', '|S4')
    shape: Tuple[int, ...] = ()
    written: str = ""         # the type as the metadata writes it
    node: object = None       # metadata node that declares it

    @property
    def count(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def size(self) -> int:
        return self.base.itemsize * self.count

    @property
    def leaf_name(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    def type_text(self) -> str:
        t = self.base.str
        return f"{t}{list(self.shape)}" if self.shape else t


@dataclass
class Struct:
    name: str
    offset: int
    members: List[Union["Struct", Field]] = field(default_factory=list)
    node: object = None

    @property
    def size(self) -> int:
        return sum(m.size for m in self.members)

    def leaves(self) -> Iterator[Field]:
        for m in self.members:
            if isinstance(m, Struct):
                yield from m.leaves()
            else:
                yield m

    def numpy_dtype(self) -> np.dtype:
        names, formats, offsets = [], [], []
        for m in self.members:
            names.append(m.name.rsplit(".", 1)[-1] if m.name else "value")
            formats.append(m.numpy_dtype() if isinstance(m, Struct)
                           else ((m.base, m.shape) if m.shape else m.base))
            offsets.append(m.offset - self.offset)
        return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                         "itemsize": self.size})


@dataclass
class RecordType:
    """The record type of an array: a struct (or one plain scalar named `value`)."""

    root: Struct
    is_struct: bool = True

    @property
    def itemsize(self) -> int:
        return self.root.size

    def leaves(self) -> List[Field]:
        return list(self.root.leaves())

    def field_names(self) -> List[str]:
        return [f.name for f in self.leaves()]

    def field(self, name: str) -> Optional[Field]:
        for f in self.leaves():
            if f.name == name:
                return f
        return None

    def numpy_dtype(self) -> np.dtype:
        return self.root.numpy_dtype()

    def describe(self) -> str:
        parts = [f"{f.name}@{f.offset} {f.type_text()}" for f in self.leaves()[:12]]
        more = ", …" if len(self.leaves()) > 12 else ""
        return f"{self.itemsize}-byte records: " + ", ".join(parts) + more


# ---- element types -------------------------------------------------------------------------
def _numpy(text: str, where) -> np.dtype:
    try:
        dt = np.dtype(text)
    except (TypeError, ValueError) as e:
        raise DtypeError(f"{text!r} is not a numpy type string ({e})", where)
    if dt.kind == "O":
        raise DtypeError(f"{text!r} is an object type: variable-length values are stored by an "
                         f"object codec, not as fixed records", where)
    if dt.fields is not None or dt.subdtype is not None:
        raise DtypeError(f"{text!r} is not a scalar type", where)
    if dt.itemsize <= 0 and dt.kind not in "SUV":
        raise DtypeError(f"{text!r} has no size", where)
    if dt.itemsize > MAX_ITEMSIZE:
        raise DtypeError(f"{text!r}: {dt.itemsize} bytes per value is not plausible", where)
    return dt


def v2_typestr(text, where) -> np.dtype:
    if not isinstance(text, str) or not _TYPESTR.match(text):
        raise DtypeError(f"expected a numpy type string like '<i4', found {text!r}", where)
    dt = _numpy(text, where)
    if text[0] == "=":
        dt = dt.newbyteorder("<")
    return dt


def v3_scalar(spec, endian: str, where) -> np.dtype:
    """A v3 field type (string name or {name, configuration}) as a numpy type."""
    name: Any = spec
    conf: Any = {}
    if isinstance(spec, dict):
        name, conf = spec.get("name"), spec.get("configuration") or {}
        if not isinstance(conf, dict):
            raise DtypeError("configuration must be an object", where)
    if not isinstance(name, str):
        raise DtypeError(f"expected a data type name, found {name!r}", where)
    order = "<" if endian != ">" else ">"
    if name in V3_SCALARS:
        code = V3_SCALARS[name]
        return np.dtype(("|" if code[1:] == "1" else order) + code)
    m = re.fullmatch(r"r([0-9]+)", name)
    if m and int(m.group(1)) % 8 == 0 and 0 < int(m.group(1)) <= 8 * MAX_ITEMSIZE:
        return np.dtype(f"|V{int(m.group(1)) // 8}")
    if name in V3_SIZED:
        n = conf.get("length_bytes")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0 or n > MAX_ITEMSIZE:
            raise DtypeError(f"{name}: configuration.length_bytes must be a byte count, "
                             f"found {n!r}", where)
        kind = V3_SIZED[name]
        if kind == "U":
            if n % 4:
                raise DtypeError(f"{name}: length_bytes {n} is not a multiple of 4", where)
            return np.dtype(f"{order}U{n // 4}")
        return np.dtype(f"|{kind}{n}")
    if name in ("numpy.datetime64", "numpy.timedelta64"):
        unit = conf.get("unit", "generic")
        scale = conf.get("scale_factor", 1)
        code = "M8" if name.endswith("datetime64") else "m8"
        if not isinstance(unit, str) or not re.fullmatch(r"[A-Za-z]+", unit) \
                or not isinstance(scale, int):
            raise DtypeError(f"{name}: bad unit/scale_factor", where)
        text = f"{order}{code}" if unit == "generic" else f"{order}{code}[{scale if scale != 1 else ''}{unit}]"
        return _numpy(text, where)
    if name in OBJECT_TYPES:
        raise DtypeError(f"{name!r} is a variable-length type: its values are not fixed "
                         f"records", where)
    raise DtypeError(f"unknown data type {name!r}", where)


# ---- struct builders -------------------------------------------------------------------------
def _shape(v, where) -> Tuple[int, ...]:
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool)
                                          and 0 <= x <= MAX_ITEMSIZE for x in v):
        raise DtypeError(f"a subarray shape is a list of non-negative integers, found {v!r}", where)
    if int(np.prod(v, dtype=object)) > MAX_ITEMSIZE:
        raise DtypeError(f"subarray shape {v} is not plausible", where)
    return tuple(v)


class _Builder:
    def __init__(self):
        self.count = 0

    def bump(self, where):
        self.count += 1
        if self.count > MAX_FIELDS:
            raise DtypeError(f"more than {MAX_FIELDS} fields", where)

    # v2 ---------------------------------------------------------------------------------
    def v2(self, descr, node, prefix: str, offset: int, depth: int = 0) -> Struct:
        from ..core.jsontree import element

        if depth > 32:
            raise DtypeError("struct nesting deeper than 32 levels", node)
        if not isinstance(descr, list) or not descr:
            raise DtypeError("a struct dtype is a non-empty list of fields", node)
        st = Struct(prefix, offset, node=node)
        pos = offset
        names = set()
        for i, entry in enumerate(descr):
            en = element(node, i)
            self.bump(en)
            if not isinstance(entry, list) or len(entry) not in (2, 3) \
                    or not isinstance(entry[0], str):
                raise DtypeError(f"field {i + 1}: expected [name, type] or [name, type, shape], "
                                 f"found {entry!r}"[:200], en)
            name = entry[0]
            if name in names:
                raise DtypeError(f"duplicate field name {name!r}", en)
            names.add(name)
            full = f"{prefix}.{name}" if prefix else name
            tnode = element(en, 1)
            if isinstance(entry[1], list) and len(entry) == 3 \
                    and _shape(entry[2], element(en, 2)) != ():
                # A subarray of structs (zarr 2.18.7 writes ["pts", [[…fields…]], [2]]): the
                # elements are whole structs back to back, so a field is not contiguous.
                # Unroll it into one struct per element, named pts[0], pts[1], … (C order;
                # pts[0,1] for 2-D), each packed at its own offset.
                shape = _shape(entry[2], element(en, 2))
                n = int(np.prod(shape, dtype=object))
                if n > MAX_UNROLL:
                    raise DtypeError(f"field {name!r}: a subarray of {n} structs is more than "
                                     f"the {MAX_UNROLL} arrayscope unrolls", element(en, 2))
                for idx in np.ndindex(*shape):
                    label = f"{name}[{','.join(str(int(i)) for i in idx)}]"
                    if label in names:
                        raise DtypeError(f"duplicate field name {label!r}", en)
                    names.add(label)
                    sub = self.v2(entry[1], tnode, f"{prefix}.{label}" if prefix else label,
                                  pos, depth + 1)
                    sub.node = en
                    st.members.append(sub)
                    pos += sub.size
                continue
            if isinstance(entry[1], list):
                sub = self.v2(entry[1], tnode, full, pos, depth + 1)
                sub.node = en
                st.members.append(sub)
                pos += sub.size
                continue
            base = v2_typestr(entry[1], tnode)
            shape = _shape(entry[2], element(en, 2)) if len(entry) == 3 else ()
            f = Field(full, pos, base, shape, entry[1], en)
            st.members.append(f)
            pos += f.size
        return st

    # v3 ---------------------------------------------------------------------------------
    def v3(self, spec, node, endian: str, prefix: str, offset: int, depth: int = 0) -> Struct:
        from ..core.jsontree import element, member

        if depth > 32:
            raise DtypeError("struct nesting deeper than 32 levels", node)
        conf = spec.get("configuration") if isinstance(spec, dict) else None
        cnode = member(node, "configuration")
        fields = conf.get("fields") if isinstance(conf, dict) else None
        fnode = member(cnode, "fields")
        if not isinstance(fields, list) or not fields:
            raise DtypeError("a struct data type needs configuration.fields, a non-empty list",
                             fnode or cnode or node)
        st = Struct(prefix, offset, node=node)
        pos = offset
        names = set()
        for i, entry in enumerate(fields):
            en = element(fnode, i)
            self.bump(en)
            if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str):
                name, t, tnode = entry[0], entry[1], element(en, 1)       # legacy tuple form
            elif isinstance(entry, dict) and isinstance(entry.get("name"), str) \
                    and "data_type" in entry:
                name, t, tnode = entry["name"], entry["data_type"], member(en, "data_type")
            else:
                raise DtypeError(f"field {i + 1}: expected [name, type] or "
                                 f"{{\"name\": …, \"data_type\": …}}, found {entry!r}"[:200], en)
            if name in names:
                raise DtypeError(f"duplicate field name {name!r}", en)
            names.add(name)
            full = f"{prefix}.{name}" if prefix else name
            if isinstance(t, dict) and t.get("name") in ("structured", "struct"):
                sub = self.v3(t, tnode, endian, full, pos, depth + 1)
                sub.node = en
                st.members.append(sub)
                pos += sub.size
                continue
            base = v3_scalar(t, endian, tnode)
            f = Field(full, pos, base, (), t if isinstance(t, str) else str(t.get("name")), en)
            st.members.append(f)
            pos += f.size
        return st


def from_v2(dtype_value, node) -> RecordType:
    """The record type of a v2 `.zarray` dtype (a typestr or a descr list)."""
    if isinstance(dtype_value, str):
        base = v2_typestr(dtype_value, node)
        return RecordType(Struct("", 0, [Field("value", 0, base, (), dtype_value, node)]), False)
    st = _Builder().v2(dtype_value, node, "", 0)
    _check_size(st, node)
    return RecordType(st, True)


def from_v3(data_type, node, endian: str) -> RecordType:
    if isinstance(data_type, dict) and data_type.get("name") in ("structured", "struct"):
        st = _Builder().v3(data_type, node, endian, "", 0)
        _check_size(st, node)
        return RecordType(st, True)
    base = v3_scalar(data_type, endian, node)
    written = data_type if isinstance(data_type, str) else str(data_type.get("name"))
    return RecordType(Struct("", 0, [Field("value", 0, base, (), written, node)]), False)


def _check_size(st: Struct, node) -> None:
    if st.size <= 0:
        raise DtypeError("the record type has no bytes", node)
    if st.size > MAX_ITEMSIZE:
        raise DtypeError(f"records of {st.size} bytes are not plausible", node)


def has_multibyte(rt: RecordType) -> bool:
    return any(f.base.kind in "iufcUMm" and f.base.itemsize > 1 for f in rt.leaves())


# ---- values ------------------------------------------------------------------------------
def to_python(arr: np.ndarray):
    """Decoded field values as JSON-able Python (nested lists for subarrays).

    U: str (UTF-32, trailing NULs stripped by numpy); S: bytes with trailing NULs stripped,
    decoded latin-1 into str (one character per byte, reversible); V: hex str; b1: bool;
    datetimes/timedeltas: their integer counts; complex: [re, im]; NaN stays a float."""
    k = arr.dtype.kind
    if k == "U":
        return safe_unicode(arr).tolist()
    if k == "S":
        return np.char.decode(arr, "latin-1").tolist() if arr.size else arr.tolist()
    if k == "V":
        if arr.ndim == 0:
            return bytes(arr.tobytes()).hex()
        return [to_python(a) for a in arr]
    if k in "Mm":
        return arr.view(arr.dtype.byteorder.replace("|", "<").replace("=", "<") + "i8").tolist()
    if k == "c":
        return np.stack([arr.real, arr.imag], axis=-1).tolist()
    return arr.tolist()


def little_endian(arr: np.ndarray) -> np.ndarray:
    """The same values with little-endian bytes (for `--raw`)."""
    dt = arr.dtype
    if dt.byteorder == ">":
        return arr.astype(dt.newbyteorder("<"))
    return arr

"""The fill value of a struct array as one packed record.

Forms: base64 of the packed record (v2, and v3 legacy `structured`); an object with one
JSON value per field, nested objects for nested structs (struct extension draft); a plain
number for a plain array, or for a struct (then numpy casts it into every field: the
zarr default `0` makes U/S fields hold the text "0"); `null` (no fill value given).
"""
from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Optional, Tuple

import numpy as np

from ..core.fielddoc import doc
from .dtype import Field, RecordType, Struct

D_FILL = doc("fill_value: the record every position of an absent chunk holds (and edge-chunk "
             "padding): base64 of the packed record, or one JSON value per field (struct "
             "extension draft)", spec="zarr v2/v3 fill_value; FORMAT_NOTES §1-2",
             note="the default struct fill is integer 0 cast to the dtype, so U/S fields "
                  "hold the string '0'")


class FillError(Exception):
    pass


def _float(v, f: Field):
    if isinstance(v, bool):
        raise FillError(f"{f.name}: expected a number, found {v!r}")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        special = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
        if v in special:
            return special[v]
        if re.fullmatch(r"0x[0-9a-fA-F]+", v):
            n = f.base.itemsize
            raw = int(v, 16).to_bytes(n, "big") if int(v, 16) < 1 << (8 * n) else None
            if raw is None:
                raise FillError(f"{f.name}: {v} does not fit {n} bytes")
            return np.frombuffer(raw, dtype=">" + f.base.str[1:])[0]
    raise FillError(f"{f.name}: expected a number, 'NaN', 'Infinity' or '0x…' bits, found {v!r}")


def _scalar(v, f: Field):
    k = f.base.kind
    if k == "b":
        if not isinstance(v, bool):
            raise FillError(f"{f.name}: expected true/false, found {v!r}")
        return v
    if k in "iumM":
        if isinstance(v, bool) or not isinstance(v, int):
            raise FillError(f"{f.name}: expected an integer, found {v!r}")
        info = np.iinfo(f.base if k in "iu" else np.int64)   # datetimes: 64-bit counts
        if not info.min <= v <= info.max:
            raise FillError(f"{f.name}: {v} does not fit {f.base.str} "
                            f"({info.min}..{info.max})")
        return v
    if k == "f":
        return _float(v, f)
    if k == "c":
        if not isinstance(v, list) or len(v) != 2:
            raise FillError(f"{f.name}: expected [real, imag], found {v!r}")
        return complex(_float(v[0], f), _float(v[1], f))
    if k == "U":
        if not isinstance(v, str):
            raise FillError(f"{f.name}: expected a string, found {v!r}")
        return v
    if k in "SV":
        if isinstance(v, list) and all(isinstance(x, int) and 0 <= x < 256 for x in v):
            return bytes(v)
        if isinstance(v, str):
            try:
                return base64.b64decode(v, validate=True)
            except (binascii.Error, ValueError):
                if k == "S":
                    return v.encode("latin-1", errors="replace")
        raise FillError(f"{f.name}: expected base64 text or a list of byte values, found {v!r}")
    raise FillError(f"{f.name}: cannot encode a fill value for type {f.base.str}")


def _assign(arr, st: Struct, obj) -> None:
    if not isinstance(obj, dict):
        raise FillError(f"{st.name or 'fill_value'}: expected an object with one value per "
                        f"field, found {obj!r}"[:200])
    for m in st.members:
        key = m.name.rsplit(".", 1)[-1]
        if key not in obj:
            raise FillError(f"fill_value has no value for field {m.name!r}")
        if isinstance(m, Struct):
            _assign(arr[key], m, obj[key])
        else:
            v = obj[key]
            if m.shape:
                a = np.asarray(v, dtype=object)
                if a.shape != m.shape:
                    raise FillError(f"{m.name}: expected shape {list(m.shape)}, found {v!r}"[:200])
                arr[key] = np.vectorize(lambda x: _scalar(x, m), otypes=[m.base])(a)
            else:
                arr[key] = _scalar(v, m)
    extra = set(obj) - {m.name.rsplit(".", 1)[-1] for m in st.members}
    if extra:
        raise FillError(f"fill_value names fields the dtype does not have: {sorted(extra)}")


def encode(value, rt: RecordType) -> Tuple[bytes, Optional[str]]:
    """(packed fill record, a note or None). Raises FillError when `value` cannot be one."""
    n = rt.itemsize
    dt = rt.numpy_dtype()
    arr = np.zeros((), dtype=dt)
    first = rt.root.members[0] if rt.root.members else None
    if value is None:
        # readers differ here: zarr-python 2.18 gives zero bytes, 3.1 its dtype's default
        # (NaT for datetimes, 0 cast into a struct's fields: text '0'); zeros are shown
        return bytes(n), ("fill_value is null: no fill value was given; absent records are "
                          "shown as zero bytes (zarr-python 3.1 reads NaT for a datetime and "
                          "'0' in a struct's text fields)")
    if isinstance(value, str) and (rt.is_struct or isinstance(first, Field)
                                   and first.base.kind in "SV"):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as e:
            raise FillError(f"fill_value is not base64 ({e})")
        if len(raw) < n and isinstance(first, Field) and not rt.is_struct \
                and first.base.kind == "S":
            # fixed bytes are NUL-padded (numpy's `S`, as zarr reads it): zarr 3.1 writes the
            # default fill of `S5` as "" and b"ab" as "YWI="
            return raw + bytes(n - len(raw)), None
        if len(raw) != n:
            raise FillError(f"fill_value decodes to {len(raw)} bytes; a record has {n}")
        return raw, None
    if isinstance(value, dict) and rt.is_struct:
        _assign(arr, rt.root, value)
        return arr.tobytes(), None
    if not rt.is_struct and isinstance(first, Field):
        arr["value"] = _scalar(value, first)
        return arr.tobytes(), None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            cast = np.array(value).astype(dt)
        except (TypeError, ValueError, OverflowError) as e:
            raise FillError(f"fill_value {value!r} cannot be cast to the struct ({e})")
        return cast.tobytes(), (f"fill_value {value!r} is cast into every field (text fields "
                                f"hold {str(value)!r})")
    raise FillError(f"fill_value {value!r}: expected base64 text, an object per field, or null"
                    [:200])


__all__ = ["encode", "FillError", "D_FILL"]

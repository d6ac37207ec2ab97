"""How the make_*.py fixture scripts record a writer's reading in expected.json (imported
by them as a sibling module: they run as scripts, in whatever venv has the writer)."""
from __future__ import annotations

import hashlib
import math

import numpy as np


def jsonable(v):
    """A value as JSON: floats exact, NaN/±Infinity as strings, complex as [re, im], bytes
    as latin-1 text."""
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, complex):
        return [jsonable(v.real), jsonable(v.imag)]
    if isinstance(v, bytes):
        return v.decode("latin-1")
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    return v


def field_entry(a: np.ndarray) -> dict:
    """{"values": C-order values, "sha256": of the little-endian bytes (fixed-size types)}."""
    flat = np.ascontiguousarray(a).reshape(-1)
    out = {"values": [jsonable(x) for x in flat.tolist()]}
    if flat.dtype.kind not in "OUST":
        le = flat.astype(flat.dtype.newbyteorder("<")) if flat.dtype.byteorder == ">" else flat
        out["sha256"] = hashlib.sha256(le.tobytes()).hexdigest()
    return out

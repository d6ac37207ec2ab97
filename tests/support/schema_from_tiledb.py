"""Test helper: a `formats.tiledb.model.array_model.ArraySchema` built from tiledb-py's view of an array.

Used by the fragment/values tests until (or beside) `formats.tiledb.parse.schema.parse_schema`; it
reads nothing of arrayscope's own parsing, so it is an independent oracle for the schema."""
from __future__ import annotations

import os
from typing import Optional

import numpy as np
import tiledb

from arrayscope.formats.filters import FilterSpec, get
from arrayscope.formats.filters.enums import VAR_NUM
from arrayscope.formats.tiledb.model.array_model import ArraySchema, Attribute, Dimension

_DTYPE_CODES = {"INT32": 0, "INT64": 1, "FLOAT32": 2, "FLOAT64": 3}


def _filters(fl) -> list:
    out = []
    for f in fl:
        t = int(f._type)
        opts = {}
        attrs = f._attrs_() if hasattr(f, "_attrs_") else {}
        compressor = get(t).default_options().get("compressor")
        if compressor is not None:
            opts["compressor"] = compressor
            opts["level"] = attrs.get("level", -1) if attrs.get("level") is not None else -1
            if t in (6, 19):
                rd = attrs.get("reinterp_dtype")
                opts["reinterpret"] = 17 if rd is None else _dt_of_numpy(rd)
        if t in (7, 10):
            opts["max_window"] = attrs.get("window")
        if t == 15:
            opts.update(scale=attrs["factor"], offset=attrs["offset"],
                        byte_width=attrs["bytewidth"])
        out.append(FilterSpec(t, opts))
    return out


def _dt_of_numpy(dt) -> int:
    from tiledb.datatypes import DataType
    return int(DataType.from_numpy(np.dtype(dt)).tiledb_type)


def _pyval(v):
    if isinstance(v, np.generic):
        if isinstance(v, (np.datetime64, np.timedelta64)):
            return int(v.astype("int64"))
        return v.item()
    return v


def schema_from_tiledb(uri: str, key: Optional[str] = None) -> ArraySchema:
    cfg = tiledb.Config({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key}) \
        if key else None
    ctx = tiledb.Ctx(cfg) if cfg else None
    s = tiledb.ArraySchema.load(uri, ctx=ctx)
    dims = []
    for i in range(s.domain.ndim):
        d = s.domain.dim(i)
        dt = int(d._tiledb_dtype)
        var = d.isvar
        dom = None if var else tuple(_pyval(x) for x in d.domain)
        tile = None if var or d.tile is None else _pyval(d.tile)
        dims.append(Dimension(d.name, dt, VAR_NUM if var else 1, _filters(d.filters), dom, tile))
    attrs = []
    for i in range(s.nattr):
        a = s.attr(i)
        cvn = VAR_NUM if a.isvar else int(a.ncells)
        attrs.append(Attribute(a.name, int(a._tiledb_dtype), cvn, _filters(a.filters),
                               nullable=a.isnullable))
    names = sorted(n for n in os.listdir(os.path.join(uri, "__schema")) if n.startswith("__")
                   and n != "__enumerations")
    return ArraySchema(
        version=22, array_type=1 if s.sparse else 0, allows_dups=bool(s.allows_duplicates) if s.sparse else False,
        tile_order={"row-major": 0, "col-major": 1}.get(s.tile_order, 0),
        cell_order={"row-major": 0, "col-major": 1, "hilbert": 4}.get(s.cell_order, 0),
        capacity=int(s.capacity), coords_filters=_filters(s.coords_filters),
        offsets_filters=_filters(s.offsets_filters), validity_filters=_filters(s.validity_filters),
        dimensions=dims, attributes=attrs, name=names[-1] if names else "")

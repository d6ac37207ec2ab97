"""Decoded cell bytes → typed values (the `values` command's contract: values are raw).

- fixed cells: numbers (datetimes and times as their integer counts, BOOL as bool);
  cell_val_num > 1 as lists;
- var-sized cells: u64 offsets into the var data; a cell ends where the next begins;
- strings (CHAR, STRING_ASCII, STRING_UTF8 as UTF-8 text; UTF-16/32, UCS2/4 decoded),
  fixed or var-sized, as `str`;
- BLOB / GEOM_* / ANY cells as lists of byte values (JSON has no bytes);
- nullable: `None` where the validity byte is 0.
Everything is vectorised with numpy except building the per-cell Python objects of var cells.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Union

import numpy as np

from ...filters.enums import DATATYPES, VAR_NUM, Datatype, numpy_dtype

TEXT_ENCODINGS: Dict[int, str] = {Datatype.CHAR: "utf-8", Datatype.STRING_ASCII: "utf-8",
                  Datatype.STRING_UTF8: "utf-8", Datatype.STRING_UTF16: "utf-16-le",
                  Datatype.STRING_UTF32: "utf-32-le", Datatype.STRING_UCS2: "utf-16-le",
                  Datatype.STRING_UCS4: "utf-32-le"}
BYTE_LIST_TYPES = {Datatype.ANY, Datatype.BLOB, Datatype.GEOM_WKB, Datatype.GEOM_WKT}

# decoded bytes: bytes, or a view into one numpy buffer (never copied into `bytes`)
Buffer = Union[bytes, memoryview]


def decode_text(raw: bytes, enc: str) -> str:
    """A string cell's text (invalid UTF-8 read as Latin-1: every byte shown)."""
    try:
        return raw.decode(enc)
    except UnicodeDecodeError:
        return raw.decode("latin-1") if enc == "utf-8" else raw.decode(enc, errors="replace")


def fixed_values(datatype: int, cell_val_num: int, data: Buffer) -> list:
    """Fixed-size cells of `data` as Python values."""
    if datatype not in DATATYPES:
        return list(data)
    cvn = 1 if cell_val_num in (0, VAR_NUM) else int(cell_val_num)
    size = DATATYPES[datatype][1]
    cell = size * cvn
    n = len(data) // cell if cell else 0
    if datatype in TEXT_ENCODINGS:
        enc = TEXT_ENCODINGS[datatype]
        mv = memoryview(data)
        return [decode_text(bytes(mv[i * cell:(i + 1) * cell]), enc) for i in range(n)]
    arr = np.frombuffer(data, dtype=numpy_dtype(datatype), count=n * cvn)
    if datatype == Datatype.BOOL:
        arr = arr.astype(bool)
    if datatype in BYTE_LIST_TYPES or cvn > 1:
        return arr.reshape(n, cvn).tolist()
    return arr.tolist()


def var_values(datatype: int, offsets: np.ndarray, data: Buffer) -> list:
    """Var-sized cells: `offsets` (absolute, into `data`), each cell ending at the next."""
    n = len(offsets)
    if n == 0:
        return []
    starts = np.asarray(offsets, dtype=np.int64)
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    ends[-1] = len(data)
    s, e = starts.tolist(), ends.tolist()
    mv = memoryview(data)
    if datatype in TEXT_ENCODINGS:
        enc = TEXT_ENCODINGS[datatype]
        return [decode_text(bytes(mv[a:b]), enc) for a, b in zip(s, e)]
    if datatype not in DATATYPES:
        return [list(mv[a:b]) for a, b in zip(s, e)]
    dt = numpy_dtype(datatype)
    allv = np.frombuffer(data, dtype=dt, count=len(data) // dt.itemsize)
    if datatype == Datatype.BOOL:
        allv = allv.astype(bool)
    size = dt.itemsize
    out = allv.tolist()
    return [out[a // size:b // size] for a, b in zip(s, e)]


def apply_validity(values: list, validity: Optional[Buffer]) -> list:
    if validity is None:
        return values
    v = np.frombuffer(validity, dtype=np.uint8, count=min(len(validity), len(values)))
    nulls = np.flatnonzero(v == 0).tolist()
    for i in nulls:
        values[i] = None
    return values


def cell_values(datatype: int, cell_val_num: int, fixed: Optional[Buffer],
                offsets: Optional[np.ndarray] = None, var: Optional[Buffer] = None,
                validity: Optional[Buffer] = None) -> List:
    """Values of one field's cells: fixed-size from `fixed`, or var-sized from absolute
    `offsets` into `var`; None where `validity` is 0."""
    if cell_val_num == VAR_NUM:
        vals = var_values(datatype, offsets if offsets is not None else np.zeros(0, np.uint64),
                          var or b"")
    else:
        vals = fixed_values(datatype, cell_val_num, fixed or b"")
    return apply_validity(vals, validity)

"""A fixed little-endian record (a chunk header, a part-table entry) declared once and read
three ways from that one declaration: annotated into nodes (`annotate`, through a Cursor),
decoded without nodes (`unpack_from`, `array`: struct / numpy on hot paths) and encoded
(`pack`: filters applied forward, test builders). The three cannot drift apart: they share
the field list and the struct built from it."""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import numpy as np

from .cursor import Cursor
from .fielddoc import FieldDoc

_CODES = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "i32": "i", "i64": "q"}


@dataclass(frozen=True)
class Field:
    """One field. `label` is the node's name and may hold `{n}` (the entry's 1-based
    number) and any name `annotate` is given; `raw` > 0: that many opaque bytes (an IV, a
    digest) instead of an integer `prim`; `item_size` > 0: a count whose items, that many
    bytes each, must fit in the remaining bytes (`Cursor.length`: an impossible count
    stops there, nothing is allocated from it)."""

    label: str
    prim: str = "u32"
    doc: Optional[FieldDoc] = None
    raw: int = 0
    item_size: int = 0
    unit: str = "items"
    enum: Optional[Dict[int, str]] = None

    @property
    def code(self) -> str:
        return f"{self.raw}s" if self.raw else _CODES[self.prim]


class Record:
    """Fields in order; `group` (optional, may hold `{n}` etc.) wraps one record's nodes."""

    def __init__(self, *fields: Field, group: str = ""):
        self.fields = fields
        self.group = group
        self.struct = struct.Struct("<" + "".join(f.code for f in fields))
        self.size = self.struct.size

    # ---- annotate ------------------------------------------------------------------------
    def annotate(self, cur: Cursor, **names: object) -> Tuple:
        """Nodes for one record at `cur` (in a group node when the record declares one);
        returns the values read, as `unpack_from` does."""
        if not self.group:
            return self._fields(cur, names)
        out: list = []
        cur.group(self.group.format(**names), lambda c: out.extend(self._fields(c, names)),
                  size=self.size)
        return tuple(out)

    def _fields(self, cur: Cursor, names: dict) -> Tuple:
        out = []
        for f in self.fields:
            label = f.label.format(**names) if "{" in f.label else f.label
            if f.raw:
                cur.raw(label, f.raw, f.doc)
                out.append(cur.source.read(cur.pos - f.raw, f.raw))
            elif f.item_size:
                out.append(cur.length(f.prim, label, f.item_size, f.doc, f.unit).value)
            else:
                out.append(cur.prim(f.prim, label, f.doc, enum=f.enum).value)
        return tuple(out)

    # ---- decode --------------------------------------------------------------------------
    def unpack_from(self, buf, offset: int = 0) -> Tuple:
        return self.struct.unpack_from(buf, offset)

    def array(self, buf, count: int, offset: int = 0) -> np.ndarray:
        """`count` records at `offset` as one structured array (integer fields only; the
        caller has checked that they fit)."""
        dt = np.dtype([(f"f{i}", "<" + f.code) for i, f in enumerate(self.fields)])
        return np.frombuffer(buf, dtype=dt, count=count, offset=offset)

    # ---- encode --------------------------------------------------------------------------
    def pack(self, *values: object) -> bytes:
        return self.struct.pack(*values)

    # ---- layout --------------------------------------------------------------------------
    def offset_of(self, label: str) -> int:
        """Where field `label` starts in the record (for compiled readers, which take
        positions as numbers)."""
        at = 0
        for f in self.fields:
            if f.label == label:
                return at
            at += struct.calcsize("<" + f.code)
        raise KeyError(label)

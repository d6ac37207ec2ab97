"""DICTIONARY (14): var-sized ASCII/UTF-8 strings as ids into a dictionary of the distinct
strings, in order of first appearance (format_spec/filters/dictionary_encoding.md,
dict_compressor.h).

Metadata: the string header (`strings.py`), then `u8 word id byte size` (smallest of
1/2/4/8 holding the number of cells), `u8 string length byte size` (holding the longest
string), `u32 dictionary size`, and the dictionary: `[length][string]` per entry, lengths
big-endian. Data: one big-endian id per cell. (The document's `num_of_strings` prefix of
the dictionary is not written.)"""
from __future__ import annotations

import numpy as np

from ..core.cursor import Cursor
from ..core.fielddoc import doc
from ..core.node import LazyChildren
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .compression import compressor_options
from .enums import Compressor, FilterType
from .strings import (
    applies,
    cells,
    compute_bytesize,
    gather_words,
    header,
    padded,
    parse_header,
    read_header,
    walk,
)
from .util import data_of, ints_be, segment_index, u8

D_ID_BYTES = doc("Word id byte size: bytes of each cell's dictionary id in the data "
                 "(1, 2, 4 or 8, big-endian)", spec="dictionary_encoding.md: output_datasize")
D_STRLEN_BYTES = doc("String length byte size: bytes of each dictionary entry's length "
                     "(1, 2, 4 or 8, big-endian)", spec="dictionary_encoding.md: dict_string_datasize")
D_DICT_SIZE = doc("Dictionary size: bytes of the serialized dictionary that follows")
D_DICT = doc("Dictionary: the distinct strings in order of first appearance, each "
             "`[big-endian length][bytes]`", spec="dictionary_encoding.md")
D_ENTRY = doc("Dictionary entry: its id is its position (from 0)")
SHOWN_ENTRIES = 4096


class Dictionary(Filter):
    type = FilterType.DICTIONARY
    options = compressor_options(Compressor.DICTIONARY_ENCODING)
    passes_metadata = False

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        parse_header(cur)
        cur.u8("Word id byte size", D_ID_BYTES)
        b = cur.u8("String length byte size", D_STRLEN_BYTES).value
        size = cur.length("u32", "Dictionary size", 1, D_DICT_SIZE, "bytes").value

        def entries(c: Cursor):
            if _lazy_entries(c, b):
                return
            i = 0
            while not c.at_end() and i < SHOWN_ENTRIES and b in (1, 2, 4, 8):
                n = int.from_bytes(c.peek(b), "big")
                c.group(f"Entry {i}", lambda e: (
                    e.field("String length", b, n, str(n), doc=D_ENTRY, type=f"uint{8 * b}be"),
                    e.string("String", n)), size=b + n)
                i += 1
            if not c.at_end():
                c.raw("More entries", c.remaining, D_DICT)
        cur.group("Dictionary", entries, size=size, doc=D_DICT)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        if not applies("dictionary", info, run):
            raise FilterError("DICTIONARY only encodes var-sized ASCII/UTF-8 strings "
                              f"(format 13+ for ASCII, 17+ for UTF-8); this tile holds "
                              f"{'var' if info.var else 'fixed'} datatype {info.base_datatype}")
        r, usize, csize, osize = read_header(stage, spec.name, run)
        a, b = r.u8("Word id byte size"), r.u8("String length byte size")
        if a not in (1, 2, 4, 8) or b not in (1, 2, 4, 8):
            raise FilterError(f"DICTIONARY: byte sizes {a}/{b} must each be 1, 2, 4 or 8", 20)
        dsize = r.u32("Dictionary size")
        dbuf = u8(r.take(dsize, "dictionary"))
        data = data_of(stage)
        if csize != len(data) or csize % a:
            raise FilterError(f"DICTIONARY: compressed size {csize} (ids of {a} bytes), the data "
                              f"has {len(data)} bytes", 12)
        ncells = osize // 8
        if csize // a != ncells:
            raise FilterError(f"DICTIONARY: {csize // a} ids for {ncells} cells", 12)
        at, dlen = walk(dbuf, b, b, 0, spec.name, max(1, dsize))
        ids = np.frombuffer(data, f">u{a}", count=ncells)
        if len(ids) and int(ids.max()) >= len(at):
            raise FilterError(f"DICTIONARY: id {int(ids.max())} is past the {len(at)} entries")
        ids = ids.astype(np.int64)
        lens = dlen[ids]
        if int(lens.sum()) != usize:
            raise FilterError(f"DICTIONARY: ids give {int(lens.sum())} bytes, the metadata "
                              f"says {usize}")
        cells_, offsets = gather_words(dbuf, at + b, dlen, ids)
        return Stage([r.rest()] if r.remaining else [], [cells_], offsets)

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        if not applies("dictionary", info, run):
            raise FilterError("DICTIONARY only applies to var-sized ASCII/UTF-8 strings "
                              "('Dictionary encoding only applies to variable length strings')")
        if run.offsets is None:
            raise FilterError("DICTIONARY encodes the cell offsets: pass them "
                              "(RunContext.offsets)")
        data = data_of(stage)
        buf = u8(data)
        starts, lens = cells(data, run.offsets)
        rows = padded(buf, starts, lens)
        keys = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.shape[1]))).ravel()
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # ids in order of first appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        ids = rank[inverse.ravel()]
        a = compute_bytesize(len(lens))
        b = compute_bytesize(int(lens.max()))
        w_start, w_len = starts[first[order]], lens[first[order]]
        rec = b + w_len
        pos = np.cumsum(rec) - rec
        d = np.empty(int(rec.sum()), dtype=np.uint8)
        d[segment_index(pos, np.full(len(pos), b))] = ints_be(w_len.astype(np.uint64), b).ravel()
        d[segment_index(pos + b, w_len)] = buf[segment_index(w_start, w_len)]
        enc = ints_be(ids.astype(np.uint64), a).tobytes()
        md = (header(len(data), len(enc), len(lens)) + bytes([a, b])
              + len(d).to_bytes(4, "little") + d.tobytes())
        return Stage([md], [enc])


def _lazy_entries(c: Cursor, b: int) -> bool:
    """A dictionary whose entries chain exactly to its end becomes one node whose entries
    are built when shown (a dictionary of 100 000 words costs one node until expanded).
    False (nothing added): the caller shows the entries one by one, up to the damage."""
    if b not in (1, 2, 4, 8) or c.at_end() or c.end - c.pos != c.declared_end - c.pos:
        return False
    start, size = c.pos, c.remaining
    buf = u8(c.source.read(start, size))
    try:
        at, dlen = walk(buf, b, b, 0, "DICTIONARY", size)
        buf[segment_index(at + b, dlen)].tobytes().decode("utf-8")  # else: shown, warned
    except (FilterError, UnicodeDecodeError):
        return False
    src = c.source

    def make(i: int):
        from ..core.node import Node

        off, n = start + int(at[i]), int(dlen[i])
        e = Node(f"Entry {i}", "struct", src, off, b + n)
        e.add(Node("String length", "field", src, off, b, value=n, display=str(n), doc=D_ENTRY,
                   type=f"uint{8 * b}be"))
        v = src.read(off + b, n).decode("utf-8")
        e.add(Node("String", "string", src, off + b, n, value=v, display=repr(v)))
        return e
    c.node.set_lazy(LazyChildren(len(at), make, uniform=True))
    c.node.display = f"{len(at)} entries"
    c.pos = start + size
    return True

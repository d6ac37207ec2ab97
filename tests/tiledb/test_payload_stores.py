"""`fragment_sections.payload_stores` (verify's model path reads the sections that differ
from fragment to fragment without nodes) answers exactly where the annotated section parser
marks nothing, with what that parser hands the model: on the payloads of an array tiledb-py
wrote, and on those payloads altered the ways a parse can object to (a count that does not
fit, bytes left over, a var buffer on a fixed-sized slot, a value size that is not whole)."""
from __future__ import annotations

import glob
import os
import struct

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core.context import Context
from arrayscope.formats.core.engine import run_parser
from arrayscope.formats.core.node import OK
from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.tiledb.model.array_model import TileDBContext
from arrayscope.formats.tiledb.parse.decode import decode_generic_tile
from arrayscope.formats.tiledb.parse.fragment_metadata import (
    load_fragment_metadata,
    payload_stores,
    section_list,
    section_parser,
)


class _Loader:
    def __init__(self) -> None:
        self.stored: list = []

    def store(self, kind, slot, arr) -> None:
        self.stored.append((kind, slot, np.asarray(arr)))


def _annotated(kind, slot, footer, schema, data: bytes):
    """(whether the annotated parse marks nothing, what it stores)."""
    loader = _Loader()
    fn = section_parser(kind, slot, footer, schema, loader)
    root = run_parser("Payload", "struct", BytesSource(data, "payload"), fn)
    return all(n.status == OK for n in root.walk()), loader.stored


@pytest.fixture(scope="module")
def sections(tmp_path_factory):
    """(footer, schema, [(kind, slot, payload)]) of a fragment with an int64 and a float32
    attribute and a nullable one (tile mins, maxs, sums, null counts, fragment min/max)."""
    path = str(tmp_path_factory.mktemp("ps") / "a")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=25, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64), tiledb.Attr("f", dtype=np.float32),
        tiledb.Attr("n", dtype=np.int32, nullable=True)]))
    with tiledb.open(path, "w") as A:
        A[:] = {"a": np.arange(100) * 7, "f": np.arange(100, dtype=np.float32) / 3,
                "n": np.ma.array(np.arange(100, dtype=np.int32), mask=np.arange(100) % 5 == 0)}
    doc = formats.open(path)
    meta = glob.glob(os.path.join(path, "__fragments", "*", "__fragment_metadata.tdb"))[0]
    src = doc.open_source(meta)
    ctx = Context()
    ctx.format = TileDBContext(array=doc.model)
    fm = load_fragment_metadata(src, ctx)
    footer, schema = fm.footer, doc.model.latest_schema
    out = [(kind, slot, decode_generic_tile(src, off, None)[0])
           for off, _name, kind, slot in section_list(footer) if kind != "rtree"]
    return footer, schema, out


def _variants(kind: str, data: bytes):
    yield "as written", data
    yield "one byte left over", data + b"\0"
    yield "cut short", data[:-1]
    if len(data) >= 8:
        n = struct.unpack_from("<Q", data)[0]
        yield "first u64 + 1", struct.pack("<Q", n + 1) + data[8:]
        if n:
            yield "first u64 - 1", struct.pack("<Q", n - 1) + data[8:]
    if kind in ("tile_mins", "tile_maxs") and len(data) >= 16:
        fixed, var = struct.unpack_from("<QQ", data)
        yield "a var buffer", struct.pack("<QQ", fixed, var + 4) + data[16:] + b"abcd"
        if fixed:
            yield "values not whole", struct.pack("<QQ", fixed - 1, var + 1) + data[16:]
    if kind == "fmmsn" and len(data) >= 8:
        n = struct.unpack_from("<Q", data)[0]
        yield "min not whole", struct.pack("<Q", n - 1) + data[8:8 + n - 1] + \
            struct.pack("<Q", 1) + data[8 + n - 1:]


def test_payload_stores_answers_where_the_annotated_parse_marks_nothing(sections):
    footer, schema, found = sections
    kinds = {k for k, _s, _d in found}
    assert {"tile_offsets", "tile_mins", "tile_maxs", "tile_sums", "tile_null_counts",
            "fmmsn"} <= kinds
    handled = {"tile_offsets", "tile_var_offsets", "tile_var_sizes", "tile_validity_offsets",
               "tile_mins", "tile_maxs", "tile_sums", "tile_null_counts", "fmmsn"}
    unclean = 0
    for kind, slot, data in found:
        for what, payload in _variants(kind, data):
            clean, stored = _annotated(kind, slot, footer, schema, payload)
            unclean += not clean
            quick = payload_stores(kind, slot, footer, schema, payload)
            if quick is None:   # (declined: the tree parses it, and says what it says)
                assert what != "as written" or kind not in handled, (kind, slot)
                continue
            assert clean, (kind, slot, what)   # never an answer where the parse objects
            got = [(k, s, a) for k, s, a in quick if k not in ("tile_mins", "tile_maxs")]
            assert [(k, s, a.dtype, a.tolist()) for k, s, a in stored] == \
                [(k, s, np.asarray(a).dtype, np.asarray(a).tolist()) for k, s, a in got], \
                (kind, slot, what)
            if kind in ("tile_mins", "tile_maxs"):   # the payload kept whole
                assert [bytes(a) for _k, _s, a in quick] == [payload]
    assert unclean >= 2 * len(found)   # the altered payloads are objected to

"""The tile chunk table and the filters' part tables are declared once (`formats.core.record`):
on bytes tiledb-py wrote, the annotated nodes, the node-free decoder and the encoder must
agree, every value and every byte."""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np
import pytest
import tiledb

from arrayscope.formats.core.cursor import Cursor
from arrayscope.formats.core.node import Node
from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.filters import DataInfo, FilterSpec, Stage
from arrayscope.formats.filters.checksum import layout
from arrayscope.formats.filters.compression import COMPRESSED_PART, PART_COUNTS, CompressionFilter
from arrayscope.formats.filters.encryption import AES_PART
from arrayscope.formats.filters.encryption import PART_COUNTS as AES_COUNTS
from arrayscope.formats.filters.parts import read_parts, table
from arrayscope.formats.filters.strings import HEADER as STRING_HEADER
from arrayscope.formats.filters.util import MetaReader
from arrayscope.formats.tiledb.parse.tile import parse_tile
from tests.support.filter_arrays import (
    KEY,
    attr_info,
    encode_tile,
    spec_of,
    tiles,
    write_dense,
)

# 3 tiles of 40 000 int64 (320 KB: five 64 KiB chunks each)
N, TILE = 120_000, 40_000
STACKS = {
    "byteshuffle+zstd": [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(3)],
    "bitshuffle+md5": [tiledb.BitShuffleFilter(), tiledb.ChecksumMD5Filter()],
    "xor+byteshuffle+sha256": [tiledb.XORFilter(), tiledb.ByteShuffleFilter(),
                               tiledb.ChecksumSHA256Filter()],
    "delta+gzip": [tiledb.DeltaFilter(), tiledb.GzipFilter(5)],
}


def _values(md: bytes, specs: List[FilterSpec]) -> Tuple[list, bytes]:
    """The chunk metadata decoded by the decoders (flattened, in on-disk order) and encoded
    again by the encoders: the last filter's table first, then the tables it passes on."""
    flat: list = []
    out = b""
    rest = md
    for spec in reversed(specs):
        t = spec.type
        if t in (1, 2, 3, 5):  # compressors: the earlier metadata is inside their data
            nmd, sizes = CompressionFilter.read_table(rest, spec.name)
            flat += [nmd, len(sizes) - nmd] + [v for s in sizes for v in s]
            out += PART_COUNTS.pack(nmd, len(sizes) - nmd)
            out += b"".join(COMPRESSED_PART.pack(*s) for s in sizes)
            return flat, out
        if t == 11:
            r = MetaReader(rest, spec.name)
            counts = r.counts(AES_COUNTS, AES_PART, "counts")
            parts = [r.record(AES_PART, "part") for _ in range(sum(counts))]
            flat += list(counts) + [v for p in parts for v in p]
            return flat, out + AES_COUNTS.pack(*counts) + b"".join(AES_PART.pack(*p) for p in parts)
        if t in (12, 13):
            lay = layout(16 if t == 12 else 32)
            r = MetaReader(rest, spec.name)
            counts = r.counts(lay.counts, lay.md_entry, "counts")
            entries = [r.record(lay.md_entry, "entry") for _ in range(sum(counts))]
            flat += list(counts) + [v for e in entries for v in e]
            out += lay.counts.pack(*counts) + b"".join(lay.md_entry.pack(*e) for e in entries)
            rest = r.rest()
        elif t in (8, 9, 16):  # the part table
            sizes, rest = read_parts(Stage([rest], []), spec.name)
            flat += [len(sizes)] + sizes
            out += table(sizes)
        elif t == 19:  # DELTA keeps no metadata of its own here
            continue
        else:
            raise AssertionError(f"no decoder in this test for filter {t}")
        if not rest:
            break
    return flat, out


def _leaves(node: Node, src: BytesSource) -> list:
    """The values of the annotated leaf fields in on-disk order (opaque bytes as bytes)."""
    out = []
    for n in node.walk(expand_lazy=True):
        if n.children or n is node:
            continue
        out.append(n.value if n.value is not None else src.read(n.offset, n.size))
    return out


def _check_file(path: str, specs: List[FilterSpec], info: DataInfo,
                key: Optional[bytes] = None) -> int:
    with open(path, "rb") as fh:
        b = fh.read()
    src = BytesSource(b, "a0.tdb")
    pipeline = specs + ([FilterSpec(11)] if key else [])
    checked = 0
    for start, end, chunks in tiles(b):
        # encode: the decoded table written back is the tile, byte for byte
        assert encode_tile(chunks) == b[start:end]
        # annotate: the chunk nodes carry the decoded values
        root = Node("file", "struct", src, 0, len(b))
        tinfo = parse_tile(Cursor(src, start, end, root), pipeline, info, size=end - start)
        assert tinfo.complete and len(tinfo.chunks) == len(chunks)
        tile_node = root.children[0]
        assert tile_node["Num chunks"].value == len(chunks)
        for i, (orig, md, data) in enumerate(chunks):
            c = tile_node[f"Chunk {i + 1}"]
            assert (c["Original length of chunk"].value, c["Filtered chunk length"].value,
                    c["Chunk metadata length"].value) == (orig, len(data), len(md))
            ci = tinfo.chunks[i]
            assert (ci.original_length, ci.filtered_length, ci.metadata_length) == \
                (orig, len(data), len(md))
            # the filters' tables in the chunk metadata: nodes == decoded == re-encoded
            flat, encoded = _values(md, pipeline)
            assert encoded == md[:len(encoded)] and len(encoded) > 0
            leaves = _leaves(c["Chunk metadata"], src)
            assert leaves[:len(flat)] == flat
            checked += 1
    return checked


@pytest.mark.parametrize("name", sorted(STACKS))
def test_tables_agree_on_tiledb_bytes(tmp_path, name):
    data = np.arange(N, dtype=np.int64) * 3 + (np.arange(N) % 7)
    files = write_dense(str(tmp_path / name), data, STACKS[name], tile=TILE)
    specs = [spec_of(f) for f in STACKS[name]]
    checked = _check_file(files["a0.tdb"], specs, attr_info(1))
    assert checked == 3 * 5  # 3 tiles × five 64 KiB chunks, every one compared


def test_tables_agree_encrypted(tmp_path):
    data = np.arange(N, dtype=np.int64)
    filters = [tiledb.ByteShuffleFilter(), tiledb.ChecksumSHA256Filter()]
    files = write_dense(str(tmp_path / "enc"), data, filters, tile=TILE, key=KEY)
    checked = _check_file(files["a0.tdb"], [spec_of(f) for f in filters], attr_info(1), KEY)
    assert checked == 15


def test_string_header_agrees(tmp_path):
    """RLE on var strings (format 17+): the string-encoding header, one definition."""
    data = np.array(["aa", "aa", "bbb", "c", "c", "c"] * 50, dtype=object)
    files = write_dense(str(tmp_path / "s"), data, [tiledb.RleFilter()], dtype=str, var=True)
    with open(files["a0_var.tdb"], "rb") as fh:
        b = fh.read()
    ((start, end, ((orig, md, payload),)),) = tiles(b)
    assert encode_tile([(orig, md, payload)]) == b[start:end]
    values = STRING_HEADER.unpack_from(md)
    assert values[:2] == (0, 1) and values[2] == orig and values[4] == 8 * 300
    assert STRING_HEADER.pack(*values) == md[:STRING_HEADER.size]
    src = BytesSource(b, "a0_var.tdb")
    root = Node("file", "struct", src, 0, len(b))
    info = DataInfo(12, 0xFFFFFFFF, "attribute", True, format_version=22)  # STRING_UTF8
    parse_tile(Cursor(src, start, end, root), [FilterSpec(4)], info, size=end - start)
    leaves = _leaves(root.children[0]["Chunk 1"]["Chunk metadata"], src)
    assert tuple(leaves[:5]) == values

"""Generic tiles' headers and chunk tables copied from templates (formats/tiledb/
tile_templates.py) give exactly the nodes a parse gives: the same bytes the same tree, other
bytes (another pipeline, other data, damage) their own."""
from __future__ import annotations

import os
import struct
from typing import List, Tuple

import pytest

from arrayscope.formats.core.cursor import Cursor
from arrayscope.formats.core.node import Node
from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.tiledb.parse import tile_templates
from arrayscope.formats.tiledb.parse.fragment_metadata import parse_fragment_metadata_file
from arrayscope.formats.tiledb.parse.tile import parse_generic_tile

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
FRAGMENT = os.path.join(DATA, "soma", "pbmc68k", "ms", "RNA", "var", "__fragments",
                        "__1795550412575_1795550412575_4879bec18f12546e7eb2c42b95d6f2f0_22",
                        "__fragment_metadata.tdb")
HEADER = struct.Struct("<IQQBQBI")   # a generic tile's header, up to its pipeline size
LEVEL_AT = HEADER.size + 14          # the GZIP level in the first section's pipeline


def tree(n: Node) -> Tuple:
    """Everything a view shows of `n` and its subtree (lazy runs: their count)."""
    kids: List[Tuple] = [tree(c) for c in n.iter_children()] if not n.is_lazy else \
        [("lazy", len(n.children))]
    return (n.name, n.kind, getattr(n.source, "name", None), n.offset, n.size, repr(n.value),
            n.display, n.status, n.message, n.code, n.type, n.doc, type(n.data).__name__,
            tuple(kids))


def first_tile() -> bytes:
    """The first section of a fragment-metadata file tiledb-py wrote: one generic tile."""
    with open(FRAGMENT, "rb") as fh:
        data = fh.read()
    _v, persisted, *_rest, psize = HEADER.unpack_from(data)
    return data[:HEADER.size + psize + persisted]


def parse(data: bytes) -> Tuple:
    """The tree of a generic tile, with the nodes counted against the parse's budget."""
    src = BytesSource(data, "tile")
    root = Node("root", "struct", src, 0, len(data))
    cur = Cursor(src, 0, len(data), root)
    parse_generic_tile(cur, None, "Generic tile")
    return tree(root), cur.limits.nodes


def uncached(m) -> None:
    """Parse and decode every time: nothing kept as a template or decoded tile."""
    m.setattr(tile_templates, "_MAX_TEMPLATES", 0)
    m.setattr(tile_templates, "_MAX_TILE", -1)


@pytest.fixture
def fresh():
    tile_templates.clear()
    yield
    tile_templates.clear()


def parsed_without_templates(datas: List[bytes], monkeypatch) -> List[Tuple]:
    tile_templates.clear()
    with monkeypatch.context() as m:
        uncached(m)
        out = [parse(d) for d in datas]
    tile_templates.clear()
    return out


def variants() -> List[bytes]:
    tile = first_tile()
    other_level = bytearray(tile)
    other_level[LEVEL_AT] = 9                 # another pipeline: GZIP(9)
    other_data = bytearray(tile)
    other_data[-1] ^= 0xFF                    # same chunk table, other (now corrupt) data
    bad_pipe = bytearray(tile)
    bad_pipe[HEADER.size + 4] = 91            # Num filters 91: cannot fit
    short = tile[:-5]                         # persisted size runs past the end
    return [tile, bytes(other_level), tile, bytes(other_data), bytes(bad_pipe), short, tile]


def test_copies_equal_parses(fresh, monkeypatch):
    datas = variants()
    want = parsed_without_templates(datas, monkeypatch)
    got = [parse(d) for d in datas]
    assert tile_templates._HEADERS and tile_templates._TILES   # templates were used
    assert len(tile_templates._DECODED) == 2                 # GZIP(1) and GZIP(9): clean
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"variant {i}"


def test_pipelines_and_damage_stay_their_own(fresh):
    datas = variants()
    got = [repr(parse(d)[0]) for d in datas]
    assert got[0] == got[2] == got[6]
    assert got[1] != got[0] and "GZIP(9)" in got[1] and "GZIP(9)" not in got[0]
    assert got[3] != got[0] and "'error'" in got[3]          # the chunk's decode fails
    assert "Num filters: 91 filters" in got[4]                # its own error node
    assert "Persisted size: " in got[5]


def test_fragment_metadata_tree_unchanged(fresh, monkeypatch):
    """A whole fragment-metadata file (two dozen sections), parsed again from templates."""
    def once() -> Tuple:
        with open(FRAGMENT, "rb") as fh:
            src = BytesSource(fh.read(), FRAGMENT)
        return tree(parse_fragment_metadata_file(None, src, None)[0])

    tile_templates.clear()
    with monkeypatch.context() as m:
        uncached(m)
        want = once()
    tile_templates.clear()
    first, second = once(), once()
    assert tile_templates._HEADERS
    assert first == want and second == want


def test_a_full_cache_keeps_learning(monkeypatch, fresh):
    """Past the cap the oldest template goes and the new one is kept: a long process keeps
    the headers it meets now (verify's model path asks for them)."""
    monkeypatch.setattr(tile_templates, "_MAX_TEMPLATES", 2)
    for k in ("a", "b", "c"):
        tile_templates._keep(tile_templates._HEADERS, k, object())
    assert list(tile_templates._HEADERS) == ["b", "c"]

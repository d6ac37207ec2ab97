"""The chunks verify checks, in verify order: every chunk of every tile under a node
(expanding lazy lists of tiles, and the generic tiles of big fragment metadata sections,
shown lazily: one chunk at a time, their nodes not built), each with its tile; a lazy run of
tiles as one `Run` where the caller decodes runs in one pass; findings of a subtree already
checked (`Splice`) in its place."""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple, Union

from ...core.node import OK, Node
from ...filters import DataInfo
from ..parse.data_files import TileRun
from ..parse.rawtile import (
    GT_HEAD_SIZE,
    MAX_GENERIC_DECODE,
    GenericTileSpan,
    TileError,
    exact_chunk_table,
    generic_specs,
    peek_generic_tile,
)
from ..parse.tile import ChunkInfo, TileInfo

GENERIC = DataInfo(4, 1, "generic")   # what parse_generic_tile decodes a generic tile as


def iter_chunks(root: Node) -> Iterable[ChunkInfo]:
    """Every chunk of every tile under `root` (expanding lazy lists of tiles), in the verify
    order that formats/core/verify_tasks.py lists its units in."""
    for ci, _tile in iter_chunks_with_tiles(root):
        yield ci


def iter_chunks_with_tiles(root: Node) -> Iterable[Tuple[ChunkInfo, Optional[TileInfo]]]:
    """`iter_chunks`, each chunk with its tile (None outside a tile)."""
    for item in walk_chunks(root, runs=False):
        assert not isinstance(item, Run)
        if isinstance(item, Splice):   # findings, not chunks
            continue
        yield item


class Run:
    """A lazy "Tiles" node whose tiles `verify_chunks` checks in one batch (tile_batch)."""

    __slots__ = ("node", "run")

    def __init__(self, node: Node, run: TileRun):
        self.node, self.run = node, run


def walk_chunks(root: Node, runs: bool, splices: Optional[Dict[int, "Splice"]] = None):
    """The chunks under `root` in verify order; with `runs`, a `Run` in place of the chunks
    of each lazy list of tiles; with `splices`, the `Splice` of a node in place of its
    subtree (a fragment checked, then released, by `verify_streamed`)."""
    stack = [root]
    while stack:
        n = stack.pop()
        if splices is not None and id(n) in splices:
            yield splices[id(n)]
            continue
        if n.data is None and type(n._children) is list:   # most nodes: only their children
            kids = n._children
            for c in kids:
                if c.parent is None:   # what `iter_children` does
                    c.parent = n
            stack.extend(kids)
            continue
        if isinstance(n.data, ChunkInfo):
            tile = n.parent.data if n.parent is not None else None
            yield n.data, tile if isinstance(tile, TileInfo) else None
            continue
        if isinstance(n.data, TileInfo) and n.pending:  # chunk nodes not built: none needed
            for ci in n.data.chunks:
                yield ci, n.data
            continue
        if isinstance(n.data, TileRun):  # a million tiles: one chunk table at a time
            if runs:
                yield Run(n, n.data)
                continue
            for i in range(len(n.data)):
                yield from tile_chunks(n, n.data, i)
            continue
        if isinstance(n.data, GenericTileSpan):   # a big metadata section, shown lazily
            yield from span_chunks(n, n.data)
            continue
        if n.is_lazy:
            if n.child_count() and n.child(0).kind == "tile":  # popped in file order
                stack.extend(n.child(i) for i in reversed(range(n.child_count())))
            continue
        stack.extend(n.iter_children())


class Splice:
    """Findings of a subtree already checked, in its place in the walk."""

    __slots__ = ("found",)

    def __init__(self, found: List[object]):
        self.found = found


def tile_chunks(n: Node, run: TileRun, i: int
                 ) -> Iterable[Union[Tuple[ChunkInfo, Optional[TileInfo]], "Splice"]]:
    """The chunks of tile `i` of lazy tiles node `n`, each with its tile (and a `Splice` of
    the tile node's findings when its chunk table does not parse)."""
    try:
        chunks = run.chunks(i)
    except TileError:
        # The tile's node says what is wrong. It is built here, after the tree's diagnostics
        # were taken, so its findings go into the walk in its place (else a damaged chunk
        # table in a file of more than LAZY tiles went unreported).
        node = n.child(i)
        bad: List[object] = [m for m in node.walk() if m.status != OK]
        if bad:
            yield Splice(bad)
        yield from iter_chunks_with_tiles(node)
        return
    start = int(run.offsets[i])
    tile = TileInfo(run.source, start, int(run.ends[i]) - start, run.role.specs,
                    run.role.info, chunks)
    for ci in chunks:
        yield ci, tile


def generic_chunks(source, start: int, size: int) -> Optional[List[ChunkInfo]]:
    """The chunks of the generic tile at `start` (`size` bytes, its header included) when
    its header, pipeline and chunk table read cleanly, fill it exactly and declare its tile
    size (at most MAX_GENERIC_DECODE); None where its parse has something to say."""
    head = peek_generic_tile(source, start)
    if head is None or head[0] != size:
        return None
    _total, psize, persisted, _enc, tsize = head
    try:
        specs = list(generic_specs(source, start, psize))
    except TileError:
        return None
    table = exact_chunk_table(source, start + GT_HEAD_SIZE + psize, persisted, start + size)
    if not table or sum(c.original for c in table) != tsize or tsize > MAX_GENERIC_DECODE:
        return None
    return [ChunkInfo(i, source, c.original, c.filtered, c.md_offset, c.md_length,
                      c.data_offset, specs, GENERIC) for i, c in enumerate(table)]


def span_chunks(n: Node, span: GenericTileSpan) -> Iterable[Union[Tuple[ChunkInfo, None],
                                                                   "Splice"]]:
    """The chunks of a lazily shown generic tile, read from its bytes (memory: one chunk
    at a time, as the checks take them); where they do not read cleanly its nodes are
    built (its parse decodes no more than MAX_GENERIC_DECODE) and say what is wrong, in
    the walk's place."""
    chunks = generic_chunks(span.source, span.offset, span.size)
    if chunks is not None:
        for ci in chunks:
            yield ci, None
        return
    kids = list(n.iter_children())
    bad: List[object] = [m for k in kids for m in k.walk() if m.status != OK]
    if bad:
        yield Splice(bad)
    for k in reversed(kids):   # popped off a stack, as the walk takes children
        yield from walk_chunks(k, runs=False)

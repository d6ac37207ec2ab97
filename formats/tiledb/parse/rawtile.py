"""Fast, node-free reading of tiles: chunk tables and decoded bytes.

The annotated views (`tile.parse_tile`, `tile.parse_generic_tile`) build a node per field; the
`values` command and the fragment-metadata model only need the decoded bytes, so they use
these helpers, which read the same on-disk layout (format_spec/tile.md, generic_tile.md) with
`struct`; the chunks are decoded by `decode.py` (a generic tile's payload too:
`decode.decode_generic_tile`)."""
from __future__ import annotations

from typing import List, NamedTuple, Optional, Tuple

from ...core.limits import DECODE_BUDGET
from ...filters import FilterSpec
from .tile_layout import CHUNK_HEADER, GENERIC_HEADER, NUM_CHUNKS

GT_HEAD_SIZE = GENERIC_HEADER.size  # 34
# The most unfiltered bytes a generic tile (schema, __meta, commits, fragment metadata
# sections) is decoded to; real ones are far smaller (a million tile offsets: 8 MB).
MAX_GENERIC_DECODE = DECODE_BUDGET


class TileError(Exception):
    """A tile that cannot be read or decoded; `offset` is where (in the tile's source)."""

    def __init__(self, message: str, offset: Optional[int] = None):
        super().__init__(message)
        self.offset = offset


class Chunk(NamedTuple):
    """One chunk of a bare tile as its header gives it (format_spec/tile.md): its cells'
    length, its stored (filtered) length, where its filter metadata and its data lie (offsets
    in the tile's source)."""

    original: int
    filtered: int
    md_offset: int
    md_length: int
    data_offset: int


def chunk_table(source, offset: int, end: int) -> List[Chunk]:
    """The chunks of the bare tile at `offset` (which must end by `end`)."""
    end = min(end, source.size)
    head, entry = NUM_CHUNKS.size, CHUNK_HEADER.size
    if offset + head > end:
        raise TileError(f"tile at {offset}: needs {head} bytes for Num chunks, "
                        f"{max(0, end - offset)} remain", offset)
    mv = source.view(offset, end - offset)  # one view: no bytes copied per chunk header
    (n,) = NUM_CHUNKS.unpack_from(mv)
    if n * entry > end - offset - head:
        raise TileError(f"tile at {offset}: {n} chunks cannot fit in {end - offset} bytes", offset)
    pos = offset + head
    out = []
    unpack = CHUNK_HEADER.unpack_from
    for _ in range(n):
        if pos + entry > end:
            raise TileError(f"tile at {offset}: chunk header at {pos} runs past the tile", pos)
        orig, filt, mdl = unpack(mv, pos - offset)
        md = pos + entry
        data = md + mdl
        if data + filt > end:
            raise TileError(f"tile at {offset}: chunk at {pos} ({mdl} B metadata + {filt} B data) "
                            f"runs past the tile end {end}", pos)
        out.append(Chunk(orig, filt, md, mdl, data))
        pos = data + filt
    return out


def exact_chunk_table(source, start: int, size: int, end: int) -> Optional[List[Chunk]]:
    """`chunk_table` of the bare tile at `start` when it reads cleanly and its chunks fill
    exactly its `size` bytes (which must end by `end`); None otherwise (the caller then
    parses the tile field by field, so the problem shows where it is)."""
    if start + size > end:
        return None
    try:
        table = chunk_table(source, start, start + size)
    except TileError:
        return None
    last = table[-1][4] + table[-1][1] if table else start + NUM_CHUNKS.size
    return table if last == start + size else None


class GenericTileSpan(NamedTuple):
    """Where a generic tile shown lazily lies (a fragment metadata section over
    `fragment_metadata.LAZY_BYTES`): the `data` of its node, for verify to check its chunks
    one at a time without building its nodes (verify/chunk_walk.py `generic_chunks`)."""

    source: object
    offset: int
    size: int


class GenericHead(NamedTuple):
    """What a generic tile's header (`GENERIC_HEADER`) says, and its whole size."""

    version: int
    total: int            # header, pipeline and persisted bytes
    pipeline_size: int
    persisted: int
    encrypted: bool
    tile_size: int        # unfiltered


def generic_head(buf, at: int) -> GenericHead:
    """The header of the generic tile at `at` of the bytes `buf` (which hold it)."""
    v, persisted, tsize, _dt, _cs, enc, psize = GENERIC_HEADER.unpack_from(buf, at)
    return GenericHead(v, GT_HEAD_SIZE + psize + persisted, psize, persisted, enc == 1, tsize)


def read_generic_head(source, offset: int) -> Optional[GenericHead]:
    """The header of the generic tile at `offset` of `source`; None when it does not fit."""
    if offset < 0 or offset + GT_HEAD_SIZE > source.size:
        return None
    return generic_head(source.read(offset, GT_HEAD_SIZE), 0)


def peek_generic_tile(source, offset: int) -> Optional[Tuple[int, int, int, bool, int]]:
    """(total size, pipeline size, persisted size, encrypted, unfiltered tile size) of the
    generic tile at `offset`, or None when its header does not fit."""
    h = read_generic_head(source, offset)
    return None if h is None else (h.total, h.pipeline_size, h.persisted, h.encrypted,
                                   h.tile_size)


_PIPELINES: dict = {}  # serialized generic-tile pipeline -> its FilterSpecs (read-only)


def generic_specs(source, offset: int, psize: int) -> List[FilterSpec]:
    """The filter pipeline (`psize` bytes after the header) of the generic tile at `offset`,
    parsed once per distinct pipeline (TileError when it cannot be parsed)."""
    pstart = offset + GT_HEAD_SIZE
    pbytes = source.read(pstart, psize)
    specs = _PIPELINES.get(pbytes)
    if specs is None:   # (imported here, once a pipeline is new: a thousand sections ask)
        from ...core.cursor import Cursor, ParseStop
        from ...core.node import Node
        from .pipeline import parse_pipeline

        scratch = Node("pipeline", "struct", source, pstart, psize)
        try:
            specs = parse_pipeline(Cursor(source, pstart, pstart + psize, scratch))
        except ParseStop as e:
            raise TileError(f"generic tile at {offset}: bad filter pipeline: {e}", pstart)
        if len(_PIPELINES) < 256:  # every section of every fragment has the same few
            _PIPELINES[pbytes] = specs
    return specs

"""A fragment's data files checked from the model and the raw tile bytes, with no annotated
node tree — the data-file half of verify's model path (`array_verify._Streamed.fast`; the
metadata half is `fast_metadata`).

The tree of a data file (`data_files.parse_data_file`) is a file node and, for up to
`LAZY_TILES` tiles, one deferred tile node each (`tile._deferred_tile`: its chunk table read,
its chunk nodes not built), or one lazy run of tiles beyond. `chunk_items` gives verify's
chunk walk over that tree (`chunk_walk.walk_chunks`) — the same chunks and tiles, in the same
order — read straight from the tile offsets of the fragment metadata, when the tree would
show nothing at all: the file is one of the fragment's, its size the one its metadata gives,
its tiles in order inside it, each chunk table exact, no tile over the schema's size. Else
None: the caller builds the folder's tree, which says where the problem is (annotated nodes
are built only where a finding lands). A file of more than `LAZY_TILES` tiles is parsed by
the tree's own function: a lazy run of tiles, no node per tile either way."""
from __future__ import annotations

from typing import Iterator, List, Optional, Tuple, Union

import numpy as np

from ...core.node import OK
from ..model.array_model import with_schema
from ..parse.data_files import (
    LAZY_TILES,
    expected_size,
    file_role,
    over_limit,
    parse_data_file,
    tile_bounds,
    tile_offsets_for,
)
from ..parse.rawtile import exact_chunk_table
from ..parse.tile import ChunkInfo, TileInfo
from .chunk_walk import Run, walk_chunks

Item = Union[Tuple[ChunkInfo, TileInfo], Run]


def chunk_items(document, source, name: str, array, fm) -> Optional[List[Item]]:
    """What `walk_chunks(runs=True)` yields for the data file `name` (`source`) of a
    fragment with metadata `fm` in its tree, in that order; None where the file's tree would
    hold a finding of its own (or is read otherwise: a remote file)."""
    schema = array.schema_for(getattr(fm, "schema_name", None)) if fm is not None else None
    if fm is None or schema is None or getattr(source, "remote", False):
        return None
    role = file_role(schema, fm, name)
    if role is None:
        return None
    offsets, _why = tile_offsets_for(fm, role)
    if offsets is None or expected_size(fm, role) != source.size:
        return None   # (a size the metadata does not give: the tree's warning)
    offs = np.asarray(offsets, dtype=np.uint64)
    size = source.size
    n = len(offs)
    if n and (bool(np.any(offs[1:] < offs[:-1])) or int(offs.max()) > size):
        return None   # the tree's error nodes
    if n > LAZY_TILES:
        return _lazy_run(document, source, name, schema, fm)
    ends = tile_bounds(offs, size)
    tiles: List[TileInfo] = []
    for i in range(n):
        start, end = int(offs[i]), int(ends[i])
        table = exact_chunk_table(source, start, end - start, size)
        if table is None:
            return None   # parsed field by field in the tree: the problem shows there
        tile = TileInfo(source, start, end - start, role.specs, role.info,
                        [ChunkInfo(k, source, o, f, mo, ml, d, role.specs, role.info)
                         for k, (o, f, mo, ml, d) in enumerate(table)])
        if over_limit(role, tile.original_length, i):
            return None
        tiles.append(tile)
    # the tree's tile nodes are popped off the walk's stack: the last tile first
    return [(ci, tile) for tile in reversed(tiles) for ci in tile.chunks]


def _lazy_run(document, source, name: str, schema, fm) -> Optional[List[Item]]:
    """A file of more than `LAZY_TILES` tiles: the tree's node for it (a lazy run of tiles,
    built without a node per tile), when it holds no finding."""
    node = parse_data_file(document, source, with_schema(document.ctx, schema), fm, schema,
                           name)
    if any(_unclean(node)):
        return None
    return list(walk_chunks(node, runs=True))


def _unclean(node) -> Iterator[object]:
    """The nodes not OK under `node` as the streamed verify's diagnostics walk enters
    them (not into lazy children)."""
    stack = [node]
    while stack:
        m = stack.pop()
        if m.status != OK:
            yield m
        if not m.is_lazy:
            stack.extend(m.iter_children())

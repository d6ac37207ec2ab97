"""Tiles and chunks (format_spec/tile.md) and generic tiles (format_spec/generic_tile.md).

A tile is its chunk table (laid out once in `tile_layout`): per chunk a header, the chunk
metadata and the filtered data. The chunk metadata is split into one node
group per filter (`formats.filters.split_metadata`). Generic tiles (schemas, metadata,
fragment-metadata sections...) are decoded at once and their payload parsed as what it holds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, TypeVar

from ...core.context import KEY_HINT
from ...core.cursor import Cursor, ParseStop
from ...core.engine import run_parser
from ...core.fielddoc import doc
from ...core.findings import (
    AES_TAG,
    CHUNK_DECODE,
    GENERIC_TILE_SIZE,
    NO_KEY,
    SIZE_OVER_LIMIT,
    UNCHECKED,
)
from ...core.node import ERROR, WARNING, Node
from ...core.source import ByteSource
from ...filters import (
    ChunkRun,
    DataInfo,
    FilterError,
    FilterSpec,
    RunContext,
    reverse_chunk,
    split_metadata,
)
from . import tile_templates
from .pipeline import parse_pipeline
from .rawtile import MAX_GENERIC_DECODE, exact_chunk_table
from .tile_layout import CHUNK_HEADER, D_DATA, D_MD, GENERIC_HEADER, NUM_CHUNKS

D_GT_PIPE = doc("Filter pipeline used to filter the tile: [GZIP(1)] as written by 2.30 "
                "(plus filter 11 when encrypted)", spec="generic_tile.md")

M = TypeVar("M")  # the model a generic tile's payload parses into


@dataclass
class ChunkInfo:
    """Where a chunk's parts are, for decoding it later (GUI pipeline panel, values)."""

    index: int
    source: ByteSource
    original_length: int
    filtered_length: int
    metadata_offset: int
    metadata_length: int
    data_offset: int
    specs: List[FilterSpec]
    info: DataInfo
    # Why this chunk must not be decoded (its tile declares more than the schema allows)
    blocked: Optional[str] = None

    def metadata(self) -> bytes:
        return self.source.read(self.metadata_offset, self.metadata_length)

    def data(self) -> bytes:
        return self.source.read(self.data_offset, self.filtered_length)

    def reverse(self, key: Optional[bytes] = None, stop_at: int = 0):
        if self.blocked is not None:
            return ChunkRun([None] * (len(self.specs) + 1), FilterError(self.blocked),
                            len(self.specs) - 1 if self.specs else 0)
        return reverse_chunk(self.specs, self.metadata(), self.data(), self.info,
                             RunContext(key, self.original_length), stop_at)


@dataclass
class TileInfo:
    source: ByteSource
    offset: int
    size: int
    specs: List[FilterSpec]
    info: DataInfo
    chunks: List[ChunkInfo] = field(default_factory=list)
    complete: bool = True
    tree_decoded: bool = False  # decoded while parsing: its failures are in the tree already

    @property
    def original_length(self) -> int:
        return sum(c.original_length for c in self.chunks)

    def decode(self, key: Optional[bytes] = None):
        """(cell bytes, None) or (partial bytes, (chunk index, FilterError))."""
        out: List[bytes] = []
        for c in self.chunks:
            r = c.reverse(key)
            if r.error is not None:
                return b"".join(out), (c.index, r.error)
            out.append(r.cells)
        if not self.complete:
            return b"".join(out), (len(self.chunks), None)
        return b"".join(out), None


def _tile_body(tinfo: TileInfo, known: Optional[List[ChunkInfo]] = None
               ) -> Callable[[Cursor], None]:
    """The parser of a tile's fields: `Num chunks`, then each chunk's header, metadata (split
    per filter) and filtered data. With `known` (the chunks already read from the chunk
    table) the chunk nodes carry those ChunkInfo objects instead of new ones."""
    specs, info = tinfo.specs, tinfo.info

    def body(c: Cursor):
        tinfo.complete = False
        (n,) = NUM_CHUNKS.annotate(c)
        for i in range(n):
            def chunk(cc: Cursor, i=i):
                orig, filt, mdl = CHUNK_HEADER.annotate(cc)
                md_off = cc.pos
                cc.group("Chunk metadata", lambda mc: split_metadata(specs, mc, info), size=mdl,
                         kind="metadata", doc=D_MD)
                cc.need("Chunk filtered data", filt, f"{filt} bytes of filtered data")
                d = cc.raw("Chunk filtered data", filt, D_DATA)
                d.kind = "payload"
                if known is not None and i < len(known):
                    ci = known[i]
                else:
                    ci = ChunkInfo(i, cc.source, orig, filt, md_off, mdl, d.offset, specs, info)
                    tinfo.chunks.append(ci)
                cc.node.data = ci
                cc.node.display = f"{orig} B → {filt} B (+{mdl} B metadata)"
            c.group(f"Chunk {i + 1}", chunk, kind="chunk")
        tinfo.complete = True
    return body


def _deferred_tile(cur: Cursor, specs: List[FilterSpec], info: DataInfo, name: str, size: int,
                   node_doc) -> Optional[TileInfo]:
    """A tile whose chunk table reads cleanly and fills exactly its `size` bytes: its node
    now, its chunk nodes when first shown (a 64 Mi-cell array opens without building 8 192
    chunk nodes; dump and verify build them and let them go). None: parse it eagerly, so
    the problem shows where it is."""
    from ...core.node import DeferredChildren

    src, start = cur.source, cur.pos
    table = exact_chunk_table(src, start, size, cur.end)
    if table is None:
        return None
    tinfo = TileInfo(src, start, size, specs, info,
                     [ChunkInfo(i, src, o, f, mo, ml, d, specs, info)
                      for i, (o, f, mo, ml, d) in enumerate(table)])
    g = Node(name, "tile", src, start, size, doc=node_doc, data=tinfo)
    g.display = f"{len(table)} chunk(s), {tinfo.original_length} B unfiltered"

    def build() -> List[Node]:
        from ...core.engine import fill_gaps

        scratch = Node(name, "tile", src, start, size)
        sub = Cursor(src, start, start + size, scratch, cur.endian, cur.ctx)
        body = _tile_body(TileInfo(src, start, size, specs, info), tinfo.chunks)
        try:
            body(sub)
        except ParseStop:
            pass
        fill_gaps(scratch)
        return list(scratch.children)
    g.set_lazy(DeferredChildren(build))
    cur._add(g)
    cur.pos = start + size
    return tinfo


def parse_tile(cur: Cursor, specs: List[FilterSpec], info: DataInfo, name: str = "Tile",
               size: Optional[int] = None, node_doc=None, defer: bool = False) -> TileInfo:
    """Parse one tile at `cur` as a node `name`; `size` bounds it when known (from fragment
    metadata or a generic tile header). `defer=True` (data tiles, whose size the fragment
    metadata gives) builds the chunk nodes only when they are first shown, when the chunk
    table is sound."""
    if defer and size is not None:
        lazy = _deferred_tile(cur, specs, info, name, size, node_doc)
        if lazy is not None:
            return lazy
    if size is not None:
        copy = tile_templates.cloned_tile(cur, specs, info, name, size, node_doc, TileInfo,
                                        ChunkInfo)
        if copy is not None:
            return copy
    tinfo = TileInfo(cur.source, cur.pos, 0, specs, info)
    g = cur.group(name, _tile_body(tinfo), size=size, kind="tile", doc=node_doc)
    tinfo.size = g.size
    g.data = tinfo
    if g.display is None:
        g.display = f"{len(tinfo.chunks)} chunk(s), {tinfo.original_length} B unfiltered"
    if size is not None:
        tile_templates.learn_tile(cur, g, tinfo, specs, info, name, size, node_doc)
    return tinfo


def decode_into(document, tile_node: Node, tinfo: TileInfo, key: Optional[bytes],
                payload_name: str, parse_fn: Optional[Callable[[Cursor], object]],
                payload_title: str = "Payload", ctx=None) -> Optional[Node]:
    """Reverse the tile's filters; on success add a child node parsing the payload (a derived
    source) with `parse_fn`; on failure mark the offending chunk (a missing key is a warning)."""
    cells, err = tile_templates.decoded(tinfo, key)
    tinfo.tree_decoded = True
    if err is not None:
        idx, fe = err
        if fe is None:
            return None  # the tile itself is cut short: its error is already in the tree
        target = _chunk_data_node(tile_node, idx) or tile_node
        kind = getattr(fe, "kind", None)
        if kind == FilterError.NO_KEY:
            target.mark(WARNING, f"encrypted payload not decoded: {KEY_HINT}")
            target.code = NO_KEY
        elif kind == FilterError.NO_CODEC:
            target.mark(WARNING, f"not checked: {fe}")
            target.code = UNCHECKED
        else:
            target.mark(ERROR, f"chunk {idx + 1}: {fe}")
            target.code = AES_TAG if kind == FilterError.TAG else CHUNK_DECODE
        return None
    src = document.add_derived(cells, payload_name, origin=f"{payload_title} of {tile_node.path()}",
                               origin_node=tile_node, parent=tinfo.source) if document else None
    if src is None:
        from ...core.source import BytesSource
        src = BytesSource(cells, payload_name, origin_node=tile_node, parent=tinfo.source)
    root = Node(payload_title, "struct", src, 0, src.size)
    if parse_fn is not None:
        run_parser(payload_title, "struct", src, parse_fn, ctx, node=root)
    else:
        from ...core.node import hex_preview
        from ...core.plain import PLAIN_DOC
        if src.size:
            root.add(Node("unparsed", "unparsed", src, 0, src.size, status=WARNING,
                          message="payload of a kind arrayscope does not parse",
                          display=hex_preview(src.read(0, 16)), doc=PLAIN_DOC))
    root.size = src.size
    tile_node.add(root)
    return root


def _chunk_data_node(tile_node: Node, idx: int) -> Optional[Node]:
    ch = tile_node.find(f"Chunk {idx + 1}")
    return ch.find("Chunk filtered data") if ch is not None else None


@dataclass
class GenericTile:
    node: Node = field(init=False)  # set by parse_generic_tile before it returns
    version: Optional[int] = None
    encrypted: bool = False
    tile: Optional[TileInfo] = None
    payload: Optional[Node] = None


def parse_generic_tile(cur: Cursor, document, name: str = "Generic tile",
                       parse_fn: Optional[Callable[[Cursor], object]] = None,
                       payload_name: Optional[str] = None, ctx=None,
                       payload_title: str = "Payload") -> GenericTile:
    """A generic tile at `cur`: header, pipeline, filtered tile; then the payload decoded and
    parsed with `parse_fn` into a child node `payload_title` (on a derived source)."""
    gt = GenericTile()
    key = ctx.key if ctx is not None else None

    def body(c: Cursor):
        fields_read: tuple = ()

        def header(h: Cursor):
            nonlocal fields_read
            fields_read = GENERIC_HEADER.annotate(h)
            gt.version, persisted, _size, _type, _cell, enc, psize = fields_read
            gt.encrypted = enc == 1
            specs_holder = []
            h.group("Filter pipeline", lambda pc: specs_holder.extend(
                parse_pipeline(pc, "Filters")), size=psize, doc=D_GT_PIPE)
            h.node.data = (persisted, specs_holder)
        copy = tile_templates.cloned_header(c)
        if copy is not None:
            hg, fields, specs = copy
            gt.version, persisted = fields[0], fields[1]
            gt.encrypted = fields[5] == 1
        else:
            hg = c.group("Generic tile header", header)
            persisted, specs = hg.data
            hg.data = None
            tile_templates.learn_header(c, hg, fields_read, specs)
            fields = fields_read
        tile_size = fields[2] if fields else None
        if persisted > c.remaining:
            hg["Persisted size"].mark(ERROR, f"Persisted size: {persisted} bytes declared, only "
                                             f"{c.remaining} bytes follow the header")
        info = DataInfo(4, 1, "generic")
        gt.tile = parse_tile(c, specs, info, "Tile", size=min(persisted, c.remaining))
        tile_node = c.node.children[-1]
        declared = gt.tile.original_length
        size_wrong = gt.tile.complete and tile_size is not None and declared != tile_size
        if size_wrong:
            # libtiledb allocates Tile size bytes and unfilters the chunks into them: it
            # refuses any other total ("Tile: Incorrect unfiltered tile size allocated")
            size_node = hg.find("Tile size") or hg
            size_node.mark(ERROR, f"Tile size {tile_size}, but the tile's chunks unfilter to "
                                  f"{declared} bytes: libtiledb refuses the tile")
            size_node.code = GENERIC_TILE_SIZE
        if gt.tile.complete and declared > MAX_GENERIC_DECODE:
            # Nothing in the format bounds a generic tile: decode at most a budget, so a
            # small file that inflates to gigabytes costs nothing at open or in verify.
            msg = (f"the tile's chunks declare {declared} unfiltered bytes, over the "
                   f"{MAX_GENERIC_DECODE}-byte limit for a generic tile: not decoded")
            if not size_wrong:   # (else the error above says what is wrong)
                tile_node.mark(WARNING, msg)
                tile_node.code = SIZE_OVER_LIMIT
            gt.tile.complete = False
            for ch in gt.tile.chunks:
                ch.blocked = msg
        if gt.tile.complete:
            pname = payload_name or f"{getattr(c.source, 'name', 'tile')} @{tile_node.offset} payload"
            gt.payload = decode_into(document, tile_node, gt.tile, key, pname, parse_fn,
                                     payload_title, ctx)

    gt.node = cur.group(name, body, kind="struct")
    return gt


def parse_generic_tile_file(document, source, ctx, parse_payload: Callable[[Cursor, Any], Optional[M]],
                            title: str, describe: Optional[Callable[[M], str]] = None) -> Node:
    """A file that is one generic tile (schema, enumeration, `__meta`...): the file node,
    with the payload parsed by `parse_payload(cursor, ctx) -> model`. The model (or None when
    the bytes stop short) becomes the `data` of the file node and of the payload node;
    `describe(model)` gives the payload node's display."""
    import os

    name = os.path.basename(getattr(source, "name", title).rstrip("/")) or title
    holder: list = []

    def payload(c: Cursor):
        holder.append(None)
        model = parse_payload(c, ctx)
        holder[-1] = model
        if model is not None:
            c.node.data = model
            if describe is not None:
                c.node.display = describe(model)

    def body(cur: Cursor):
        parse_generic_tile(cur, document, "Generic tile", payload,
                           payload_name=f"{source.name} ({title.lower()} payload)", ctx=ctx,
                           payload_title=title)

    root = run_parser(name, "file", source, body, ctx)
    root.data = holder[0] if holder else None
    return root

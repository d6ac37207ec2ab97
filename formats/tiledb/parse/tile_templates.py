"""Generic tiles' nodes copied from templates: a fragment-metadata file holds two dozen
generic tiles whose headers (filter pipeline included) and chunk tables repeat byte for byte
across the sections and the fragments (100 fragments: 2 701 tiles, 15 distinct chunk
tables); each distinct one is parsed once and the nodes of the others are copies at their
offset (verify of a thousand fragments parsed 27 000 of each).

Only a clean parse is a template (every node OK, no finding, no unparsed byte): a damaged
header or table is parsed where it is, so its findings come from the parser. A template
depends only on what its key holds: the header's bytes (no filter option reads the
context), or the chunk table's bytes (chunk headers and metadata: not the filtered data,
whose preview is read where it is) with the tile's size, pipeline and data info.

The cells of small tiles that decode cleanly are kept too (`decoded`): the same section
bytes in another fragment are not decoded again."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ...core.cursor import Cursor
from ...core.fielddoc import FieldDoc
from ...core.node import OK, Node, hex_preview
from ...filters import DataInfo, FilterSpec
from .rawtile import exact_chunk_table
from .tile_layout import CHUNK_HEADER, GENERIC_HEADER, NUM_CHUNKS

_PIPE_SIZE_AT = GENERIC_HEADER.offset_of("Filter pipeline size")
_MAX_BYTES = 4096      # longer headers or chunk tables are parsed each time (and not kept)
_MAX_TEMPLATES = 512   # distinct ones kept (of each kind); a new one evicts the oldest
_SCALARS = (int, float, str, bool, type(None))

# A node of a template: (index of its parent, -1 for the root; name, kind, offset from the
# root, size, value, display, doc, type, role: what its data is, "" for none)
_Entry = Tuple[int, str, str, int, int, object, Optional[str], Optional[FieldDoc],
               Optional[str], str]


class Template:
    __slots__ = ("nodes", "height", "extra")

    def __init__(self, nodes: List[_Entry], height: int, extra: Any):
        self.nodes, self.height, self.extra = nodes, height, extra


def _scalar(v: object) -> bool:
    return isinstance(v, _SCALARS) or (type(v) is list and all(isinstance(x, _SCALARS)
                                                                for x in v))


def _capture(root: Node, role: Callable[[Node], Optional[str]]) -> Optional[Template]:
    """`root`'s subtree as a template, or None when a node is not clean or holds data that
    `role` does not name (None from it: not a template)."""
    nodes: List[_Entry] = []
    height = 0
    stack: List[Tuple[Node, int, int]] = [(root, -1, 0)]
    while stack:
        n, parent, depth = stack.pop()
        kids = n._children
        if type(kids) is not list or n.status != OK or n.message is not None or \
                n.code is not None or n.kind == "unparsed" or n.source is not root.source or \
                not _scalar(n.value):
            return None
        r = role(n) if n.data is not None else ""
        if r is None:
            return None
        height = max(height, depth)
        nodes.append((parent, n.name, n.kind, n.offset - root.offset, n.size,
                      list(n.value) if type(n.value) is list else n.value,
                      n.display, n.doc, n.type, r))
        me = len(nodes) - 1
        stack.extend((c, me, depth + 1) for c in reversed(kids))
    return Template(nodes, height, None)


def _fits(cur: Cursor, t: Template) -> bool:
    """The copy adds nodes the parse would have added without reaching a limit."""
    lim = cur.limits
    return cur.depth + t.height < lim.max_depth and lim.nodes + len(t.nodes) <= lim.max_nodes


def _instantiate(cur: Cursor, t: Template) -> List[Node]:
    """The template's nodes at `cur`, the root added to the cursor's node (counted against
    its budget as the parse counts them); the cursor moves past them."""
    src, base = cur.source, cur.pos
    made: List[Node] = []
    for parent, name, kind, off, size, value, display, doc, typ, _role in t.nodes:
        n = Node(name, kind, src, base + off, size,
                 list(value) if type(value) is list else value, display, doc, OK, None, typ)
        if parent >= 0:   # what `Node.add` does
            p = made[parent]
            n.parent = p
            p._children.append(n)  # type: ignore[union-attr]
        made.append(n)
    cur.limits.nodes += len(made)
    cur.node.add(made[0])
    cur.pos = base + made[0].size
    return made


# ---- generic tile headers -------------------------------------------------------------
_HEADERS: Dict[Tuple[str, bytes], Template] = {}


def _header_key(cur: Cursor) -> Optional[Tuple[str, bytes]]:
    """The header's bytes at `cur` when the cursor's range holds all of them (then no
    length check in it can fail for want of bytes)."""
    start = cur.pos
    at = start + _PIPE_SIZE_AT
    if at + 4 > cur.end:
        return None
    psize = int.from_bytes(cur.source.read(at, 4), "little")
    n = GENERIC_HEADER.size + psize
    if n > _MAX_BYTES or start + n > cur.end:
        return None
    data = cur.source.read(start, n)
    return (cur.endian, data) if len(data) == n else None



def _keep(cache: dict, key, t: "Template") -> None:
    """Add a template, the oldest out when the cache is full: a long process (the window, a
    test run) that has met 512 distinct headers keeps learning the ones it meets now (a
    full cache that kept the first ones sent every later fragment off verify's model path)."""
    if _MAX_TEMPLATES <= 0:
        return
    while len(cache) >= _MAX_TEMPLATES:
        del cache[next(iter(cache))]
    cache[key] = t


def header_parses_clean(source, start: int, end: int) -> bool:
    """Whether the generic tile header at `start` (ending by `end`) has the bytes of one
    that parsed clean (a template): its parse would mark nothing (verify's model path)."""
    if not _HEADERS:
        return False
    key = _header_key(Cursor(source, start, end, None))
    return key is not None and key in _HEADERS


def cloned_header(cur: Cursor) -> Optional[Tuple[Node, Tuple, List[FilterSpec]]]:
    """(the header node, its GENERIC_HEADER values, the pipeline's specs) copied from a
    template and added at `cur` as the parse adds them, or None: parse it."""
    key = _header_key(cur) if _HEADERS else None
    t = _HEADERS.get(key) if key is not None else None
    if t is None or not _fits(cur, t):
        return None
    fields, spec_items = t.extra
    specs = [FilterSpec(ty, dict(opts)) for ty, opts in spec_items]
    made = _instantiate(cur, t)
    for n, e in zip(made, t.nodes):
        if e[9] == "specs":
            n.data = specs
    return made[0], fields, list(specs)


def learn_header(cur: Cursor, header: Node, fields: Tuple, specs: List[FilterSpec]) -> None:
    """Keep `header` (just parsed from `cur`'s range) as the template of its bytes when its
    parse was clean."""
    if any(not all(isinstance(v, _SCALARS) for v in s.options.values()) for s in specs):
        return
    save, cur.pos = cur.pos, header.offset
    try:
        key = _header_key(cur)
    finally:
        cur.pos = save
    if key is None or key in _HEADERS or len(key[1]) != header.size:
        return
    holders: list = []

    def role(n: Node) -> Optional[str]:   # the "Filters" node holds the specs list
        if isinstance(n.data, list) and [id(s) for s in n.data] == [id(s) for s in specs]:
            holders.append(n)
            return "specs"
        return None

    t = _capture(header, role)
    if t is None or len(holders) != 1:
        return
    t.extra = (tuple(fields), [(s.type, dict(s.options)) for s in specs])
    _keep(_HEADERS, key, t)


# ---- tiles (their chunk tables) ---------------------------------------------------------
_TILES: Dict[Tuple, Template] = {}
_MAX_CHUNKS = 16


def _tile_key(cur: Cursor, specs: List[FilterSpec], info: DataInfo, name: str, size: int,
              node_doc) -> Optional[Tuple]:
    """What a tile's nodes depend on, when its chunk table reads and fills exactly `size`
    bytes: the table's bytes (Num chunks, each chunk's header and metadata), the size, the
    pipeline, the data info, the name and doc."""
    src, start = cur.source, cur.pos
    table = exact_chunk_table(src, start, size, cur.end)
    if table is None or len(table) > _MAX_CHUNKS:
        return None
    parts = [src.read(start, NUM_CHUNKS.size)]
    head = CHUNK_HEADER.size
    for _o, _f, md, mdl, _d in table:
        parts.append(src.read(md - head, head + mdl))
    data = b"".join(parts)
    if len(data) > _MAX_BYTES:
        return None
    pipeline = _pipeline_key(specs, info)
    return None if pipeline is None else (cur.endian, name, id(node_doc), size, pipeline, data)


def _pipeline_key(specs: List[FilterSpec], info: DataInfo) -> Optional[Tuple]:
    """The filters and data info by value, types included (1, 1.0 and True are not the same
    option); None when one is not hashable."""
    key = (tuple((s.type, tuple((k, type(v), v) for k, v in s.options.items())) for s in specs),
           type(info), tuple((type(v), v) for v in vars(info).values()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def cloned_tile(cur: Cursor, specs: List[FilterSpec], info: DataInfo, name: str, size: int,
                node_doc, make_tile: Callable[..., Any], make_chunk: Callable[..., Any]
                ) -> Optional[Any]:
    """The tile's node copied from a template and added at `cur` as the parse adds it (its
    TileInfo `make_tile(...)` with a ChunkInfo `make_chunk(...)` per chunk), or None: parse
    it."""
    key = _tile_key(cur, specs, info, name, size, node_doc) if _TILES else None
    t = _TILES.get(key) if key is not None else None
    if t is None or t.extra[0] is not node_doc or not _fits(cur, t):
        return None
    src, base = cur.source, cur.pos
    made = _instantiate(cur, t)
    tinfo = make_tile(src, base, made[0].size, specs, info)
    chunks = t.extra[1]
    for n, e in zip(made, t.nodes):
        role = e[9]
        if role == "tile":
            n.data = tinfo
        elif role == "chunk":   # in chunk order, as parsed
            i = len(tinfo.chunks)
            orig, filt, md, mdl, d = chunks[i]
            ci = make_chunk(i, src, orig, filt, base + md, mdl, base + d, specs, info)
            tinfo.chunks.append(ci)
            n.data = ci
        elif role == "data":    # the preview of the filtered data, read where it is
            n.display = hex_preview(src.read(n.offset, min(n.size, 64)), 16) if n.size \
                else "(empty)"
    return tinfo


def learn_tile(cur: Cursor, tile: Node, tinfo: Any, specs: List[FilterSpec], info: DataInfo,
               name: str, size: int, node_doc) -> None:
    """Keep `tile` (just parsed from `cur`'s range, which it now ends at) as the template of
    its chunk table when its parse was clean."""
    if not tinfo.complete or tinfo.tree_decoded or tile.size != size or \
            tile.data is not tinfo:
        return
    save, cur.pos = cur.pos, tile.offset
    try:
        key = _tile_key(cur, specs, info, name, size, node_doc)
    finally:
        cur.pos = save
    if key is None or key in _TILES:
        return
    chunk_ids = {id(c): c for c in tinfo.chunks}
    seen: List[Any] = []

    def role(n: Node) -> Optional[str]:
        if n.data is tinfo and n is tile:
            return "tile"
        if id(n.data) in chunk_ids and n.kind == "chunk":
            seen.append(n.data)
            return "chunk"
        return None

    t = _capture(tile, role)
    if t is None or seen != tinfo.chunks:
        return
    base = tile.offset
    for i, e in enumerate(t.nodes):   # the filtered data of each chunk: previewed on copy
        if e[1] == "Chunk filtered data" and e[2] == "payload" and e[9] == "":
            t.nodes[i] = e[:9] + ("data",)
    if sum(e[9] == "data" for e in t.nodes) != len(seen) or \
            any(c.blocked is not None or c.source is not tile.source for c in seen):
        return
    t.extra = (node_doc, [(c.original_length, c.filtered_length, c.metadata_offset - base,
                           c.metadata_length, c.data_offset - base) for c in seen])
    _keep(_TILES, key, t)


# ---- decoded tiles -----------------------------------------------------------------------
# The cells of small tiles that decoded cleanly, by everything decoding reads: the filters,
# the data info and the tile's bytes (chunk table, metadata, data). A thousand fragments'
# sections are mostly the same bytes (27 001 sections, 4 005 distinct).
_DECODED: Dict[Tuple, bytes] = {}
_DECODED_BYTES = [0]
_MAX_TILE = 64 << 10        # bigger tiles are decoded each time
_MAX_DECODED = 8 << 20      # cells kept in all; beyond, the cache starts again


def decoded(tinfo: Any, key: Optional[bytes]) -> Tuple[bytes, Optional[Tuple]]:
    """`tinfo.decode(key)`, the cells taken from the same tile decoded before when it was
    clean (encrypted, blocked, cut short or big tiles are decoded each time)."""
    src, start, size = tinfo.source, tinfo.offset, tinfo.size
    if key is not None or not tinfo.complete or size > _MAX_TILE or \
            any(c.blocked is not None or c.source is not src or c.specs is not tinfo.specs or
                c.info is not tinfo.info or c.metadata_offset < start or
                c.data_offset + c.filtered_length > start + size for c in tinfo.chunks):
        return tinfo.decode(key)
    pipeline = _pipeline_key(tinfo.specs, tinfo.info)
    data = src.read(start, size)
    if pipeline is None or len(data) != size:
        return tinfo.decode(key)
    k = (pipeline, data)
    got = _DECODED.get(k)
    if got is not None:
        return got, None
    cells, err = tinfo.decode(key)
    if err is None and isinstance(cells, bytes):
        if _DECODED_BYTES[0] + len(cells) > _MAX_DECODED:
            _DECODED.clear()
            _DECODED_BYTES[0] = 0
        _DECODED[k] = cells
        _DECODED_BYTES[0] += len(cells)
    return cells, err


def clear() -> None:
    """Forget every template and decoded tile (tests)."""
    _HEADERS.clear()
    _TILES.clear()
    _DECODED.clear()
    _DECODED_BYTES[0] = 0

"""The v3 `sharding_indexed` codec: a chunk file (a shard) holds a grid of inner chunks.

```
shard = inner chunk bytes ... | index            (index_location "end", the default)
      = index | inner chunk bytes ...            (index_location "start")
index = n × (u64 offset, u64 nbytes) in C order over the shard's inner grid, encoded with
        index_codecs (bytes, then optionally crc32c: 4 more bytes, CRC32C of the entries)
```
offset/nbytes both 2^64-1: that inner chunk is missing (every record the fill value).
Each inner chunk is encoded with the configuration's own `codecs` (bytes, zstd, ...): it is
read as a chunk of `ShardSpec.inner`, an ArrayMeta of the same array whose chunks are the
inner chunks, so everything that decodes and shows a chunk serves an inner chunk unchanged.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

import numpy as np

from ..core.fielddoc import doc
from ..core.findings import ZARR_SHARD_INDEX, ZARR_SHARD_UNREFERENCED
from ..core.jsontree import element, member, value_node
from ..core.node import ERROR, WARNING, DeferredChildren, LazyChildren, Node
from .meta import ArrayMeta, _fail, _unsupported, _v3_chain

SPEC = "zarr v3 sharding_indexed codec"
MISSING = (1 << 64) - 1
ENTRY = 16
D_SHARD_CODEC = doc("sharding_indexed: each chunk file is a shard of inner chunks (chunk_shape), "
                    "each encoded with `codecs`, located by an index of (offset, nbytes) pairs "
                    "encoded with `index_codecs` at `index_location`", spec=SPEC)
D_INDEX = doc("Shard index: one (offset, nbytes) pair of u64 per inner chunk, C order over "
              "the shard's inner grid; 2^64-1 twice: the inner chunk is missing", spec=SPEC)
D_ENTRY = doc("Index entry: u64 offset and u64 nbytes of one inner chunk in the shard",
              spec=SPEC)
D_INDEX_CRC = doc("CRC32C of the index entries, little-endian (the index's crc32c codec)",
                  spec="zarr v3 crc32c codec")
D_INNER = doc("An inner chunk: its bytes, encoded with the sharding codec's `codecs`",
              spec=SPEC)
D_UNREFERENCED = doc("Bytes of the shard that no index entry points to", spec=SPEC)


@dataclass
class ShardSpec:
    """The sharding_indexed codec of an array: `inner` reads the inner chunks."""

    inner: ArrayMeta
    per_shard: Tuple[int, ...]       # inner chunks along each axis of one shard
    index_endian: str                # "<" or ">"
    index_crc: bool
    index_at_end: bool

    @property
    def count(self) -> int:
        return math.prod(self.per_shard) if self.per_shard else 1

    @property
    def index_size(self) -> int:
        return ENTRY * self.count + (4 if self.index_crc else 0)


def shard_spec(meta: ArrayMeta, ab, ab_node: Optional[Node], v: dict,
               dnode: Optional[Node]) -> Optional[ShardSpec]:
    """The ShardSpec of a sharding_indexed codec declaration (None: not usable, marked)."""
    if ab_node is not None:
        ab_node.doc = D_SHARD_CODEC
    conf = ab.get("configuration") if isinstance(ab, dict) else None
    conf_node = member(ab_node, "configuration")
    if not isinstance(conf, dict):
        _fail(meta, ab_node, "sharding_indexed has no configuration object")
        return None
    shape = conf.get("chunk_shape")
    if not (isinstance(shape, list) and len(shape) == meta.ndim and
            all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in shape)):
        _fail(meta, member(conf_node, "chunk_shape") or conf_node,
              f"sharding chunk_shape must be {meta.ndim} positive integers, found {shape!r}"[:200])
        return None
    if any(s % c for s, c in zip(meta.chunks, shape)):
        _fail(meta, member(conf_node, "chunk_shape"),
              f"the shard shape {list(meta.chunks)} is not a multiple of the inner chunk shape "
              f"{shape} on every axis")
        return None
    loc = conf.get("index_location", "end")
    if loc not in ("start", "end"):
        _fail(meta, member(conf_node, "index_location"),
              f"index_location must be 'start' or 'end', found {loc!r}"[:200])
        return None
    endian, crc = _index_codecs(meta, conf.get("index_codecs"), member(conf_node, "index_codecs"))
    if endian is None:
        return None
    inner = ArrayMeta(3, meta.path, shape=meta.shape, chunks=tuple(shape),
                      perm=tuple(range(meta.ndim)), key_encoding=meta.key_encoding,
                      separator=meta.separator, node=ab_node)
    _v3_chain(inner, conf.get("codecs"), member(conf_node, "codecs"), v, dnode, inner=True)
    if not inner.usable:
        meta.usable, meta.problem = False, f"sharding_indexed: {inner.problem}"
        return None
    return ShardSpec(inner, tuple(s // c for s, c in zip(meta.chunks, shape)), endian, crc,
                     loc == "end")


def _index_codecs(meta: ArrayMeta, codecs, node: Optional[Node]) -> Tuple[Optional[str], bool]:
    """(byte order, crc32c present) of index_codecs: `bytes` then an optional `crc32c` are
    what the spec's writers use; any other chain is not read (warning, not an error)."""
    names = [c.get("name") if isinstance(c, dict) else c for c in codecs] \
        if isinstance(codecs, list) else None
    if names not in (["bytes"], ["bytes", "crc32c"]):
        _unsupported(meta, node, f"index_codecs {names!r}: arrayscope reads 'bytes' with an "
                                 f"optional 'crc32c' only"[:200])
        return None, False
    conf = codecs[0].get("configuration") if isinstance(codecs[0], dict) else None
    endian = conf.get("endian", "little") if isinstance(conf, dict) else "little"
    if endian not in ("little", "big"):
        _fail(meta, element(value_node(node), 0),
              f"index bytes codec: endian must be 'little' or 'big', found {endian!r}")
        return None, False
    return ("<" if endian == "little" else ">"), len(names) == 2


# ---- the index ---------------------------------------------------------------------------
@dataclass
class Index:
    """A shard's index read from its bytes: where it is, its entries, what is wrong."""

    at: int                                   # offset of the index in the shard
    entries: np.ndarray                       # (count, 2) uint64: offset, nbytes
    problems: List[Tuple[Optional[int], int, str]]   # (entry or None, offset, message)
    stored_crc: Optional[int] = None

    def present(self, i: int) -> bool:
        return int(self.entries[i, 0]) != MISSING or int(self.entries[i, 1]) != MISSING


def read_index(sp: ShardSpec, data) -> Tuple[Optional[Index], str]:
    """The index of shard bytes `data` checked against the shard (entries inside the
    data region, not overlapping each other, crc32c); (None, why) when there is none."""
    size = len(data)
    if size < sp.index_size:
        return None, (f"the shard has {size} bytes; its index of {sp.count} entries needs "
                      f"{sp.index_size}")
    at = size - sp.index_size if sp.index_at_end else 0
    raw = bytes(data[at:at + ENTRY * sp.count])
    entries = np.frombuffer(raw, dtype=np.dtype(sp.index_endian + "u8")).reshape(-1, 2)
    idx = Index(at, entries, [])
    if sp.index_crc:
        from .codecs.simple import crc32c
        end = at + ENTRY * sp.count
        idx.stored_crc = int.from_bytes(bytes(data[end:end + 4]), "little")
        want = crc32c(raw)
        if idx.stored_crc != want:
            idx.problems.append((None, end, f"shard index CRC32C: stored 0x{idx.stored_crc:08X}, "
                                            f"computed 0x{want:08X}"))
    lo, hi = (0, at) if sp.index_at_end else (sp.index_size, size)
    spans = []
    for i in range(sp.count):
        off, nb = int(entries[i, 0]), int(entries[i, 1])
        where = at + ENTRY * i
        if off == MISSING and nb == MISSING:
            continue
        if off == MISSING or nb == MISSING:
            idx.problems.append((i, where, f"index entry {i}: offset {off} and nbytes {nb}: "
                                           f"only one of them says 'missing' (2^64-1)"))
        elif off < lo or off + nb > hi:
            idx.problems.append((i, where, f"index entry {i}: bytes {off}..{off + nb} are not "
                                           f"inside the shard's chunk bytes {lo}..{hi}"))
        else:
            spans.append((off, off + nb, i))
    spans.sort()
    # against the span reaching furthest so far, not only the previous one: a long entry
    # can cover several later ones that do not overlap each other
    far: Optional[Tuple[int, int, int]] = None
    for b0, b1, bi in spans:
        if far is not None and b0 < far[1]:
            a0, a1, ai = far
            idx.problems.append((bi, at + ENTRY * bi, f"index entry {bi}: bytes {b0}..{b1} "
                                                      f"overlap entry {ai}'s {a0}..{a1}"))
        if far is None or b1 > far[1]:
            far = (b0, b1, bi)
    return idx, ""


def local_coords(sp: ShardSpec, i: int) -> Tuple[int, ...]:
    return tuple(int(x) for x in np.unravel_index(i, sp.per_shard)) if sp.per_shard else ()


def global_coords(sp: ShardSpec, shard: Tuple[int, ...], local: Tuple[int, ...]
                  ) -> Optional[Tuple[int, ...]]:
    """The inner chunk's position in the array's grid of inner chunks; None beyond the
    array's edge (an edge shard's padding: nothing there is read)."""
    g = tuple(s * p + c for s, p, c in zip(shard, sp.per_shard, local))
    return None if any(x >= n for x, n in zip(g, sp.inner.grid)) else g


def inner_chunks(meta: ArrayMeta, shard: Tuple[int, ...], data, key: str,
                 errors: List[str]) -> Iterator[Tuple[Tuple[int, ...], bytes]]:
    """(coords in the inner grid, decoded bytes) of each present inner chunk of shard
    `data`; problems are appended to `errors` and their inner chunks skipped."""
    from .values import decode_chunk

    sp = meta.shard
    assert sp is not None
    idx, why = read_index(sp, data)
    if idx is None:
        errors.append(f"{key}: {why}")
        return
    bad = {i for i, _, _ in idx.problems if i is not None}
    errors.extend(f"{key}: {m}" for _, _, m in idx.problems)
    for i in range(sp.count):
        if i in bad or not idx.present(i):
            continue
        local = local_coords(sp, i)
        g = global_coords(sp, shard, local)
        if g is None:
            continue
        off, nb = int(idx.entries[i, 0]), int(idx.entries[i, 1])
        try:
            out = decode_chunk(sp.inner, bytes(data[off:off + nb]))
        except Exception as e:  # noqa: BLE001 - a damaged inner chunk is an error entry
            errors.append(f"{key} inner chunk {list(local)}: {e}")
            continue
        yield g, out


# ---- the tree ------------------------------------------------------------------------------
def inner_label(label: str, local: Tuple[int, ...]) -> str:
    """The name of an inner chunk's derived source (what its findings name): the shard's
    name, then its coordinates in the shard (`c/1/0 [0, 1]`)."""
    return f"{label} {list(local)}"


def split_inner_label(name: str) -> Optional[Tuple[str, Tuple[int, ...]]]:
    """(shard name, coordinates in the shard) of an `inner_label`; None for another name."""
    head, sep, tail = name.rpartition(" [")
    if not sep or not tail.endswith("]"):
        return None
    try:
        local = tuple(int(x) for x in tail[:-1].split(",") if x.strip())
    except ValueError:
        return None
    return head, local


def shard_into(document, meta: ArrayMeta, parent: Node, src, shard: Optional[Tuple[int, ...]],
               label: str, lazy: bool) -> None:
    """The index and inner chunk nodes of shard `src` under `parent`: entries, the index
    CRC, each present inner chunk over its bytes (decoded at once, or on demand when
    `lazy`), bytes no entry points to."""
    sp = meta.shard
    assert sp is not None
    data = src.read(0, src.size)
    idx, why = read_index(sp, data)
    if idx is None:
        parent.add(Node("shard index", "error", src, 0, src.size, status=ERROR, message=why,
                        code=ZARR_SHARD_INDEX))
        return
    inode = Node("Shard index", "struct", src, idx.at, sp.index_size, doc=D_INDEX,
                 display=f"{sp.count} entries, {'crc32c, ' if sp.index_crc else ''}at the "
                         f"{'end' if sp.index_at_end else 'start'}")
    parent.add(inode)
    shard_c = shard if shard is not None else tuple(0 for _ in sp.per_shard)

    def entry(i: int) -> Node:
        off, nb = int(idx.entries[i, 0]), int(idx.entries[i, 1])
        local = list(local_coords(sp, i))
        text = f"inner chunk {local}: missing" if not idx.present(i) else \
            f"inner chunk {local}: offset {off}, {nb} B"
        return Node(f"Entry {i}", "struct", src, idx.at + ENTRY * i, ENTRY, doc=D_ENTRY,
                    value=(off, nb), display=text)
    entries = Node("Entries", "array", src, idx.at, ENTRY * sp.count, doc=D_INDEX,
                   display=f"{sp.count} × (u64 offset, u64 nbytes)")
    entries.set_lazy(LazyChildren(sp.count, entry))
    inode.add(entries)
    if sp.index_crc:
        inode.add(Node("CRC32C", "field", src, idx.at + ENTRY * sp.count, 4, doc=D_INDEX_CRC,
                       value=idx.stored_crc, display=f"0x{idx.stored_crc:08X}"))
    for i, off, msg in idx.problems:
        # entries are built on demand: the problem is its own node, seen by verify
        inode.add(Node("index entry" if i is not None else "index CRC32C", "error", src, off,
                       0, status=ERROR, message=msg, code=ZARR_SHARD_INDEX))
    bad = {i for i, _, _ in idx.problems if i is not None}
    spans = []
    for i in range(sp.count):
        if i in bad or not idx.present(i):
            continue
        off, nb = int(idx.entries[i, 0]), int(idx.entries[i, 1])
        spans.append((off, nb, i))
    spans.sort()
    for off, nb, i in spans:
        local = local_coords(sp, i)
        g = global_coords(sp, shard_c, local)
        node = Node(f"Inner chunk {list(local)}", "chunk", src, off, nb, doc=D_INNER,
                    display=f"chunk {list(g) if g is not None else list(local)}: {nb} B stored")
        parent.add(node)
        if g is None:
            node.message = "beyond the array's edge: padding, not read"
            continue
        build = _InnerBuild(document, sp.inner, node, src, off, nb, g, inner_label(label, local))
        if lazy:
            dn = Node("decoded", "payload", src, off, 0, display="not decoded yet: expand to decode")
            dn.set_lazy(DeferredChildren(build.build, build.release))
            node.add(dn)
        else:
            for k in build.build():
                node.add(k)
    _unreferenced(parent, src, idx, sp, spans)


def _unreferenced(parent: Node, src, idx: Index, sp: ShardSpec, spans) -> None:
    lo, hi = (0, idx.at) if sp.index_at_end else (sp.index_size, src.size)
    pos = lo
    for off, nb, _ in spans + [(hi, 0, -1)]:
        if off > pos:
            parent.add(Node("unreferenced bytes", "bytes", src, pos, off - pos,
                            doc=D_UNREFERENCED, status=WARNING, code=ZARR_SHARD_UNREFERENCED,
                            message=f"{off - pos} bytes at {pos} that no index entry points to"))
        pos = max(pos, off + nb)


class _InnerBuild:
    """Decode one inner chunk: its bytes become a derived source read as a chunk of the
    inner ArrayMeta (stages and records); `release` forgets what it made."""

    def __init__(self, document, inner: ArrayMeta, node: Node, src, off: int, nb: int,
                 coords: Tuple[int, ...], label: str):
        self.document, self.inner, self.node, self.src = document, inner, node, src
        self.off, self.nb, self.coords, self.label = off, nb, coords, label
        self.made: list = []
        from .chunk import ChunkFile
        self.chunk = ChunkFile(inner, coords, label)
        node.data = self.chunk   # the chunk view shows an inner chunk as a chunk

    def build(self) -> List[Node]:
        from .chunk import chunk_parts

        piece = self.document.add_derived(self.src.read(self.off, self.nb), self.label,
                                          origin="inner chunk of a shard",
                                          origin_node=self.node, parent=self.src)
        self.made = [piece]
        holder = Node("inner", "chunk", piece, 0, piece.size)
        chunk = self.chunk
        chunk_parts(self.document, self.inner, holder, piece, self.label, self.coords, False,
                    chunk)
        if chunk.decoder is not None:
            self.made.extend(chunk.decoder.created)
            chunk.decoder.created = []
        kids = list(holder.children)
        for k in kids:
            k.parent = None
        return kids

    def release(self, _kids) -> None:
        for s in self.made:
            self.document.remove_derived(s)
        self.made = []
        self.chunk.decoder = None

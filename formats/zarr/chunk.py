"""One chunk file: its codec chain reversed stage by stage, then its records.

Each stage is a node named `Codec k: NAME` over that stage's input bytes (the file for the
last codec, a derived source for the others) with the nodes of its framing; its output is
a derived source (`<key> ← NAME`) that the next stage, or the records, explain.

Opening is proportional to the metadata, not the data: the last codec's stage is framed on
the file's own bytes (zstd frame and block headers, blosc header, bstarts and stream sizes:
nothing is decompressed, and every byte of the file is covered). A small array is then
decoded at once, its stages and records directly under the file node (eager). A large one
(see `tree.EAGER_MAX_BYTES` / `tree.EAGER_MAX_CHUNKS`) gets a "decoded" node instead, whose
children (`DeferredChildren`) are built when first shown — expanding or selecting it, a
name lookup — and can be released again (`Node.release_deferred`: `verify` decodes every
chunk and keeps none). Decoding errors (a checksum, a short chunk) appear once decoded:
under the "decoded" node, or as marks on the frame's nodes (Content_Checksum).
"""
from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..core.cursor import Cursor, ParseStop
from ..core.engine import fill_gaps
from ..core.fielddoc import doc
from ..core.findings import SIZE_OVER_LIMIT, UNCHECKED, ZARR_SHARD_INDEX, ZARR_SHARD_UNREFERENCED
from ..core.limits import DECODE_BUDGET
from ..core.node import ERROR, WARNING, DeferredChildren, LazyChildren, Node, hex_preview
from ..core.standin import parse_failed, stand_in_node
from .codecs import CodecError, CodecSpec, get
from .decode import stage_limit
from .meta import ENTRY, ArrayMeta, ShardSpec
from .records import records_into
from .shard import (
    D_ENTRY,
    D_INDEX,
    D_INDEX_CRC,
    D_INNER,
    D_UNREFERENCED,
    Index,
    global_coords,
    inner_label,
    local_coords,
    read_index,
)

D_CHUNK = doc("A chunk file: the chunk's records after the codec chain (stored bytes)",
              spec="zarr v2/v3 chunk storage")
D_STAGE = doc("A codec stage: the encoded bytes this codec produced; reversing it gives the "
              "previous stage's bytes (shown as their own source)")


def content_into(document, parent: Node, meta: ArrayMeta, src, coords, label: str,
                 lazy: bool) -> None:
    """What a chunk's decoded bytes hold: records, or a shard's index and inner chunks."""
    if meta.shard is not None:
        shard_into(document, meta, parent, src, coords, label, lazy)
    else:
        records_into(parent, meta, src, coords)


@dataclass(frozen=True)
class CodecStage:
    """`data` of a stage node: codec k of the array's chain (0: the first applied)."""

    k: int
    spec: CodecSpec


@dataclass
class ChunkFile:
    """`data` of a chunk file node: its array, its grid position and its decoder."""

    meta: ArrayMeta
    coords: Optional[Tuple[int, ...]]
    key: str
    decoder: Optional["ChunkDecoder"] = None


class _Stage:
    """A stage whose framing is annotated: the state its codec's `finish` needs."""

    __slots__ = ("spec", "src", "node", "state", "end", "error")

    def __init__(self, spec: CodecSpec, src, node: Node, state, end: int):
        self.spec, self.src, self.node, self.state, self.end = spec, src, node, state, end
        self.error: Optional[str] = None   # why `finish` failed, once it has


def _codec_failure(node: Node, src, exc: Exception, where_default: int) -> None:
    """The error node of a stage that could not be reversed, added to `node`."""
    if isinstance(exc, CodecError):
        if exc.status == "marked":
            return
        where = exc.where if exc.where is not None else where_default
        where = max(0, min(where, src.size))
        node.add(Node("decode error" if exc.status == ERROR else "not decoded", "error", src,
                      where, 0, status=ERROR if exc.status == ERROR else WARNING,
                      message=str(exc), code=None if exc.status == ERROR else UNCHECKED))
        return
    tb = traceback.extract_tb(exc.__traceback__)[-1]
    node.add(Node("internal codec error", "error", src, where_default, 0, status=ERROR,
                  message=f"{type(exc).__name__}: {exc} ({tb.filename.rsplit('/', 1)[-1]}:"
                          f"{tb.lineno})"))


def frame_stage(spec: CodecSpec, src, node: Node, limit: int) -> Optional[_Stage]:
    """Annotate the framing of `src` (the stage's input) under `node` without decoding;
    None when the framing itself is wrong (its error node is under `node`)."""
    cur = Cursor(src, 0, src.size, node)
    try:
        state = get(spec.name).frame(spec, cur, limit)
        return _Stage(spec, src, node, state, cur.pos)
    except ParseStop:
        return None
    except Exception as exc:  # CodecError, or a codec bug that must not hide the tree
        _codec_failure(node, src, exc, cur.pos)
        return None
    finally:
        fill_gaps(node)


def finish_stage(st: _Stage, limit: int, errors: Node) -> Optional[bytes]:
    """Decode a framed stage; a failure becomes an error node under `errors` (the stage node
    when decoding at open, the chunk's "decoded" node when decoding on demand)."""
    try:
        return get(st.spec.name).finish(st.spec, st.src.read(0, st.src.size), st.state, limit)
    except Exception as exc:  # noqa: BLE001
        st.error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, CodecError) else str(exc)
        _codec_failure(errors, st.src, exc, st.end)
        return None


def run_stage(spec: CodecSpec, src, node: Node, limit: int) -> Optional[bytes]:
    """Annotate and decode one stage (framing, then decoding)."""
    st = frame_stage(spec, src, node, limit)
    if st is None:
        return None
    out = finish_stage(st, limit, node)
    fill_gaps(node)
    return out


def _new_source(document, data, label: str, spec: CodecSpec, stage: Node, parent_src,
                created: Optional[list]):
    """The output of reversing `spec` (a derived source of `document`, named `<key> ← NAME`)."""
    name = f"{label} ← {spec.label}"
    if document is not None:
        src = document.add_derived(data, name, origin=f"{spec.label} decoded",
                                   origin_node=stage, parent=parent_src)
        if created is not None:
            created.append(src)
        return src
    from ..core.source import BytesSource
    return BytesSource(data, name, origin_node=stage, parent=parent_src)


def decode_stages(document, meta: ArrayMeta, parent: Node, src, label: str,
                  first: Optional[int] = None, created: Optional[list] = None) -> Optional[object]:
    """Reverse codecs `first`, first-1, …, 1 of `meta` (all by default) starting from `src`,
    adding stage nodes to `parent`; returns the source holding the decoded records (or
    None). Derived sources made are appended to `created`."""
    limit = stage_limit(meta)
    cur_src = src
    top = len(meta.codecs) - 1 if first is None else first
    for k in range(top, -1, -1):
        spec = meta.codecs[k]
        stage = Node(f"Codec {k + 1}: {spec.label}", "filter", cur_src, 0, cur_src.size,
                     doc=D_STAGE, data=CodecStage(k, spec))
        parent.add(stage)
        data = run_stage(spec, cur_src, stage, limit)
        if data is None:
            return None
        stage.display = f"{cur_src.size} B → {len(data)} B"
        cur_src = _new_source(document, data, label, spec, stage, cur_src, created)
    return cur_src


class ChunkDecoder:
    """What decoding one chunk file on demand needs: the last codec's stage, framed on the
    file's bytes at open, and the rest of the chain. `build()` makes the children of the
    chunk's "decoded" node; `release()` forgets the derived sources they made."""

    def __init__(self, document, meta: ArrayMeta, file_node: Node, st: _Stage,
                 coords: Optional[Tuple[int, ...]], label: str):
        self.document = document
        self.meta = meta
        self.file_node = file_node
        self.st = st
        self.coords = coords
        self.label = label
        self.node: Optional[Node] = None   # the "decoded" node
        self.created: list = []

    def build(self) -> list:
        scratch = Node("decoded", "payload", self.st.src, 0, 0)
        out = self.decode_into(scratch, scratch)
        kids = list(scratch.children)
        for c in kids:
            c.parent = None
        if self.node is not None:
            if out is not None:
                self.node.display = f"{self.st.src.size} B stored → {out.size} B decoded"
            elif self.st.error is not None:
                self.node.display = f"not decoded: {self.st.error}"
            else:
                self.node.display = "not decoded: see the stages"
        return kids

    def decode_into(self, parent: Node, last_errors: Node):
        """Finish the last stage, reverse the other codecs, add the records (all under
        `parent`; a failure of the last codec under `last_errors`). Returns the source of
        the decoded records, or None."""
        meta, st = self.meta, self.st
        data = finish_stage(st, stage_limit(meta), last_errors)
        fill_gaps(st.node)
        if data is None:
            return None
        k = len(meta.codecs) - 1
        st.node.display = f"{st.src.size} B → {len(data)} B"
        src = _new_source(self.document, data, self.label, st.spec, st.node, st.src,
                          self.created)
        if k > 0:
            src = decode_stages(self.document, meta, parent, src, self.label, k - 1,
                                self.created)
        if src is not None:
            content_into(self.document, parent, meta, src, self.coords, self.label, False)
        return src

    def release(self, _kids) -> None:
        if self.document is not None:
            for s in self.created:
                self.document.remove_derived(s)
        self.created = []
        if self.node is not None:
            self.node.display = D_PENDING_TEXT


D_DECODED = doc("The chunk decoded: the codec stages after the last one (each output a "
                "derived source) and the records. Decoded when first shown (expanding or "
                "selecting it), by `values` and by `verify`; a large array is not decoded at "
                "open", spec="zarr v2/v3 chunk storage")
D_PENDING_TEXT = "not decoded yet: expand to decode"


def chunk_file_node(document, meta: ArrayMeta, path: str, coords: Optional[Tuple[int, ...]],
                    key: str, lazy: bool = False) -> Node:
    """A chunk file's node: its last codec's framing on the file's bytes, then (eager) the
    other stages and the records, or (lazy) a "decoded" node whose children are built on
    first access (see ChunkDecoder)."""
    src = document.open_source(path)
    node = Node(os.path.basename(path), "file", src, 0, src.size, doc=D_CHUNK)
    where = f"chunk {list(coords)}" if coords is not None else "chunk"
    node.display = f"{where}: {src.size} B stored"
    node.value = key
    chunk = ChunkFile(meta, coords, key)
    node.data = chunk
    if getattr(src, "remote", False):
        # on an object store each chunk is a request: framed when first shown (the built
        # node is the local one; verify builds them all first)
        from ..core.remote import ReadDeferred

        deferred = ReadDeferred(lambda: _built(node, deferred, lambda: chunk_parts(
            document, meta, node, src, document.relname(path), coords, lazy, chunk)))
        node.set_lazy(deferred)
        return node
    chunk_parts(document, meta, node, src, document.relname(path), coords, lazy, chunk)
    if parse_failed(node):   # only then: a chunk that decodes is never called a stand-in
        standing = stand_in_node(src, os.path.basename(path), f"chunk file {key!r}")
        if standing is not None:
            standing.doc, standing.display, standing.value, standing.data = \
                D_CHUNK, node.display, key, chunk
            return standing
    return node


def _built(node: Node, deferred, fill) -> List[Node]:
    """The children `fill()` adds to `node`, built while the node holds a plain list (the
    decoder keeps `node` itself), handed back to the deferred children that own them."""
    node._children = []
    try:
        fill()
        return list(node._children)
    finally:
        node._children = deferred


def chunk_parts(document, meta: ArrayMeta, node: Node, src, label: str,
                coords: Optional[Tuple[int, ...]], lazy: bool, chunk: ChunkFile) -> None:
    """The nodes of one stored chunk `src` (a file, or an inner chunk of a shard) under
    `node`; `label` names the derived sources (`<label> ← NAME`)."""
    if (meta.rtype is None and not meta.vlen) or not meta.usable:
        if src.size:
            node.add(Node("chunk data", "payload", src, 0, src.size,
                          display=hex_preview(src.read(0, 16)), status=WARNING,
                          message=f"not decoded: {meta.problem or 'the metadata has no usable dtype'}",
                          code=UNCHECKED))
        return
    if not meta.codecs:   # the records (or a shard's index and inner chunks) are the bytes
        content_into(document, node, meta, src, coords, label, lazy)
        fill_gaps(node)
        return
    k = len(meta.codecs) - 1
    spec = meta.codecs[k]
    # a shard's budget is per inner chunk (shard.py): its records are never decoded at once
    decoded = meta.records_per_chunk * meta.itemsize if meta.shard is None else 0
    if decoded > DECODE_BUDGET:
        # shape × item size is all the format says; decoding it for the tree or verify
        # would allocate that much from a few stored bytes: report, do not decode
        if src.size:
            node.add(Node("chunk data", "payload", src, 0, src.size,
                          display=hex_preview(src.read(0, 16)), status=WARNING,
                          code=SIZE_OVER_LIMIT,
                          message=f"a chunk decodes to {decoded} bytes (chunk shape × item "
                                  f"size), over the {DECODE_BUDGET}-byte decode budget: not "
                                  f"decoded"))
        return
    stage = Node(f"Codec {k + 1}: {spec.label}", "filter", src, 0, src.size, doc=D_STAGE,
                 data=CodecStage(k, spec))
    node.add(stage)
    st = frame_stage(spec, src, stage, stage_limit(meta))
    if st is not None:
        dec = ChunkDecoder(document, meta, node, st, coords, label)
        chunk.decoder = dec
        if lazy:
            dn = Node("decoded", "payload", src, 0, 0, doc=D_DECODED, display=D_PENDING_TEXT)
            dn.set_lazy(DeferredChildren(dec.build, dec.release))
            dn.data = dec
            dec.node = dn
            node.add(dn)
        else:
            dec.decode_into(node, stage)
    fill_gaps(node)


# ---- a shard's index and inner chunks (the sharding_indexed codec: shard.py) ---------------
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
        self.chunk = ChunkFile(inner, coords, label)
        node.data = self.chunk   # the chunk view shows an inner chunk as a chunk

    def build(self) -> List[Node]:
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

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
from ..core.findings import SIZE_OVER_LIMIT, UNCHECKED
from ..core.limits import DECODE_BUDGET
from ..core.node import ERROR, WARNING, DeferredChildren, Node, hex_preview
from ..core.standin import parse_failed, stand_in_node
from .codecs import CodecError, CodecSpec, get
from .meta import ArrayMeta
from .records import records_into

D_CHUNK = doc("A chunk file: the chunk's records after the codec chain (stored bytes)",
              spec="zarr v2/v3 chunk storage")
D_STAGE = doc("A codec stage: the encoded bytes this codec produced; reversing it gives the "
              "previous stage's bytes (shown as their own source)")


def content_into(document, parent: Node, meta: ArrayMeta, src, coords, label: str,
                 lazy: bool) -> None:
    """What a chunk's decoded bytes hold: records, or a shard's index and inner chunks."""
    if meta.shard is not None:
        from .shard import shard_into
        shard_into(document, meta, parent, src, coords, label, lazy)
    else:
        records_into(parent, meta, src, coords)


def stage_limit(meta: ArrayMeta) -> int:
    """Most bytes a decoder may produce for one chunk (twice the expected size, so a wrong
    length is reported by the records check rather than as a codec failure)."""
    if meta.shard is not None:   # a shard's codecs: its inner chunks may each grow a little
        sp = meta.shard
        return sp.count * (stage_limit(sp.inner) + 64) + sp.index_size
    if meta.vlen:
        from .vlen import stage_limit as vlen_limit
        return vlen_limit(meta)
    return 2 * meta.records_per_chunk * meta.itemsize + 4096


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

"""verify's Zarr work: every chunk the tree has not decoded (a large store opens without
decoding), decoded one at a time and released again, in tree order — in this process
(`verify`) or as units for workers (`ZarrVerifyUnits`, named by their index path in the
annotation tree: child indices from the root, found again in the worker's own tree)."""
from __future__ import annotations

from typing import List, Optional, Tuple

from ..core.findings import of_node
from ..core.node import ERROR, OK, Node
from ..core.plugin import NotDone, VerifyUnit
from ..core.source import ByteSource
from ..core.standin import stand_in_node
from ..core.verify_tally import tally

IndexPath = Tuple[int, ...]


def verify(document) -> List[Node]:
    """What decoding every pending chunk found — error nodes under the chunk's "decoded"
    node, marks on its frame (Content_Checksum) — never more than one chunk held."""
    if document.root is None:
        return []
    tally_chunks(document)
    out: List[Node] = []
    for node in pending_chunks(document.root):
        out.extend(verify_chunk(node))
    return out


def tally_chunks(document) -> None:
    """Count every chunk of the tree in the verify tally (its stored bytes): here, whoever
    decodes the chunks (this process or verify tasks on workers)."""
    from .chunk import D_CHUNK

    tal = tally()
    for n in document.root.walk():
        if n.doc is D_CHUNK and n.source is not None:
            tal.tile(document.source_name(n.source), n.size)


def pending_chunks(root: Node) -> List[Node]:
    """The "decoded" nodes not built yet, in tree order (verify decodes each once)."""
    return [n for n in root.walk() if n.name == "decoded" and n.pending]


def verify_chunk(node: Node) -> List[Node]:
    """Decode one chunk ("decoded" node), return what decoding found, release it again."""
    chunk = node.parent
    if chunk is None or not node.pending:
        return []
    before = {id(n) for n in chunk.walk() if n.status != OK}
    node.ensure_built()
    try:
        found = [n for n in chunk.walk() if n.status != OK and id(n) not in before]
    finally:
        node.release_deferred()
    if any(n.status == ERROR for n in found) and isinstance(chunk.source, ByteSource):
        # a chunk whose framing parsed (the tree looked at it then) but whose bytes decode
        # to nonsense: a stand-in is said once, as what it is
        standing = stand_in_node(chunk.source, chunk.name, f"chunk file {chunk.value!r}")
        if standing is not None:
            standing.parent = chunk.parent
            return list(standing.children)
    return found


def chunk_units(root: Node) -> List[VerifyUnit]:
    """The pending chunks as units (index path, the chunk's stored bytes), in `Node.walk`
    order."""
    out: List[VerifyUnit] = []
    stack: List[Tuple[IndexPath, Node]] = [((), root)]
    while stack:
        path, n = stack.pop()
        if n.name == "decoded" and n.pending:
            out.append(VerifyUnit(int(n.parent.size) if n.parent is not None else 0, path))
        if n.is_lazy:
            continue
        kids = list(n.iter_children())
        stack.extend((path + (i,), kids[i]) for i in reversed(range(len(kids))))
    return out


def resolve(root: Node, path: IndexPath) -> Optional[Node]:
    node = root
    for i in path:
        if not 0 <= i < node.child_count():
            return None
        node = node.child(i)
    return node


class ZarrVerifyUnits:
    """`plugin.VerifyUnits` of a Zarr store: one unit a chunk."""

    def units(self, document, workers: int) -> Optional[List[VerifyUnit]]:
        return chunk_units(document.root) if document.root is not None else None

    def open(self, path: str, key: Optional[bytes], as_format: Optional[str], stamp: str):
        """The tree the caller listed the chunks from (and its index paths)."""
        from .. import open as open_dataset
        from ..core.remote import build_read_deferred
        from ..core.verify_tasks import fingerprint

        doc = open_dataset(path, key=key, as_format=as_format)
        build_read_deferred(doc.root)
        if stamp and fingerprint(doc) != stamp:
            doc.close()
            raise RuntimeError("the dataset this worker reads differs from the one being "
                               "verified (changed meanwhile, or another copy)")
        return doc

    def run(self, document, work: IndexPath) -> object:
        node = resolve(document.root, work) if document.root is not None else None
        if node is None:
            return NotDone(f"no node at {work}: the dataset changed while it was verified")
        return [of_node(n, document) for n in verify_chunk(node)]

    def merge(self, document, units: List[VerifyUnit], results: List[object]) -> List[object]:
        """The chunks' findings in unit order (tree order); a chunk a worker did not check
        is checked here; after the tree's own diagnostics."""
        from ..core.remote import build_read_deferred

        build_read_deferred(document.root)
        out: List[object] = [n for n in document.diagnostics() if n.status != OK]
        tally_chunks(document)   # as a single-process verify counts them
        for unit, got in zip(units, results):
            if isinstance(got, list):
                out.extend(got)
                continue
            node = resolve(document.root, unit.work)   # type: ignore[arg-type]
            if node is not None:
                out.extend(verify_chunk(node))
        return out


VERIFY_UNITS = ZarrVerifyUnits()

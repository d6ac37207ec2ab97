"""One opened document as the window sees it: the document, its interval index, the
version of each node, and the derived sources the window made (filter-stage outputs)."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from arrayscope.formats.core.node import Node, builds

from .intervals import DocumentIndex

VERSION_NAMES = ("Array version", "Version number", "Format version", "Version")


class Session:
    def __init__(self, document):
        self.document = document
        self.index = DocumentIndex(document.root)
        self.stage_sources: Dict[Tuple[int, int], object] = {}   # (id(chunk info), k) -> source
        self.stage_nodes: Dict[int, Node] = {}                     # id(source) -> node
        self._keep: List[object] = []
        self._derived_seen = len(document.derived)
        self._builds_seen = builds()
        self._opened_diagnostics: Optional[List[Node]] = None

    @property
    def opened_diagnostics(self) -> List[Node]:
        """The tree's diagnostics as it was opened: one walk for every panel that shows
        them on a new document (a tree of 1 000 fragments was walked three times)."""
        if self._opened_diagnostics is None:
            self._opened_diagnostics = self.document.diagnostics()
        return self._opened_diagnostics

    def _fresh(self) -> bool:
        """Derived sources made since the index was built (a Zarr chunk decoded when its
        node was expanded or selected), and deferred children built since (a lazily opened
        TileDB fragment or file), need their leaves indexed: rebuild on next use. True when
        the index was dropped."""
        n, b = len(self.document.derived), builds()
        if n != self._derived_seen or b != self._builds_seen:
            self._derived_seen, self._builds_seen = n, b
            self.index.invalidate()
            return True
        return False

    @property
    def root(self) -> Optional[Node]:
        return self.document.root

    @property
    def key(self) -> Optional[bytes]:
        return self.document.ctx.key

    def node_at(self, source, offset: int) -> Optional[Node]:
        self._fresh()
        node = self.index.node_at(source, offset)
        if self._fresh():   # the byte was in a file not parsed yet: look again in its parse
            node = self.index.node_at(source, offset)
        return node

    def leaves_in(self, source, start: int, stop: int):
        self._fresh()
        idx = self.index.for_source(source)
        return idx.leaves_in(start, stop) if idx is not None else ()

    def sources(self) -> List[object]:
        return list(self.document.sources) + list(self.document.derived)

    def version_of(self, node: Optional[Node]) -> Optional[int]:
        """The format version that applies to `node`: the nearest ancestor holding a
        "Version number"/"Array version" field (directly or in its header), else the
        document's context."""
        n = node
        while n is not None:
            v = _version_in(n)
            if v is not None:
                return v
            n = n.parent
        return self.document.ctx.format_version

    def attach(self, parent: Node, child: Node) -> None:
        """Hang a window-made node (a stage output) under `parent` and index it."""
        parent.add(child)
        self.index.add(child)

    def close(self) -> None:
        self.document.close()


def _version_in(node: Node) -> Optional[int]:
    if node.is_lazy:
        return None
    if node.name in VERSION_NAMES and isinstance(node.value, int):
        return node.value
    for c in node.children:
        if c.name in VERSION_NAMES and isinstance(c.value, int):
            return c.value
    for c in node.children:
        if c.name.endswith("header") and not c.is_lazy:
            for cc in c.children:
                if cc.name in VERSION_NAMES and isinstance(cc.value, int):
                    return cc.value
    return None

"""Which node owns a byte: an interval index per source (no Qt).

Built once per document from its non-lazy nodes: for each source, the leaves (nodes with no
children in the same source, lazy arrays included) sorted by start offset. A byte lookup is
a bisect; inside a lazy array the child is found arithmetically (uniform items) or by a
binary search over the children's offsets (a few factory calls), never by a scan.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Dict, Iterator, List, Optional, Tuple


class SourceIndex:
    __slots__ = ("source", "starts", "leaves")

    def __init__(self, source, leaves: List[object]):
        self.source = source
        leaves.sort(key=lambda n: (n.offset, -n.size))
        self.leaves = leaves
        self.starts = [n.offset for n in leaves]

    def node_at(self, offset: int):
        """The deepest node of this source whose range holds `offset` (None in no node)."""
        i = bisect_right(self.starts, offset) - 1
        # leaves rarely overlap; look back a little for one that holds the byte
        for j in range(i, max(-1, i - 8), -1):
            leaf = self.leaves[j]
            if leaf.offset <= offset < leaf.offset + leaf.size:
                return descend(leaf, offset)
        if i < 0:
            return None
        # in a gap between leaves: the nearest enclosing ancestor
        n = self.leaves[i].parent
        while n is not None:
            if n.source is self.source and n.offset <= offset < n.offset + n.size:
                return n
            n = n.parent
        return None

    def leaves_in(self, start: int, stop: int, limit: int = 4096) -> Iterator[object]:
        """Leaves overlapping [start, stop), in offset order (at most `limit`)."""
        i = max(0, bisect_right(self.starts, start) - 1)
        # a long leaf that began before `start` may still cover it
        k = i
        while k > 0 and i - k < 8:
            k -= 1
        i = k
        n = 0
        leaves, starts = self.leaves, self.starts
        while i < len(leaves) and starts[i] < stop and n < limit:
            leaf = leaves[i]
            if leaf.offset + leaf.size > start:
                yield leaf
                n += 1
            i += 1


def child_index_at(node, offset: int) -> Optional[int]:
    """Index of the child of lazy `node` that holds `offset` (same source), or None."""
    count = node.child_count()
    if count == 0 or node.size <= 0:
        return None
    rel = offset - node.offset
    if node.size % count == 0:
        i = rel // (node.size // count)
        if 0 <= i < count:
            c = node.child(i)
            if c.offset <= offset < c.end:
                return i
    lo, hi = 0, count - 1
    while lo <= hi:  # binary search over children's offsets
        mid = (lo + hi) // 2
        c = node.child(mid)
        if offset < c.offset:
            hi = mid - 1
        elif offset >= c.end:
            lo = mid + 1
        else:
            return mid
    return None


SCAN_LIMIT = 4096


def descend(node, offset: int):
    """From `node`, go down through lazy children (and the built children of what they make,
    e.g. the fields of a lazily made record) to the deepest one holding `offset`."""
    depth = 0
    while depth < 32:
        if node.is_lazy:
            i = child_index_at(node, offset)
            if i is None:
                break
            child = node.child(i)
        else:
            kids = node.children
            if not kids or len(kids) > SCAN_LIMIT:
                break
            child = None
            for c in kids:
                if c.source is node.source and c.size > 0 and c.offset <= offset < c.offset + c.size:
                    child = c
                    break
            if child is None:
                break
            if child.parent is None:
                child.parent = node
        if child.source is not node.source:
            break
        node = child
        depth += 1
    return node


def child_position(parent, child) -> Optional[int]:
    """Index of `child` among `parent`'s children (arithmetic for lazy arrays)."""
    kids = parent.children
    if not parent.is_lazy:
        for i, c in enumerate(kids):
            if c is child:
                return i
        return None
    for i, c in kids._cache.items():
        if c is child:
            return i
    if child.source is parent.source:
        return child_index_at(parent, child.offset)
    return None


class DocumentIndex:
    """Interval indexes of every source of a document, built on first use."""

    def __init__(self, root):
        self.root = root
        self._by_source: Optional[Dict[int, SourceIndex]] = None

    def invalidate(self) -> None:
        self._by_source = None

    def add(self, node) -> None:
        """Index a subtree hung under the tree (a stage made by the pipeline panel): its
        sources are new ones, so only they are indexed, not the whole document again (a
        chunk is reversed at each first selection). A source indexed already: rebuild."""
        if self._by_source is None:
            return
        new = self._build(node)
        if any(k in self._by_source for k in new):
            self._by_source = None
            return
        self._by_source.update(new)

    def _build(self, top=None) -> Dict[int, SourceIndex]:
        groups: Dict[int, Tuple[object, List[object]]] = {}
        top = self.root if top is None else top
        stack = [top] if top is not None else []
        while stack:
            n = stack.pop()
            src = n.source
            if n.is_lazy:
                kids = ()
            else:
                kids = list(n.iter_children())
            if not isinstance(src, str) and src is not None and n.size > 0:
                if not any(c.source is src for c in kids):
                    groups.setdefault(id(src), (src, []))[1].append(n)
            stack.extend(kids)
        return {k: SourceIndex(s, leaves) for k, (s, leaves) in groups.items()}

    def for_source(self, source) -> Optional[SourceIndex]:
        if self._by_source is None:
            self._by_source = self._build()
        return self._by_source.get(id(source))

    def node_at(self, source, offset: int):
        idx = self.for_source(source)
        return idx.node_at(offset) if idx is not None else None

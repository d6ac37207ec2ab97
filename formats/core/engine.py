"""Running parsers safely, covering every byte, and collecting diagnostics."""
from __future__ import annotations

import traceback
from operator import attrgetter
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from .cursor import Cursor, ParseStop
from .node import ERROR, OK, WARNING, LazyChildren, Node, hex_preview

# Limits in the spirit of ImHex's pattern limits: a parser that hits one adds a warning node.
MAX_DEPTH = 64
MAX_ITEMS = 1_000_000


def run_parser(name: str, kind: str, source, fn: Callable[[Cursor], object], ctx=None,
               offset: int = 0, end: Optional[int] = None, endian: str = "<",
               node: Optional[Node] = None) -> Node:
    """Parse `source[offset:end]` with `fn(cursor)` into a finished node.

    Never raises: a ParseStop has already left its error node; any other exception (a
    parser bug) becomes an error node at the cursor's offset. Gaps become 'unparsed' leaves.
    """
    end = source.size if end is None else end
    root = node if node is not None else Node(name, kind, source, offset, end - offset)
    cur = Cursor(source, offset, end, root, endian, ctx)
    try:
        fn(cur)
    except ParseStop:
        pass
    except RecursionError:
        root.add(Node("error", "error", source, cur.pos, 0, status=ERROR,
                      message=f"nesting deeper than the parser's limit at offset {cur.pos}"))
    except Exception as exc:  # a bug in a parser must not reach the GUI
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        root.add(Node("internal parser error", "error", source, cur.pos, 0, status=ERROR,
                      message=f"{type(exc).__name__}: {exc} (at {tb.filename.rsplit('/', 1)[-1]}"
                              f":{tb.lineno}); bytes from here are shown unparsed"))
    root.size = max(root.size, end - offset) if node is None else root.size
    fill_gaps(root)
    return root


def guarded(fn: Callable[[], Node], name: str, source, offset: int = 0, size: int = 0) -> Node:
    """Call a node-building function; an unexpected exception becomes an error node."""
    try:
        return fn()
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        return Node(name, "error", source, offset, size, status=ERROR,
                    message=f"internal error: {type(exc).__name__}: {exc} "
                            f"({tb.filename.rsplit('/', 1)[-1]}:{tb.lineno})")


def fill_gaps(node: Node, depth: int = 0) -> None:
    """Insert an 'unparsed' warning leaf wherever a node's same-source children leave bytes
    of its range unexplained."""
    kids = node._children
    if isinstance(kids, LazyChildren) or depth > MAX_DEPTH * 4:
        return
    # The hot path of every parse (a thousand fragments' trees): the list walked directly,
    # leaves (no children: nothing to fill) not recursed into.
    src = node.source
    same: List[Node] = []
    for c in kids:
        if c.parent is None:   # what `iter_children` does
            c.parent = node
        ck = c._children
        if type(ck) is not list or ck:
            fill_gaps(c, depth + 1)
        if c.source is src and c.size > 0:
            same.append(c)
    if not same:
        return
    gaps: List[Tuple[int, int]] = []
    pos = node.offset
    for c in sorted(same, key=_OFFSET):
        if c.offset > pos:
            gaps.append((pos, c.offset))
        end = c.offset + c.size
        if end > pos:
            pos = end
    if pos < node.end:
        gaps.append((pos, node.end))
    if not gaps:
        return
    for start, stop in gaps:
        leaf = Node("unparsed", "unparsed", node.source, start, stop - start,
                    display=hex_preview(node.source.read(start, 16)), status=WARNING,
                    message=f"{stop - start} bytes at offset {start} not explained by the format")
        node.add(leaf)
    node.order_children()


_OFFSET = attrgetter("offset")


def leaves(node: Node, source) -> Iterable[Node]:
    """The leaf nodes of `source` under `node` (lazy uniform arrays count as leaves)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_lazy:
            if n.source is source:
                yield n
            continue
        kids = [c for c in n.iter_children()]
        same = [c for c in kids if c.source is n.source]
        if n.source is source and not same:
            yield n
        stack.extend(kids)


def coverage(node: Node, source) -> Tuple[int, int]:
    """(bytes of `source` covered by leaves under `node`, source size)."""
    spans = sorted((leaf.offset, leaf.end) for leaf in leaves(node, source) if leaf.size > 0)
    covered, pos = 0, 0
    for a, b in spans:
        a = max(a, pos)
        if b > a:
            covered += b - a
            pos = b
    return covered, source.size


def coverage_all(node: Node) -> Dict[int, int]:
    """{id(source): bytes covered by leaves under `node`} for every source at once: one walk
    of the tree, the same leaves as `leaves` (a group of many files costs one pass)."""
    spans: Dict[int, List[Tuple[int, int]]] = {}
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_lazy:
            if n.size > 0:
                spans.setdefault(id(n.source), []).append((n.offset, n.end))
            continue
        kids = list(n.iter_children())
        if n.size > 0 and not any(c.source is n.source for c in kids):
            spans.setdefault(id(n.source), []).append((n.offset, n.end))
        stack.extend(kids)
    out: Dict[int, int] = {}
    for key, ss in spans.items():
        covered, pos = 0, 0
        for a, b in sorted(ss):
            a = max(a, pos)
            if b > a:
                covered += b - a
                pos = b
        out[key] = covered
    return out


def diagnostics(root: Node) -> List[Node]:
    """Every node with a warning or error, in tree order (lazy children are not expanded:
    they are built from already-validated arrays)."""
    return [n for n in root.walk() if n.status != OK]

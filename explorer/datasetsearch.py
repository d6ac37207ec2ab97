"""Search across a dataset (no Qt): node names, values and the stored bytes of every file,
group members included (built here, which the window's tree has not opened).

It runs in a worker process (`formats/core/taskworker.py`, sent by `datasetsearchdock`): the
walk is Python for seconds on a large dataset, which in a thread of the window's process
would hold the interpreter lock the window paints with. A search is a first task that
lists the dataset's units (`SearchTask.unit` None: the root's children, a folder of many
entries split into them) with the hits on the nodes above them, then a task per unit, so
the results come in as each unit is done. A task names the dataset by path, format and key
name (never a node or a document); the worker keeps the last dataset it opened.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from arrayscope.formats.core.document import Document

from . import findall, search

MAX_HITS = 500          # per unit: a search that matches everywhere says so, not lists it
LAZY_CHILDREN = 1000    # a long run of generated children (cells, tile offsets) is not walked
EXCERPT = 60

NAME, VALUE, BYTES = "name", "value", "bytes"


@dataclass(frozen=True)
class SearchTask:
    path: str                     # the dataset opened (a local folder or file)
    format: Optional[str]
    key_id: Optional[str]         # context.key_name of its key, when there is one
    text: str
    unit: Optional[str] = None    # a unit's node path; None: list the units


@dataclass(frozen=True)
class Hit:
    node: str                 # the node's path from the root (nodepath.resolve_built)
    what: str                 # NAME, VALUE or BYTES
    shown: str                # the matching name or value, or the bytes around the match
    source: str = ""          # BYTES: the file's source name
    offset: Optional[int] = None


@dataclass(frozen=True)
class Units:
    units: List[str]          # node paths, each searched by a task of its own
    hits: List[Hit]           # matches on the nodes above the units


_open: List[Tuple[tuple, Document]] = []   # the worker's one open dataset: (identity, document)


def run(task: SearchTask):
    """Units for `task.unit` None, else the unit's hits (at most MAX_HITS)."""
    doc = _document(task)
    root = doc.root
    if root is None:
        return Units([], [])
    if task.unit is None:
        return _units(root, task.text)
    node = root.resolve(task.unit)
    if node is None:
        return []
    return list(_limited(search_under(node, task.text)))


def _document(task: SearchTask):
    from arrayscope import formats
    from arrayscope.formats.core.verify_tasks import key_named

    ident = (task.path, task.format, task.key_id)
    if _open and _open[0][0] == ident:
        return _open[0][1]
    while _open:
        _open.pop()[1].close()
    doc = formats.open(task.path, key=key_named(task.key_id), as_format=task.format, lazy=True)
    _open.append((ident, doc))
    return doc


def _units(root, text: str) -> Units:
    """The root's children, a folder of several entries split into them (one fragment a
    unit: 1 000 fragments stream in); hits on the root and the split folders themselves."""
    hits = list(_node_hits(root, text.lower()))
    units: List[str] = []
    root.ensure_built()
    for c in _children(root):
        if c.kind == "dir" and not c.pending and 1 < c.child_count() <= LAZY_CHILDREN:
            hits.extend(_node_hits(c, text.lower()))
            units.extend(g.path() for g in c.iter_children())
        else:
            units.append(c.path())
    return Units(units, hits)


def _limited(hits: Iterator[Hit]) -> Iterator[Hit]:
    for i, h in enumerate(hits):
        if i >= MAX_HITS:
            return
        yield h


def search_under(node, text: str) -> Iterator[Hit]:
    """Every hit at or under `node`: names and values (case-insensitive), then the stored
    bytes of each file (the text's UTF-8 bytes), with the deepest node holding the match."""
    low = text.lower()
    files = []
    seen = set()
    for n in _walk(node):
        yield from _node_hits(n, low)
        src = n.source
        if n.kind == "file" and not isinstance(src, str) and src is not None and n.size > 0 \
                and id(src) not in seen:
            seen.add(id(src))
            files.append(n)
    try:
        pat = findall.compile_pattern("Text", text)
    except search.PatternError:
        return
    for f in files:
        for h in findall.find_all(f.source, pat):
            a = max(0, h.offset - 8)
            raw = f.source.read(a, h.length + 16)
            yield Hit(_deepest(f, h.offset).path(), BYTES, raw.decode("latin-1").encode(
                "unicode_escape").decode("ascii")[:EXCERPT], f.source.name, h.offset)


def _node_hits(n, low: str) -> Iterator[Hit]:
    if low in n.name.lower():
        yield Hit(n.path(), NAME, n.name)
    value = n.display_text()
    if value and low in value.lower():
        i = value.lower().index(low)
        a = max(0, i - EXCERPT // 3)
        yield Hit(n.path(), VALUE, ("…" if a else "") + value[a:a + EXCERPT])


def _children(n) -> List:
    if n.pending:
        n.ensure_built()   # a group member or a fragment listed when expanded: opened here
    if n.is_lazy and (n.is_run or n.child_count() > LAZY_CHILDREN):
        return []
    return list(n.iter_children())


def _walk(node) -> Iterator:
    stack = [node]
    while stack:
        n = stack.pop()
        kids = _children(n)   # built first: a file's value is known once its fields are
        yield n
        stack.extend(reversed(kids))


def _deepest(f, offset: int):
    """The deepest node in `f`'s bytes holding `offset` (children already built)."""
    n = f
    while True:
        kids = [] if n.is_lazy and n.child_count() > LAZY_CHILDREN else list(n.iter_children())
        inner = next((c for c in kids if c.source is f.source and c.offset <= offset < c.end), None)
        if inner is None:
            return n
        n = inner

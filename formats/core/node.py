"""Annotated byte ranges: the tree every view (CLI, GUI, tests) shows."""
from __future__ import annotations

import math
import threading
from typing import Callable, Iterator, List, Optional, Union

from .fielddoc import FieldDoc
from .status import Status

# A node's status, by the names the parsers use.
OK, WARNING, ERROR = Status.OK, Status.WARNING, Status.ERROR

# Node kinds. The GUI colours by kind; the CLI prints it.
KINDS = (
    "dir", "file", "struct", "array", "field", "enum", "string", "bytes", "flag",
    "tile", "chunk", "filter", "metadata", "payload", "cells", "records", "error", "unparsed",
    "padding",
)


_BUILDS = [0]


def builds() -> int:
    """How many times deferred children were built so far: a view that indexes the tree
    (explorer/session.py) rebuilds its index when this changes."""
    return _BUILDS[0]


class LazyChildren:
    """`count` children built on request by `factory(i)`: a million tile offsets cost nothing
    until they are shown. `uniform=True` means the children exactly tile the parent's range
    (so coverage need not expand them). `elements=True` means they are a run of homogeneous
    elements (the cells of an array, not structure): a dump shows the run as one leaf that
    covers its bytes, its values one `values` call or one expansion away."""

    __slots__ = ("count", "factory", "uniform", "elements", "_cache")

    def __init__(self, count: int, factory: Callable[[int], "Node"], uniform: bool = True,
                 elements: bool = False):
        self.count = count
        self.factory = factory
        self.uniform = uniform
        self.elements = elements
        self._cache: dict = {}

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> "Node":
        if i < 0:
            i += self.count
        if not 0 <= i < self.count:
            raise IndexError(i)
        node = self._cache.get(i)
        if node is None:
            try:
                node = self.factory(i)
            except Exception as e:  # a lazily built child must never raise into a view
                node = Node(f"[{i}]", "error", None, 0, 0, status=ERROR,
                            message=f"cannot build item {i}: {type(e).__name__}: {e}")
            if len(self._cache) < 4096:
                self._cache[i] = node
        return node

    def __iter__(self) -> Iterator["Node"]:
        for i in range(self.count):
            yield self[i]


class DeferredChildren(LazyChildren):
    """Children that exist only after work (a Zarr chunk's decoding): `build()` returns them,
    all at once, on the first access (`len`, indexing, `Node.find`); the node then holds them
    as an ordinary list, so everything after that sees a plain node. Until then the node is
    lazy (`Node.walk`, diagnostics and coverage do not build it) and `pending` is true, so
    a view can show an expander without building (explorer/treemodel.py does).

    `Node.release_deferred()` drops built children again (verify decodes every chunk but
    keeps none): `on_release(children)` undoes what `build` registered (derived sources)."""

    __slots__ = ("build", "on_release", "owner")
    # Building sets the owner's own fields too (its display, status): a view that shows the
    # owner as the eager tree would (`dump`) builds it first.
    owner_fields = False
    # False: a search for what to show first (the window's first file) passes it unbuilt (a
    # folder of 10 000 empty commit files is not worth listing for that)
    first_screen = True

    def __init__(self, build: Callable[[], List["Node"]],
                 on_release: Optional[Callable[[List["Node"]], None]] = None):
        self.build = build
        self.on_release = on_release
        self.owner: Optional["Node"] = None
        self.uniform = False
        self.elements = False
        self.factory = self.__getitem__  # unused: indexing builds every child at once
        self._cache = {}

    def materialize(self) -> List["Node"]:
        """Build the children and hand them to the owner node as its list."""
        owner = self.owner
        if owner is not None and owner._children is not self:  # already built
            have = owner._children
            return have if isinstance(have, list) else list(have)
        _BUILDS[0] += 1
        try:
            kids = list(self.build())
        except Exception as e:  # building must never raise into a view
            kids = [Node("build error", "error", owner.source if owner is not None else None,
                         owner.offset if owner is not None else 0, 0, status=ERROR,
                         message=f"cannot build the children: {type(e).__name__}: {e}")]
        if owner is not None:
            built: List[Node] = []
            owner._children = built
            for c in kids:
                owner.add(c)
            owner._deferred = self
            return built
        return kids

    @property
    def count(self) -> int:  # type: ignore[override]
        return len(self.materialize())

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> "Node":
        return self.materialize()[i]

    def __iter__(self) -> Iterator["Node"]:
        return iter(list(self.materialize()))


class BuildDeferred(DeferredChildren):
    """Children deferred only to save work at open (a remote data file's tiles, a TileDB
    fragment's files in the window): once built, the tree is exactly the one an eager open
    makes, so verify builds them all first (`remote.build_read_deferred`) and nothing
    releases them but a dump, which rebuilds the same nodes on the next access."""


class BackgroundBuild:
    """A deferred build that is real work (a group member's open, a folder of thousands of
    commit files): the window builds it off the GUI thread (`background`,
    explorer/treemodel.py) and selecting the node does not build it; the lock makes a second
    asker (the GUI thread going into the node meanwhile) wait for that build rather than
    run another. Mixed in before a DeferredChildren class (a slotted one names `_lock`)."""

    __slots__ = ()
    background = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lock = threading.RLock()  # type: ignore[misc]  # a slot of the class it is mixed into

    def materialize(self) -> List["Node"]:
        with self._lock:
            return super().materialize()  # type: ignore[misc]


class Node:
    """One annotated byte range of a source.

    `value` is a JSON-able scalar or list (or None for raw bytes); `display` is the text a
    person reads (an enum shows `9 (BYTESHUFFLE)`). Children may be a list or LazyChildren.
    Children may live in another source (a decompressed payload under its chunk).
    """

    __slots__ = ("name", "kind", "source", "offset", "size", "value", "display", "doc",
                 "status", "message", "code", "_children", "parent", "type", "data", "_deferred")

    def __init__(self, name: str, kind: str, source, offset: int, size: int, value=None,
                 display: Optional[str] = None, doc: Optional[FieldDoc] = None,
                 status: Status = OK, message: Optional[str] = None, type: Optional[str] = None,
                 children: Union[None, List["Node"], LazyChildren] = None, data=None,
                 code: Optional[str] = None):
        self.name = name
        self.kind = kind
        self.source = source
        self.offset = offset
        self.size = size
        self.value = value
        self.display = display
        self.doc = doc
        self.status = status
        self.message = message
        self.code = code  # a stable finding code (formats/core/findings.py); None: the generic one
        self.type = type
        self.parent: Optional[Node] = None
        self._children: Union[List[Node], LazyChildren] = []
        self.data = data  # format-specific payload for views (e.g. a tile's chunk model)
        self._deferred: Optional[DeferredChildren] = None  # the recipe of built deferred children
        if children is not None:
            if isinstance(children, LazyChildren):
                self.set_lazy(children)
            else:
                for c in children:
                    self.add(c)

    # ---- children ------------------------------------------------------------------
    @property
    def children(self) -> Union[List["Node"], LazyChildren]:
        return self._children

    @property
    def is_lazy(self) -> bool:
        return isinstance(self._children, LazyChildren)

    @property
    def is_run(self) -> bool:
        """A run of homogeneous elements (LazyChildren.elements): one leaf in a dump."""
        return isinstance(self._children, LazyChildren) and self._children.elements

    @property
    def pending(self) -> bool:
        """Deferred children not built yet (see DeferredChildren): counting them does work."""
        return isinstance(self._children, DeferredChildren)

    @property
    def deferred(self) -> bool:
        """The children are (or were) deferred: built on demand, releasable."""
        return self.pending or self._deferred is not None

    def set_lazy(self, lazy: LazyChildren) -> None:
        if isinstance(lazy, DeferredChildren):
            lazy.owner = self
        self._children = lazy

    def ensure_built(self) -> None:
        """Build deferred children now (no-op for other nodes)."""
        if isinstance(self._children, DeferredChildren):
            self._children.materialize()

    def keep_built(self) -> None:
        """Build deferred children now and keep them: a release leaves them (a finding
        elsewhere points into them)."""
        self.ensure_built()
        self._deferred = None

    def release_deferred(self) -> bool:
        """Drop built deferred children (they are rebuilt on the next access); False when
        there is nothing to release."""
        d = self._deferred
        if d is None or isinstance(self._children, DeferredChildren):
            return False
        kids = list(self._children)
        self._children = d
        self._deferred = None
        if d.on_release is not None:
            d.on_release(kids)
        return True

    def order_children(self) -> None:
        """Children in byte order; those in other sources (a decoded payload) keep their
        relative place at the end. Lazy children are built in order already."""
        if isinstance(self._children, list):
            self._children.sort(key=lambda c: (c.source is not self.source, c.offset))

    def add(self, child: Optional["Node"]) -> Optional["Node"]:
        if child is None:
            return None
        if isinstance(self._children, LazyChildren):
            raise TypeError("cannot add to lazy children")
        child.parent = self
        self._children.append(child)
        return child

    def child_count(self) -> int:
        return len(self._children)

    def child(self, i: int) -> "Node":
        c = self._children[i]
        if c.parent is None:
            c.parent = self
        return c

    def iter_children(self) -> Iterator["Node"]:
        kids = self._children
        if type(kids) is list:   # the common case, without a call per child (verify walks)
            for i in range(len(kids)):
                c = kids[i]
                if c.parent is None:
                    c.parent = self
                yield c
            return
        for i in range(len(kids)):
            yield self.child(i)

    def find(self, name: str) -> Optional["Node"]:
        if self.pending:
            self.ensure_built()  # a name lookup is an explicit request
        if self.is_lazy:
            return None
        for c in self._children:
            if c.name == name:
                return c
        return None

    def __getitem__(self, name: str) -> "Node":
        c = self.find(name)
        if c is None:
            raise KeyError(f"{self.name!r} has no child {name!r}; children: "
                           f"{[x.name for x in self.iter_children()][:40]}")
        return c

    def resolve(self, path: str) -> Optional["Node"]:
        """A descendant named by its node names joined by '/' (the root's own name optional)."""
        parts = [p for p in path.split("/") if p != ""]
        if parts and parts[0] == self.name and self.find(parts[0]) is None:
            parts = parts[1:]
        node: Optional[Node] = self
        for p in parts:
            node = node.find(p) if node is not None else None
            if node is None:
                return None
        return node

    def path(self) -> str:
        names = []
        n: Optional[Node] = self
        while n is not None:
            names.append(n.name)
            n = n.parent
        return "/".join(reversed(names))

    # ---- status ----------------------------------------------------------------------
    def mark(self, status: Status, message: str) -> "Node":
        """Raise the node's status (never lowers it) and append the message."""
        if Status(status).rank >= Status(self.status).rank:
            self.status = status
        self.message = message if not self.message else f"{self.message}; {message}"
        return self

    @property
    def end(self) -> int:
        return self.offset + self.size

    def walk(self, expand_lazy: bool = False) -> Iterator["Node"]:
        stack = [self]
        while stack:
            n = stack.pop()
            yield n
            if n.is_lazy and not expand_lazy:
                continue
            kids = list(n.iter_children())
            stack.extend(reversed(kids))

    def display_text(self) -> str:
        if self.display is not None:
            return self.display
        if self.value is None:
            return ""
        return str(self.value)

    def __repr__(self) -> str:
        return (f"<Node {self.name!r} {self.kind} {getattr(self.source, 'name', self.source)}"
                f"@{self.offset}+{self.size} {self.display_text()[:40]!r} {self.status}>")


_JSON_SCALARS = {int, bool, str, type(None)}
_FLOATS = {float}


def json_value(v):
    """A node value as JSON: scalars, lists, None; bytes are not values (null)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return repr(v)  # JSON has no NaN/inf: keep the text
        return v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return None
    if isinstance(v, (list, tuple)):
        if len(v) > 64:  # a column of plain cells (values): checked at C speed, not per item
            kinds = set(map(type, v))
            if kinds <= _JSON_SCALARS:
                return v if type(v) is list else list(v)
            if kinds == _FLOATS and all(map(math.isfinite, v)):
                return v if type(v) is list else list(v)
        return [json_value(x) for x in v]
    if hasattr(v, "item"):
        return json_value(v.item())
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items()}
    return str(v)


def hex_preview(data: bytes, limit: int = 16) -> str:
    h = data[:limit].hex(" ")
    return h + (" …" if len(data) > limit else "")


def to_json(node: Node, source_name: Callable[[object], str], max_depth: Optional[int] = None,
            depth: int = 0) -> dict:
    pending = node.pending   # built for this dump only: released after it
    if pending and getattr(node.children, "owner_fields", False):
        node.ensure_built()   # its own fields come with its children (see owner_fields)
    out = {
        "name": node.name,
        "kind": node.kind,
        "source": source_name(node.source),
        "offset": node.offset,
        "size": node.size,
        "value": json_value(node.value),
        "display": node.display_text(),
        "status": node.status,
        "message": node.message,
    }
    if (max_depth is None or depth < max_depth) and not node.is_run:
        out["children"] = [to_json(c, source_name, max_depth, depth + 1)
                           for c in node.iter_children()]
    else:
        out["children"] = []
    if pending:  # built for this dump only: a whole-array dump keeps no decoded chunk
        node.release_deferred()
    return out

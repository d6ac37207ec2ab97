"""A lazy QAbstractItemModel over Nodes.

Rows are built when a node is expanded (canFetchMore/fetchMore). A node with more than
PAGE children (a LazyChildren with a million tile offsets, say) shows buckets
`[0..999]`, `[1000..1999]`, … (nested when needed), so no expansion creates more than PAGE rows.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, Qt, QThreadPool, Signal
from PySide6.QtGui import QBrush, QFont

from arrayscope.formats.core.status import Status

from . import theme
from .background import BackgroundJob
from .intervals import child_position

PAGE = 1000
COLUMNS = ("Name", "Value", "Type", "Offset", "Size")
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_NOFLAGS = Qt.ItemFlag.NoItemFlags
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter

_DECORATIONROLE = int(Qt.ItemDataRole.DecorationRole.value)
_DISPLAYROLE = int(Qt.ItemDataRole.DisplayRole.value)
_FONTROLE = int(Qt.ItemDataRole.FontRole.value)
_FOREGROUNDROLE = int(Qt.ItemDataRole.ForegroundRole.value)
_TEXTALIGNMENTROLE = int(Qt.ItemDataRole.TextAlignmentRole.value)
_TOOLTIPROLE = int(Qt.ItemDataRole.ToolTipRole.value)
_USERROLE = int(Qt.ItemDataRole.UserRole.value)



class Item:
    """One row. `hi` (the end of the node's child range) is counted when first needed: a
    node with deferred children (`node.pending`: a large Zarr array's decoded chunk) is not
    built until its row is expanded or it is selected."""

    __slots__ = ("node", "parent", "row", "lo", "_hi", "bucket", "kids", "__weakref__")

    def __init__(self, node, parent: Optional["Item"], row: int, lo: int = 0,
                 hi: Optional[int] = None, bucket: bool = False):
        self.node = node
        self.parent = parent
        self.row = row
        self.bucket = bucket
        self.lo = lo
        if hi is None and not getattr(node, "pending", False):
            hi = node.child_count()
        self._hi = hi
        self.kids: Optional[List["Item"]] = None

    @property
    def hi(self) -> int:
        if self._hi is None:
            self._hi = self.node.child_count()   # builds deferred children
        return self._hi

    @hi.setter
    def hi(self, value: int) -> None:
        self._hi = value

    @property
    def unknown(self) -> bool:
        """Deferred children not counted yet: show an expander, build on expansion."""
        return self._hi is None

    @property
    def count(self) -> int:
        return self.hi - self.lo

    def build(self) -> List["Item"]:
        n = self.count
        if n <= PAGE:
            return [Item(self.node.child(i), self, k) for k, i in enumerate(range(self.lo, self.hi))]
        step = PAGE
        while (n + step - 1) // step > PAGE:
            step *= PAGE
        out = []
        for k, a in enumerate(range(self.lo, self.hi, step)):
            out.append(Item(self.node, self, k, a, min(self.hi, a + step), bucket=True))
        return out

    def child_item_for(self, i: int) -> Optional["Item"]:
        """The (already built) child item holding child index i of the node."""
        if self.kids is None:
            return None
        if self.count <= PAGE:
            k = i - self.lo
            return self.kids[k] if 0 <= k < len(self.kids) else None
        for it in self.kids:
            if it.lo <= i < it.hi:
                return it
        return None


class _BuildSignals(QObject):
    built = Signal(object, int)   # item, tree generation


class _BuildJob(BackgroundJob):
    """Build a node's deferred children off the GUI thread (only the node's own children
    change: no row is touched here), then tell the model."""

    def __init__(self, item: Item, generation: int, signals: _BuildSignals):
        super().__init__(signals)
        self.item, self.generation = item, generation

    def run(self) -> None:
        node = self.item.node
        try:
            node.ensure_built()   # never raises: a failed build is an error child
        finally:
            self.emit("built", self.item, self.generation)


class NodeTreeModel(QAbstractItemModel):
    def __init__(self, root=None, parent=None, show_root: bool = True):
        super().__init__(parent)
        self._root_node = root
        self.show_root = show_root
        self._top = self._make_top()
        self._bold = QFont()
        self._bold.setBold(True)
        # the worst finding at or under a node (findingmarks), shown as its icon
        self.mark_of: Optional[Callable[[object], Optional[str]]] = None
        # nodes built on a worker thread (fetchMore): id(item) -> item; the tree generation
        self._building: Dict[int, Item] = {}
        self._generation = 0
        self._pool: Optional[QThreadPool] = None
        self._after: Dict[int, List[Callable[[], None]]] = {}   # id(item) -> call when built
        self._signals: Optional[_BuildSignals] = None

    def _make_top(self) -> Item:
        """An invisible item whose children are the top rows."""
        if self._root_node is None:
            top = Item.__new__(Item)
            top.node, top.parent, top.row, top.lo, top._hi, top.bucket, top.kids = None, None, 0, 0, 0, False, []
            return top
        if self.show_root:
            top = Item.__new__(Item)
            top.node, top.parent, top.row, top.lo, top._hi, top.bucket = None, None, 0, 0, 1, False
            top.kids = [Item(self._root_node, top, 0)]
            return top
        return Item(self._root_node, None, 0)

    def set_root(self, root) -> None:
        self.beginResetModel()
        self._generation += 1   # background builds of the old tree add no rows
        self._building.clear()
        self._after.clear()
        self._root_node = root
        self._top = self._make_top()
        self.endResetModel()

    @property
    def root_node(self):
        return self._root_node

    # ---- structure -------------------------------------------------------------------
    def item(self, index: QModelIndex) -> Item:
        return index.internalPointer() if index.isValid() else self._top

    def index(self, row, column, parent=QModelIndex()):
        p = self.item(parent)
        if p.kids is None or not (0 <= row < len(p.kids)) or not (0 <= column < len(COLUMNS)):
            return QModelIndex()
        return self.createIndex(row, column, p.kids[row])

    def parent(self, index=QModelIndex()):
        if not index.isValid():
            return QModelIndex()
        it: Item = index.internalPointer()
        p = it.parent
        if p is None or p is self._top:
            return QModelIndex()
        return self.createIndex(p.row, 0, p)

    def rowCount(self, parent=QModelIndex()):
        if parent.isValid() and parent.column() != 0:
            return 0
        p = self.item(parent)
        return len(p.kids) if p.kids is not None else 0

    def columnCount(self, parent=QModelIndex()):
        return len(COLUMNS)

    def hasChildren(self, parent=QModelIndex()):
        if parent.isValid() and parent.column() != 0:
            return False
        p = self.item(parent)
        if p.kids is not None:
            return len(p.kids) > 0
        if p.unknown:
            return True
        return p.count > 0

    def canFetchMore(self, parent):
        if parent.isValid() and parent.column() != 0:
            return False
        p = self.item(parent)
        return p.kids is None and (p.unknown or p.count > 0)

    def fetchMore(self, parent):
        """The view expands `parent`: its rows. A node whose deferred children say they are
        real work (`background`: a group member, a whole array to open) is built on the
        model's worker thread; its rows come when it is built (`_built`)."""
        p = self.item(parent)
        if p.kids is not None:
            return
        if p.unknown and not p.bucket and getattr(p.node.children, "background", False):
            self._build_in_background(p)
            return
        self._fill(parent, p)

    def _build_in_background(self, p: Item) -> None:
        if id(p) in self._building:
            return
        self._building[id(p)] = p
        signals = self._signals
        if self._pool is None or signals is None:
            self._pool = QThreadPool(self)
            self._pool.setMaxThreadCount(1)   # members share the document: one at a time
            signals = self._signals = _BuildSignals(self)
            signals.built.connect(self._built)
        self._pool.start(_BuildJob(p, self._generation, signals))

    def _built(self, p: Item, generation: int) -> None:
        """A background build finished (GUI thread): add the rows, unless the tree was
        replaced meanwhile or the rows were fetched already (`ensure_fetched` waited)."""
        self._building.pop(id(p), None)
        after = self._after.pop(id(p), [])
        if generation != self._generation or not self._alive(p):
            return
        idx = self.createIndex(p.row, 0, p)
        if p.kids is None:
            self._fill(idx, p)
        self.dataChanged.emit(idx, idx.siblingAtColumn(len(COLUMNS) - 1))  # its display
        for fn in after:
            fn()

    def when_built(self, node, fn: Callable[[], None]) -> bool:
        """Call `fn()` once `node`'s deferred children are built: now when they are, else
        after its build on the worker thread (started here unless one runs). False when
        `node` is not a row of this tree (nothing is called)."""
        if not node.pending:
            fn()
            return True
        idx = self.index_for_node(node)
        it = self.item(idx) if idx.isValid() else None
        if it is None or it.node is not node or it.bucket:
            return False
        self._after.setdefault(id(it), []).append(fn)
        self._build_in_background(it)
        return True

    def _alive(self, p: Item) -> bool:
        it = p
        while it.parent is not None:
            kids = it.parent.kids
            if kids is None or not 0 <= it.row < len(kids) or kids[it.row] is not it:
                return False
            it = it.parent
        return it is self._top

    @property
    def building(self) -> int:
        """How many nodes are being built in the background."""
        return len(self._building)

    def _fill(self, parent: QModelIndex, p: Item) -> None:
        kids = p.build()
        if not kids:
            p.kids = []
            return
        self.beginInsertRows(parent, 0, len(kids) - 1)
        p.kids = kids
        self.endInsertRows()

    def ensure_fetched(self, index: QModelIndex) -> None:
        """The rows of `index` now (a selection or search going down the tree: built here,
        waiting for a background build of the same node if one runs)."""
        if self.canFetchMore(index):
            self._fill(index, self.item(index))

    # ---- data ------------------------------------------------------------------------
    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == _DISPLAYROLE:
            return COLUMNS[section]
        return None

    def flags(self, index):
        return _FLAGS if index.isValid() else _NOFLAGS

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        it: Item = index.internalPointer()
        node, col = it.node, index.column()
        if it.bucket:
            if role == _DISPLAYROLE:
                if col == 0:
                    return f"[{it.lo}..{it.hi - 1}]"
                if col == 1:
                    return f"{it.count:,} items"
                if col in (3, 4):
                    a, b = node.child(it.lo), node.child(it.hi - 1)
                    if col == 3:
                        return f"0x{a.offset:X}"
                    return f"{b.end - a.offset:,}"
            if role == _FOREGROUNDROLE:
                return QBrush(theme.kind_solid("padding"))
            return None
        if role == _DISPLAYROLE:
            if col == 0:
                return node.name
            if col == 1:
                t = node.display_text()
                return t if len(t) <= 200 else t[:200] + "…"
            if col == 2:
                return node.type or node.kind
            if col == 3:
                if isinstance(node.source, str) or node.source is None:
                    return ""
                return f"0x{node.offset:X}"
            if col == 4:
                if isinstance(node.source, str):
                    if node.kind != "dir" or node.pending:
                        return ""  # a pending folder (a group member) is counted once opened
                    return f"{node.child_count()} entries"
                return f"{node.size:,}"
        elif role == _DECORATIONROLE and col == 0:
            if node.status != Status.OK:
                return theme.status_icon(node.status)
            mark = self.mark_of(node) if self.mark_of is not None else None
            return theme.status_icon(mark) if mark else theme.kind_icon(node.kind)
        elif role == _TOOLTIPROLE:
            lines = [f"<b>{_esc(node.name)}</b> — {node.kind}"]
            if node.message:
                colour = theme.error_color() if node.status == Status.ERROR else theme.warning_color()
                lines.append(f"<span style='color:{colour.name()}'>{_esc(node.message)}</span>")
            if node.doc is not None:
                lines.append(_esc(node.doc.description))
            if not isinstance(node.source, str) and node.source is not None:
                lines.append(f"{_esc(getattr(node.source, 'name', ''))} @ {node.offset:,} (0x{node.offset:X}), "
                             f"{node.size:,} bytes")
            return "<br>".join(lines)
        elif role == _FOREGROUNDROLE:
            if node.status == Status.ERROR and col in (0, 1):
                return QBrush(theme.error_color())
            if node.kind in ("unparsed", "padding") and col in (0, 1):
                return QBrush(theme.kind_solid("padding"))
        elif role == _TEXTALIGNMENTROLE and col in (3, 4):
            return _RIGHT
        elif role == _FONTROLE and col == 0 and node.kind in ("dir", "file", "tile", "chunk"):
            return self._bold
        elif role == _USERROLE:
            return node
        return None

    def node(self, index: QModelIndex):
        it = self.item(index)
        return None if it is self._top or it.bucket else it.node

    # ---- finding a node's index ------------------------------------------------------
    def index_for_node(self, node) -> QModelIndex:
        """Fetch rows down to `node` (through buckets) and return its index (invalid when
        `node` is not under the root)."""
        chain = []
        n = node
        while n is not None and n is not self._root_node:
            chain.append(n)
            n = n.parent
        if n is None:
            return QModelIndex()
        chain.reverse()
        if self.show_root:
            idx = self.index(0, 0)
        else:
            idx = QModelIndex()
        for child in chain:
            parent_node = self.item(idx).node
            pos = child_position(parent_node, child)
            if pos is None:
                return QModelIndex()
            # descend through buckets to the item for child `pos`
            while True:
                self.ensure_fetched(idx)
                it = self.item(idx).child_item_for(pos)
                if it is None:
                    return QModelIndex()
                idx = self.createIndex(it.row, 0, it)
                if not it.bucket:
                    break
        return idx

    def notify_children_added(self, node) -> None:
        """New children were appended to `node` (e.g. a stage output): add their rows."""
        idx = self.index_for_node(node) if node is not self._root_node or self.show_root else QModelIndex()
        it = self.item(idx)
        if it.bucket or it.node is not node:
            return
        new_count = node.child_count()
        if it.kids is None:
            it.hi = new_count
            return
        if new_count <= it.hi or it.count > PAGE:
            it.hi = new_count
            return
        first = len(it.kids)
        self.beginInsertRows(idx, first, first + (new_count - it.hi) - 1)
        for i in range(it.hi, new_count):
            it.kids.append(Item(node.child(i), it, len(it.kids)))
        it.hi = new_count
        self.endInsertRows()

    def remove_child(self, node, child) -> bool:
        """Detach `child` from `node`'s (list) children and remove its row."""
        if node is None or node.is_lazy:
            return False
        kids = node.children
        pos = next((i for i, c in enumerate(kids) if c is child), None)
        if pos is None:
            return False
        idx = self.index_for_node(node) if node is not self._root_node or self.show_root else QModelIndex()
        it = self.item(idx)
        if it.bucket or it.node is not node or it.kids is None or it.count > PAGE:
            # rows not built (or paged): just change the node and the item's extent
            del kids[pos]
            child.parent = None
            if it.node is node and not it.bucket:
                it.hi = node.child_count()
                if it.kids is not None:
                    self.beginResetModel()
                    it.kids = None
                    self.endResetModel()
            return True
        row = pos - it.lo
        self.beginRemoveRows(idx, row, row)
        del kids[pos]
        child.parent = None
        del it.kids[row]
        for k, x in enumerate(it.kids):
            x.row = k
        it.hi = node.child_count()
        self.endRemoveRows()
        return True


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

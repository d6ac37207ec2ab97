"""The array browser (the Array dock): the array as a whole, what the Structure tree does not
say at a glance — the schema in one line, its dimensions and attributes with types and
filters, the fragments in read order with their time, cell count, domain and size — from the
format's plugin (`registry.array_summary`). Where the format gives no summary (SCDL archives,
Zarr hierarchies, TileDB groups) it lists the folders and files, each described by the
plugin (`registry.describe_entry`)."""
from __future__ import annotations

import os
from typing import Optional

from PySide6.QtCore import QObject, Qt, QThreadPool, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeWidget, QTreeWidgetItem

from arrayscope.formats.core import registry
from arrayscope.formats.core.plugin import generic_entry_text
from arrayscope.formats.core.status import Status

from . import theme
from .background import BackgroundJob
from .elide import ElidingDelegate, elide_words
from .state import AppState, DocumentChanged, Event, SelectionChanged

MAX_LOADING_ROWS = 5000   # the loading list stops growing there (a count says the rest)
LAZY_ROW = Qt.ItemDataRole.UserRole + 1   # a summary row whose children wait for expansion


class _MemberSignals(QObject):
    built = Signal(object, object, int)   # item, node, generation


class _MemberJob(BackgroundJob):
    """Open a group member (a whole array or group) off the GUI thread; its rows are added
    when it is built (`ArrayBrowser._member_built`)."""

    def __init__(self, item: QTreeWidgetItem, node, generation: int, signals: _MemberSignals):
        super().__init__(signals)
        self.item, self.node, self.generation = item, node, generation

    def run(self) -> None:
        try:
            self.node.ensure_built()   # never raises: a failed build is an error child
        finally:
            self.emit("built", self.item, self.node, self.generation)


class ArrayBrowser(QTreeWidget):
    nodeActivated = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setColumnCount(3)
        self.setHeaderLabels(["Entry", "What", "Size"])
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        # entries (fragments, relative paths) keep their first word (a fragment's time) and
        # lose their longest words' middles first; the other columns keep their start
        self.name_delegate = ElidingDelegate(elide_words, self)
        self.setItemDelegateForColumn(0, self.name_delegate)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        h = self.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.setColumnWidth(0, 220)
        self.setColumnWidth(2, 64)
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)
        self.itemExpanded.connect(self._expanded)
        self._items = {}
        self._loading: Optional[QTreeWidgetItem] = None
        self._loading_more = 0
        self.document = None
        self.summary = None   # plugin.SummaryRow shown, or None (the file list)
        # group members opened on a worker thread: one at a time (they share the document)
        self._generation = 0
        self._pool: Optional[QThreadPool] = None
        self._member_signals: Optional[_MemberSignals] = None

    def state_changed(self, state: AppState, event: Event) -> None:
        if isinstance(event, DocumentChanged):
            self.set_root(state.session.document if state.session is not None else None)
        elif isinstance(event, SelectionChanged):
            self.select_file_of(event.node)

    def set_root(self, document) -> None:
        """Show `document`'s folders and files (nothing for None or a single file)."""
        self.clear()
        self._generation += 1   # a member still opening for the old document adds nothing
        self._items = {}
        self._loading = None
        self.document = document
        self.summary = None
        root = document.root if document is not None and document.is_dir else None
        self.setHeaderLabels(["Entry", "What", "Size"])
        if root is None:
            return
        try:
            summary = registry.array_summary(document)
        except Exception:  # noqa: BLE001 - the file list is shown instead
            summary = None
        if summary is not None:
            self._show_summary(summary)
            return
        top, _ = self._add(None, root)
        self.addTopLevelItem(top)
        top.setExpanded(True)
        for i in range(top.childCount()):
            c = top.child(i)
            if c.childCount() and c.childCount() <= 12:
                c.setExpanded(True)

    def _show_summary(self, summary) -> None:
        self.summary = summary
        self.setHeaderLabels(["Array", "What", "Size"])
        top = self._summary_item(summary)
        self.addTopLevelItem(top)
        top.setExpanded(True)
        for i in range(top.childCount()):   # two levels open where they are short
            c = top.child(i)
            if c is not None and 0 < c.childCount() <= 12:
                c.setExpanded(True)
                for j in range(c.childCount()):
                    g = c.child(j)
                    if g is not None and 0 < g.childCount() <= 12:
                        g.setExpanded(True)

    def _summary_item(self, row) -> QTreeWidgetItem:
        it = QTreeWidgetItem([row.label, row.text, row.size])
        it.setToolTip(0, row.tooltip or row.label)
        it.setToolTip(1, row.text)
        it.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if row.node is not None:
            it.setData(0, Qt.ItemDataRole.UserRole, row.node)
            self._items.setdefault(id(row.node), it)
            worst = _worst(row.node) if row.node.kind != "dir" else Status.OK
            it.setIcon(0, theme.status_icon(worst) if worst != Status.OK
                       else theme.kind_icon(row.node.kind))
        if row.load is not None:   # its rows are made (fragment footers read) when expanded
            it.setData(0, LAZY_ROW, row)
            it.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
        else:
            it.addChildren([self._summary_item(c) for c in row.children])
        return it

    def _expand_summary(self, it: QTreeWidgetItem) -> None:
        row = it.data(0, LAZY_ROW)
        if row is None or it.childCount():
            return
        it.setData(0, LAZY_ROW, None)
        try:
            kids = row.expand()
        except Exception:  # noqa: BLE001 - a summary row is not worth an exception
            kids = []
        it.addChildren([self._summary_item(c) for c in kids])
        it.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.DontShowIndicatorWhenChildless)

    # ---- while a path is being opened: the files parsed so far ----------------------------
    def begin_loading(self, path: str) -> None:
        """Replace the tree with a 'Loading…' list (no nodes: names and sizes only)."""
        self.set_root(None)
        self.setHeaderLabels(["Entry", "What", "Size"])
        top = QTreeWidgetItem([f"Loading {os.path.basename(path.rstrip(os.sep)) or path}…",
                               "parsing", ""])
        top.setToolTip(0, path)
        top.setIcon(0, theme.kind_icon("dir"))
        self.addTopLevelItem(top)
        top.setExpanded(True)
        self._loading = top
        self._loading_more = 0

    @property
    def loading(self) -> bool:
        return self._loading is not None

    def add_loading(self, done: int, total: int, files) -> None:
        """Append files parsed ((name, size) pairs) to the loading list."""
        top = self._loading
        if top is None:
            return
        for name, size in files:
            if top.childCount() >= MAX_LOADING_ROWS:
                self._loading_more += 1
                continue
            it = QTreeWidgetItem([name, "parsed", f"{size:,}" if size >= 0 else ""])
            it.setToolTip(0, name)
            it.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            it.setIcon(0, theme.kind_icon("file"))
            top.addChild(it)
        more = f", {self._loading_more:,} more not listed" if self._loading_more else ""
        top.setText(1, f"{done:,} of {total:,} files parsed{more}")
        top.setText(2, f"{done * 100 // max(total, 1)}%")
        top.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        last = top.child(top.childCount() - 1) if top.childCount() else None
        if last is not None:
            self.scrollToItem(last)

    def loading_names(self):
        top = self._loading
        if top is None:
            return []
        return [c.text(0) for c in (top.child(i) for i in range(top.childCount())) if c is not None]

    def _add(self, parent: Optional[QTreeWidgetItem], node):
        it = QTreeWidgetItem()
        label = node.name
        try:
            what = registry.describe_entry(self.document, node)
        except Exception:  # noqa: BLE001 - a label is not worth an exception
            what = ""
        it.setText(0, label)
        it.setText(1, what)
        it.setToolTip(0, node.path())
        it.setToolTip(1, what)
        if node.kind == "file":
            it.setText(2, f"{node.size:,}")
            it.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        elif node.kind == "dir" and not getattr(node, "pending", False):
            it.setText(2, f"{node.child_count()}")
            it.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        it.setData(0, Qt.ItemDataRole.UserRole, node)
        self._items[id(node)] = it
        worst = node.status
        if node.kind == "dir" and getattr(node, "pending", False):
            # opened when expanded (a group member): nothing is built before that
            it.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
        elif node.kind == "dir":
            worst = _max(worst, self._add_children(it, node))
        else:
            worst = _worst(node)
        it.setIcon(0, theme.status_icon(worst) if worst != Status.OK else theme.kind_icon(node.kind))
        if worst != Status.OK:
            it.setToolTip(0, f"{node.path()}\n{worst}s inside: see Diagnostics")
        return it, worst

    def _add_children(self, it: QTreeWidgetItem, node) -> Status:
        worst = Status.OK
        for c in node.iter_children():
            if c.kind in ("dir", "file"):
                ci, w = self._add(it, c)
                it.addChild(ci)
                worst = _max(worst, w)
            else:
                worst = _max(worst, _worst(c))
        return worst

    def _expanded(self, it: QTreeWidgetItem) -> None:
        """A deferred folder (a group member) opens: build it, then list its entries; in the
        summary, a lazy row (the fragments) makes its rows."""
        if self.summary is not None:
            self._expand_summary(it)
            return
        node = it.data(0, Qt.ItemDataRole.UserRole)
        if node is None or it.childCount() or node.kind != "dir":
            return
        if node.pending and getattr(node.children, "background", False):
            self._open_member(it, node)
            return
        self._fill_member(it, node)

    def _open_member(self, it: QTreeWidgetItem, node) -> None:
        """Open the member on the worker thread; the GUI stays live meanwhile."""
        if it.text(1).startswith("opening"):
            return
        it.setText(1, "opening…")
        signals = self._member_signals
        if self._pool is None or signals is None:
            self._pool = QThreadPool(self)
            self._pool.setMaxThreadCount(1)
            signals = self._member_signals = _MemberSignals(self)
            signals.built.connect(self._member_built)
        self._pool.start(_MemberJob(it, node, self._generation, signals))

    def _member_built(self, it: QTreeWidgetItem, node, generation: int) -> None:
        if generation != self._generation or self._items.get(id(node)) is not it \
                or it.childCount():
            return
        self._fill_member(it, node)

    def _fill_member(self, it: QTreeWidgetItem, node) -> None:
        worst = self._add_children(it, node)   # builds the member with its own context
        it.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.DontShowIndicatorWhenChildless)
        it.setText(1, generic_entry_text(node))   # now with what opening it found
        it.setText(2, f"{node.child_count()}")
        it.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if worst != Status.OK:
            it.setIcon(0, theme.status_icon(worst))

    def select_file_of(self, node) -> None:
        if self.summary is not None:   # the nearest row of the node or an ancestor
            n = node
            while n is not None and id(n) not in self._items:
                n = n.parent
            self._show_item(self._items.get(id(n)) if n is not None else None)
            return
        chain = []
        n = node
        while n is not None and id(n) not in self._items:
            chain.append(n)
            n = n.parent
        # a group member opened elsewhere (the structure tree): list its entries here too
        while n is not None and chain:
            it = self._items[id(n)]
            if it.childCount() == 0 and n.kind == "dir" and not getattr(n, "pending", False):
                self._expanded(it)
            if id(chain[-1]) not in self._items:
                break
            n = chain.pop()
        self._show_item(self._items.get(id(n)) if n is not None else None)

    def _show_item(self, it: Optional[QTreeWidgetItem]) -> None:
        """Make `it` current and visible without re-announcing the selection."""
        if it is not None and it is not self.currentItem():
            self.blockSignals(True)
            self.setCurrentItem(it)
            self.scrollToItem(it)
            self.blockSignals(False)

    def _clicked(self, item: QTreeWidgetItem, _col: int = 0) -> None:
        n = item.data(0, Qt.ItemDataRole.UserRole)
        if n is not None:
            self.nodeActivated.emit(n)


def _max(a: Status, b: Status) -> Status:
    return a if Status(a).rank >= Status(b).rank else b


def _worst(node, limit: int = 20000) -> Status:
    """The worst status at or under `node` (non-lazy; bounded walk)."""
    worst = Status.OK
    for i, n in enumerate(node.walk()):
        if n.status == Status.ERROR:
            return Status.ERROR
        if n.status == Status.WARNING:
            worst = Status.WARNING
        if i > limit:
            break
    return worst

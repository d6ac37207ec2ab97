"""The array browser: the opened directory as an array (schema versions, fragments with their
timestamps, commits, metadata, enumerations, labels), from the document's dir/file nodes.
For SCDL archives and Zarr hierarchies it lists the same folders and files, with what the
format's parser says each one is (its node's display or type)."""
from __future__ import annotations

import datetime as _dt
import os
import re
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeWidget, QTreeWidgetItem

from . import theme

FOLDERS = {
    "__schema": "Schema versions", "__fragments": "Fragments", "__commits": "Commits",
    "__meta": "Array metadata", "__enumerations": "Enumerations", "__labels": "Dimension labels",
    "__fragment_meta": "Consolidated fragment metadata",
    "__group": "Group members (one list per write)",
}
TS_NAME = re.compile(r"^__(\d+)_(\d+)_([0-9a-f]{32})(?:_(\d+))?(\.\w+)?$")
MAX_LOADING_ROWS = 5000   # the loading list stops growing there (a count says the rest)
DATA_FILE = re.compile(r"^([adt])(\d+)(_var|_validity)?\.tdb$")


def ms_text(ms: int) -> str:
    try:
        return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (ValueError, OverflowError, OSError):
        return str(ms)


def describe(name: str, kind: str) -> str:
    """What a TileDB entry's name tells (timestamps, format version, file role)."""
    m = TS_NAME.match(name)
    if m:
        t1, t2, uuid, ver, ext = m.groups()
        t1, t2 = int(t1), int(t2)
        when = ms_text(t1) if t1 == t2 else f"{ms_text(t1)} → {ms_text(t2)}"
        extra = f", format v{ver}" if ver else ""
        kinds = {".wrt": "commit", ".del": "delete commit", ".upd": "update commit",
                 ".vac": "vacuum list", ".meta": "consolidated fragment metadata",
                 ".con": "consolidated commits"}
        what = kinds.get(ext or "", "")
        return f"{what + ': ' if what else ''}{when}{extra}"
    m = DATA_FILE.match(name)
    if m:
        role = {"a": "attribute", "d": "dimension", "t": "timestamps"}[m.group(1)]
        sub = {"_var": " var data", "_validity": " validity"}.get(m.group(3) or "", " data")
        return f"{role} {m.group(2)}{sub}"
    if name == "__fragment_metadata.tdb":
        return "fragment metadata"
    return ""


class ArrayBrowser(QTreeWidget):
    nodeActivated = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setColumnCount(3)
        self.setHeaderLabels(["Entry", "What", "Size"])
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        h = self.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(1, QHeaderView.Stretch)
        self.setColumnWidth(0, 220)
        self.setColumnWidth(2, 64)
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)
        self.itemExpanded.connect(self._expanded)
        self._items = {}
        self._loading: Optional[QTreeWidgetItem] = None
        self._loading_more = 0

    def set_root(self, root, fmt: Optional[str] = "tiledb") -> None:
        self.clear()
        self._items = {}
        self._loading = None
        self.setTextElideMode(Qt.ElideRight)
        self.fmt = fmt
        self._array = getattr(root, "data", None) if root is not None else None
        if root is None:
            return
        top, _ = self._add(None, root)
        self.addTopLevelItem(top)
        top.setExpanded(True)
        for i in range(top.childCount()):
            c = top.child(i)
            if c.childCount() and c.childCount() <= 12:
                c.setExpanded(True)

    # ---- while a path is being opened: the files parsed so far ----------------------------
    def begin_loading(self, path: str) -> None:
        """Replace the tree with a 'Loading…' list (no nodes: names and sizes only)."""
        self.set_root(None)
        self.setTextElideMode(Qt.ElideMiddle)   # long relative paths: keep the file name
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
            it.setTextAlignment(2, Qt.AlignRight | Qt.AlignVCenter)
            it.setIcon(0, theme.kind_icon("file"))
            top.addChild(it)
        more = f", {self._loading_more:,} more not listed" if self._loading_more else ""
        top.setText(1, f"{done:,} of {total:,} files parsed{more}")
        top.setText(2, f"{done * 100 // max(total, 1)}%")
        top.setTextAlignment(2, Qt.AlignRight | Qt.AlignVCenter)
        if top.childCount():
            self.scrollToItem(top.child(top.childCount() - 1))

    def loading_names(self):
        top = self._loading
        return [top.child(i).text(0) for i in range(top.childCount())] if top is not None else []

    def _add(self, parent: Optional[QTreeWidgetItem], node):
        it = QTreeWidgetItem()
        label = node.name
        if getattr(self, "fmt", "tiledb") == "tiledb":
            what = FOLDERS.get(node.name, "") if node.kind == "dir" else ""
            if node.name == "__meta" and node.parent is not None and \
                    node.parent.find("__group") is not None:
                what = "Group metadata"
            what = what or describe(node.name, node.kind)
            if node.kind == "file" and DATA_FILE.match(node.name):
                what = self._field_what(node) or what
            if (node.kind == "dir" and node.name.startswith("__") and TS_NAME.match(node.name)
                    and not what.startswith("commit")):
                what = "fragment: " + what if "__fragments" in str(node.source) else what
            if not what and node.kind == "dir":
                what = generic_what(node)  # a group member: what its plugin says it is
        else:
            what = generic_what(node)
        it.setText(0, label)
        it.setText(1, what)
        it.setToolTip(0, node.path())
        it.setToolTip(1, what)
        if node.kind == "file":
            it.setText(2, f"{node.size:,}")
            it.setTextAlignment(2, Qt.AlignRight | Qt.AlignVCenter)
        elif node.kind == "dir" and not getattr(node, "pending", False):
            it.setText(2, f"{node.child_count()}")
            it.setTextAlignment(2, Qt.AlignRight | Qt.AlignVCenter)
        it.setData(0, Qt.UserRole, node)
        self._items[id(node)] = it
        worst = node.status
        if node.kind == "dir" and getattr(node, "pending", False):
            # opened when expanded (a group member): nothing is built before that
            it.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
        elif node.kind == "dir":
            worst = _max(worst, self._add_children(it, node))
        else:
            worst = _worst(node)
        it.setIcon(0, theme.status_icon(worst) if worst != "ok" else theme.kind_icon(node.kind))
        if worst != "ok":
            it.setToolTip(0, f"{node.path()}\n{worst}s inside: see Diagnostics")
        return it, worst

    def _add_children(self, it: QTreeWidgetItem, node) -> str:
        worst = "ok"
        for c in node.iter_children():
            if c.kind in ("dir", "file"):
                ci, w = self._add(it, c)
                it.addChild(ci)
                worst = _max(worst, w)
            else:
                worst = _max(worst, _worst(c))
        return worst

    def _expanded(self, it: QTreeWidgetItem) -> None:
        """A deferred folder (a group member) opens: build it, then list its entries."""
        node = it.data(0, Qt.UserRole)
        if node is None or it.childCount() or node.kind != "dir":
            return
        worst = self._add_children(it, node)   # builds the member with its own context
        it.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.DontShowIndicatorWhenChildless)
        it.setText(1, generic_what(node))   # now with what opening it found
        it.setText(2, f"{node.child_count()}")
        it.setTextAlignment(2, Qt.AlignRight | Qt.AlignVCenter)
        if worst != "ok":
            it.setIcon(0, theme.status_icon(worst))

    def _field_what(self, node) -> str:
        """`attribute 'counts' data` for a data file, from its fragment's schema."""
        fm = node.data
        array = _array_of(node) or getattr(self, "_array", None)
        if fm is None or not hasattr(fm, "extra") or not hasattr(array, "schema_for"):
            return ""
        try:
            from arrayscope.formats.tiledb.data_files import file_role

            schema = fm.extra.get("schema") or array.schema_for(fm.schema_name)
            role = file_role(schema, fm, node.name) if schema is not None else None
        except Exception:  # noqa: BLE001 - a label is not worth an exception
            return ""
        if role is None:
            return ""
        kind = "dimension" if node.name[:1] == "d" and node.name[1:2].isdigit() else "attribute"
        part = {"fixed": "offsets" if role.role == "offsets" else "data", "var": "var data",
                "validity": "validity"}[role.part]
        return f"{kind} '{role.obj.name}' {part}"

    def select_file_of(self, node) -> None:
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
        it = self._items.get(id(n)) if n is not None else None
        if it is not None and it is not self.currentItem():
            self.blockSignals(True)
            self.setCurrentItem(it)
            self.scrollToItem(it)
            self.blockSignals(False)

    def _clicked(self, item: QTreeWidgetItem, _col: int = 0) -> None:
        n = item.data(0, Qt.UserRole)
        if n is not None:
            self.nodeActivated.emit(n)


KNOWN_FILES = {".zarray": "Zarr v2 array metadata", ".zattrs": "Zarr v2 attributes",
               ".zgroup": "Zarr v2 group metadata", ".zmetadata": "Zarr consolidated metadata",
               "zarr.json": "Zarr v3 metadata", "metadata.json": "SCDL metadata",
               "version.json": "SCDL version"}


def generic_what(node) -> str:
    """What a file or folder of an SCDL archive or a Zarr hierarchy is (its parser's words)."""
    what = node.display_text()
    if node.kind == "file" and node.name in KNOWN_FILES:
        return KNOWN_FILES[node.name]
    if node.kind == "file" and (not what or what.startswith(("{", "[", '"'))):
        t = node.type or ""
        what = f"{t}: {what}" if t and what else (t or what)
    what = " ".join(what.split())
    return what if len(what) <= 90 else what[:89] + "…"


def _array_of(node):
    """The array model a file belongs to: its array folder's (a group member's) data."""
    n = node.parent
    while n is not None:
        for model in (n.data, getattr(n.data, "model", None)):
            if hasattr(model, "schema_for"):
                return model
        n = n.parent
    return None


def _max(a: str, b: str) -> str:
    rank = {"ok": 0, "warning": 1, "error": 2}
    return a if rank[a] >= rank[b] else b


def _worst(node, limit: int = 20000) -> str:
    """The worst status at or under `node` (non-lazy; bounded walk)."""
    worst = "ok"
    for i, n in enumerate(node.walk()):
        if n.status == "error":
            return "error"
        if n.status == "warning":
            worst = "warning"
        if i > limit:
            break
    return worst

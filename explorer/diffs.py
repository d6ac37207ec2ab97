"""Opening diffs: File ▸ Compare Files…, and on a file node "Compare with…" another file
or the same file in a sibling folder (the same attribute in another fragment). A diff opens
as a tab beside the hex tabs. `install(window)` registers it."""
from __future__ import annotations

import os
from typing import Callable, List, Optional, Tuple

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu

from arrayscope.formats.core.node import Node
from arrayscope.formats.core.source import FileSource

from .diffview import DiffView
from .windowmenus import menu


def same_file_elsewhere(node: Node) -> List[Node]:
    """Files named like `node` in the folders beside its folder (other fragments)."""
    folder = node.parent
    up = folder.parent if folder is not None else None
    if folder is None or up is None or folder.kind != "dir" or up.is_lazy:
        return []
    out = []
    for sib in up.iter_children():
        # a folder listed when expanded (a lazily opened fragment) is listed now; other lazy
        # folders (a group member: a whole array to open) are left alone
        listable = sib.pending and getattr(sib.children, "owner_fields", False)
        if sib is folder or sib.kind != "dir" or (sib.is_lazy and not listable):
            continue
        other = sib.find(node.name)
        if other is not None and other.kind == "file" and not isinstance(other.source, str) \
                and other.source is not None:
            out.append(other)
    return out


class Diffs:
    def __init__(self, window):
        self.win = window
        a = QAction("Compare &Files…", window)
        a.setStatusTip("Side-by-side diff of two files, with the list of differing ranges")
        a.triggered.connect(self.compare_dialog)
        f = menu(window, "&File")
        acts = f.actions()
        if len(acts) > 3:
            f.insertAction(acts[3], a)   # after the Open entries
        else:
            f.addAction(a)
        cm = getattr(window, "context_menus", None)
        if cm is not None:
            cm.node_menu_hooks.append(self._node_menu)

    def compare_dialog(self) -> Optional[DiffView]:
        start = os.path.dirname(self.win.path.rstrip("/")) if self.win.path else os.getcwd()
        a, _ = QFileDialog.getOpenFileName(self.win, "Compare: first file", start)
        if not a:
            return None
        b, _ = QFileDialog.getOpenFileName(self.win, "Compare: second file", os.path.dirname(a))
        if not b:
            return None
        return self.compare_paths(a, b)

    def compare_paths(self, a: str, b: str) -> Optional[DiffView]:
        try:
            sa, sb = FileSource(a), FileSource(b)
        except OSError as e:
            self.win.st_value.setText(f"Cannot compare: {e}")
            return None
        opened: List[object] = []
        na, nb = self.file_node(a, opened), self.file_node(b, opened)
        dv = self.compare(sa, sb, titles=distinct_titles(a, b),
                          nodes=(na, nb) if na is not None and nb is not None else None)
        for doc in opened:   # the datasets opened for the fields live as long as the tab
            dv.destroyed.connect(lambda _o=None, d=doc: d.close())
        return dv

    def file_node(self, path: str, opened: List[object]) -> Optional[Node]:
        """`path`'s node, for the field-by-field list: in the open dataset, else in the
        dataset folder around it (opened here, appended to `opened`); None when no format
        places the file."""
        from arrayscope import formats
        from arrayscope.formats.core import registry

        path = os.path.abspath(path)
        session = self.win.session
        if session is not None and self.win.path and _under(path, self.win.path):
            return _walk(session.document.root, os.path.relpath(path, self.win.path))
        d = os.path.dirname(path)
        while d != os.path.dirname(d):
            if registry.for_dir(d) is not None:
                try:
                    doc = formats.open(d, lazy=True)
                except formats.OpenError:
                    return None
                opened.append(doc)
                return _walk(doc.root, os.path.relpath(path, d))
            d = os.path.dirname(d)
        return None

    def compare(self, a, b, titles: Optional[Tuple[str, str]] = None,
                nodes: Optional[Tuple[Node, Node]] = None) -> DiffView:
        """A diff tab of sources `a` and `b`; `nodes`: their files' nodes (the fields that
        differ listed by name); `titles`: the panes' (each file's path in the dataset)."""
        dv = DiffView(a, b, self.win.tabs, titles=titles, nodes=nodes)
        tabs = self.win.tabs
        i = tabs.addTab(dv, f"⇆ {_short(a.name)} ↔ {_short(b.name)}")
        tabs.setTabToolTip(i, f"{a.name}\n↔ {b.name}")
        tabs.setCurrentIndex(i)
        self.win.stack.setCurrentIndex(1)
        self.win.diff_view = dv
        return dv

    def _node_menu(self, m: QMenu, node: Node) -> None:
        if node.kind != "file" or node.source is None or isinstance(node.source, str):
            return
        sub = m.addMenu("Compare with")
        for other in same_file_elsewhere(node):
            label = f"{other.parent.name if other.parent else ''}/{other.name}"
            sub.addAction(label, self._compare_with(node, other))
        sub.addAction("Another file…", lambda: self._pick_other(node))

    def compare_nodes(self, node: Node, other: Node) -> DiffView:
        """Two files of the document: panes titled with their paths (member, fragment),
        the differing fields listed."""
        return self.compare(node.source, other.source, titles=(node.path(), other.path()),
                            nodes=(node, other))

    def _compare_with(self, node: Node, other: Node) -> Callable[[], None]:
        return lambda: (self.compare_nodes(node, other), None)[1]

    def _pick_other(self, node: Node) -> None:
        start = os.path.dirname(getattr(node.source, "path", "") or os.getcwd())
        b, _ = QFileDialog.getOpenFileName(self.win, f"Compare {node.name} with", start)
        if b:
            try:
                self.compare(node.source, FileSource(b))
            except OSError as e:
                self.win.st_value.setText(f"Cannot compare: {e}")


def distinct_titles(a: str, b: str) -> Tuple[str, str]:
    """Two files' paths from the folder they share: what tells them apart (the fragment,
    the member), not two equal base names."""
    try:
        common = os.path.commonpath([os.path.dirname(a), os.path.dirname(b)])
    except ValueError:   # different drives
        return a, b
    return os.path.relpath(a, common), os.path.relpath(b, common)


def _under(path: str, folder: str) -> bool:
    folder = os.path.abspath(folder)
    return os.path.isdir(folder) and os.path.commonpath([path, folder]) == folder


def _walk(root: Optional[Node], rel: str) -> Optional[Node]:
    """The file node at `rel` (os separators) under `root`, building folders on the way."""
    cur: Optional[Node] = root
    for part in rel.split(os.sep):
        if cur is None:
            return None
        cur.ensure_built()   # a folder listed when expanded, a group member opened
        cur = cur.find(part)
    if cur is None or cur.kind != "file":
        return None
    cur.ensure_built()   # a file parsed when first shown: its fields
    return cur


def _short(name: str) -> str:
    base = name.rstrip("/").split("/")[-1]
    return base if len(base) <= 24 else base[:10] + "…" + base[-10:]


def install(window) -> Diffs:
    d = Diffs(window)
    window.diffs = d
    return d

"""Context menus on nodes (the tree) and on hex tabs, Ctrl+C in the tree, and exporting a
selection, a node's bytes or a derived source (a filter stage's output) to a file.
`install(window)` registers them."""
from __future__ import annotations

import os
from typing import Callable, List, Optional

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from arrayscope.formats.core.node import Node

from .exportbytes import ExportError, dataset_files, export_range
from .windowmenus import menu


def node_row_text(node: Node) -> str:
    """A node as one line of tab-separated columns (name, value, type, offset, size)."""
    has_bytes = node.source is not None and not isinstance(node.source, str)
    cols = [node.name, node.display_text(), node.type or node.kind,
            f"0x{node.offset:X}" if has_bytes else "", f"{node.size}" if has_bytes else ""]
    return "\t".join(cols)


class ContextMenus:
    def __init__(self, window):
        self.win = window
        self.last_export: Optional[str] = None
        # other modules add entries to a node's menu: fn(menu, node)
        self.node_menu_hooks: List[Callable[[QMenu, Node], None]] = []
        tv = window.tree.view
        tv.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        tv.customContextMenuRequested.connect(self.tree_menu)
        tv.copy = self.copy_node        # the window's Copy (Ctrl+C) calls the focus widget's copy
        bar = window.tabs.tabBar()
        bar.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        bar.customContextMenuRequested.connect(self.tab_menu)
        window.tabs.viewCreated.connect(lambda v: v.menu_hooks.append(self._hex_menu))
        exp = QAction("&Export Selection…", window)
        exp.setShortcut(QKeySequence("Ctrl+E"))
        exp.setStatusTip("Write the selected bytes to a file")
        exp.triggered.connect(lambda: self.export_selection())
        f = menu(window, "&File")
        before = _action_named(f, "Save &Screenshot…")
        if before is not None:
            f.insertAction(before, exp)
        else:
            f.addAction(exp)

    # ---- tree ------------------------------------------------------------------------
    def copy_node(self, node: Optional[Node] = None) -> None:
        node = node or self.win.tree.current_node()
        if node is not None:
            QGuiApplication.clipboard().setText(node_row_text(node))

    def tree_menu(self, pos: QPoint) -> None:
        tv = self.win.tree.view
        node = self.win.tree.model.node(tv.indexAt(pos))
        if node is None:
            return
        m = self.node_menu(node)
        m.exec(tv.viewport().mapToGlobal(pos))

    def node_menu(self, node: Node) -> QMenu:
        m = QMenu(self.win)
        cb = QGuiApplication.clipboard()
        m.addAction("Copy row", lambda: self.copy_node(node)).setShortcut(QKeySequence.StandardKey.Copy)
        m.addAction("Copy name", lambda: cb.setText(node.name))
        m.addAction("Copy value", lambda: cb.setText(node.display_text()))
        m.addAction("Copy path", lambda: cb.setText(node.path()))
        has_bytes = node.source is not None and not isinstance(node.source, str) and node.size > 0
        if has_bytes:
            m.addAction("Copy offset", lambda: cb.setText(f"0x{node.offset:X}"))
            m.addSeparator()
            m.addAction("Bookmark node…", lambda: self.win.bookmarks.add(node.source, node.offset, node.end))
            m.addAction("Export node bytes…", lambda: self.export(node.source, node.offset, node.end,
                                                                    node.name))
        for hook in self.node_menu_hooks:
            hook(m, node)
        if node.parent is not None:
            m.addSeparator()
            m.addAction("Select parent", lambda: self.win.select_node(node.parent))
        return m

    # ---- tabs ------------------------------------------------------------------------
    def tab_menu(self, pos: QPoint) -> None:
        tabs = self.win.tabs
        i = tabs.tabBar().tabAt(pos)
        if i < 0:
            return
        m = self.tab_actions(i)
        m.exec(tabs.tabBar().mapToGlobal(pos))

    def tab_actions(self, i: int) -> QMenu:
        tabs = self.win.tabs
        view = tabs.widget(i)
        src = getattr(view, "source", None)
        m = QMenu(self.win)
        m.addAction("Close", lambda: tabs.tabCloseRequested.emit(i))
        m.addAction("Close other tabs", lambda: self.close_others(view))
        m.addAction("Close all tabs", lambda: self.close_others(None))
        if src is not None:
            m.addSeparator()
            m.addAction("Copy source name", lambda: QGuiApplication.clipboard().setText(src.name))
            m.addAction("Export all bytes…", lambda: self.export(src, 0, src.size, src.name))
        return m

    def close_others(self, keep) -> None:
        tabs = self.win.tabs
        for v in list(tabs.views()):
            if v is not keep:
                tabs.tabCloseRequested.emit(tabs.indexOf(v))

    # ---- hex -------------------------------------------------------------------------
    def _hex_menu(self, m: QMenu, view) -> None:
        m.addAction("Export selection…", lambda: self.export(view.source, *view.selection()))

    # ---- export ----------------------------------------------------------------------
    def export_selection(self, dest: Optional[str] = None) -> int:
        v = self.win.tabs.current_view()
        if v is None or v.source is None or v.size_bytes == 0:
            return 0
        a, b = v.selection()
        return self.export(v.source, a, b, v.source.name, dest)

    def export(self, source, start: int, end: int, hint: str = "", dest: Optional[str] = None) -> int:
        """Write bytes [start, end) of `source` to `dest` (asked for when not given).
        Returns the bytes written (0 when nothing was)."""
        if dest is None:
            base = os.path.basename(hint.rstrip("/")) or "bytes"
            start_dir = self.last_export or os.path.expanduser("~")
            suggestion = os.path.join(start_dir, f"{base}_{start:X}-{end:X}.bin")
            dest, _ = QFileDialog.getSaveFileName(self.win, "Export Bytes", suggestion)
            if not dest:
                return 0
        s = self.win.session
        try:
            n = export_range(source, start, end, dest, dataset_files(s.sources()) if s else ())
        except (ExportError, OSError) as e:
            self.win.st_value.setText(f"Export failed: {e}")
            if not getattr(self.win, "quiet", False):
                QMessageBox.warning(self.win, "Export", str(e))
            return 0
        self.last_export = os.path.dirname(dest)
        self.win.st_value.setText(f"Exported {n:,} bytes of {getattr(source, 'name', '')} to {dest}")
        return n


def _action_named(m: QMenu, text: str) -> Optional[QAction]:
    for a in m.actions():
        if a.text() == text:
            return a
    return None


def install(window) -> ContextMenus:
    cm = ContextMenus(window)
    window.context_menus = cm
    return cm

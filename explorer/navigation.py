"""Moving around the bytes: find, go to an offset, copy, and going to a verify finding."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, cast

from PySide6.QtWidgets import QApplication, QInputDialog, QLineEdit, QMainWindow, QMessageBox

from . import search
from .menus import APP_NAME

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDockWidget, QLabel

    from .findbar import FindBar
    from .hextabs import HexTabs
    from .hexview import HexView
    from .session import Session
    from .treepanel import TreePanel


class NavigationMixin(QMainWindow):
    """Find / go to / copy for `MainWindow` (a mixin: it uses the window's tabs and tree)."""

    if TYPE_CHECKING:   # what the window provides
        tabs: HexTabs
        tree: TreePanel
        findbar: FindBar
        d_tree: QDockWidget
        st_value: QLabel

        @property
        def session(self) -> Optional[Session]: ...
        def select_node(self, node, origin: Optional[str] = None) -> None: ...
        def _byte_clicked(self, view: HexView, offset: int) -> None: ...

    def goto_finding(self, f) -> None:
        """Show a verify finding: its node when the tree has it (by path; a group member on
        the way is opened off the GUI thread first, then this goes on), else the node
        holding byte `offset` of its source, with the cursor on that byte."""
        if self.session is None or not f:
            return
        from .nodepath import resolve_built

        doc = self.session.document
        node, member = resolve_built(doc.root, f.node) if f.node else (None, None)
        if member is not None:
            session = self.session
            self.st_value.setText(f"opening {member.path()}…")
            def again() -> None:   # the same finding once its member is built, if still open
                if self.session is session:
                    self.goto_finding(f)

            if self.tree.model.when_built(member, again):
                return
            member.ensure_built()   # not a row of the tree: here
            node, member = resolve_built(doc.root, f.node)
        src = doc.source_by_name(f.source or "")
        off = f.offset
        if node is not None and (src is None or node.source is src or
                                 isinstance(node.source, str)):
            self.select_node(node, origin="diagnostics")
            self.st_value.setText(f"{f.status}: {f.message}")
            return
        if src is None:
            self.st_value.setText(f"{f.source}: not a source of this document")
            return
        at = self.session.node_at(src, off or 0)
        if at is not None:
            self.select_node(at, origin="diagnostics")
        view = self.tabs.view_for(src)
        if view is not None and off is not None and 0 <= off < max(1, src.size):
            view.set_cursor(off, scroll=False)
            view.scroll_to(off, center=True)
        self.st_value.setText(f"{f.status}: {f.message}")

    def show_find(self) -> None:
        if self.tabs.current_view() is not None:
            self.findbar.show_bar()

    def focus_tree_find(self) -> None:
        self.d_tree.show()
        self.d_tree.raise_()
        edit = cast(QLineEdit, self.tree.find)   # the panel's find field (shadows QWidget.find)
        edit.setFocus()
        edit.selectAll()

    def _find(self, pat: bytes, backward: bool) -> None:
        v = self.tabs.current_view()
        if v is None or v.source is None:
            return
        a, _ = v.selection()
        start = a if backward else a + 1
        self.finder.start(v, pat, start, backward)   # in a worker: `_found` shows the hit
        self.findbar.set_status("searching…")

    @property
    def finder(self):
        """The find bar's search runner (explorer/findnext.py), made on first use."""
        f = getattr(self, "_finder", None)
        if f is None:
            from .findnext import FindNextRunner

            f = self._finder = FindNextRunner(self)
            f.found.connect(self._found)
        return f

    def _found(self, searched: object, hit, n: int) -> None:
        v = self.tabs.current_view()
        if v is None or searched is not v:
            self.findbar.set_status("")
            return   # the tab searched is gone or hidden: nothing to show
        if hit is None:
            self.findbar.set_status("not found", error=True)
            return
        self.findbar.set_status(f"at 0x{hit:X}")
        v.select_range(hit, hit + n)
        node = self.session.node_at(v.source, hit) if self.session else None
        if node is not None:
            self.select_node(node, origin="hex")

    def goto_dialog(self) -> None:
        v = self.tabs.current_view()
        if v is None or v.source is None:
            return
        text, ok = QInputDialog.getText(self, "Go to Offset",
                                        f"Offset in {v.source.name} ({v.size_bytes:,} bytes):\n"
                                        "0x1F, 31, 1Fh, +16 / -16 (from cursor), end-4")
        if not ok or not text.strip():
            return
        try:
            off = search.parse_offset(text, v.cursor_offset, v.size_bytes)
        except ValueError as e:
            QMessageBox.warning(self, APP_NAME, str(e))
            return
        if not 0 <= off < max(1, v.size_bytes):
            QMessageBox.warning(self, APP_NAME, f"0x{off:X} is outside {v.source.name}")
            return
        self.goto(off)

    def goto(self, offset: int) -> None:
        v = self.tabs.current_view()
        if v is None:
            return
        v.set_cursor(offset, scroll=False)
        v.scroll_to(offset, center=True)
        v.setFocus()
        self._byte_clicked(v, offset)

    def _copy(self, fmt: str) -> None:
        w = QApplication.focusWidget()
        v = self.tabs.current_view()
        if v is not None and (w is v or w is None or fmt != "Hex"):
            v.copy_as(fmt)
        elif w is not None and hasattr(w, "copy"):
            getattr(w, "copy")()

"""The Bookmarks dock: named, coloured ranges of the open dataset, listed; double-click
goes there. Ctrl+D bookmarks the hex selection; the hex view and the tree's context menus
offer it too. Saved per dataset in the user's settings (bookmarkstore)."""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QColor, QIcon, QKeySequence, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .bookmarkstore import COLOURS, Bookmark, BookmarkStore
from .docks import bottom_dock
from .state import AppState, DocumentChanged, Event
from .windowmenus import menu

COLS = ("Name", "Source", "Offset", "Size")


def swatch(colour: str) -> QIcon:
    pm = QPixmap(12, 12)
    pm.fill(QColor(colour))
    return QIcon(pm)


def _button(parent: QWidget, text: str, tip: str) -> QToolButton:
    b = QToolButton(parent)
    b.setText(text)
    b.setToolTip(tip)
    return b


class BookmarksPanel(QWidget):
    def __init__(self, window):
        super().__init__(window)
        self.win = window
        self.dock: Optional[QDockWidget] = None   # set by install
        self.store = BookmarkStore(window.settings)
        self.table = QTableWidget(0, len(COLS), self)
        self.table.setHorizontalHeaderLabels(list(COLS))
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed |
                                   QAbstractItemView.EditTrigger.SelectedClicked)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        h = self.table.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        h.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setColumnWidth(0, 160)
        self.table.itemChanged.connect(self._renamed)
        self.table.itemActivated.connect(lambda it: self.go(it.row()))
        self.table.itemDoubleClicked.connect(lambda it: self.go(it.row()))
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._menu)
        add = _button(self, "Add", "Bookmark the selected bytes (Ctrl+D)")
        add.clicked.connect(lambda: self.add_current())
        rm = _button(self, "Remove", "Remove the selected bookmark")
        rm.clicked.connect(self.remove_selected)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(add)
        row.addWidget(rm)
        row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(2)
        lay.addLayout(row)
        lay.addWidget(self.table, 1)
        self._filling = False

    # ---- the list --------------------------------------------------------------------
    def state_changed(self, state: AppState, event: Event) -> None:
        if isinstance(event, DocumentChanged):
            doc = state.session.document if state.session is not None else None
            self.set_document(doc)
            if self.dock is not None:
                self.dock.setVisible(doc is not None and bool(self.store.items))

    def set_document(self, doc) -> None:
        self.store.load(doc.path if doc is not None else None)
        self.refresh()

    def refresh(self) -> None:
        self._filling = True
        try:
            items = self.store.items
            self.table.setRowCount(len(items))
            for r, b in enumerate(items):
                cells = (b.name, b.source, f"0x{b.start:X}", f"{b.size:,}")
                for c, text in enumerate(cells):
                    it = QTableWidgetItem(text)
                    flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                    if c == 0:
                        flags |= Qt.ItemFlag.ItemIsEditable
                        it.setIcon(swatch(b.colour))
                    it.setFlags(flags)
                    it.setToolTip(f"{b.name}\n{b.source} [0x{b.start:X}, 0x{b.end:X}) {b.size:,} bytes")
                    self.table.setItem(r, c, it)
        finally:
            self._filling = False
        self.paint_views()

    def paint_views(self) -> None:
        for v in self.win.tabs.views():
            self.decorate(v)

    def decorate(self, view) -> None:
        name = getattr(view.source, "name", None)
        view.set_bookmarks([(b.start, b.end, b.colour) for b in self.store.for_source(name)]
                           if name is not None else [])
        overview = getattr(view, "overview", None)
        if overview is not None:
            overview.update()

    def _renamed(self, it: QTableWidgetItem) -> None:
        if self._filling or it.column() != 0:
            return
        b = self.store.items[it.row()]
        text = it.text().strip()
        if text and text != b.name:
            self.store.update(b, name=text)

    def selected(self) -> Optional[Bookmark]:
        r = self.table.currentRow()
        return self.store.items[r] if 0 <= r < len(self.store.items) else None

    # ---- actions ---------------------------------------------------------------------
    def add_current(self, name: Optional[str] = None) -> Optional[Bookmark]:
        """Bookmark the current hex view's selection (asks for a name unless given)."""
        v = self.win.tabs.current_view()
        if v is None or v.source is None or v.size_bytes == 0:
            return None
        a, b = v.selection()
        return self.add(v.source, a, b, name)

    def add(self, source, start: int, end: int, name: Optional[str] = None) -> Optional[Bookmark]:
        if name is None:
            node = self.win.session.node_at(source, start) if self.win.session else None
            suggestion = node.name if node is not None else ""
            name, ok = QInputDialog.getText(self.win, "Add Bookmark",
                                            f"Name for {end - start:,} bytes at 0x{start:X}:",
                                            text=suggestion)
            if not ok:
                return None
        bm = self.store.add(source.name, start, end, name)
        self.refresh()
        self.win.d_bookmarks.show()
        return bm

    def remove_selected(self) -> None:
        b = self.selected()
        if b is not None:
            self.store.remove(b)
            self.refresh()

    def set_colour(self, b: Bookmark, colour: str) -> None:
        self.store.update(b, colour=colour)
        self.refresh()

    def go(self, row: int) -> None:
        if not 0 <= row < len(self.store.items):
            return
        b = self.store.items[row]
        s = self.win.session
        if s is None:
            return
        src = next((x for x in s.sources() if getattr(x, "name", None) == b.source), None)
        if src is None:
            self.win.st_value.setText(f"{b.source}: not a source of this document")
            return
        view = self.win.tabs.view_for(src)
        node = s.node_at(src, b.start)
        if node is not None:
            self.win.select_node(node, origin="hex")
        view.select_range(b.start, b.end)
        view.setFocus()

    def _rename(self) -> None:
        it = self.table.item(self.table.currentRow(), 0)
        if it is not None:
            self.table.editItem(it)

    def _menu(self, pos) -> None:
        b = self.selected()
        if b is None:
            return
        m = QMenu(self)
        m.addAction("Go to", lambda: self.go(self.table.currentRow()))
        m.addAction("Rename", self._rename)
        cm = m.addMenu("Colour")
        for c in COLOURS:
            cm.addAction(swatch(c), c, lambda c=c: self.set_colour(b, c))
        m.addSeparator()
        m.addAction("Remove", self.remove_selected)
        m.exec(self.table.viewport().mapToGlobal(pos))


def _hex_menu(panel: BookmarksPanel):
    def hook(m: QMenu, view) -> None:
        m.addSeparator()
        m.addAction("Bookmark selection…", lambda: panel.add(view.source, *view.selection()))
    return hook


def install(window) -> BookmarksPanel:
    panel = BookmarksPanel(window)
    dock = bottom_dock(window, "Bookmarks", "dock_bookmarks", panel)
    window.d_bookmarks, window.bookmarks = dock, panel
    panel.dock = dock
    window.state.subscribe(panel)   # DocumentChanged: this document's bookmarks
    window.tabs.viewCreated.connect(panel.decorate)
    window.tabs.viewCreated.connect(lambda v: v.menu_hooks.append(_hex_menu(panel)))
    add = QAction("Add &Bookmark…", window)
    add.setShortcut(QKeySequence("Ctrl+D"))
    add.setStatusTip("Bookmark the selected bytes")
    add.triggered.connect(lambda: panel.add_current())
    e = menu(window, "&Edit")
    e.addAction(add)
    menu(window, "&View").addAction(dock.toggleViewAction())
    return panel

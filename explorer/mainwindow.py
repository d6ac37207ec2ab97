"""The main window: docks around the hex tabs, menus, status bar, opening and selection."""
from __future__ import annotations

import os
from typing import List, Optional

from PySide6.QtCore import QByteArray, QEvent, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from arrayscope.formats.remote import is_url

from . import search, startpage, theme
from .arraybrowser import ArrayBrowser
from .diagnostics import DiagnosticsPanel
from .findbar import FindBar
from .healthdock import install as install_health
from .hextabs import HexTabs
from .inspector import Inspector
from .loader import Loader
from .pipelinepanel import PipelinePanel
from .session import Session
from .state import AppState, Event, SelectionChanged
from .treepanel import TreePanel
from .verifier import Verifier

APP_NAME = "arrayscope"
MAX_RECENT = 10


class MainWindow(QMainWindow):
    def __init__(self, settings: Optional[QSettings] = None, key: Optional[bytes] = None,
                 restore: bool = True):
        super().__init__()
        self.settings = settings if settings is not None else QSettings(APP_NAME, APP_NAME)
        self.key = key
        self.state = AppState()
        self.path: Optional[str] = None
        self._pending_select: Optional[str] = None
        self.setWindowTitle(APP_NAME)
        self.setWindowIcon(theme.app_icon())
        self.setAcceptDrops(True)
        self.setDockNestingEnabled(True)
        self.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)
        self.setCorner(Qt.BottomLeftCorner, Qt.LeftDockWidgetArea)
        self.loader = Loader(self)
        self.loader.started.connect(self._load_started)
        self.loader.progress.connect(self._load_progress)
        self.loader.loaded.connect(self._loaded)
        self.loader.failed.connect(self._load_failed)
        self.loader.cancelled.connect(self._load_cancelled)
        self.verifier = Verifier(self)
        self.verifier.done.connect(self._verified)
        self.verifier.failed.connect(lambda msg: self.diag.verify_failed(msg))
        self._open_format: Optional[str] = None
        self._open_key: Optional[bytes] = None

        # central: start page / hex tabs + find bar
        self.start = startpage.StartPage(self)
        self.start.openFile.connect(self.open_file_dialog)
        self.start.openDir.connect(self.open_dir_dialog)
        self.start.openPath.connect(lambda p: self.open_path(p))
        self.tabs = HexTabs(self)
        self.tabs.on_new_view = self._wire_view
        self.tabs.currentSourceChanged.connect(self._tab_changed)
        self.tabs.sourceClosed.connect(self._source_closed)
        self.findbar = FindBar(self)
        self.findbar.hide()
        self.findbar.findRequested.connect(self._find)
        hexarea = QWidget(self)
        hl = QVBoxLayout(hexarea)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.setSpacing(0)
        hl.addWidget(self.tabs, 1)
        hl.addWidget(self.findbar)
        from .hexview import HexView
        hexarea.setMinimumWidth(HexView().minimum_width())
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.start)
        self.stack.addWidget(hexarea)
        self.setCentralWidget(self.stack)

        # docks
        self.tree = TreePanel(self)
        self.tree.nodeSelected.connect(lambda n: self.select_node(n, origin="tree"))
        self.inspector = Inspector(self)
        self.pipeline = PipelinePanel(self)
        self.pipeline.stageReady.connect(self._stage_ready)
        self.pipeline.nodeRequested.connect(lambda n: self.select_node(n))
        self.browser = ArrayBrowser(self)
        self.browser.nodeActivated.connect(lambda n: self.select_node(n, origin="browser"))
        self.diag = DiagnosticsPanel(self)
        self.diag.nodeActivated.connect(lambda n: self.select_node(n, origin="diagnostics"))
        self.diag.findingActivated.connect(self.goto_finding)
        self.diag.countsChanged.connect(self._diag_counts)
        self.d_browser = self._dock("Array", "dock_array", self.browser, Qt.LeftDockWidgetArea)
        self.d_tree = self._dock("Structure", "dock_tree", self.tree, Qt.LeftDockWidgetArea)
        self.d_inspector = self._dock("Inspector", "dock_inspector", self.inspector, Qt.RightDockWidgetArea)
        self.d_pipeline = self._dock("Pipeline", "dock_pipeline", self.pipeline, Qt.RightDockWidgetArea)
        self.d_diag = self._dock("Diagnostics", "dock_diag", self.diag, Qt.BottomDockWidgetArea)
        self.splitDockWidget(self.d_browser, self.d_tree, Qt.Vertical)
        self.splitDockWidget(self.d_inspector, self.d_pipeline, Qt.Vertical)
        self.resizeDocks([self.d_browser, self.d_tree], [220, 600], Qt.Vertical)
        self.resizeDocks([self.d_tree, self.d_inspector], [500, 420], Qt.Horizontal)
        self.resizeDocks([self.d_diag], [130], Qt.Vertical)
        self.resizeDocks([self.d_inspector, self.d_pipeline], [440, 520], Qt.Vertical)

        for panel in (self.tree, self.browser, self.tabs, self.inspector, self, self.pipeline,
                      self.diag):
            self.state.subscribe(panel)
        self._build_status()
        install_health(self)
        self._build_menus()
        self._sync_timer = QTimer(self)
        self._sync_timer.setSingleShot(True)
        self._sync_timer.setInterval(180)
        self._sync_timer.timeout.connect(self._sync_from_cursor)
        self._units = {}
        self._show_docks(False)
        self.resize(1500, 920)
        self.start.set_recent(self.recent())
        if restore:
            self._restore()

    @property
    def session(self) -> Optional[Session]:
        return self.state.session

    @property
    def current_node(self):
        return self.state.current

    # ---- construction ----------------------------------------------------------------
    def _dock(self, title: str, name: str, widget, area) -> QDockWidget:
        d = QDockWidget(title, self)
        d.setObjectName(name)
        d.setWidget(widget)
        d.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetClosable |
                      QDockWidget.DockWidgetFloatable)
        self.addDockWidget(area, d)
        return d

    def _build_status(self) -> None:
        sb = self.statusBar()
        self.st_source = QLabel("", self)
        self.st_offset = QLabel("", self)
        self.st_sel = QLabel("", self)
        self.st_value = QLabel("", self)
        self.st_value.setMinimumWidth(200)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(200)
        self.progress.setMinimumWidth(140)
        self.progress.setVisible(False)
        self.cancel_btn = QPushButton("Cancel", self)
        self.cancel_btn.setVisible(False)
        self.cancel_btn.clicked.connect(self.loader.cancel)
        for w in (self.st_source, self.st_offset, self.st_sel):
            w.setTextInteractionFlags(Qt.TextSelectableByMouse)
            sb.addPermanentWidget(w)
        sb.addWidget(self.st_value, 1)
        from .transferstatus import TransferStatus  # a URL's requests and bytes (formats/remote.py)
        self.st_transfer = TransferStatus(self, lambda: getattr(self.session, "document", None))
        sb.addPermanentWidget(self.st_transfer)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.cancel_btn)

    def _act(self, menu, text, slot, shortcut=None, tip=None) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setStatusTip(tip)
            a.setToolTip(tip)
        a.triggered.connect(slot)
        menu.addAction(a)
        return a

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self._act(f, "&Open File…", self.open_file_dialog, QKeySequence.Open, "Open a file")
        self._act(f, "Open &Directory…", self.open_dir_dialog, "Ctrl+Shift+O",
                  "Open an array or archive directory")
        self._act(f, "Open &Sample", lambda: self.open_path(default_sample()), None,
                  "Open the bundled sample TileDB array")
        self.recent_menu = f.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self.reopen_menu = f.addMenu("Reopen &As")
        self.reopen_menu.aboutToShow.connect(self._fill_reopen)
        self._act(f, "Encryption &Key File…", self.choose_key, None,
                  "Read the 32-byte AES-256 key from a file and reopen")
        self._act(f, "&Reload", self.reload, QKeySequence.Refresh)
        self._act(f, "&Close", self.close_document, QKeySequence.Close)
        f.addSeparator()
        self._act(f, "Save &Screenshot…", self.save_screenshot_dialog)
        f.addSeparator()
        self._act(f, "&Quit", self.close, QKeySequence.Quit)
        e = mb.addMenu("&Edit")
        self._act(e, "&Copy as Hex", lambda: self._copy("Hex"), QKeySequence.Copy)
        self._act(e, "Copy as &Bytes", lambda: self._copy("Bytes"), "Ctrl+Shift+C")
        self._act(e, "Copy as C &Array", lambda: self._copy("C array"))
        self._act(e, "Copy as &Python bytes", lambda: self._copy("Python bytes"))
        self._act(e, "Copy as Base&64", lambda: self._copy("Base64"))
        e.addSeparator()
        self._act(e, "&Find…", self.show_find, QKeySequence.Find)
        self._act(e, "Find &Next", lambda: self.findbar.trigger(False), QKeySequence.FindNext)
        self._act(e, "Find &Previous", lambda: self.findbar.trigger(True), QKeySequence.FindPrevious)
        self._act(e, "Find &Node…", self.focus_tree_find, "Ctrl+Shift+F")
        self._act(e, "&Go to Offset…", self.goto_dialog, "Ctrl+G")
        e.addSeparator()
        self._act(e, "Select &Parent Node", self.select_parent, "Alt+Up")
        self._act(e, "&Back", self.go_back, QKeySequence.Back, "The node selected before")
        self._act(e, "&Forward", self.go_forward, QKeySequence.Forward, "The node selected after")
        v = mb.addMenu("&View")
        for d in (self.d_browser, self.d_tree, self.d_inspector, self.d_pipeline, self.d_diag):
            v.addAction(d.toggleViewAction())
        v.addSeparator()
        self._act(v, "Reset &Layout", self.reset_layout)
        h = mb.addMenu("&Help")
        self._act(h, "&Keyboard Shortcuts", self.show_shortcuts, QKeySequence.HelpContents)
        self._act(h, "&About arrayscope", self.about)
        self._act(h, "About &Qt", QApplication.aboutQt)
        self._default_state = self.saveState()

    # ---- opening ---------------------------------------------------------------------
    def open_file_dialog(self) -> None:
        p, _ = QFileDialog.getOpenFileName(self, "Open File", self._last_dir())
        if p:
            self.open_path(p)

    def open_dir_dialog(self) -> None:
        p = QFileDialog.getExistingDirectory(self, "Open Array or Archive Directory", self._last_dir())
        if p:
            self.open_path(p)

    def _last_dir(self) -> str:
        r = self.recent()
        return os.path.dirname(r[0].rstrip("/")) if r else os.getcwd()

    def choose_key(self) -> None:
        from arrayscope.formats.context import load_key

        p, _ = QFileDialog.getOpenFileName(self, "Encryption Key File (32 bytes)", self._last_dir())
        if not p:
            return
        try:
            self.key = load_key(p)
        except (OSError, ValueError) as e:
            QMessageBox.warning(self, APP_NAME, f"Cannot use this key file: {e}")
            return
        if self.path:
            self.open_path(self.path)

    def open_path(self, path: str, key: Optional[bytes] = None, as_format: Optional[str] = None,
                  sync: bool = False, select: Optional[str] = None) -> bool:
        path = path if is_url(path) else os.path.abspath(path)
        if key is None:
            key = self.key
            if key is None:
                kf = startpage.sample_key_file(path)
                if kf:
                    from arrayscope.formats.context import load_key
                    key = self.key = load_key(kf)
        self._pending_select = select
        self._open_format, self._open_key = as_format, key
        if sync:
            from arrayscope import formats
            try:
                doc = formats.open(path, key=key, as_format=as_format)
            except formats.OpenError as e:
                self._load_failed(path, str(e))
                return False
            self._loaded(doc, 0.0)
            return True
        self.loader.open(path, key, as_format)
        return True

    def reload(self) -> None:
        if self.path:
            self.open_path(self.path)

    def _load_started(self, path: str) -> None:
        self.progress.setRange(0, 0)   # busy until the first file is parsed
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.cancel_btn.setVisible(True)
        self.st_value.setText(f"Opening {path} …")
        # partial results: the files parsed so far, in the Array dock (names and sizes only)
        self.browser.begin_loading(path)
        self.d_browser.setWindowTitle("Loading")
        self.d_browser.show()

    def _load_progress(self, done: int, total: int, files) -> None:
        if not self.loader.busy:
            return
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"%p%  ·  {done}/{total}")
        self.progress.setTextVisible(True)
        name = files[-1][0] if files else ""
        self.st_value.setText(f"Opening {os.path.basename(self.loader.path.rstrip('/'))}: "
                              f"{done} of {total} files parsed — {name}")
        self.browser.add_loading(done, total, files)

    def _load_done_ui(self) -> None:
        self.progress.setVisible(False)
        self.cancel_btn.setVisible(False)

    def _restore_browser(self) -> None:
        """After a cancelled or failed open: the Array dock shows the current document again
        (or nothing, hidden, when there is none)."""
        if not self.browser.loading:
            return
        doc = self.session.document if self.session is not None else None
        if doc is None:
            self.browser.set_root(None)
            self.d_browser.hide()
            return
        self.browser.set_root(doc)
        self.d_browser.setWindowTitle({"scdl": "Archive", "zarr": "Hierarchy"}.get(doc.format, "Array"))
        self.d_browser.setVisible(doc.is_dir)
        if self.current_node is not None:
            self.browser.select_file_of(self.current_node)

    def _load_cancelled(self, path: str) -> None:
        self._load_done_ui()
        self._restore_browser()
        self.st_value.setText(f"Cancelled opening {path}")

    def _load_failed(self, path: str, msg: str) -> None:
        self._load_done_ui()
        self._restore_browser()
        self.st_value.setText(msg)
        if not getattr(self, "quiet", False):
            QMessageBox.warning(self, APP_NAME, f"Cannot open {path}:\n{msg}")

    def _loaded(self, doc, secs: float) -> None:
        self._load_done_ui()
        self.set_document(doc)
        n = len(doc.sources)
        self.st_value.setText(f"Opened {doc.path} ({doc.format or 'plain bytes'}, {n} file"
                              f"{'s' * (n != 1)}{f', {secs * 1000:.0f} ms' if secs else ''})")
        self.add_recent(doc.path)
        if self._pending_select:
            from .nodepath import resolve

            node, msg = resolve(doc.root, self._pending_select)
            if node is not None:
                self.select_node(node)
            else:
                self.st_value.setText(msg)
            self._pending_select = None

    def set_document(self, doc) -> None:
        self.tabs.clear_all()   # before closing the old sources: no view may read them after
        self._units = {}
        self.state.open(Session(doc))
        self.path = doc.path
        self.d_browser.setWindowTitle({"scdl": "Archive", "zarr": "Hierarchy"}.get(doc.format, "Array"))
        self.d_browser.setVisible(doc.is_dir)
        self.verifier.cancel()
        if os.path.exists(doc.path):   # not a URL: verifying reads every tile (requests, bytes)
            self.diag.set_verifying(True)
            self.verifier.start(doc.path, self._open_key if self._open_key is not None else doc.ctx.key,
                                self._open_format)
        self.stack.setCurrentIndex(1)
        self._show_docks(True)
        self.setWindowTitle(f"{os.path.basename(doc.path.rstrip('/'))} — {APP_NAME}")
        root = doc.root
        if root is not None:
            target = root
            if doc.is_dir:
                target = self._first_file(root) or root
            self.select_node(target)

    @staticmethod
    def _first_file(root):
        for n in root.walk():
            if n.kind == "file" and n.size > 0:
                return n
        return None

    def close_document(self) -> None:
        self.verifier.cancel()
        self.tabs.clear_all()
        self.state.close()
        self.path = None
        self.stack.setCurrentIndex(0)
        self.start.set_recent(self.recent())
        self._show_docks(False)
        self.setWindowTitle(APP_NAME)

    def _show_docks(self, on: bool) -> None:
        for d in (self.d_tree, self.d_inspector, self.d_pipeline, self.d_diag, self.d_browser):
            if not on:
                d.hide()
            elif d is not self.d_browser:
                d.show()

    # ---- recent ----------------------------------------------------------------------
    def recent(self) -> List[str]:
        v = self.settings.value("recent", [])
        if isinstance(v, str):
            v = [v]
        return [p for p in (v or []) if isinstance(p, str)]

    def add_recent(self, path: str) -> None:
        r = [p for p in self.recent() if p != path]
        r.insert(0, path)
        self.settings.setValue("recent", r[:MAX_RECENT])

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for p in self.recent():
            self.recent_menu.addAction(p, lambda p=p: self.open_path(p))
        if not self.recent():
            self.recent_menu.addAction("(empty)").setEnabled(False)

    def _fill_reopen(self) -> None:
        from arrayscope.formats import registry

        self.reopen_menu.clear()
        for p in registry.plugins():
            a = self.reopen_menu.addAction(
                p.name, lambda n=p.name: self.path and self.open_path(self.path, as_format=n))
            a.setEnabled(self.path is not None)

    # ---- selection -------------------------------------------------------------------
    def select_node(self, node, origin: Optional[str] = None) -> None:
        self.state.select(node, origin)

    def state_changed(self, state: AppState, event: Event) -> None:
        """The shell's part of a selection: the cursor's readout and the status line."""
        if isinstance(event, SelectionChanged):
            src = event.node.source
            view = self.tabs.current_view()
            if view is not None and src is not None and not isinstance(src, str):
                self._cursor_changed(view)
            self._status_node(event.node)

    def go_back(self) -> None:
        self.state.back()

    def go_forward(self) -> None:
        self.state.forward()

    def select_parent(self) -> None:
        if self.current_node is not None and self.current_node.parent is not None:
            self.select_node(self.current_node.parent)

    def _status_node(self, node) -> None:
        t = node.display_text()
        msg = f"{node.name} = {t[:120]}" if t else node.name
        if node.status != "ok":
            msg += f"   [{node.status}: {node.message}]"
        self.st_value.setText(msg)

    # ---- hex views -------------------------------------------------------------------
    def _wire_view(self, view) -> None:
        view.set_leaf_provider(lambda a, b, v=view: self.session.leaves_in(v.source, a, b)
                               if self.session is not None else ())
        view.byteClicked.connect(lambda off, v=view: self._byte_clicked(v, off))
        view.nodeRequested.connect(lambda off, v=view: self._byte_clicked(v, off))
        view.cursorMoved.connect(lambda off, v=view: self._cursor_moved(v))
        view.selectionChanged.connect(lambda a, b, v=view: self._cursor_changed(v))
        view.findRequested.connect(self.show_find)
        view.gotoRequested.connect(self.goto_dialog)

    def _byte_clicked(self, view, offset: int) -> None:
        self._sync_timer.stop()
        if self.session is None:
            return
        node = self.session.node_at(view.source, offset)
        if node is not None:
            self.select_node(node, origin="hex")

    def _cursor_moved(self, view) -> None:
        self._cursor_changed(view)
        if view.hasFocus() and QApplication.mouseButtons() == Qt.NoButton:
            self._sync_timer.start()

    def _sync_from_cursor(self) -> None:
        v = self.tabs.current_view()
        if v is None or self.session is None:
            return
        node = self.session.node_at(v.source, v.cursor_offset)
        if node is not None and node is not self.current_node:
            self.select_node(node, origin="hex")

    def _cursor_changed(self, view) -> None:
        if view is not self.tabs.current_view():
            return
        off = view.cursor_offset
        a, b = view.selection()
        self.st_source.setText(getattr(view.source, "name", ""))
        self.st_offset.setText(f"Offset 0x{off:X} ({off:,})")
        self.st_sel.setText(f"Selection {b - a:,} B" + (f" [0x{a:X}–0x{b - 1:X}]" if b - a > 1 else ""))
        self.inspector.show_cursor(view.source, off, self._units.get(id(view.source)))

    def _tab_changed(self, source) -> None:
        v = self.tabs.current_view()
        if v is not None:
            self._cursor_changed(v)

    # ---- verify findings --------------------------------------------------------------
    def _verified(self, findings) -> None:
        if self.session is not None:
            self.state.add_findings(findings)

    def goto_finding(self, f) -> None:
        """Show a verify finding: its node when the tree has it (by path), else the node
        holding byte `offset` of its source, with the cursor on that byte."""
        if self.session is None or not f:
            return
        from .nodepath import resolve

        doc = self.session.document
        node, _msg = resolve(doc.root, f.node) if f.node else (None, "")
        src = doc.source_by_name(f.source or "")
        off = f.offset
        if node is not None and (src is None or node.source is src):
            self.select_node(node, origin="diagnostics")
            return
        if src is None:
            self.st_value.setText(f"{f.source}: not a source of this document")
            return
        at = self.session.node_at(src, off or 0)
        if at is not None:
            self.select_node(at, origin="diagnostics")
        view = self.tabs.view_for(src)
        if off is not None and 0 <= off < max(1, src.size):
            view.set_cursor(off, scroll=False)
            view.scroll_to(off, center=True)
        self.st_value.setText(f"{f.status}: {f.message}")

    def _source_closed(self, src) -> None:
        """A hex tab was closed: a filter-stage output made by the pipeline panel is dropped
        from the document (Document.remove_derived) and its nodes leave the tree; other
        sources (files, payloads parsed at open) stay, only their view is gone."""
        if self.session is None or not self.pipeline.is_stage_source(src):
            return
        node = self.pipeline.forget_source(src)
        self.session.document.remove_derived(src)
        self._units.pop(id(src), None)
        if node is not None and node.parent is not None:
            parent = node.parent
            cur = self.current_node
            inside = cur is not None and cur.source is src
            self.tree.model.remove_child(parent, node)
            self.state.forget(node)
            self.session.index.invalidate()
            if inside:
                self.select_node(parent)

    def _stage_ready(self, chunk_node, stage_node, show_source, unit) -> None:
        if self.session is None:
            return
        if stage_node.parent is not None:
            self.tree.model.notify_children_added(stage_node.parent)
        if unit:
            self._units[id(stage_node.source)] = unit
        if show_source is not None:
            self.tabs.view_for(show_source)
            self.select_node(stage_node)
        else:
            self.tabs.view_for(stage_node.source, activate=False)

    # ---- find / goto / copy ------------------------------------------------------------
    def show_find(self) -> None:
        if self.tabs.current_view() is not None:
            self.findbar.show_bar()

    def focus_tree_find(self) -> None:
        self.d_tree.show()
        self.d_tree.raise_()
        self.tree.find.setFocus()
        self.tree.find.selectAll()

    def _find(self, pat: bytes, backward: bool) -> None:
        v = self.tabs.current_view()
        if v is None or v.source is None:
            return
        a, _ = v.selection()
        start = a if backward else a + 1
        QApplication.setOverrideCursor(Qt.WaitCursor)
        try:
            hit = search.find(v.source, pat, start, backward=backward)
        finally:
            QApplication.restoreOverrideCursor()
        if hit is None:
            self.findbar.set_status("not found", error=True)
            return
        self.findbar.set_status(f"at 0x{hit:X}")
        v.select_range(hit, hit + len(pat))
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
        elif hasattr(w, "copy"):
            w.copy()

    # ---- misc ------------------------------------------------------------------------
    def _diag_counts(self, errors: int, warnings: int) -> None:
        t = "Diagnostics"
        if errors or warnings:
            t += f" ({errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)})"
        self.d_diag.setWindowTitle(t)

    def reset_layout(self) -> None:
        self.restoreState(self._default_state)
        self._show_docks(self.session is not None)

    def show_shortcuts(self) -> None:
        QMessageBox.information(self, "Keyboard shortcuts", SHORTCUTS)

    def about(self) -> None:
        from PySide6 import __version__ as pyside_version

        QMessageBox.about(self, f"About {APP_NAME}",
                          f"<h3>{APP_NAME}</h3><p>A hex and structure explorer for binary "
                          "array-storage formats: TileDB arrays, SCDL archives, Zarr struct dtypes.</p>"
                          "<p>Every byte is explained by a node of the format's tree; filter stages "
                          "can be reversed and reapplied one by one.</p>"
                          f"<p>PySide6 {pyside_version} · MIT licence</p>")

    def save_screenshot_dialog(self) -> None:
        p, _ = QFileDialog.getSaveFileName(self, "Save Screenshot", "arrayscope.png", "PNG (*.png)")
        if p:
            self.grab().save(p)

    # ---- settings / events -------------------------------------------------------------
    def _restore(self) -> None:
        g = self.settings.value("geometry")
        s = self.settings.value("state")
        if isinstance(g, QByteArray):
            self.restoreGeometry(g)
        if isinstance(s, QByteArray):
            self.restoreState(s)
            self._show_docks(False)

    def closeEvent(self, e) -> None:
        self.loader.cancel()
        self.verifier.cancel()
        if self.session is not None:
            self.settings.setValue("state", self.saveState())
        self.settings.setValue("geometry", self.saveGeometry())
        super().closeEvent(e)

    def dragEnterEvent(self, e) -> None:
        if e.mimeData().hasUrls() and any(u.isLocalFile() for u in e.mimeData().urls()):
            e.acceptProposedAction()

    def dropEvent(self, e) -> None:
        for u in e.mimeData().urls():
            if u.isLocalFile():
                self.open_path(u.toLocalFile())
                e.acceptProposedAction()
                return

    def changeEvent(self, e) -> None:
        if e.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange, QEvent.StyleChange):
            for v in self.tabs.views():
                v.viewport().update()
        super().changeEvent(e)


def default_sample() -> str:
    return os.path.join(startpage.SAMPLES_DIR, startpage.DEFAULT_SAMPLE)


SHORTCUTS = """Ctrl+O  open a file · Ctrl+Shift+O  open a directory
Ctrl+G  go to offset (0x1F, 31, +16, end-4)
Ctrl+F  find hex / text / typed value · F3 / Shift+F3  next / previous
Ctrl+Shift+F  find a node by name or value
Ctrl+C  copy selection as hex · Ctrl+Shift+C  copy as bytes
Alt+Up  select the parent node
Hex view: arrows, Page Up/Down, Home/End (row), Ctrl+Home/End (source);
Shift extends the selection; click selects the node owning a byte; Enter shows it."""

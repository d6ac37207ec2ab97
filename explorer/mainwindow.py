"""The main window: docks around the hex tabs, menus, status bar, opening and selection."""
from __future__ import annotations

import os
from typing import Optional

from PySide6.QtCore import QByteArray, QEvent, QSettings, Qt, QTimer
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from arrayscope.formats.core.status import Status

from . import screenfit, startpage, theme
from .arraybrowser import ArrayBrowser
from .diagnostics import DiagnosticsPanel
from .findbar import FindBar
from .habits import install as install_habits
from .hextabs import HexTabs
from .inspector import Inspector
from .loader import Loader, first_file
from .menus import APP_NAME, MenusMixin
from .navigation import NavigationMixin
from .opening import OpeningMixin
from .pipelinepanel import PipelinePanel
from .session import Session
from .stagetabs import StageTabs
from .state import AppState, Event, SelectionChanged
from .treepanel import TreePanel
from .verifier import Verifier
from .windowfit import ElidedLabel


class MainWindow(MenusMixin, OpeningMixin, NavigationMixin, QMainWindow):
    """The shell: docks around the hex tabs, status bar, and the wiring of panels to the
    application state (`state.AppState`). Menus, opening and navigation are its mixins;
    every other panel and feature is registered by one line in `habits.FEATURES` and
    follows the state itself (`state.subscribe`)."""

    diag: DiagnosticsPanel             # made after the loader and verifier that report to it

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
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
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
        self._diag_errors = 0   # errors Diagnostics lists (its tab is raised when they come)
        self._open_key: Optional[bytes] = None

        # central: start page / hex tabs + find bar
        self.start = startpage.StartPage(self)
        # the stack's least width is its widest page's, shown or not: the start page (shown
        # without docks) leaves the hex area's least to the docks beside it at 1024
        self.start.setSizePolicy(QSizePolicy.Policy.Ignored, self.start.sizePolicy().verticalPolicy())
        self.start.openFile.connect(self.open_file_dialog)
        self.start.openDir.connect(self.open_dir_dialog)
        self.start.openPath.connect(lambda p: self.open_path(p))
        self.tabs = HexTabs(self)
        self.tabs.on_new_view = self._wire_view
        self.tabs.currentSourceChanged.connect(self._tab_changed)
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
        self.pipeline.nodeRequested.connect(lambda n: self.select_node(n))
        self.browser = ArrayBrowser(self)
        self.browser.nodeActivated.connect(lambda n: self.select_node(n, origin="browser"))
        self.diag = DiagnosticsPanel(self)
        self.diag.nodeActivated.connect(lambda n: self.select_node(n, origin="diagnostics"))
        self.diag.findingActivated.connect(self.goto_finding)
        self.diag.countsChanged.connect(self._diag_counts)
        left, right, bottom = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                               Qt.DockWidgetArea.BottomDockWidgetArea)
        self.d_browser = self._dock("Array", "dock_array", self.browser, left)
        self.d_tree = self._dock("Structure", "dock_tree", self.tree, left)
        self.d_inspector = self._dock("Inspector", "dock_inspector", self.inspector, right)
        self.d_pipeline = self._dock("Pipeline", "dock_pipeline", self.pipeline, right)
        self.d_diag = self._dock("Diagnostics", "dock_diag", self.diag, bottom)
        self.splitDockWidget(self.d_browser, self.d_tree, Qt.Orientation.Vertical)
        self.splitDockWidget(self.d_inspector, self.d_pipeline, Qt.Orientation.Vertical)
        self.resizeDocks([self.d_browser, self.d_tree], [220, 600], Qt.Orientation.Vertical)
        self.resizeDocks([self.d_tree, self.d_inspector], [500, 420], Qt.Orientation.Horizontal)
        self.resizeDocks([self.d_diag], [130], Qt.Orientation.Vertical)
        self.resizeDocks([self.d_inspector, self.d_pipeline], [440, 520], Qt.Orientation.Vertical)

        self.stage_tabs = StageTabs(self)   # the pipeline's stages as tabs and tree nodes
        for panel in (self.tree, self.browser, self.tabs, self.inspector, self, self.pipeline,
                      self.diag):
            self.state.subscribe(panel)
        self._build_status()
        self._build_menus()
        install_habits(self)
        self._sync_timer = QTimer(self)
        self._sync_timer.setSingleShot(True)
        self._sync_timer.setInterval(180)
        self._sync_timer.timeout.connect(self._sync_from_cursor)
        self._show_docks(False)
        self.start.set_recent(self.recent())
        if restore and self._restore():
            screenfit.clamp_to_screen(self)     # saved on a larger screen than this one
        else:
            screenfit.open_on_screen(self)

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
        f = QDockWidget.DockWidgetFeature
        d.setFeatures(f.DockWidgetMovable | f.DockWidgetClosable | f.DockWidgetFloatable)
        self.addDockWidget(area, d)
        return d

    def _build_status(self) -> None:
        sb = self.statusBar()
        self.st_source = ElidedLabel(self)   # a long path elided, not widening the window
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
            w.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            sb.addPermanentWidget(w)
        sb.addWidget(self.st_value, 1)
        from .transferstatus import TransferStatus  # a URL's requests and bytes (formats/remote.py)
        self.st_transfer = TransferStatus(self, lambda: getattr(self.session, "document", None))
        sb.addPermanentWidget(self.st_transfer)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.cancel_btn)

    def set_document(self, doc, first_later: bool = False) -> None:
        """Show `doc` and select its first file; `first_later`: in later turns of the event
        loop (a background open), so that no turn does it all: the panels' reset here, the
        tree opened down to the file in the next turn, the selection (hex view, pipeline)
        in the one after, each painted before the next starts."""
        self.tabs.clear_all()   # before closing the old sources: no view may read them after
        self.stage_tabs.clear()
        self.state.open(Session(doc))
        self.path = doc.path
        self._show_browser_dock(doc)
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
                target = first_file(root) or root   # built by the loader's thread
            if first_later:
                self._later(lambda: self._select_first(doc, target, reveal_only=True))
            else:
                self.select_node(target)

    def _later(self, fn) -> None:
        """`fn` in a later turn of the event loop, after the input, timers and paints
        pending now (a 0 ms single shot is a posted call, run before them)."""
        QTimer.singleShot(1, self, fn)

    def _select_first(self, doc, target, reveal_only: bool = False) -> None:
        """The first selection of `doc`, unless another document or selection came first;
        `reveal_only`: the tree opened down to `target` now (a folder of 1 000 fragments
        is the expensive part), the selection in a later turn."""
        if self.session is None or self.session.document is not doc or \
                self.current_node is not None:
            return
        if reveal_only and self.tree.reveal(target):
            self._later(lambda: self._select_first(doc, target))
            return
        self.select_node(target)

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

    # ---- selection -------------------------------------------------------------------
    def select_node(self, node, origin: Optional[str] = None) -> None:
        self.state.select(node, origin)

    def state_changed(self, state: AppState, event: Event) -> None:
        """The shell's part of a selection: the cursor's readout and the status line."""
        if isinstance(event, SelectionChanged):
            # the hex cursor moved to the selection (the tabs follow it first): not a move
            # of the user's to select the field under it (Back to a tile stays on the tile)
            if event.origin != "hex":
                self._sync_timer.stop()
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
        if node.status != Status.OK:
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
        if view.hasFocus() and QApplication.mouseButtons() == Qt.MouseButton.NoButton:
            self._sync_timer.start()

    def _sync_from_cursor(self) -> None:
        v = self.tabs.current_view()
        if v is None or self.session is None:
            return
        node = self.session.node_at(v.source, v.cursor_offset)
        if node is not None and node is not self.current_node:
            self.select_node(node, origin="hex")

    def _cursor_changed(self, changed) -> None:
        view = self.tabs.current_view()
        if view is None or changed is not view:
            return
        off = view.cursor_offset
        a, b = view.selection()
        self.st_source.setText(getattr(view.source, "name", ""))
        self.st_offset.setText(f"Offset 0x{off:X} ({off:,})")
        self.st_sel.setText(f"Selection {b - a:,} B" + (f" [0x{a:X}–0x{b - 1:X}]" if b - a > 1 else ""))
        self.inspector.show_cursor(view.source, off, self.stage_tabs.unit_of(view.source))

    def _tab_changed(self, source) -> None:
        v = self.tabs.current_view()
        if v is not None:
            self._cursor_changed(v)

    # ---- verify findings --------------------------------------------------------------
    def _verified(self, findings) -> None:
        if self.session is not None:
            self.state.add_findings(findings)

    # ---- misc ------------------------------------------------------------------------
    def _diag_counts(self, errors: int, warnings: int) -> None:
        t = "Diagnostics"
        if errors and not self._diag_errors:
            self.d_diag.raise_()   # the first errors: in front of a tab beside it (Health)
        self._diag_errors = errors
        if errors or warnings:
            t += f" ({errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)})"
        self.d_diag.setWindowTitle(t)

    # ---- settings / events -------------------------------------------------------------
    def _restore(self) -> bool:
        """The saved dock layout and geometry; whether a geometry was restored."""
        g = self.settings.value("geometry")
        s = self.settings.value("state")
        restored = isinstance(g, QByteArray) and self.restoreGeometry(g)
        if isinstance(s, QByteArray):
            self.restoreState(s)
            self._show_docks(False)
        return restored

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
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange, QEvent.Type.StyleChange):
            for v in self.tabs.views():
                v.viewport().update()
        super().changeEvent(e)

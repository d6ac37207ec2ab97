"""The window's menus, their actions and the small dialogs they open (shortcuts, about,
screenshot), and the recent-files list kept in the settings."""
from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMessageBox

from . import startpage

APP_NAME = "arrayscope"
MAX_RECENT = 10

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDockWidget, QMenu

    from .findbar import FindBar
    from .session import Session


class MenusMixin(QMainWindow):
    """Menus and dialogs of `MainWindow` (a mixin: it uses the window's docks and actions)."""

    if TYPE_CHECKING:   # what the window provides
        settings: QSettings
        path: Optional[str]
        findbar: FindBar
        d_browser: QDockWidget
        d_tree: QDockWidget
        d_inspector: QDockWidget
        d_pipeline: QDockWidget
        d_diag: QDockWidget
        recent_menu: QMenu
        reopen_menu: QMenu
        _default_state: QByteArray

        @property
        def session(self) -> Optional[Session]: ...
        def open_path(self, path: str, key: Optional[bytes] = None, as_format: Optional[str] = None,
                      sync: bool = False, select: Optional[str] = None) -> bool: ...
        def open_file_dialog(self) -> None: ...
        def open_dir_dialog(self) -> None: ...
        def choose_key(self) -> None: ...
        def reload(self) -> None: ...
        def close_document(self) -> None: ...
        def _copy(self, fmt: str) -> None: ...
        def show_find(self) -> None: ...
        def focus_tree_find(self) -> None: ...
        def goto_dialog(self) -> None: ...
        def select_parent(self) -> None: ...
        def go_back(self) -> None: ...
        def go_forward(self) -> None: ...
        def _show_docks(self, on: bool) -> None: ...

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
        self._act(f, "&Open File…", self.open_file_dialog, QKeySequence.StandardKey.Open, "Open a file")
        self._act(f, "Open &Directory…", self.open_dir_dialog, "Ctrl+Shift+O",
                  "Open an array or archive directory")
        self._act(f, "Open &Sample", lambda: self.open_path(startpage.default_sample()), None,
                  "Open the bundled sample TileDB array")
        self.recent_menu = f.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self.reopen_menu = f.addMenu("Reopen &As")
        self.reopen_menu.aboutToShow.connect(self._fill_reopen)
        self._act(f, "Encryption &Key File…", self.choose_key, None,
                  "Read the 32-byte AES-256 key from a file and reopen")
        self._act(f, "&Reload", self.reload, QKeySequence.StandardKey.Refresh)
        self._act(f, "&Close", self.close_document, QKeySequence.StandardKey.Close)
        f.addSeparator()
        self._act(f, "Save &Screenshot…", self.save_screenshot_dialog)
        f.addSeparator()
        self._act(f, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        e = mb.addMenu("&Edit")
        self._act(e, "&Copy as Hex", lambda: self._copy("Hex"), QKeySequence.StandardKey.Copy)
        self._act(e, "Copy as &Bytes", lambda: self._copy("Bytes"), "Ctrl+Shift+C")
        self._act(e, "Copy as C &Array", lambda: self._copy("C array"))
        self._act(e, "Copy as &Python bytes", lambda: self._copy("Python bytes"))
        self._act(e, "Copy as Base&64", lambda: self._copy("Base64"))
        e.addSeparator()
        self._act(e, "&Find…", self.show_find, QKeySequence.StandardKey.Find)
        self._act(e, "Find &Next", lambda: self.findbar.trigger(False), QKeySequence.StandardKey.FindNext)
        self._act(e, "Find &Previous", lambda: self.findbar.trigger(True), QKeySequence.StandardKey.FindPrevious)
        self._act(e, "Find &Node…", self.focus_tree_find, "Ctrl+Shift+F")
        self._act(e, "&Go to Offset…", self.goto_dialog, "Ctrl+G")
        e.addSeparator()
        self._act(e, "Select &Parent Node", self.select_parent, "Alt+Up")
        self._act(e, "&Back", self.go_back, QKeySequence.StandardKey.Back, "The node selected before")
        self._act(e, "&Forward", self.go_forward, QKeySequence.StandardKey.Forward, "The node selected after")
        v = mb.addMenu("&View")
        for d in (self.d_browser, self.d_tree, self.d_inspector, self.d_pipeline, self.d_diag):
            v.addAction(d.toggleViewAction())
        v.addSeparator()
        self._act(v, "Reset &Layout", self.reset_layout)
        h = mb.addMenu("&Help")
        self._act(h, "&Keyboard Shortcuts", self.show_shortcuts, QKeySequence.StandardKey.HelpContents)
        self._act(h, "&About arrayscope", self.about)
        self._act(h, "About &Qt", QApplication.aboutQt)
        self._default_state = self.saveState()

    def recent(self) -> List[str]:
        v = self.settings.value("recent", [])
        items = [v] if isinstance(v, str) else v if isinstance(v, list) else []
        return [p for p in items if isinstance(p, str)]

    def add_recent(self, path: str) -> None:
        r = [p for p in self.recent() if p != path]
        r.insert(0, path)
        self.settings.setValue("recent", r[:MAX_RECENT])

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for p in self.recent():
            self.recent_menu.addAction(p).triggered.connect(lambda _c=False, p=p: self.open_path(p))
        if not self.recent():
            self.recent_menu.addAction("(empty)").setEnabled(False)

    def _fill_reopen(self) -> None:
        from arrayscope.formats.core import registry

        self.reopen_menu.clear()
        for p in registry.plugins():
            a = self.reopen_menu.addAction(p.name)
            a.triggered.connect(lambda _c=False, n=p.name: self.path and self.open_path(self.path, as_format=n))
            a.setEnabled(self.path is not None)

    def reset_layout(self) -> None:
        self.restoreState(self._default_state)
        self._show_docks(self.session is not None)

    def show_shortcuts(self) -> None:
        QMessageBox.information(self, "Keyboard shortcuts", shortcuts_text(self))

    def about(self) -> None:
        from PySide6 import __version__ as pyside_version

        from .version import installed_version

        QMessageBox.about(self, f"About {APP_NAME}",
                          f"<h3>{APP_NAME} {installed_version()}</h3><p>A hex and structure explorer for binary "
                          "array-storage formats: TileDB arrays, SCDL archives, Zarr struct dtypes.</p>"
                          "<p>Every byte is explained by a node of the format's tree; filter stages "
                          "can be reversed and reapplied one by one.</p>"
                          f"<p>PySide6 {pyside_version} · MIT licence</p>")

    def save_screenshot_dialog(self) -> None:
        p, _ = QFileDialog.getSaveFileName(self, "Save Screenshot", "arrayscope.png", "PNG (*.png)")
        if p:
            self.grab().save(p)



WINDOW = "window"   # a binding's scope: the whole window (else the widget it is bound in)


def bindings(window) -> List[Tuple[str, str, str]]:
    """(key, what it does, scope) for every key bound in the window: its actions (menus,
    features) and its shortcuts (the pipeline's stage keys), in the order they were made.
    Scope is WINDOW, or the class of the one widget a shortcut works in: one key, one
    binding per scope."""
    from PySide6.QtGui import QShortcut

    out: List[Tuple[str, str, str]] = []
    for a in window.findChildren(QAction):
        if not a.associatedObjects():
            continue   # not in a menu or on a widget: its key does nothing
        what = a.text().replace("&", "").rstrip("…").strip()
        for k in a.shortcuts():
            out.append((k.toString(QKeySequence.SequenceFormat.NativeText), what, WINDOW))
    wide = (Qt.ShortcutContext.WindowShortcut, Qt.ShortcutContext.ApplicationShortcut)
    for sc in window.findChildren(QShortcut):
        scope = WINDOW if sc.context() in wide else type(sc.parent()).__name__
        for k in sc.keys():
            out.append((k.toString(QKeySequence.SequenceFormat.NativeText),
                        sc.whatsThis() or "(no description)", scope))
    return out


def shortcuts_text(window) -> str:
    """Help ▸ Keyboard Shortcuts: every bound key (`bindings`), then the hex view's keys."""
    lines = [f"{key}  {what}" for key, what, _scope in bindings(window)]
    return "\n".join(lines) + "\n\n" + HEX_KEYS


HEX_KEYS = """Hex view: arrows, Page Up/Down, Home/End (row), Ctrl+Home/End (source);
Shift extends the selection; click selects the node owning a byte; Enter shows it."""

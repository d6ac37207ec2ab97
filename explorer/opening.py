"""Opening a path in the window: the file and directory dialogs, the key file, the
background load with its progress (the Array dock lists the files parsed so far) and what
a cancelled or failed open leaves on screen."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional

from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox

from arrayscope.formats.core import registry
from arrayscope.formats.core.remote import is_url

from . import startpage
from .menus import APP_NAME

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDockWidget, QLabel, QProgressBar, QPushButton

    from .arraybrowser import ArrayBrowser
    from .loader import Loader
    from .session import Session


class OpeningMixin(QMainWindow):
    """Opening for `MainWindow` (a mixin: it uses the window's loader, docks and status)."""

    if TYPE_CHECKING:   # what the window provides
        key: Optional[bytes]
        path: Optional[str]
        loader: Loader
        browser: ArrayBrowser
        d_browser: QDockWidget
        progress: QProgressBar
        cancel_btn: QPushButton
        st_value: QLabel
        quiet: bool
        _pending_select: Optional[str]
        _open_format: Optional[str]
        _open_key: Optional[bytes]

        @property
        def session(self) -> Optional[Session]: ...
        @property
        def current_node(self): ...
        def recent(self) -> List[str]: ...
        def add_recent(self, path: str) -> None: ...
        def set_document(self, doc, first_later: bool = False) -> None: ...
        def select_node(self, node, origin: Optional[str] = None) -> None: ...

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
        from arrayscope.formats.core.context import load_key

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
                    from arrayscope.formats.core.context import load_key
                    key = self.key = load_key(kf)
        self._pending_select = select
        self._open_format, self._open_key = as_format, key
        if sync:
            from arrayscope import formats
            try:
                doc = formats.open(path, key=key, as_format=as_format, lazy=True)
            except formats.OpenError as e:
                self._load_failed(path, str(e))
                return False
            self._loaded(doc, 0.0, sync=True)
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

    def _show_browser_dock(self, doc) -> None:
        """The Array dock, shown for a directory, titled with its format's word for one."""
        self.d_browser.setWindowTitle(registry.browser_title(doc))
        self.d_browser.setVisible(doc.is_dir)

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
        self._show_browser_dock(doc)
        if self.current_node is not None:
            self.browser.select_file_of(self.current_node)

    def _load_cancelled(self, path: str) -> None:
        self._load_done_ui()
        self._restore_browser()
        self.st_value.setText(f"Cancelled opening {path}")

    def _load_failed(self, path: str, msg: str) -> None:
        self.open_error = msg   # why, for --screenshot to say
        self._load_done_ui()
        self._restore_browser()
        self.st_value.setText(msg)
        if not getattr(self, "quiet", False):
            QMessageBox.warning(self, APP_NAME, f"Cannot open {path}:\n{msg}")

    def _loaded(self, doc, secs: float, sync: bool = False) -> None:
        self._load_done_ui()
        self.set_document(doc, first_later=not sync)
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

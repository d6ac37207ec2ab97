"""Encrypted data without its key: one message instead of a warning per chunk (in
Diagnostics, and a bar above the bytes with "Set Key…"), and File ▸ Set Key… (Ctrl+K),
which takes a key file or a typed key and reloads, keeping what the user was looking at.
The core says a key is missing with one hint text (formats.core.context.KEY_HINT) on each
chunk it could not decode; that text is what is grouped here."""
from __future__ import annotations

from typing import List, Optional

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QWidget,
)

from arrayscope.formats.core.context import KEY_HINT, KeyError_, load_key, parse_key
from arrayscope.formats.core.status import Status

from . import theme
from .diagnostics import Row
from .state import on_document
from .windowmenus import menu

GROUP_PATH = "(encryption key)"


def needs_key(row: Row) -> bool:
    return KEY_HINT in row.message


def group_rows(have: List[Row], new: List[Row]) -> List[Row]:
    """Every row saying "no key" becomes one row (none when one is listed already)."""
    keyed = [r for r in new if needs_key(r)]
    rest = [r for r in new if not needs_key(r)]
    if not keyed or any(r.path == GROUP_PATH for r in have):
        return rest
    n = len(keyed)
    msg = (f"{n} encrypted chunk{'s' * (n != 1)} not decoded: no key given. "
           "File ▸ Set Key… (Ctrl+K) reloads with one.")
    first = keyed[0]
    return [Row(Status.WARNING, msg, first.source, first.offset, GROUP_PATH, node=first.node,
                finding=first.finding)] + rest


class KeyBar(QWidget):
    """The bar above the hex view: "encrypted — Set Key…"."""

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.text = QLabel("", self)
        self.text.setWordWrap(True)
        self.button = QPushButton("Set Key…", self)
        self.close_btn = QPushButton("Dismiss", self)
        self.close_btn.clicked.connect(self.hide)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        icon = QLabel(self)
        icon.setPixmap(theme.status_icon(Status.WARNING).pixmap(16, 16))
        lay.addWidget(icon)
        lay.addWidget(self.text, 1)
        lay.addWidget(self.button)
        lay.addWidget(self.close_btn)
        self.setAutoFillBackground(True)
        self.hide()


class KeyFlow:
    def __init__(self, window):
        self.win = window
        self.bar = KeyBar(window)
        area = window.tabs.parentWidget()
        lay = area.layout() if area is not None else None
        if lay is not None:
            lay.insertWidget(0, self.bar)
        self.bar.button.clicked.connect(lambda: self.set_key_dialog())
        window.diag.group_rows = group_rows
        self.action = QAction("Set &Key…", window)
        self.action.setShortcut(QKeySequence("Ctrl+K"))
        self.action.setStatusTip("Give the AES-256 key of an encrypted array and reload")
        self.action.triggered.connect(lambda: self.set_key_dialog())
        f = menu(window, "&File")
        old = next((a for a in f.actions() if a.text() == "Encryption &Key File…"), None)
        if old is not None:
            f.insertAction(old, self.action)
            f.removeAction(old)      # Set Key… offers the key file too
        else:
            f.addAction(self.action)
        on_document(window.state, self.document_changed)

    def document_changed(self, doc) -> None:
        if doc is None:
            self.bar.hide()
            return
        session = self.win.session
        found = session.opened_diagnostics if session is not None else doc.diagnostics()
        n = sum(1 for node in found if KEY_HINT in (node.message or ""))
        if n:
            self.bar.text.setText(f"<b>Encrypted.</b> {n} chunk{'s' * (n != 1)} cannot be "
                                  "decoded without the array's key.")
            self.bar.show()
        else:
            self.bar.hide()

    def set_key_dialog(self) -> None:
        choice, ok = QInputDialog.getItem(self.win, "Set Key", "The AES-256 key (32 bytes):",
                                          ["Type or paste the key", "Read it from a key file"], 0, False)
        if not ok:
            return
        try:
            if choice.startswith("Read"):
                p, _ = QFileDialog.getOpenFileName(self.win, "Key File (32 bytes)")
                if not p:
                    return
                key = load_key(p)
            else:
                text, ok = QInputDialog.getText(self.win, "Set Key", "64 hex digits or 32 characters:",
                                                QLineEdit.EchoMode.Password)
                if not ok or not text:
                    return
                key = parse_key(text.strip().encode("latin-1"))
        except (OSError, ValueError, KeyError_, UnicodeEncodeError) as e:
            QMessageBox.warning(self.win, "Set Key", f"Cannot use this key: {e}")
            return
        self.set_key(key)

    def set_key(self, key: Optional[bytes]) -> None:
        """Use `key` from now on and reload the document keeping the view."""
        self.win.key = key
        keeper = getattr(self.win, "view_keeper", None)
        if keeper is not None:
            keeper.reload()
        elif self.win.path:
            self.win.open_path(self.win.path, key=key)


def install(window) -> KeyFlow:
    kf = KeyFlow(window)
    window.key_flow = kf
    return kf

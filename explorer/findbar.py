"""The find bar under the hex view: hex, text or a typed value; next / previous."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from . import search


class FindBar(QWidget):
    findRequested = Signal(bytes, bool)   # pattern, backward
    closed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.mode = QComboBox(self)
        self.mode.addItems(search.MODES)
        self.mode.setToolTip("What the text is: hex bytes, text, or a number of a type")
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText("Find (e.g. 28 b5 2f fd)")
        self.edit.setClearButtonEnabled(True)
        self.edit.returnPressed.connect(lambda: self.trigger(False))
        self.be = QCheckBox("Big endian", self)
        self.prev = QToolButton(self)
        self.prev.setText("◀ Previous")
        self.next = QToolButton(self)
        self.next.setText("Next ▶")
        self.prev.setToolTip("Find previous (Shift+F3)")
        self.next.setToolTip("Find next (F3)")
        self.prev.clicked.connect(lambda: self.trigger(True))
        self.next.clicked.connect(lambda: self.trigger(False))
        self.status = QLabel("", self)
        close = QToolButton(self)
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Close (Esc)")
        close.clicked.connect(self.hide_bar)
        self.mode.currentTextChanged.connect(self._mode_changed)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.addWidget(QLabel("Find:", self))
        lay.addWidget(self.mode)
        lay.addWidget(self.edit, 1)
        lay.addWidget(self.be)
        lay.addWidget(self.prev)
        lay.addWidget(self.next)
        lay.addWidget(self.status)
        lay.addWidget(close)
        self._mode_changed(self.mode.currentText())

    def _mode_changed(self, mode: str) -> None:
        self.be.setVisible(mode in search.TYPED)
        self.edit.setPlaceholderText({"Hex": "Find hex bytes (e.g. 28 b5 2f fd)", "Text": "Find text",
                                      "UTF-16LE": "Find UTF-16 text"}.get(mode, f"Find a {mode} value"))

    def show_bar(self) -> None:
        self.show()
        self.edit.setFocus()
        self.edit.selectAll()

    def hide_bar(self) -> None:
        self.hide()
        self.closed.emit()

    def keyPressEvent(self, e) -> None:
        if e.key() == Qt.Key.Key_Escape:
            self.hide_bar()
            return
        super().keyPressEvent(e)

    def trigger(self, backward: bool) -> None:
        try:
            pat = search.pattern(self.mode.currentText(), self.edit.text(), self.be.isChecked())
        except search.PatternError as e:
            self.set_status(str(e), error=True)
            return
        self.findRequested.emit(pat, backward)

    def set_status(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #c00" if error else "")

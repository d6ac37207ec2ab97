"""The status bar's transfer count: what the opened dataset cost on its object store.

For a dataset opened from a URL (formats/core/remote.py) it shows `requests: N, bytes: M`, the
same line `--stats` prints, refreshed while the window runs (tiles are read as they are
shown, so the count grows with what the user looks at); for a local dataset it is empty."""
from __future__ import annotations

from typing import Callable, Optional

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QWidget

REFRESH_MS = 500


class TransferStatus(QLabel):
    def __init__(self, parent: QWidget, document: Callable[[], Optional[object]]):
        super().__init__("", parent)
        self._document = document
        self.setToolTip("Requests made to the object store and bytes received for this dataset")
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()

    def refresh(self) -> None:
        doc = self._document()
        stats = getattr(getattr(doc, "fs", None), "stats", None)
        text = stats.line() if stats is not None else ""
        if text != self.text():
            self.setText(text)
        self.setVisible(bool(text))

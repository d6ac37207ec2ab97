"""The format documents the inspector cites, read-only: a bundled markdown file
(`resources/spec/`, resolved by `formats.core.specref`) rendered by QTextBrowser.setMarkdown and
scrolled to the cited heading. One window, reused for every link."""
from __future__ import annotations

import re
from typing import Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QDialog, QLabel, QTextBrowser, QVBoxLayout, QWidget

from arrayscope.formats.core.specref import SpecLink, find_heading, spec_path

_FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)   # the YAML front matter of TileDB's pages


class SpecViewer(QDialog):
    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setWindowTitle("Format document")
        self.setModal(False)
        self.where = QLabel("", self)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text = QTextBrowser(self)
        self.text.setOpenExternalLinks(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.where)
        lay.addWidget(self.text, 1)
        self.resize(760, 620)
        self.path = ""
        self.heading_text = ""

    def show_link(self, link: SpecLink) -> bool:
        """Open `link`'s document at its heading; False when the file is missing."""
        path = spec_path(link)
        try:
            with open(path, encoding="utf-8") as f:
                md = _FRONT.sub("", f.read())
        except OSError:
            return False
        self.path = path
        self.text.setMarkdown(md)
        line = find_heading(md, link.heading)
        self.heading_text = ""
        if line is not None:
            self.heading_text = md.splitlines()[line].lstrip("#*").strip().strip("*").strip()
        self.where.setText(f"<b>{link.file}</b>" + (f" — {self.heading_text}" if self.heading_text
                                                     else "") + f"  <i>(cited: {link.label})</i>")
        self.setWindowTitle(f"Format document — {link.file}")
        self.show()
        self.raise_()
        self._scroll_to(self.heading_text)
        return True

    def _scroll_to(self, text: str) -> None:
        doc = self.text.document()
        block = doc.begin()
        target = None
        want = text.lower()
        while want and block.isValid():
            if block.text().strip().lower().startswith(want):
                target = block
                break
            block = block.next()
        bar = self.text.verticalScrollBar()
        if target is None:
            bar.setValue(0)
            return
        self.text.setTextCursor(QTextCursor(target))
        top = doc.documentLayout().blockBoundingRect(target).top()
        bar.setValue(int(top))

    def current_block_text(self) -> str:
        return self.text.textCursor().block().text()

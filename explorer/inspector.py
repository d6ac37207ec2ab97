"""The inspector (teaching panel): what the selected field means, its bytes, and the bytes
at the cursor read as every common type."""
from __future__ import annotations

import html
from typing import List, Optional

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from arrayscope.formats.core.specref import SpecLink, resolve
from arrayscope.formats.core.status import Status

from . import theme
from .interpret import interpretations
from .state import AppState, DocumentChanged, Event, SelectionChanged

RAW_PREVIEW = 64


class Inspector(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.info = QTextBrowser(self)
        self.info.setOpenLinks(False)
        self.info.anchorClicked.connect(self._anchor)
        self.spec_links: List[SpecLink] = []     # the shown field's spec references
        self.spec_viewer = None                  # specviewer.SpecViewer, made on first use
        self.info.setPlaceholderText("Select a node to see what its bytes mean.")
        # two lines at least (the node's name and kind; the rest scrolls): on a short
        # window the column's height goes to Data at cursor's rows and the pipeline's cells
        self.info.setMinimumHeight(2 * self.fontMetrics().lineSpacing() + 2 * self.info.frameWidth() + 8)
        self.table = QTableWidget(0, 3, self)
        self.table.setHorizontalHeaderLabels(["Type", "Little endian", "Big endian"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        h = self.table.horizontalHeader()
        # three rows at least: a short window (1024×700) squeezed it to one
        self.table.setMinimumHeight(h.sizeHint().height() + 3 * (self.fontMetrics().height() + 4)
                                    + 2 * self.table.frameWidth() + 2)
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        h.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.where = QLabel("", self)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lower = QWidget(self)
        ll = QVBoxLayout(lower)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.setSpacing(2)
        title = QLabel("<b>Data at cursor</b>", lower)
        row = QHBoxLayout()
        row.addWidget(title)
        row.addStretch(1)
        row.addWidget(self.where)
        ll.addLayout(row)
        ll.addWidget(self.table, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.info)
        split.addWidget(lower)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(split)
        self._mono = theme.mono_font()

    # ---- spec references: links to the bundled format documents -----------------------
    def _spec_html(self, spec: str) -> str:
        e = html.escape
        self.spec_links = resolve(spec)
        if not self.spec_links:
            return f"spec: <i>{e(spec)}</i>"
        links = ", ".join(f"<a href='spec:{i}'>{e(link.file)}"
                          f"{' § ' + e(link.heading[-1]) if link.heading else ''}</a>"
                          for i, link in enumerate(self.spec_links))
        return f"spec: <i>{e(spec)}</i><br>open: {links}"

    def _anchor(self, url: QUrl) -> None:
        if url.scheme() == "spec" and url.path().isdigit():
            i = int(url.path())
            if 0 <= i < len(self.spec_links):
                self.open_spec(self.spec_links[i])

    def open_spec(self, link: SpecLink) -> bool:
        from .specviewer import SpecViewer

        if self.spec_viewer is None:
            self.spec_viewer = SpecViewer(self.window())
        return self.spec_viewer.show_link(link)

    # ---- the node --------------------------------------------------------------------
    def state_changed(self, state: AppState, event: Event) -> None:
        if isinstance(event, DocumentChanged) and state.session is None:
            self.show_node(None)
        elif isinstance(event, SelectionChanged) and state.session is not None:
            self.show_node(event.node, state.session.version_of(event.node))

    def show_node(self, node, version: Optional[int] = None) -> None:
        if node is None:
            self.info.clear()
            return
        e = html.escape
        parts = []
        kind_c = theme.kind_solid(node.kind).name()
        parts.append(f"<h3 style='margin:0'>{e(node.name)}</h3>")
        badge = (f"<span style='background:{kind_c}; color:white; padding:1px 4px'>&nbsp;{e(node.kind)}&nbsp;</span>")
        typ = f" &nbsp;<code>{e(node.type)}</code>" if node.type else ""
        parts.append(f"<p style='margin-top:2px'>{badge}{typ}</p>")
        if node.status != Status.OK:
            col = theme.error_color() if node.status == Status.ERROR else theme.warning_color()
            parts.append(f"<p style='color:{col.name()}'><b>{e(node.status.upper())}</b>: "
                         f"{e(node.message or '')}</p>")
        disp = node.display_text()
        if disp:
            parts.append(f"<p><b>Value</b>: <code>{e(disp[:600])}</code></p>")
        d = node.doc
        if d is not None:
            parts.append(f"<p>{e(d.description)}</p>")
            meta = []
            meta.append(e(d.presence_text(version)))
            if d.spec:
                meta.append(self._spec_html(d.spec))
            parts.append("<p style='color:gray'>" + "<br>".join(meta) + "</p>")
            if d.note:
                parts.append(f"<p><b>Note</b>: {e(d.note)}</p>")
        elif version is not None:
            parts.append(f"<p style='color:gray'>format version {version}</p>")
        src = node.source
        if src is not None and not isinstance(src, str):
            parts.append(f"<p><b>Where</b>: {e(getattr(src, 'name', ''))} @ {node.offset:,} "
                         f"(0x{node.offset:X}), {node.size:,} bytes"
                         + (f" &nbsp;·&nbsp; {node.child_count():,} children" if node.child_count() else "")
                         + "</p>")
            origin = getattr(src, "origin", None)
            if origin:
                parts.append(f"<p style='color:gray'>derived source: {e(origin)}</p>")
            if node.size:
                raw = src.read(node.offset, min(node.size, RAW_PREVIEW))
                rows = []
                for i in range(0, len(raw), 16):
                    rows.append(raw[i:i + 16].hex(" "))
                more = f"<br>… {node.size - RAW_PREVIEW:,} more bytes" if node.size > RAW_PREVIEW else ""
                parts.append("<p><b>Raw bytes</b><br><code>" + "<br>".join(rows) + more + "</code></p>")
        elif isinstance(src, str):
            parts.append(f"<p><b>Path</b>: {e(src)}</p>")
        parts.append(f"<p style='color:gray; font-size:small'>{e(node.path())}</p>")
        self.info.setHtml("".join(parts))

    def show_findings(self, html_text: str) -> None:
        """Add what verify found on the shown node (HTML) to its description."""
        self.info.append(html_text)

    # ---- the cursor ------------------------------------------------------------------
    def show_cursor(self, source, offset: int, datetime_unit: Optional[str] = None) -> None:
        if source is None or isinstance(source, str):
            self.table.setRowCount(0)
            self.where.setText("")
            return
        data = source.read(offset, 8)
        rows = interpretations(data, datetime_unit)
        self.where.setText(f"offset {offset:,} (0x{offset:X})")
        self.table.setRowCount(len(rows))
        for r, (name, le, be) in enumerate(rows):
            for c, text in enumerate((name, le, be)):
                it = self.table.item(r, c)
                if it is None:
                    it = QTableWidgetItem()
                    if c:
                        it.setFont(self._mono)
                    self.table.setItem(r, c, it)
                it.setText(text)
                it.setToolTip(text)

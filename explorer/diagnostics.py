"""Expert info (Wireshark style): every warning and error with its source and offset."""
from __future__ import annotations

from typing import List

from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from arrayscope.formats.core.findings import AES_TAG, WRONG_KEY, Finding
from arrayscope.formats.core.status import Status

from . import theme
from .elide import ElidingDelegate, elide_path
from .state import AppState, DocumentChanged, Event, FindingsAdded

COLS = ("Severity", "Message", "Source", "Offset", "Node")
SOURCE_MAX = 420   # px: the Source column's most (a wide window's message gets the rest)
NODE_MAX = 320

_DECORATIONROLE = int(Qt.ItemDataRole.DecorationRole.value)
_DISPLAYROLE = int(Qt.ItemDataRole.DisplayRole.value)
_TOOLTIPROLE = int(Qt.ItemDataRole.ToolTipRole.value)
_USERROLE = int(Qt.ItemDataRole.UserRole.value)



class Row:
    """One line of the panel: a node of the tree (found while parsing) or a finding of
    `formats.core.verify.verify` (a dict: source, offset, status, message, node path)."""

    __slots__ = ("status", "message", "source", "offset", "path", "node", "finding")

    def __init__(self, status, message, source, offset, path, node=None, finding=None):
        self.status, self.message, self.source = status, message or "", source
        self.offset, self.path, self.node, self.finding = offset, path, node, finding

    @classmethod
    def of_node(cls, n) -> "Row":
        src = n.source
        name = src if isinstance(src, str) else getattr(src, "name", "")
        off = None if isinstance(src, str) or src is None else n.offset
        return cls(n.status, n.message or n.name, name or "", off, n.path(), node=n)

    @classmethod
    def of_finding(cls, f: Finding) -> "Row":
        path = f.node or ""
        if "/" not in path:
            path = "(verify check)"   # a cross-check of its own, not a node of the tree
        return cls(f.status, f.message, f.source, f.offset, path, finding=f)

    @property
    def key(self):
        return (self.source, self.offset if self.offset is not None else 0, self.message)


def node_in_source(path: str, source: str) -> str:
    """The node's path after its file's (`Tile 2/Chunk 1`): the Source column says the file;
    the whole path when the node is not inside it (a folder, a verify check)."""
    at = path.find(f"{source}/") if source else -1
    return path[at + len(source) + 1:] if at >= 0 and (at == 0 or path[at - 1] == "/") else path


class DiagnosticsModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: List[Row] = []

    @property
    def nodes(self):
        """The rows' nodes (None for verify findings without a node in the tree)."""
        return [r.node for r in self.rows]

    def set_rows(self, rows) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def add_rows(self, rows) -> None:
        rows = list(rows)
        if not rows:
            return
        first = len(self.rows)
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self.rows.extend(rows)
        self.endInsertRows()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()):
        return len(COLS)

    def headerData(self, s, o, role=Qt.ItemDataRole.DisplayRole):
        if o == Qt.Orientation.Horizontal and role == _DISPLAYROLE:
            return COLS[s]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r = self.rows[index.row()]
        c = index.column()
        if role == _DISPLAYROLE:
            if c == 0:
                return r.status
            if c == 1:
                return r.message
            if c == 2:
                return r.source
            if c == 3:
                return "" if r.offset is None else f"0x{r.offset:X}"
            if c == 4:
                return node_in_source(r.path, r.source)
        if role == _DECORATIONROLE and c == 0:
            return theme.status_icon(r.status)
        if role == _TOOLTIPROLE:
            where = f"{r.source}:{r.offset}" if r.offset is not None else r.source
            origin = "found by verify (checks beyond parsing)" if r.node is None else r.path
            return f"{r.message}\n{where}\n{origin}"
        if role == _USERROLE:
            return r
        if role == _USERROLE + 1:  # sort keys
            if c == 0:
                return 0 if r.status == Status.ERROR else 1
            if c == 3:
                return -1 if r.offset is None else r.offset
            return self.data(index, Qt.ItemDataRole.DisplayRole)
        return None


class DiagnosticsPanel(QWidget):
    nodeActivated = Signal(object)
    findingActivated = Signal(object)   # a verify finding with no node in the tree: its dict
    countsChanged = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = DiagnosticsModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(_USERROLE + 1)
        self.proxy.setFilterKeyColumn(0)
        self.view = QTableView(self)
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.view.setWordWrap(False)
        self.view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        # Source and Node keep a member's path and the file (`ms/RNA/X/data/…/a0.tdb`):
        # their longest folders (fragments) go first
        self.path_delegate = ElidingDelegate(elide_path, self.view)
        for col in (2, 4):
            self.view.setItemDelegateForColumn(col, self.path_delegate)
        self.view.setAlternatingRowColors(True)
        h = self.view.horizontalHeader()
        h.setStretchLastSection(False)
        h.setMinimumSectionSize(40)
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.view.viewport().installEventFilter(self)   # columns shared on each resize
        self._fit_columns()
        self.show_combo = QComboBox(self)
        self.show_combo.addItems(["Errors and warnings", "Errors only", "Warnings only"])
        self.show_combo.currentIndexChanged.connect(self._filter)
        self.summary = QLabel("", self)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.summary)
        top.addStretch(1)
        top.addWidget(self.show_combo)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(self.view, 1)
        # the current row's whole message, wrapped: a row has one line, which a narrow
        # window (1024×700) elides to `the ce…data says`
        self.detail = QLabel("", self)
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.hide()
        lay.addWidget(self.detail)
        self.view.selectionModel().currentRowChanged.connect(self._show_detail)
        self.proxy.modelReset.connect(lambda: self._show_detail(self.view.currentIndex()))
        self.view.clicked.connect(self._activate)
        self.view.activated.connect(self._activate)

    def eventFilter(self, obj, e) -> bool:
        if e.type() == QEvent.Type.Resize and obj is self.view.viewport():
            self._fit_columns()
        return False

    def _fit_columns(self) -> None:
        """Status and Offset as wide as their text; the message at least half of the
        table (at 1024×700 it read `chu…or)` when the other columns kept fixed widths);
        Source and Node share what is left (elided by `elide_path`, whole in the tooltip)."""
        fm = self.view.fontMetrics()
        status = fm.horizontalAdvance("warning") + 30            # the icon and margins
        offset = fm.horizontalAdvance("0x000000") + 14           # larger ones elide
        rest = max(0, self.view.viewport().width() - status - offset)
        # the message keeps half the table; of the rest Source (a member's path and its
        # file: `ms/RNA/X/data/…/a0.tdb`) four fifths, Node (the path in that file) one
        spare = rest - self.view.viewport().width() // 2
        node = max(48, min(spare // 5, NODE_MAX))
        source = max(60, min(spare - node, SOURCE_MAX))
        for col, width in ((0, status), (2, source), (3, offset), (4, node)):
            self.view.setColumnWidth(col, width)

    def state_changed(self, state: AppState, event: Event) -> None:
        if isinstance(event, DocumentChanged):
            self.set_nodes(state.session.opened_diagnostics if state.session is not None else [])
        elif isinstance(event, FindingsAdded):
            self.add_findings(event.findings)

    def set_nodes(self, nodes) -> None:
        """The tree's diagnostics (a new document): verify findings come later."""
        self.model.set_rows(self._grouped([], [Row.of_node(n) for n in nodes]))
        self._extra = 0
        self._verify_state = ""
        self.view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self._update_summary()

    def _grouped(self, have: List[Row], new: List[Row]) -> List[Row]:
        """Rows as `group_rows(have, new)` makes them (one row for many alike, e.g. every
        chunk that needs a key), when a feature module set it."""
        fn = getattr(self, "group_rows", None)
        return list(fn(have, new)) if fn is not None else new

    def set_verifying(self, on: bool = True) -> None:
        self._verify_state = "running" if on else ""
        self._update_summary()

    def add_findings(self, findings) -> int:
        """Merge `verify` findings: those the tree already shows (same source, offset and
        message) are not repeated. Returns how many rows were added."""
        self._drop_summarised(findings)
        have = {r.key for r in self.model.rows}
        new = []
        for f in findings:
            r = Row.of_finding(f)
            if r.key in have:
                continue
            have.add(r.key)
            new.append(r)
        new = self._grouped(self.model.rows, new)
        self.model.add_rows(new)
        self._extra = getattr(self, "_extra", 0) + len(new)
        self._verify_state = "done"
        self._update_summary()
        return len(new)

    def _drop_summarised(self, findings) -> None:
        """A wrong key is said once per file (verify's WRONG_KEY finding): the tree's row for
        each chunk of that file that failed its AES-GCM tag goes, so no chunk is listed twice."""
        files = {f.source for f in findings if f.code == WRONG_KEY}
        if not files:
            return
        keep = [r for r in self.model.rows
                if not (r.source in files and r.node is not None and r.node.code == AES_TAG)]
        if len(keep) != len(self.model.rows):
            self.model.set_rows(keep)

    def verify_failed(self, msg: str) -> None:
        self._verify_state = f"failed: {msg}"
        self._update_summary()

    def _update_summary(self) -> None:
        rows = self.model.rows
        errors = sum(1 for r in rows if r.status == Status.ERROR)
        warns = len(rows) - errors
        state = getattr(self, "_verify_state", "")
        text = (f"{errors} error{'s' * (errors != 1)}, {warns} warning{'s' * (warns != 1)}"
                if rows else "Nothing found yet" if state == "running" else "No problems found.")
        if state == "running":   # no verdict before verify is done
            text += "  —  verifying (checksums, filters forward)…"
        elif state == "done":
            extra = getattr(self, "_extra", 0)
            text += (f"  —  verify: {extra} more finding{'s' * (extra != 1)}" if extra
                     else "  —  verify found nothing more")
        elif state.startswith("failed"):
            text += f"  —  verify {state}"
        self.summary.setText(text)
        self.countsChanged.emit(errors, warns)

    def _filter(self, i: int) -> None:
        self.proxy.setFilterFixedString(["", "error", "warning"][i])

    def _show_detail(self, index, _previous=None) -> None:
        """The current row's message and its whole source path (the Source column elides
        a member's path inside a group: `ms/…/a0.tdb`)."""
        r = self.proxy.data(index, Qt.ItemDataRole.UserRole) if index.isValid() else None
        text = ""
        if r is not None:
            where = r.source + (f" @ 0x{r.offset:X}" if r.offset is not None else "")
            text = f"{r.message}\n{where}" if where else r.message
        self.detail.setText(text)
        self.detail.setVisible(bool(text))

    def _activate(self, index) -> None:
        r = self.proxy.data(index, Qt.ItemDataRole.UserRole)
        if r is None:
            return
        if r.node is not None:
            self.nodeActivated.emit(r.node)
        else:
            self.findingActivated.emit(r.finding)

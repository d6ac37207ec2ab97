"""Fitting the window to small screens and long content: the minimum window fits
1024×700 (docks with tall or wide content scroll instead of forcing the window's size),
long status texts are cut (the source's path elided: `ElidedLabel`) rather than widening
the window, and the Structure tree's Name column follows its content (still resizable by
hand). `install(window)` applies it; it follows the document as a panel of the window's
state (`state.on_document`). The window's size and place on the screen: `screenfit`."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QWidget,
)

from .state import Follower, SelectionChanged, on_document

NAME_MAX_SHARE = 0.6    # the Name column takes at most this share of the tree's width
NARROW_TREE_SHARE = 0.32  # the Structure dock's share of a narrow window
NARROW_TREE = 420       # a tree narrower than this (a 1024-px screen): names first
NARROW_NAME_SHARE = 0.7
VALUE_MIN = 80          # px: the Value column's least width in a narrow tree
VALUE_LEAST = 48        # px: what a deep row's name leaves it (a date's start)
NARROW_INDENT = 12
SHORT_WINDOW = 800      # a window lower than this (a 700-px screen): the short layout
SHORT_BOTTOM = 150      # the bottom docks' height in the short layout
ELIDED_MIN = 60         # an elided label's least width


class ElidedLabel(QLabel):
    """A one-line label that asks for its text's width but, given less, shows it elided
    (in the middle: a file path keeps its end) instead of widening the window or being cut;
    the whole text is its tooltip and `text()`."""

    def __init__(self, parent: QWidget | None = None,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle):
        super().__init__(parent)
        self.full = ""
        self.mode = mode

    def setText(self, text: str) -> None:
        self.full = text
        self.setToolTip(text)
        self._elide()
        self.updateGeometry()

    def text(self) -> str:
        return self.full

    def sizeHint(self) -> QSize:
        h = super().sizeHint()
        m = self.contentsMargins()
        return QSize(self.fontMetrics().horizontalAdvance(self.full) + m.left() + m.right() + 2,
                     h.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(min(ELIDED_MIN, self.sizeHint().width()), super().minimumSizeHint().height())

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self.full, self.mode, self.contentsRect().width())
        if shown != super().text():
            super().setText(shown)


def scroll_dock(dock: QDockWidget) -> QScrollArea:
    """Put the dock's widget in a scroll area: its minimum size no longer sets the window's;
    a long unbreakable line scrolls instead of widening the dock."""
    w = dock.widget()
    area = QScrollArea(dock)
    area.setObjectName(f"{dock.objectName()}_scroll")
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    area.setWidget(w)
    area.setMinimumSize(160, 120)
    dock.setWidget(area)
    return area


def fit_name_column(window) -> None:
    """The Name column follows its content (the rows on screen), up to a share of the tree;
    in a narrow tree (a 1024-px screen) levels indent less, the names (elided in the
    middle) take at most NARROW_NAME_SHARE and the Value column the rest of the width, so
    that a row's name and value are read together (type, offset and size scroll)."""
    view = window.tree.view
    vw = view.viewport().width()
    narrow = vw < NARROW_TREE
    view.setIndentation(NARROW_INDENT if narrow else 20)
    view.resizeColumnToContents(0)
    cap = int(vw * (NARROW_NAME_SHARE if narrow else NAME_MAX_SHARE))
    if cap > 120 and view.columnWidth(0) > cap:
        view.setColumnWidth(0, cap)
        keep_first_words(window)
    elif narrow and not view.isColumnHidden(1):
        view.setColumnWidth(1, max(VALUE_MIN, vw - view.columnWidth(0)))


def keep_first_words(window) -> None:
    """Widen the Name column so that a deep row on screen (a SOMA fragment, seven levels
    in) keeps its name's first word whole (`elide.least_shown`: the timestamp), as far as
    the Value column's least allows; never narrowed here (also called as the tree
    scrolls: the columns do not jump)."""
    view = window.tree.view
    vw = view.viewport().width()
    least = min(_least_name_width(window), vw - VALUE_LEAST)
    if least > view.columnWidth(0):
        view.setColumnWidth(0, least)
    if vw < NARROW_TREE and not view.isColumnHidden(1):
        value_least = VALUE_MIN if view.columnWidth(0) <= vw * NARROW_NAME_SHARE else VALUE_LEAST
        view.setColumnWidth(1, max(value_least, vw - view.columnWidth(0)))


def _least_name_width(window) -> int:
    """The Name column's width at which every row on screen shows at least its name's
    `least_shown` (rows on screen only: a folder of 1 000 fragments is not measured)."""
    from .elide import least_shown

    view, delegate = window.tree.view, window.tree.name_delegate
    model = view.model()
    need = 0
    index = view.indexAt(view.viewport().rect().topLeft())
    bottom = view.viewport().height()
    while index.isValid() and view.visualRect(index).top() < bottom:
        text = model.data(index)
        if isinstance(text, str) and text:
            need = max(need, delegate.width_for(view, index, least_shown(text)))
        index = view.indexBelow(index)
    return need


def install(window) -> None:
    for name in ("d_inspector", "d_pipeline", "d_health"):
        dock = getattr(window, name, None)
        if isinstance(dock, QDockWidget):
            scroll_dock(dock)
    window.st_value.setMinimumWidth(160)   # the message keeps a few words; st_source elides
    window.st_value.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    hdr = window.tree.view.header()
    hdr.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
    # the Name column fits the rows on screen: Qt's default measures 1 000 rows, each a
    # call into the model (a folder of 1 000 fragments stalled the window at every fit)
    hdr.setResizeContentsPrecision(0)
    view = window.tree.view
    view.expanded.connect(lambda _i: fit_name_column(window))
    # rows come on screen (an expansion laid out, a scroll, a selection scrolled to):
    # their first words kept, once the view has settled
    later = QTimer(view)
    later.setSingleShot(True)
    later.setInterval(100)
    later.timeout.connect(lambda: keep_first_words(window))
    view.expanded.connect(lambda _i: later.start())
    view.verticalScrollBar().valueChanged.connect(lambda _v: later.start())
    window.state.subscribe(Follower(
        lambda _app, event: later.start() if isinstance(event, SelectionChanged) else None))
    def opened(doc) -> None:
        fit_name_column(window)
        if doc is not None:
            QTimer.singleShot(0, window, lambda: share_docks(window))
    on_document(window.state, opened)
    window.window_fit = _Resized(window)


class _Resized(QObject):
    """Re-share the side docks when the window is resized (debounced): Qt gives all the
    new width to the bytes, and the tree would stay squeezed on a large screen."""

    def __init__(self, window):
        super().__init__(window)
        self.win = window
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(120)
        self.timer.timeout.connect(lambda: share_docks(self.win))
        window.installEventFilter(self)

    def eventFilter(self, obj, e) -> bool:
        if e.type() == QEvent.Type.Resize and obj is self.win and self.win.session is not None:
            self.timer.start()
        return False


def inspector_need(window) -> int:
    """The Inspector dock's least height that shows its whole minimum: the node's name and
    Data at cursor's header and three rows (the dock's title bar included)."""
    dock = window.d_inspector
    title = max(0, dock.height() - dock.widget().height())
    return window.inspector.minimumSizeHint().height() + title


def share_right_column(window, short: bool) -> None:
    """The right column: on a short window (1024×700) the inspector gets its need and the
    pipeline panel (stages and cells: at least 8 cell rows) all the rest; on a tall one two
    fifths and three fifths (the inspector's text has room to read)."""
    docks = [window.d_inspector, window.d_pipeline]
    if not short:
        window.resizeDocks(docks, [2, 3], Qt.Orientation.Vertical)
        return
    need = inspector_need(window)
    column = window.d_inspector.height() + window.d_pipeline.height()
    window.resizeDocks(docks, [need, max(1, column - need)], Qt.Orientation.Vertical)


def share_docks(window) -> None:
    """Give the side docks a share of the window's width (the tree needs room for deep
    names; the default sizes were made for one screen size)."""
    w = window.width()
    side = max(260, int(w * 0.21))
    # the tree's names need the width more than the inspector on a small screen (a
    # fragment's name with its whole timestamp and its value beside it: 330 px at 1024)
    tree_side = max(300, int(w * NARROW_TREE_SHARE)) if w < 1300 else side
    left = [d for d in (window.d_tree,) if d.isVisible()]
    right = [d for d in (window.d_inspector,) if d.isVisible()]
    if left and right:
        window.resizeDocks(left + right, [tree_side, side], Qt.Orientation.Horizontal)
    short = window.height() < SHORT_WINDOW
    if window.d_inspector.isVisible() and window.d_pipeline.isVisible():
        share_right_column(window, short)
    # a narrow window: the bottom docks (Diagnostics' messages) take the width under the
    # tree too (between the side docks they had ~460 px at 1024); the right column (the
    # pipeline's cells) keeps the full height. A wide one gives both sides full height.
    narrow = w < 1300
    window.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.BottomDockWidgetArea
                     if narrow else Qt.DockWidgetArea.LeftDockWidgetArea)
    window.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
    bottom = [d for d in (window.d_diag, getattr(window, "d_health", None))
              if isinstance(d, QDockWidget) and d.isVisible()]
    if short and bottom:
        # the bottom docks (Diagnostics, Health: tabified) leave the bytes most of the height
        window.resizeDocks(bottom[:1], [SHORT_BOTTOM], Qt.Orientation.Vertical)
    if window.d_browser.isVisible() and window.d_tree.isVisible():
        # the Array dock (the array as a whole; its rows scroll) gives the tree its height:
        # all but its least on a small screen, three quarters of the column on a large one
        # (at 2560×1440 it kept 812 px, mostly empty, over a 600-px tree)
        window.resizeDocks([window.d_browser, window.d_tree],
                           [160, 10000] if w < 1300 else [1, 3], Qt.Orientation.Vertical)
    fit_name_column(window)

"""Eliding long names to a width so that what tells them apart stays readable (issue 28
item 4): Qt's middle elision cut `__1700000000001_1700000000001_484de…_22` to `__17000…_22`
(two fragments looked the same) and a member's file to `…/a0.tdb` (which member?).

- `elide_words`: a name made of words (`_ . - / space`): its first word stays whole (a
  fragment's timestamp), the other words are shortened in their middle, the longest first
  (the uuid), then dropped in the middle (`__1795550412597…_22`, `__1795550412597…`); only a
  row narrower than that has its end cut (`fit_name_column` gives the rows on screen room
  for `least_shown`).
- `elide_path`: a `/` path: its first part (the member) and its last (the file) stay, the
  longest parts between are replaced by one `…` first (fragment folders), then Qt's.
- `ElidingDelegate`: a view column painted with one of them at the column's width (the
  model's text, the size hint and the tooltip stay whole)."""
from __future__ import annotations

import re
from collections import OrderedDict
from typing import Callable, List, Tuple

from PySide6.QtCore import QModelIndex, QSize, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

ELLIPSIS = "…"
Elider = Callable[[str, QFontMetrics, int], str]
SLACK = 4         # px: the style's measure of a bold row can be a little wider
MIN_KEPT = 2      # characters a shortened word keeps (`4…3`)
_SEPARATORS = re.compile(r"([_.\-/ ]+)")


def _fits(fm: QFontMetrics, text: str, width: int) -> bool:
    return fm.horizontalAdvance(text) <= width


def elide_words(text: str, fm: QFontMetrics, width: int) -> str:
    """`text` fitting `width`: the first word whole; the other words shortened in their
    middle down to MIN_KEPT characters, the longest first (a fragment's uuid, then its
    second timestamp); then cut at the end (the first word's start stays readable)."""
    if _fits(fm, text, width):
        return text
    parts = _SEPARATORS.split(text)   # words at even indices, separators at odd ones
    words = [i for i in range(0, len(parts), 2) if parts[i]]
    if len(words) < 2:
        return fm.elidedText(text, Qt.TextElideMode.ElideMiddle, width)
    out = list(parts)
    for i in sorted(words[1:], key=lambda j: (-len(parts[j]), j)):
        word = parts[i]
        for kept in range(len(word) - 1, MIN_KEPT - 1, -1):
            head = (kept + 1) // 2
            out[i] = word[:head] + ELLIPSIS + word[len(word) - (kept - head):]
            if _fits(fm, "".join(out), width):
                return "".join(out)
    # the other words dropped in the middle: the first whole, the last kept while it fits
    # (`__1795550412597…_22`), then the first alone (`__1795550412597…`)
    last = parts[words[-1] - 1] + parts[words[-1]] if words[-1] > words[0] else ""
    for tail in (last, ""):
        shown = least_shown(text) + tail
        if _fits(fm, shown, width):
            return shown
    return fm.elidedText(text, Qt.TextElideMode.ElideRight, width)   # (the row is too narrow)


def least_shown(text: str) -> str:
    """The least of `text` that `elide_words` keeps while it can: up to its first word
    whole, then `…` (a fragment's `__1795550412597…`); the text itself when it has one
    word. `windowfit.fit_name_column` gives the tree's rows room for it."""
    parts = _SEPARATORS.split(text)
    words = [i for i in range(0, len(parts), 2) if parts[i]]
    if len(words) < 2:
        return text
    return "".join(parts[:words[0] + 1]) + ELLIPSIS


def elide_path(text: str, fm: QFontMetrics, width: int) -> str:
    """`text` (a `/` path) fitting `width`: the first and last parts whole, the longest
    parts between dropped first (one `…` where they were), then Qt's middle elision."""
    if _fits(fm, text, width):
        return text
    parts = text.split("/")
    if len(parts) < 3:
        return fm.elidedText(text, Qt.TextElideMode.ElideMiddle, width)
    middle = sorted(range(1, len(parts) - 1), key=lambda i: (-len(parts[i]), i))
    dropped: set = set()
    shown = text
    for i in middle:
        dropped.add(i)
        kept: List[str] = []
        for j, p in enumerate(parts):
            if j not in dropped:
                kept.append(p)
            elif not kept or kept[-1] != ELLIPSIS:
                kept.append(ELLIPSIS)
        shown = "/".join(kept)
        if _fits(fm, shown, width):
            return shown
    return fm.elidedText(shown, Qt.TextElideMode.ElideMiddle, width)


class ElidingDelegate(QStyledItemDelegate):
    """Paints its column's text elided by `elider` at the width the cell has (the model's
    text stays whole: the size hint, search and the tooltip use it). The last results are
    kept: a repaint of the rows on screen asks the same names at the same width."""

    CACHE = 4096

    def __init__(self, elider: Elider, parent=None):
        super().__init__(parent)
        self.elider = elider
        self._cache: OrderedDict[Tuple[str, int, str], str] = OrderedDict()

    def paint(self, painter, option, index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = self._elided(opt)
        # elided once: the style's own measure (of a bold row, on some X servers) can be a
        # few px wider and would cut the end off again (`__fragment_m…a…`)
        opt.textElideMode = Qt.TextElideMode.ElideNone
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)

    def shown(self, view: QAbstractItemView, index: QModelIndex) -> str:
        """The text painted for `index` in `view` as it is now (what a user reads)."""
        return self._elided(self._option(view, index))

    def width_for(self, view: QAbstractItemView, index: QModelIndex, text: str) -> int:
        """The column width (from the column's left edge, indentation included) at which
        `index`'s row would paint `text` whole."""
        opt = self._option(view, index)
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, opt.widget) + 1
        header = getattr(view, "header", None)
        left = header().sectionViewportPosition(index.column()) if header is not None else 0
        right_pad = max(0, opt.rect.right() - rect.right())
        return rect.left() - left + opt.fontMetrics.horizontalAdvance(text) + 2 * margin + \
            SLACK + right_pad

    def _option(self, view: QAbstractItemView, index: QModelIndex) -> QStyleOptionViewItem:
        """The option the view paints `index` with (its icon's size included: the text
        starts after it)."""
        opt = QStyleOptionViewItem()
        opt.initFrom(view.viewport())
        opt.font = view.font()
        opt.fontMetrics = view.fontMetrics()
        size = view.iconSize()
        if not size.isValid():
            m = view.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize, None, view)
            size = QSize(m, m)
        opt.decorationSize = size
        opt.rect = view.visualRect(index)
        opt.widget = view
        opt.features |= QStyleOptionViewItem.ViewItemFeature.HasDisplay
        self.initStyleOption(opt, index)
        return opt

    def _elided(self, opt: QStyleOptionViewItem) -> str:
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, opt.widget) + 1
        width = rect.width() - 2 * margin - SLACK
        key = (opt.text, width, opt.font.key())
        got = self._cache.get(key)
        if got is None:
            got = self.elider(opt.text, opt.fontMetrics, width)
            self._cache[key] = got
            if len(self._cache) > self.CACHE:
                self._cache.popitem(last=False)
        return got

"""Colours by node kind and status, following the system palette (light or dark)."""
from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QIcon, QPainter, QPainterPath, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QApplication

from arrayscope.formats.core.status import Status

from . import qtfix  # noqa: F401  (must run before Qt calls pile up)

# hue (0..359) per node kind; saturation/lightness come from the palette
KIND_HUES = {
    "struct": 210, "array": 180, "field": 130, "enum": 275, "string": 30, "bytes": 200,
    "flag": 50, "tile": 225, "chunk": 190, "filter": 300, "metadata": 330, "payload": 38,
    "cells": 95, "error": 0, "unparsed": None, "padding": None, "dir": None, "file": None,
}


def is_dark() -> bool:
    app = QApplication.instance()
    pal = app.palette() if isinstance(app, QApplication) else QPalette()
    return pal.color(QPalette.ColorRole.Window).lightness() < 128


def kind_color(kind: str, strength: float = 1.0, alt: bool = False) -> QColor:
    """Background colour for bytes of `kind` (strength 0..1 scales the alpha). `alt` gives
    the second shade neighbouring fields alternate with: another hue and lightness, so a
    field boundary shows even between two fields of one kind."""
    dark = is_dark()
    hue = KIND_HUES.get(kind, 210)
    if alt and hue is not None:
        hue = (hue + 28) % 360
        c = QColor.fromHsl(hue, 170 if dark else 190, 60 if dark else 200)
        c.setAlpha(max(0, min(255, int((150 if dark else 150) * strength))))
        return c
    if hue is None:
        c = QColor(128, 128, 128)
        c.setAlpha(int((70 if dark else 45) * strength))
        return c
    # dark: a deeper tint, so light text (and the dimmed zero bytes) stay readable on it
    c = QColor.fromHsl(hue, 150 if dark else 200, 85 if dark else 165)
    c.setAlpha(max(0, min(255, int((125 if dark else 110) * strength))))
    return c


def kind_solid(kind: str) -> QColor:
    """An opaque colour for a kind (gutter bars, legend swatches)."""
    hue = KIND_HUES.get(kind, 210)
    if hue is None:
        return QColor(150, 150, 150)
    return QColor.fromHsl(hue, 160, 120 if is_dark() else 140)


def error_color() -> QColor:
    return QColor(255, 110, 110) if is_dark() else QColor(200, 0, 0)


def warning_color() -> QColor:
    return QColor(240, 190, 60) if is_dark() else QColor(190, 120, 0)


def ok_color() -> QColor:
    return QColor(90, 200, 110) if is_dark() else QColor(20, 140, 50)


def info_color() -> QColor:
    return QColor(110, 160, 255) if is_dark() else QColor(30, 90, 200)


def muted_color() -> QColor:
    """Secondary text (nulls, hints) that stays readable on light and dark palettes."""
    return QColor(150, 150, 150) if is_dark() else QColor(120, 120, 120)


def mono_font(point_size: int = 0) -> QFont:
    f = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    f.setStyleHint(QFont.StyleHint.Monospace)
    if point_size:
        f.setPointSize(point_size)
    return f


def _dpr() -> float:
    app = QApplication.instance()
    try:
        return max(1.0, app.primaryScreen().devicePixelRatio()) if isinstance(app, QApplication) \
            else 1.0
    except AttributeError:
        return 1.0


@lru_cache(maxsize=64)
def _status_icon(status: str, dark: bool) -> QIcon:
    size = 16
    dpr = _dpr()
    pm = QPixmap(int(size * dpr), int(size * dpr))
    pm.setDevicePixelRatio(dpr)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    if status == Status.ERROR:
        p.setBrush(error_color())
        p.setPen(Qt.PenStyle.NoPen)
        p.drawEllipse(QRectF(1.5, 1.5, 13, 13))
        p.setPen(QPen(QColor("white"), 2))
        p.drawLine(QPointF(5.5, 5.5), QPointF(10.5, 10.5))
        p.drawLine(QPointF(10.5, 5.5), QPointF(5.5, 10.5))
    elif status == Status.WARNING:
        path = QPainterPath()
        path.moveTo(8, 1.5)
        path.lineTo(15, 14.5)
        path.lineTo(1, 14.5)
        path.closeSubpath()
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(warning_color())
        p.drawPath(path)
        p.setPen(QPen(QColor("black"), 1.8))
        p.drawLine(QPointF(8, 5.5), QPointF(8, 10))
        p.drawPoint(QPointF(8, 12.4))
    elif status == Status.INFO:
        p.setBrush(info_color())
        p.setPen(Qt.PenStyle.NoPen)
        p.drawEllipse(QRectF(1.5, 1.5, 13, 13))
        p.setPen(QPen(QColor("white"), 2))
        p.drawLine(QPointF(8, 7), QPointF(8, 11.5))
        p.drawPoint(QPointF(8, 4.5))
    elif status == Status.OK:
        p.setBrush(ok_color())
        p.setPen(Qt.PenStyle.NoPen)
        p.drawEllipse(QRectF(1.5, 1.5, 13, 13))
        p.setPen(QPen(QColor("white"), 2))
        p.drawPolyline([QPointF(4.5, 8.5), QPointF(7, 11), QPointF(11.5, 5.5)])
    else:  # a kind swatch: "kind:<name>"
        kind = status.split(":", 1)[1]
        c = kind_solid(kind)
        p.setPen(QPen(c.darker(130), 1))
        p.setBrush(c)
        if kind == "dir":
            p.drawRoundedRect(QRectF(1.5, 4.5, 13, 9), 1.5, 1.5)
            p.drawRect(QRectF(1.5, 2.5, 6, 3))
        elif kind == "file":
            p.drawRect(QRectF(3.5, 1.5, 9, 13))
        else:
            p.drawRoundedRect(QRectF(3.5, 3.5, 9, 9), 2, 2)
    p.end()
    return QIcon(pm)


def status_icon(status: str) -> QIcon:
    return _status_icon(status, is_dark())


def kind_icon(kind: str) -> QIcon:
    return _status_icon("kind:" + kind, is_dark())


def app_icon() -> QIcon:
    import os

    from .. import resources

    here = os.path.join(os.path.dirname(os.path.abspath(resources.__file__)), "icons", "arrayscope.svg")
    return QIcon(here) if os.path.exists(here) else QIcon()

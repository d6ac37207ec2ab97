"""The window's size and place on the screen: it opens inside the screen's available area
(task bars and panels excluded), frame included, at a size that uses a large screen and
all of a small one; a saved geometry that no longer fits (a smaller screen, a monitor
gone) is clamped the same way. The window manager's frame is only known once the window
is shown, so the first framing is checked again (`_FirstFrame`)."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QMargins, QObject, QPoint, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

PREFERRED = QSize(1500, 920)   # the frame's size on a screen with room for it
SCREEN_SHARE = 0.9             # on a larger screen, this share of it (1920×1080: 1728×972)
FRAME_WAIT_MS = 2000           # how long after showing the window manager may take to frame it


def available_geometry(window: QWidget) -> QRect:
    """The available area of the screen the window is on (a placed window: where its centre
    is) or opens on."""
    screen = None
    if window.isVisible() or window.testAttribute(Qt.WidgetAttribute.WA_Moved):
        screen = QGuiApplication.screenAt(window.frameGeometry().center())
    screen = screen or window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def frame_margins(window: QWidget) -> QMargins:
    """The window manager's frame around the window (zero until it is shown and framed)."""
    f, g = window.frameGeometry(), window.geometry()
    return QMargins(g.left() - f.left(), g.top() - f.top(),
                    f.right() - g.right(), f.bottom() - g.bottom())


def preferred_size(avail: QSize) -> QSize:
    """The frame's size on first opening: PREFERRED, or SCREEN_SHARE of a screen larger
    than that, never more than the screen."""
    w = max(PREFERRED.width(), int(avail.width() * SCREEN_SHARE))
    h = max(PREFERRED.height(), int(avail.height() * SCREEN_SHARE))
    return QSize(min(w, avail.width()), min(h, avail.height()))


def fit_rect(frame: QRect, avail: QRect) -> QRect:
    """`frame` no larger than `avail`, moved the least to lie inside it."""
    w, h = min(frame.width(), avail.width()), min(frame.height(), avail.height())
    x = max(avail.left(), min(frame.left(), avail.left() + avail.width() - w))
    y = max(avail.top(), min(frame.top(), avail.top() + avail.height() - h))
    return QRect(x, y, w, h)


def _set_frame(window: QWidget, frame: QRect) -> None:
    m = frame_margins(window)
    window.resize(frame.width() - m.left() - m.right(), frame.height() - m.top() - m.bottom())
    window.move(frame.topLeft())   # a window's position is its frame's


def _spread(window: QWidget) -> bool:
    """Maximized or full screen: the window manager fits it."""
    return bool(window.windowState() & (Qt.WindowState.WindowMaximized
                                         | Qt.WindowState.WindowFullScreen))


def open_on_screen(window: QWidget) -> None:
    """Before the first show, with no saved geometry: the preferred size, centred."""
    avail = available_geometry(window)
    frame = QRect(QPoint(0, 0), preferred_size(avail.size()))
    frame.moveCenter(avail.center())
    _set_frame(window, fit_rect(frame, avail))
    _FirstFrame.watch(window)


def clamp_to_screen(window: QWidget) -> None:
    """Shrink and move the window so its frame lies in the screen's available area (a
    restored geometry from a larger screen); a window that fits is left alone."""
    _clamp(window)
    _FirstFrame.watch(window)


def _clamp(window: QWidget) -> None:
    if _spread(window):
        return
    frame = window.frameGeometry()
    fitted = fit_rect(frame, available_geometry(window))
    if fitted != frame:
        _set_frame(window, fitted)


class _FirstFrame(QObject):
    """Once shown, the window manager frames the window (a title bar: taller than the size
    chosen before) and places it: the frame is fitted again then, unless the window was
    resized meanwhile (by its caller or the user). Once, or given up after a while."""

    NAME = "screenfit_first_frame"

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.setObjectName(self.NAME)
        self.win = window
        self.size = QSize()
        self.armed = False
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(FRAME_WAIT_MS)
        self.timer.timeout.connect(self.done)
        window.installEventFilter(self)

    @classmethod
    def watch(cls, window: QWidget) -> None:
        """Fit the frame again when the window is first framed at its present size."""
        ff = window.findChild(QObject, cls.NAME)
        if not isinstance(ff, cls):
            ff = cls(window)
        ff.size, ff.armed = window.size(), True

    def eventFilter(self, obj, e) -> bool:
        if not self.armed or obj is not self.win or e.type() not in (QEvent.Type.Show,
                                                                     QEvent.Type.Move):
            return False
        if not self.timer.isActive():
            self.timer.start()
        if self.win.size() != self.size or _spread(self.win):
            self.done()
        elif not frame_margins(self.win).isNull():   # framed: fit it with its frame
            self.done()
            _clamp(self.win)
        return False

    def done(self) -> None:
        self.armed = False
        self.timer.stop()

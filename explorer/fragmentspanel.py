"""The Fragments panel: a timeline of an array's fragments coloured by state, and a time slider
that shows which of them a reader opening the array at T sees. Clicking a fragment emits
`fragmentSelected(name)`. Data comes from `formats.core.health` only (plain typed rows)."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QVBoxLayout, QWidget

from arrayscope.formats.core.health import ArrayHealth, FragmentHealth
from arrayscope.formats.core.status import Status

STATE_COLOURS: Dict[str, str] = {
    "committed": "#43a047", "consolidated": "#7cb342", "vacuumable": "#90a4ae",
    "ignored": "#b0bec5", "uncommitted": "#ffb300", "missing-files": "#e53935",
    "orphan": "#8e24aa",
}


# asks for the health at T (None: now); the answer comes later, to the callback
Request = Callable[[Optional[int], Callable[[Optional[ArrayHealth]], None]], None]

DAMAGED = "#c62828"   # a fragment verify found errors in, whatever its commit state


def state_colour(state: str) -> QColor:
    return QColor(STATE_COLOURS.get(state, "#757575"))


def problems_by_folder(findings) -> Dict[str, Tuple[int, int]]:
    """(errors, warnings) of verify's findings per folder name on their node path or source
    (a fragment's row is found by its folder's name: its uuid makes it unique)."""
    out: Dict[str, Tuple[int, int]] = {}
    for f in findings:
        if f.status not in (Status.ERROR, Status.WARNING):
            continue
        for part in set((f.node or "").split("/")[:-1]) | set((f.source or "").split("/")[:-1]):
            e, w = out.get(part, (0, 0))
            out[part] = (e + 1, w) if f.status == Status.ERROR else (e, w + 1)
    return out


def short_name(name: str, n: int = 8) -> str:
    """A fragment's name, short: the first characters of its uuid (its times are on the
    axis); a name that is not `__t1_t2_uuid[_v]` is cut."""
    parts = name.split("_")
    if len(parts) >= 5 and parts[0] == parts[1] == "" and parts[2].isdigit() and parts[4]:
        return parts[4][:n]
    return name[:n + 2]


def time_text(t: int) -> str:
    """A timestamp as shown: ms since 1970 as a UTC date and time when it is a real date
    (after 1973), else the number (arrays written at explicit small timestamps)."""
    import datetime as dt

    if t < 10 ** 11:
        return str(t)
    d = dt.datetime.fromtimestamp(t / 1000, tz=dt.timezone.utc)
    return d.strftime("%Y-%m-%d %H:%M:%S.") + f"{t % 1000:03d}Z"


class Timeline(QWidget):
    """Fragments as bars over their [t1, t2] on an axis of the distinct timestamps (ranks, so
    close and far writes are equally readable); a vertical line at T."""

    clicked = Signal(str)
    ROW = 22
    LEFT = 12
    TOP = 26

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: List[FragmentHealth] = []
        self.ticks: List[int] = []
        self.at: Optional[int] = None
        self.selected: Optional[str] = None
        self.problems: Dict[str, Tuple[int, int]] = {}   # verify's, by folder name
        self.painted_rows = 0   # the rows the last paint drew (only those exposed)
        self.setMinimumHeight(120)
        self.setMouseTracking(True)

    def set_rows(self, rows: List[FragmentHealth], ticks: List[int], at: Optional[int]) -> None:
        self.rows = [r for r in rows if r.timestamps[0] is not None]
        self.ticks = ticks
        self.at = at
        self.setMinimumHeight(self.TOP + 16 + self.ROW * max(1, len(self.rows)))
        self.update()

    def _x(self, t: float) -> float:
        if not self.ticks:
            return self.LEFT
        w = max(1.0, self.width() - 2 * self.LEFT - 8)
        # rank of t among the ticks (fractional between two ticks)
        import bisect

        i = bisect.bisect_left(self.ticks, t)
        if i < len(self.ticks) and self.ticks[i] == t:
            pos = float(i)
        elif i == 0:
            pos = -0.5
        elif i >= len(self.ticks):
            pos = len(self.ticks) - 0.5
        else:
            a, b = self.ticks[i - 1], self.ticks[i]
            pos = i - 1 + (t - a) / (b - a)
        n = max(1, len(self.ticks) - 1)
        return self.LEFT + 4 + w * (pos + 0.5) / (n + 1)

    def _bar(self, i: int, r: FragmentHealth) -> QRectF:
        t1, t2 = r.timestamps
        x1 = self._x(t1 or 0) - 6
        x2 = self._x(t2 if t2 is not None else (t1 or 0)) + 6
        return QRectF(x1, self.TOP + i * self.ROW + 3, max(12.0, x2 - x1), self.ROW - 6)

    def paintEvent(self, e) -> None:
        # only what is exposed: 1 000 fragments are 22 000 px of rows and 1 000 ticks
        # (painting them all was seconds of the window's time, at every repaint)
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        area = e.rect()
        p.fillRect(area, self.palette().base())
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, small.pointSizeF() - 1))
        p.setFont(small)
        p.setPen(QPen(self.palette().mid().color()))
        xs = [self._x(t) for t in self.ticks]
        p.drawLines([QLineF(x, self.TOP - 4, x, self.height() - 4) for x in xs
                     if area.left() - 1 <= x <= area.right() + 1])
        if area.top() < self.TOP:   # the time labels, as many as fit side by side
            room = p.fontMetrics().horizontalAdvance(time_text(self.ticks[-1])) + 16 \
                if self.ticks else 0
            last = None
            for x, t in zip(xs, self.ticks):
                if last is not None and x - last < room:
                    continue
                last = x
                if area.left() - room <= x <= area.right() + room:
                    p.drawText(QRectF(x - room / 2, 2, room, 16), Qt.AlignmentFlag.AlignCenter,
                               time_text(t))
        first = max(0, (area.top() - self.TOP) // self.ROW)
        end = min(len(self.rows), (area.bottom() - self.TOP) // self.ROW + 1)
        self.painted_rows = max(0, end - first)
        for i in range(first, end):
            r = self.rows[i]
            rect = self._bar(i, r)
            errors, warnings = self.problems.get(r.name, (0, 0))
            c = QColor(DAMAGED) if errors else state_colour(r.state)
            fill = QColor(c)
            if not r.visible:
                fill.setAlpha(60)
            p.setBrush(QBrush(fill, Qt.BrushStyle.SolidPattern if r.visible else Qt.BrushStyle.SolidPattern))
            pen = QPen(c.darker(140), 2.5 if r.name == self.selected else 1)
            if not r.visible:
                pen.setStyle(Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.drawRoundedRect(rect, 4, 4)
            p.setPen(QPen(self.palette().text().color()))
            label = f"{short_name(r.name)}…  {r.state}" + ("" if r.visible else " (not read)")
            if errors or warnings:
                label += f" · {errors} error{'s' * (errors != 1)}" if errors else \
                    f" · {warnings} warning{'s' * (warnings != 1)}"
            room = p.fontMetrics().horizontalAdvance(label) + 12
            mid = Qt.AlignmentFlag.AlignVCenter
            if rect.left() + room > self.width():   # near the right edge: label on the left
                p.drawText(QRectF(rect.left() - room, rect.top(), room - 4, rect.height()),
                           mid | Qt.AlignmentFlag.AlignRight, label)
            else:
                # after the bar's start, clear of a one-timestamp fragment's short mark
                x = rect.left() + 6 if rect.width() > 24 else rect.right() + 4
                p.drawText(QRectF(x, rect.top(), room, rect.height()),
                           mid | Qt.AlignmentFlag.AlignLeft, label)
        if self.at is not None and self.ticks:
            x = self._x(self.at) if self.at <= self.ticks[-1] else self.width() - self.LEFT
            p.setPen(QPen(QColor("#1e88e5"), 2))
            p.drawLine(QPointF(x, self.TOP - 6), QPointF(x, self.height()))
        p.end()

    def mousePressEvent(self, e) -> None:
        pos = e.position() if hasattr(e, "position") else QPointF(e.pos())
        for i, r in enumerate(self.rows):
            if self._bar(i, r).adjusted(-200, 0, 200, 0).contains(pos):
                self.selected = r.name
                self.update()
                self.clicked.emit(r.name)
                return


class FragmentsPanel(QWidget):
    """Timeline + slider. `request(at, done)` asks for the ArrayHealth for a reader at `at`
    (None: now) and calls `done(health)` when it is computed (the Health dock computes it
    in a worker process); the panel asks when the slider moves."""

    fragmentSelected = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.request: Optional[Request] = None
        self.health: Optional[ArrayHealth] = None
        self.ticks: List[int] = []
        self.timeline = Timeline(self)
        self.timeline.clicked.connect(self.fragmentSelected)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setEnabled(False)
        self.slider.valueChanged.connect(self._slid)
        self.caption = QLabel("", self)
        self.caption.setWordWrap(True)
        self.legend = QLabel(" ".join(
            f"<span style='color:{c}'>■</span> {s}" for s, c in
            list(STATE_COLOURS.items()) + [("errors (verify)", DAMAGED)]), self)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.timeline, 1)
        row = QHBoxLayout()
        row.addWidget(QLabel("Reader at T:", self))
        row.addWidget(self.slider, 1)
        lay.addLayout(row)
        lay.addWidget(self.caption)
        lay.addWidget(self.legend)

    def set_health(self, request: Optional[Request], health: Optional[ArrayHealth]) -> None:
        """Show `health` (the reader at "now"), computed by the caller; `request` computes
        the slider's other times."""
        self.request = request
        self.health = health
        rows = self.health.fragments if self.health else []
        # the slider stops at every write and at every delete/update commit (what it
        # applies changes there)
        conds = self.health.conditions if self.health else []
        ts = sorted({t for r in rows for t in r.timestamps if t is not None} |
                    {c.timestamp for c in conds if c.timestamp is not None})
        self.ticks = ts
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(ts))          # the last position is "now"
        self.slider.setValue(len(ts))
        self.slider.setEnabled(bool(ts))
        self.slider.blockSignals(False)
        self._show(self.health, None)

    def set_findings(self, findings) -> None:
        """Verify's findings of the document (all of them so far): a fragment with errors
        is drawn as damaged, whatever its commit state."""
        self.timeline.problems = problems_by_folder(findings)
        self.timeline.update()

    def select(self, name: Optional[str]) -> None:
        self.timeline.selected = name
        self.timeline.update()

    def at_value(self) -> Optional[int]:
        v = self.slider.value()
        return None if v >= len(self.ticks) else self.ticks[v]

    def set_at(self, at: Optional[int]) -> None:
        """Move the slider to timestamp `at` (None: now)."""
        self.slider.setValue(len(self.ticks) if at is None else
                             max(0, min(len(self.ticks), self.ticks.index(at)
                                        if at in self.ticks else len(self.ticks))))

    def _slid(self, _v: int) -> None:
        if self.request is None:
            return
        at = self.at_value()
        self.request(at, lambda h: self._show(h, at))

    def _show(self, h: Optional[ArrayHealth], at: Optional[int]) -> None:
        if h is None:
            self.timeline.set_rows([], [], None)
            self.caption.setText("No fragments (not a TileDB array).")
            return
        self.timeline.set_rows(h.fragments, self.ticks, h.at)
        frags = [f for f in h.fragments if f.state != "orphan"]
        when = "now" if at is None else f"at T = {at}" + \
            (f" ({time_text(at)})" if time_text(at) != str(at) else "")
        text = f"A reader opening the array {when} sees {len(h.visible)} of {len(frags)} " \
               f"fragment(s)."
        if h.open_error:
            text += f" Opening fails: {h.open_error}"
        elif h.read_error:
            text += f" Reads fail: {h.read_error}"
        dels = [c for c in h.conditions if c.considered]
        if dels:
            text += " " + "; ".join(
                f"{c.kind} {c.name[:14]}…: {c.text}" +
                (" (libtiledb reads it as a delete)" if c.kind == "update" else "")
                for c in dels)
        self.caption.setText(text)


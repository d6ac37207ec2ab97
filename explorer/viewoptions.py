"""View options: bytes per row (Auto / 8 / 16 / 32), the overview bar beside each hex
view, the theme (System / Light / Dark) and the colour legend. Choices are kept in the
user's settings. `install(window)` registers them."""
from __future__ import annotations

from typing import Dict

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QColor, QPalette
from PySide6.QtWidgets import QApplication, QDockWidget, QStyleFactory

from .hexview import ROW_CHOICES
from .legend import Legend
from .overviewbar import attach as attach_overview
from .windowmenus import menu

THEMES = ("System", "Light", "Dark")
_system: Dict[str, object] = {}


def dark_palette() -> QPalette:
    p = QPalette()
    C = QPalette.ColorRole
    for role, c in ((C.Window, "#2b2b2b"), (C.WindowText, "#e6e6e6"), (C.Base, "#1e1e1e"),
                    (C.AlternateBase, "#2a2a2a"), (C.Text, "#e6e6e6"), (C.Button, "#333333"),
                    (C.ButtonText, "#e6e6e6"), (C.Highlight, "#3d6fb4"), (C.HighlightedText, "#ffffff"),
                    (C.ToolTipBase, "#333333"), (C.ToolTipText, "#e6e6e6"), (C.Mid, "#555555"),
                    (C.PlaceholderText, "#8a8a8a"), (C.Link, "#7fb0ff"), (C.BrightText, "#ff6e6e")):
        p.setColor(role, QColor(c))
    p.setColor(QPalette.ColorGroup.Disabled, C.Text, QColor("#777777"))
    p.setColor(QPalette.ColorGroup.Disabled, C.WindowText, QColor("#777777"))
    p.setColor(QPalette.ColorGroup.Disabled, C.ButtonText, QColor("#777777"))
    return p


def light_palette() -> QPalette:
    style = QStyleFactory.create("Fusion")
    return style.standardPalette() if style is not None else QPalette()


def apply_theme(name: str) -> None:
    """Switch the whole application's palette (System restores the one it started with)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return
    if "palette" not in _system:
        _system["palette"] = QPalette(app.palette())
        _system["style"] = app.style().name()
    if name == "System":
        app.setStyle(str(_system["style"]))
        pal = _system["palette"]
        assert isinstance(pal, QPalette)
        app.setPalette(pal)
    else:
        app.setStyle("Fusion")
        app.setPalette(dark_palette() if name == "Dark" else light_palette())


class ViewOptions:
    def __init__(self, window):
        self.win = window
        s = window.settings
        self.bpr_mode = _int(s.value("view/bytes_per_row", 0))
        self.show_overview = str(s.value("view/overview", "true")).lower() != "false"
        self.theme = str(s.value("view/theme", "System"))
        if self.theme not in THEMES:
            self.theme = "System"
        v = menu(window, "&View")
        v.addSeparator()
        rows = v.addMenu("&Bytes per Row")
        group = QActionGroup(window)
        self.row_actions: Dict[int, QAction] = {}
        for mode in (0,) + ROW_CHOICES:
            a = QAction("Auto (fit the width)" if mode == 0 else str(mode), window)
            a.setCheckable(True)
            a.setChecked(mode == self.bpr_mode)
            a.triggered.connect(lambda _c=False, m=mode: self.set_bytes_per_row(m))
            group.addAction(a)
            rows.addAction(a)
            self.row_actions[mode] = a
        self.overview_action = QAction("&Overview Bar", window)
        self.overview_action.setCheckable(True)
        self.overview_action.setChecked(self.show_overview)
        self.overview_action.toggled.connect(self.set_overview)
        v.addAction(self.overview_action)
        themes = v.addMenu("&Theme")
        tg = QActionGroup(window)
        self.theme_actions: Dict[str, QAction] = {}
        for name in THEMES:
            a = QAction(name, window)
            a.setCheckable(True)
            a.setChecked(name == self.theme)
            a.triggered.connect(lambda _c=False, n=name: self.set_theme(n))
            tg.addAction(a)
            themes.addAction(a)
            self.theme_actions[name] = a
        self.legend = Legend(window)
        self.d_legend = QDockWidget("Legend", window)
        self.d_legend.setObjectName("dock_legend")
        self.d_legend.setWidget(self.legend)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.d_legend)
        self.d_legend.hide()
        la = self.d_legend.toggleViewAction()
        la.setText("Colour &Legend")
        v.addAction(la)
        window.tabs.viewCreated.connect(self.decorate)
        if self.theme != "System":
            apply_theme(self.theme)

    def decorate(self, view) -> None:
        view.set_bytes_per_row(self.bpr_mode)
        if self.show_overview and getattr(view, "overview", None) is None:
            attach_overview(view)

    def set_bytes_per_row(self, mode: int) -> None:
        self.bpr_mode = mode
        self.row_actions[mode].setChecked(True)
        self.win.settings.setValue("view/bytes_per_row", mode)
        for v in self.win.tabs.views():
            v.set_bytes_per_row(mode)

    def set_overview(self, on: bool) -> None:
        self.show_overview = on
        self.win.settings.setValue("view/overview", "true" if on else "false")
        for v in self.win.tabs.views():
            bar = getattr(v, "overview", None)
            if on and bar is None:
                attach_overview(v)
                fip = getattr(self.win, "findings_in_place", None)
                if fip is not None:
                    v.overview.set_marks(fip.marks.ranges_for(v.source))
            elif bar is not None:
                bar.setVisible(on)
                v.set_side_widget(bar)

    def set_theme(self, name: str) -> None:
        self.theme = name
        self.theme_actions[name].setChecked(True)
        self.win.settings.setValue("view/theme", name)
        apply_theme(name)
        self.legend.rebuild()
        for v in self.win.tabs.views():
            v.viewport().update()


def _int(v: object) -> int:
    try:
        n = int(str(v))
    except ValueError:
        return 0
    return n if n in (0,) + ROW_CHOICES else 0


def install(window) -> ViewOptions:
    vo = ViewOptions(window)
    window.view_options = vo
    return vo

"""The status light: one button in the status bar that says at a glance whether the open
document has problems (red: errors, amber: warnings, green: none) and how many."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton, QWidget

from arrayscope.formats.core.status import Status

from . import theme


class FindingLight(QToolButton):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAutoRaise(True)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.status = ""
        self.set_counts(0, 0, checking=False)
        self.setVisible(False)

    def set_counts(self, errors: int, warnings: int, checking: bool = False) -> None:
        """Show the worst state; `checking` while verify still runs (no verdict of green)."""
        if errors:
            self.status = Status.ERROR
            text = f"{errors} error{'s' * (errors != 1)}"
            if warnings:
                text += f", {warnings} warning{'s' * (warnings != 1)}"
        elif warnings:
            self.status = Status.WARNING
            text = f"{warnings} warning{'s' * (warnings != 1)}"
        else:
            self.status = Status.INFO if checking else Status.OK
            text = "checking…" if checking else "no problems"
        self.setIcon(theme.status_icon(self.status))
        self.setText(text)
        self.setToolTip(f"{text} — click to list them in Diagnostics")

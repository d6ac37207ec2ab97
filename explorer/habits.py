"""What hex-editor users expect, installed into the main window: findings in place,
bookmarks, find-all, export, diff, overview bar, legend, theme.
Each feature is its own module with an `install(window)` that builds its widgets; the ones
that follow the document and the selection do it as panels of the window's state
(`window.state.subscribe`: findings in place, bookmarks), like the docks. This is the one
line the window calls."""
from __future__ import annotations

from . import (
    bookmarksdock,
    contextmenus,
    diffs,
    findalldock,
    findingsinplace,
    keyflow,
    viewkeeper,
    viewoptions,
    windowfit,
)


def install(window) -> None:
    viewoptions.install(window)      # first: views get their overview bar before marks
    findingsinplace.install(window)
    bookmarksdock.install(window)
    findalldock.install(window)
    contextmenus.install(window)
    diffs.install(window)            # after contextmenus: adds to the node menu
    windowfit.install(window)
    viewkeeper.install(window)
    keyflow.install(window)

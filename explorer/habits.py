"""What hex-editor users expect, installed into the main window: findings in place,
bookmarks, find-all, export, diff, overview bar, legend, theme.
Each feature is its own module with an `install(window)`; this is the one line the window
calls (the shell's panel protocol will list them instead)."""
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

"""The window's panels and features beyond its core docks, one line each: a module with an
`install(window)` that builds its widgets (a dock, actions, a status-bar light) and follows
the document, the selection and the findings as a panel of the window's state
(`window.state.subscribe`, `state.on_document`). Adding a panel: its module, and its line
here. The order is the order of installation (a dock tabified after another, a menu entry
added to one an earlier feature made)."""
from __future__ import annotations

from . import (
    bookmarksdock,
    contextmenus,
    datasetsearchdock,
    diffs,
    findalldock,
    findingsinplace,
    gcpolicy,
    healthdock,
    keyflow,
    salvageaction,
    viewkeeper,
    viewoptions,
    windowfit,
)
from .windowmenus import list_docks

FEATURES = (
    healthdock,       # Health: tabified with Diagnostics, the status-bar verdict
    viewoptions,      # before the marks: views get their overview bar first
    findingsinplace,
    bookmarksdock,
    findalldock,
    datasetsearchdock,  # Edit ▸ Search Dataset: names, values, bytes, in a worker process
    contextmenus,
    diffs,            # after contextmenus: adds to the node menu
    salvageaction,    # File ▸ Salvage…
    windowfit,        # after the docks it fits (scrolls the pipeline's and health's)
    viewkeeper,
    keyflow,
    gcpolicy,         # full collections walk what was made since the last one
)


def install(window) -> None:
    for feature in FEATURES:
        feature.install(window)
    list_docks(window)   # every dock, the features' too, reachable from View

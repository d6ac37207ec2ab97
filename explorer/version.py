"""The installed program's version, as `arrayscope --version` and the About box say it (one
place both read, so the window's menus need not import the command line)."""
from __future__ import annotations


def installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # only when asked

    try:
        return version("arrayscope")
    except PackageNotFoundError:
        return "unknown (not installed)"

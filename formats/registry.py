"""Which format opens a path.

Each format package (`formats.tiledb`, `formats.scdl`, `formats.zarr`) exposes a
`PLUGIN` object with these optional members:

- `name`: short name ("tiledb").
- `detect_dir(path) -> bool`: the directory is one of this format's containers.
- `open_dir(document, path) -> Node`: the tree of the whole directory.
- `container_of(path) -> str | None`: the directory that gives a single file its context.
- `open_file_in(document, container, path) -> Node`: one file parsed with that context.
- `sniff(head: bytes, path) -> bool`: a stray file recognised by its magic or name.
- `open_file(document, path) -> Node`: a stray file parsed without context.
- `field_names(document) -> list[str]` and `values(document, name) -> list[dict]`:
  the `values` command (entries `{"name", "values", "raw": bytes}`). A plugin may accept
  `with_values=False` to skip building Python values when only the raw bytes are wanted.
- `verify(document) -> list[Node]`: extra checks beyond the diagnostics of the tree.

Deferred children (no hook to call): a node whose children cost real work to make (a large
Zarr array's chunk: its "decoded" node) holds `node.DeferredChildren`. `node.pending` is true
until they exist; the first `len`, index or `find` builds them and the node becomes an
ordinary one. `walk`, `diagnostics` and coverage never build them, so a plugin whose tree
defers work must find what that work reveals in its `verify` (build, collect, then
`node.release_deferred()` so nothing decoded stays alive). A view shows an expander for a
pending node without counting its children (explorer/treemodel.py) and builds them when
the user expands or selects it.
"""
from __future__ import annotations

import importlib
import os
from typing import List, Optional

PLUGIN_MODULES = (".tiledb", ".scdl", ".zarr")  # relative to this package
_plugins: Optional[List[object]] = None


def plugins() -> List[object]:
    global _plugins
    if _plugins is None:
        found = []
        for mod in PLUGIN_MODULES:
            try:
                found.append(importlib.import_module(mod, __package__).PLUGIN)
            except (ImportError, AttributeError):
                continue  # a format not built yet: the others still work
        _plugins = found
    return _plugins


def plugin_named(name: str):
    for p in plugins():
        if p.name == name:
            return p
    return None


def for_dir(path: str):
    for p in plugins():
        det = getattr(p, "detect_dir", None)
        if det is not None and det(path):
            return p
    return None


def for_file(path: str):
    """(plugin, container or None) for a single file."""
    for p in plugins():
        find = getattr(p, "container_of", None)
        if find is not None:
            container = find(path)
            if container:
                return p, container
    from .dataset_fs import fs_of

    try:
        head = fs_of(None, path).read_bytes(path, 64)[0]
    except OSError:
        head = b""
    for p in plugins():
        sniff = getattr(p, "sniff", None)
        if sniff is not None and sniff(head, path):
            return p, None
    return None, None


def parent_dirs(path: str):
    d = os.path.dirname(os.path.abspath(path))
    while True:
        yield d
        nd = os.path.dirname(d)
        if nd == d:
            return
        d = nd

"""Which format opens a path.

Each format package (`formats.tiledb`, `formats.scdl`, `formats.zarr`) exposes a `PLUGIN`
object satisfying `formats.plugin.FormatPlugin`. Only `name` and `detection` are required;
a missing member means the format has nothing to offer there:

- `detection` (`plugin.Detection`): the entries that mark a directory as a container.
- `container_of(path) -> str | None`: the directory that gives a single file its context.
- `open_dir(document, path) -> Node`, `open_file_in(document, container, path) -> Node`,
  `open_file(document, path) -> Node` (a stray file, recognised by `sniff(head, path)`).
- `field_names(document)` and `values(document, name, with_values=True) -> [FieldValues]`:
  the `values` command (`with_values=False`: only the raw bytes are wanted).
- `verify(document) -> [Node]`: checks beyond the diagnostics of the tree.
- `describe_entry(document, node) -> str`, `chunk_view(document, node)`,
  `pipeline_hint`: what the window shows (array browser, pipeline panel).

A plugin that fails to import is not dropped silently: `load_failures()` gives one error
`Finding` per plugin (code `plugin-failed`), and `formats.open` marks a path no loaded
plugin recognised with them.

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
import logging
from typing import List, Optional, Tuple

from .findings import PLUGIN_FAILED, Finding
from .plugin import ChunkView, FormatPlugin
from .status import Status

PLUGIN_MODULES = (".tiledb", ".scdl", ".zarr")  # relative to this package
_plugins: Optional[List[FormatPlugin]] = None
_failures: List[Finding] = []
log = logging.getLogger(__name__)


def plugins() -> List[FormatPlugin]:
    global _plugins
    if _plugins is None:
        found: List[FormatPlugin] = []
        for mod in PLUGIN_MODULES:
            try:
                found.append(importlib.import_module(mod, __package__).PLUGIN)
            except Exception as e:  # noqa: BLE001 - any failure is reported, none is fatal
                name = mod.lstrip(".")
                msg = f"the {name} format plugin failed to load: {type(e).__name__}: {e}"
                log.error(msg)
                _failures.append(Finding(Status.ERROR, PLUGIN_FAILED, "", 0, "", msg,
                                         "reinstall arrayscope; report it if it persists"))
        _plugins = found
    return _plugins


def load_failures() -> List[Finding]:
    """One error finding per format plugin that could not be imported."""
    plugins()
    return list(_failures)


def plugin_named(name: Optional[str]) -> Optional[FormatPlugin]:
    for p in plugins():
        if p.name == name:
            return p
    return None


def for_dir(path: str) -> Optional[FormatPlugin]:
    for p in plugins():
        if p.detection.matches_dir(path):
            return p
    return None


def for_file(path: str) -> Tuple[Optional[FormatPlugin], Optional[str]]:
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


def chunk_view(document, node) -> Optional[ChunkView]:
    """The chunk view the document's format offers for `node`, or None."""
    p = plugin_named(getattr(document, "format", None))
    fn = getattr(p, "chunk_view", None)
    if fn is None or node is None:
        return None
    return fn(document, node)


def describe_entry(document, node) -> str:
    """The array browser's words for a folder or file of the document."""
    p = plugin_named(getattr(document, "format", None))
    fn = getattr(p, "describe_entry", None)
    if fn is None:
        from .plugin import generic_entry_text
        return generic_entry_text(node)
    return fn(document, node)


def array_summary(document):
    """The array as a whole (`plugin.SummaryRow`), or None when the format gives none."""
    p = plugin_named(getattr(document, "format", None))
    fn = getattr(p, "array_summary", None)
    return fn(document) if fn is not None else None


def pipeline_hint(document) -> str:
    p = plugin_named(getattr(document, "format", None))
    return getattr(p, "pipeline_hint", "") or "Select a tile or a chunk to see its filter pipeline."


def browser_title(document) -> str:
    """What the document's format calls a directory of it (the Array dock's title)."""
    p = plugin_named(getattr(document, "format", None))
    return getattr(p, "browser_title", "") or "Array"


def source_title(document, name: str) -> Optional[str]:
    """The format's short title for the dataset file `name`, None when its base name will do."""
    p = plugin_named(getattr(document, "format", None))
    fn = getattr(p, "source_title", None)
    return fn(name) if fn is not None else None

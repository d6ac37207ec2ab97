"""Which format opens a path.

Each format package (`formats.tiledb`, `formats.scdl`, `formats.zarr`) exposes a `PLUGIN`
object satisfying `formats.core.plugin.FormatPlugin`. Only `name` and `detection` are required;
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
from typing import Dict, List, NamedTuple, Optional, Tuple

from .findings import PLUGIN_FAILED, Finding
from .plugin import ChunkView, Detection, FormatPlugin
from .status import Status


class Declared(NamedTuple):
    """A format plugin as the registry knows it before importing it: its name, its module
    (relative to this package) and what marks a directory as one of its containers. A
    directory is matched against these declarations, and only the plugin whose markers it
    holds is imported (a command on a TileDB array never imports the Zarr or SCDL code).
    Each plugin's `detection` is its declaration's (one place: `declared(name)`)."""

    name: str
    module: str
    detection: Detection


DECLARED: Tuple[Declared, ...] = (
    # an array's schema folder or (format < 10) schema file; a group's marker file or details
    # folder; fragments or commits without a schema (an array that lost it: tiledb/model/layout.py)
    Declared("tiledb", "..tiledb", Detection(dir_markers=(
        ("__schema/",), ("__array_schema.tdb",), ("__tiledb_group.tdb",), ("__group/",),
        ("__fragments/",), ("__commits/",)))),
    # header.sch, or the three core arrays of a header-less archive (scdl/enums.py)
    Declared("scdl", "..scdl", Detection(dir_markers=(
        ("header.sch",), ("data.npy", "row_ptr.npy", "col_ptr.npy")))),
    Declared("zarr", "..zarr", Detection(dir_markers=((".zarray",), ("zarr.json",),
                                                     (".zgroup",)))),
)
PLUGIN_MODULES = tuple(d.module for d in DECLARED)   # relative to this package
_loaded: Dict[str, Optional[FormatPlugin]] = {}       # module -> plugin (None: failed)
_plugins: Optional[List[FormatPlugin]] = None
_failures: List[Finding] = []


def declared(name: str) -> Declared:
    return next(d for d in DECLARED if d.name == name)


def _load(mod: str) -> Optional[FormatPlugin]:
    """The plugin of module `mod`, imported on first use; None (and a finding) on failure."""
    if mod not in _loaded:
        try:
            _loaded[mod] = importlib.import_module(mod, __package__).PLUGIN
        except Exception as e:  # noqa: BLE001 - any failure is reported, none is fatal
            name = mod.lstrip(".")
            msg = f"the {name} format plugin failed to load: {type(e).__name__}: {e}"
            import logging  # here: only a failure is logged (the import costs ~4 ms)

            logging.getLogger(__name__).error(msg)
            _failures.append(Finding(Status.ERROR, PLUGIN_FAILED, "", 0, "", msg,
                                     "reinstall arrayscope; report it if it persists"))
            _loaded[mod] = None
    return _loaded[mod]


def plugins() -> List[FormatPlugin]:
    """Every plugin, all imported (the window's menus; a path no declaration matched)."""
    global _plugins
    if _plugins is None:
        _plugins = [p for p in (_load(mod) for mod in PLUGIN_MODULES) if p is not None]
    return _plugins


def load_failures() -> List[Finding]:
    """One error finding per format plugin that could not be imported."""
    plugins()
    return list(_failures)


def plugin_named(name: Optional[str]) -> Optional[FormatPlugin]:
    """The plugin called `name`, importing only it."""
    for d in DECLARED:
        if d.name == name and d.module in PLUGIN_MODULES:
            return _load(d.module)
    return None


def for_dir(path: str) -> Optional[FormatPlugin]:
    """The plugin whose declared markers `path` holds, importing only that one."""
    for d in DECLARED:
        if d.module in PLUGIN_MODULES and d.detection.matches_dir(path):
            p = _load(d.module)
            if p is not None:
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
    from .filesystems import fs_of

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

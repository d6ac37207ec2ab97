"""arrayscope's format-annotation engine: pure Python and numpy, no Qt.

`formats.open(path)` returns a Document whose root node explains every byte.
"""
from __future__ import annotations

import os
import stat
from typing import Callable, Optional

from .core.context import Context, load_key
from .core.cursor import Cursor, ParseStop
from .core.document import Document
from .core.fielddoc import FieldDoc, doc
from .core.node import ERROR, OK, WARNING, LazyChildren, Node
from .core.source import ByteSource, BytesSource, FileSource

__all__ = ["open", "Document", "Node", "Cursor", "ParseStop", "FieldDoc", "doc", "Context",
           "ByteSource", "BytesSource", "FileSource", "LazyChildren", "OK", "WARNING", "ERROR",
           "load_key", "Cancelled", "OpenError"]


class OpenError(Exception):
    """The path cannot be opened at all (missing, unreadable)."""


class Cancelled(BaseException):
    """Raised by a `progress` callback to stop `formats.open`; it propagates out of `open`.

    A BaseException (like asyncio.CancelledError): the `except Exception` that turns a parser
    bug into an error node (engine.guarded, run_parser) must not swallow a cancel."""


def open(path: str, key: Optional[bytes] = None, as_format: Optional[str] = None,
         progress: Optional[Callable[[int, int, str], None]] = None,
         tree: bool = True, lazy: bool = False) -> Document:
    """Open a file or directory and annotate it. Raises OpenError only when the path itself
    cannot be read; every problem inside the bytes becomes a node.

    `progress(done, total, name)`, when given, is called after each file is parsed (`name`
    relative to the opened path; `total` may grow while nested arrays are found, `done`
    only grows and the last call has done == total). It runs in the caller's thread and may
    raise `Cancelled`: the document's sources are then closed and `Cancelled` propagates.

    `tree=False` asks a directory format for what `values` decodes from, without the costly
    parts of the tree (TileDB: the model only, a root with no children; Zarr: chunks left
    undecoded), where the format can give it.

    `lazy=True` builds only the top of a large dataset at once, the rest when first shown
    (TileDB: one node per fragment, its files parsed on expansion); built, the tree is the
    eager one (`dump` and `verify` build it all)."""
    if not tree and progress is None and os.path.isdir(path):
        from .core import registry

        plugin = registry.plugin_named(as_format) if as_format else registry.for_dir(path)
        if plugin is not None and hasattr(plugin, "open_model"):
            document = Document(path, Context(key=key))
            document.format = plugin.name
            root = plugin.open_model(document, document.path)
            if root is not None:   # None: this dataset has no model of its own (a group)
                document.root = root
                return document
            document.close()
    if progress is None:
        return _open(path, key, as_format, None, lazy)
    from .core.progress import Progress

    tracker = Progress(progress)
    document = _open(path, key, as_format, tracker, lazy)
    try:
        tracker.finish(os.path.basename(document.path.rstrip(os.sep)) or document.path)
    except Cancelled:
        document.discard()
        raise
    return document


def _check_local(path: str) -> None:
    if not os.path.exists(path):
        raise OpenError(f"{path}: no such file or directory")
    if not os.access(path, os.R_OK):
        raise OpenError(f"{path}: permission denied")
    st = os.stat(path)
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        from .core.dataset_fs import special_name
        raise OpenError(f"{path}: a {special_name(st.st_mode)}, not a file or directory: "
                        f"nothing to open")


# the install extra (pyproject.toml) holding each URL scheme's fsspec back end
_EXTRA_OF_SCHEME = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs",
                    "az": "azure", "abfs": "azure", "abfss": "azure", "adl": "azure"}


def _check_url(url: str):
    """The store of `url`, which names an object or a prefix with objects (listed once:
    formats/core/remote.py); the caller keeps it until the Document holds it."""
    from .core.dataset_fs import MISSING
    from .core.remote import store_for

    try:
        store = store_for(url)
        entry = store.stat(url)
    except ImportError as e:   # the URL's fsspec back end (s3fs, gcsfs, adlfs...) is missing
        extra = _EXTRA_OF_SCHEME.get(url.split("://", 1)[0].lower())
        hint = f" (pip install \"arrayscope[{extra}]\")" if extra else ""
        raise OpenError(f"{url}: {e}{hint}") from e
    except (OSError, ValueError) as e:
        raise OpenError(str(e)) from e
    if entry.kind == MISSING:
        raise OpenError(f"{url}: no such object or prefix")
    return store


def _open(path: str, key: Optional[bytes], as_format: Optional[str], tracker,
          lazy: bool = False) -> Document:
    from .core import plain, registry
    from .core.engine import guarded
    from .core.remote import is_url

    store = None
    if is_url(path):
        store = _check_url(path)   # kept until the Document holds it (it finds it by URL)
    else:
        _check_local(path)
    document = Document(path, Context(key=key))
    del store
    document.progress = tracker
    document.lazy = lazy
    try:
        if document.is_dir:
            found = registry.plugin_named(as_format) if as_format else registry.for_dir(path)
            if found is not None:
                document.format = found.name
                document.root = guarded(lambda: found.open_dir(document, document.path),
                                        os.path.basename(document.path), None)
            elif tracker is None:
                document.root = plain.dir_node(document, document.path)
            else:
                from .core import progress

                def file_fn(doc_, full):
                    node = plain.file_node(doc_, full)
                    progress.step(doc_, full)
                    return node

                progress.plan_tree(document, document.path)
                document.root = plain.dir_node(document, document.path, file_fn)
        else:
            plugin, container = (registry.plugin_named(as_format), None) if as_format \
                else registry.for_file(path)
            if plugin is not None and container:
                from .core.dataset_fs import LocalFS
                document.fs = LocalFS(container)  # the file's context comes from its container
                document.format = plugin.name
                document.root = guarded(
                    lambda: plugin.open_file_in(document, container, document.path),
                    os.path.basename(path), None)
            elif plugin is not None:
                document.format = plugin.name
                document.root = guarded(lambda: plugin.open_file(document, document.path),
                                        os.path.basename(path), None)
            else:
                document.root = plain.file_node(document, document.path)
        if document.format is None and document.root is not None:
            # a format whose plugin failed to load may be what this path is: say so
            for f in registry.load_failures():
                document.root.mark(ERROR, f.message)
                document.root.code = f.code
    except OSError as e:
        raise OpenError(f"{path}: {e.strerror or e}") from e
    except Cancelled:
        document.discard()
        raise
    finally:
        document.progress = None
    return document

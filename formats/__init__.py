"""arrayscope's format-annotation engine: pure Python and numpy, no Qt.

`formats.open(path)` returns a Document whose root node explains every byte.
"""
from __future__ import annotations

import os
from typing import Optional

from .context import Context, load_key
from .cursor import Cursor, ParseStop
from .document import Document
from .fielddoc import FieldDoc, doc
from .node import ERROR, OK, WARNING, LazyChildren, Node
from .source import ByteSource, BytesSource, FileSource

__all__ = ["open", "Document", "Node", "Cursor", "ParseStop", "FieldDoc", "doc", "Context",
           "ByteSource", "BytesSource", "FileSource", "LazyChildren", "OK", "WARNING", "ERROR",
           "load_key"]


class OpenError(Exception):
    """The path cannot be opened at all (missing, unreadable)."""


def open(path: str, key: Optional[bytes] = None, as_format: Optional[str] = None) -> Document:
    """Open a file or directory and annotate it. Raises OpenError only when the path itself
    cannot be read; every problem inside the bytes becomes a node."""
    from . import plain, registry
    from .engine import guarded

    if not os.path.exists(path):
        raise OpenError(f"{path}: no such file or directory")
    if not os.access(path, os.R_OK):
        raise OpenError(f"{path}: permission denied")
    document = Document(path, Context(key=key))
    try:
        if document.is_dir:
            plugin = registry.plugin_named(as_format) if as_format else registry.for_dir(path)
            if plugin is not None:
                document.format = plugin.name
                document.root = guarded(lambda: plugin.open_dir(document, document.path),
                                        os.path.basename(document.path), None)
            else:
                document.root = plain.dir_node(document, document.path)
        else:
            plugin, container = (registry.plugin_named(as_format), None) if as_format \
                else registry.for_file(path)
            if plugin is not None and container:
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
    except OSError as e:
        raise OpenError(f"{path}: {e.strerror or e}") from e
    return document

"""Files no format claims: plain bytes, and directories of them."""
from __future__ import annotations

import os

from .dataset_fs import entry_node, mark_unlistable
from .fielddoc import doc
from .node import WARNING, Node, hex_preview

PLAIN_DOC = doc("Bytes of a file that no known format claims; use 'parse as' to choose one.")


def file_node(document, path: str, message: str = "no format recognised for this file") -> Node:
    src = document.open_source(path)
    node = Node(os.path.basename(path), "file", src, 0, src.size)
    if src.size:
        node.add(Node("unparsed", "unparsed", src, 0, src.size, status=WARNING, message=message,
                      display=hex_preview(src.read(0, 16)), doc=PLAIN_DOC))
    return node


def dir_node(document, path: str, file_fn=None, skip=()) -> Node:
    """A node for a directory whose children are its entries (sorted), files through
    `file_fn(document, path)` (default: plain bytes)."""
    file_fn = file_fn or file_node
    # A directory has no bytes: its "source" is its path relative to the opened path.
    node = Node(os.path.basename(path.rstrip(os.sep)) or path, "dir", document.relname(path), 0, 0)
    try:
        entries = document.fs.list(path)
    except OSError as e:
        mark_unlistable(node, e)
        return node
    for entry in entries:
        if entry.name in skip:
            continue
        if entry.is_dir:
            node.add(dir_node(document, entry.path, file_fn, skip))
        elif entry.is_file:
            node.add(file_fn(document, entry.path))
        else:
            node.add(entry_node(document, entry))
    return node

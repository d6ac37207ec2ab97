"""One opened file or directory: its sources, its root node and its diagnostics."""
from __future__ import annotations

import os
import posixpath
from typing import Dict, List, Optional, Set

from . import engine
from .confined import relative_to
from .context import Context
from .dataset_fs import DatasetFS, LocalFS
from .node import Node
from .remote import is_url, store_for
from .source import ByteSource, BytesSource


class Document:
    """Everything the views show of one opened path.

    Sources are opened read-only (mmap ACCESS_READ) and named by their path relative to the
    opened path; derived sources (decompressed payloads, filter-stage outputs) get unique
    names of their own and remember the node they came from.
    """

    def __init__(self, path: str, ctx: Optional[Context] = None):
        self.fs: DatasetFS
        if is_url(path):   # a dataset on an object store (formats/core/remote.py): paths stay URLs
            self.path = path.rstrip("/") or path
            self.fs = store_for(self.path)
            self.is_dir = self.fs.stat(self.path).is_dir
            self.base = self.path if self.is_dir else posixpath.dirname(self.path)
        else:
            self.path = os.path.abspath(path)
            self.is_dir = os.path.isdir(self.path)
            self.base = self.path if self.is_dir else os.path.dirname(self.path)
            # Every file the walkers list or open goes through `fs`, confined to the dataset
            # (a single file's container re-roots it: formats.open).
            self.fs = LocalFS(self.base)
        self.ctx = ctx or Context()
        self.ctx.root_path = self.path
        self.sources: List[ByteSource] = []
        self.derived: List[ByteSource] = []
        self._derived_ids: Set[int] = set()   # ids of `derived`: O(1) lookups, 10 000s of them
        self._names: Dict[str, ByteSource] = {}
        self.root: Optional[Node] = None
        self.format: Optional[str] = None
        self.model = None  # format-specific model (e.g. the TileDB array) for values/verify
        self.progress = None  # formats.core.progress.Progress while formats.open reports progress
        self.lazy = False     # build large parts when first shown (formats.open(lazy=True))

    # ---- sources -----------------------------------------------------------------------
    def relname(self, path: str) -> str:
        if is_url(self.path):
            path = path.rstrip("/")
            if path == self.path:
                return "." if self.is_dir else posixpath.basename(path)
            return path[len(self.base) + 1:] if path.startswith(self.base + "/") else path
        path = os.path.abspath(path)
        if self.is_dir:
            rel = relative_to(path, self.path)
            return "." if rel == "." else rel.replace(os.sep, "/")
        return os.path.basename(path) if path == self.path else os.path.relpath(path, self.base)

    def open_source(self, path: str) -> ByteSource:
        """The source of file `path` of the dataset (OSError when it is not a regular file
        inside the dataset: see dataset_fs)."""
        name = self.relname(path)
        known = self._names.get(name)
        if known is not None and id(known) not in self._derived_ids:
            return known
        src = self.fs.open_source(path, name)
        self.sources.append(src)
        self._names[name] = src
        return src

    def listed_name(self, entry) -> str:
        """`relname` of an entry just listed by `fs.list`: the listing's own relative name
        where it is the same (no path arithmetic per entry: 10 000 fragment folders)."""
        same_root = self.is_dir and isinstance(self.fs, LocalFS) and self.fs.root == self.path
        return entry.rel if same_root else self.relname(entry.path)

    def open_listed(self, entry) -> ByteSource:
        """`open_source` for a regular file just listed by `fs.list` (a dataset_fs.Entry):
        its confinement was judged by the listing, so it is not judged again (a lazy open
        of 10 000 fragments makes 10 000 commit-file nodes)."""
        name = self.listed_name(entry)
        known = self._names.get(name)
        if known is not None and id(known) not in self._derived_ids:
            return known
        if not isinstance(self.fs, LocalFS) or not entry.real or not entry.is_file:
            return self.open_source(entry.path)
        from .source import FileSource

        src = FileSource(entry.real, name, self.fs.real_root)   # reopened beneath the root
        self.sources.append(src)
        self._names[name] = src
        return src

    def add_derived(self, data, name: str, origin: str = "", origin_node: Optional[Node] = None,
                    parent: Optional[ByteSource] = None) -> BytesSource:
        unique, k = name, 2
        while unique in self._names:
            unique = f"{name} #{k}"
            k += 1
        src = BytesSource(data, unique, origin=origin, origin_node=origin_node, parent=parent)
        self.derived.append(src)
        self._derived_ids.add(id(src))
        self._names[unique] = src
        return src

    def remove_derived(self, source) -> bool:
        """Forget derived source `source` (the window closed a filter-stage tab): it leaves
        `derived` and its name is free again. Returns False when it is not a derived source
        of this document. Nodes that point into it are the caller's to detach."""
        for i, s in enumerate(self.derived):
            if s is source:
                del self.derived[i]
                self._derived_ids.discard(id(s))
                name = getattr(source, "name", None)
                if name is not None and self._names.get(name) is source:
                    del self._names[name]
                return True
        return False

    def source_by_name(self, name: str) -> Optional[ByteSource]:
        return self._names.get(name)

    def source_name(self, src) -> str:
        return getattr(src, "name", str(src))

    # ---- results -----------------------------------------------------------------------
    def diagnostics(self) -> List[Node]:
        return engine.diagnostics(self.root) if self.root is not None else []

    def coverage(self) -> Dict[str, tuple]:
        """{source name: (covered bytes, size)} for every file source."""
        covered = engine.coverage_all(self.root) if self.root is not None else {}
        return {s.name: (covered.get(id(s), 0), s.size) for s in self.sources}

    def close(self) -> None:
        for s in self.sources:
            s.close()
        self.sources.clear()

    def discard(self) -> None:
        """Close and forget everything (an open that was cancelled half-way)."""
        self.close()
        self.derived.clear()
        self._derived_ids.clear()
        self._names.clear()
        self.root = None
        self.model = None
        self.ctx.format = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

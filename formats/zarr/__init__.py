"""Zarr v2/v3 arrays with struct dtypes, to the byte (see formats/core/registry.py's protocol).

Modules: `dtype` (field tables from every metadata form), `fill` (fill records), `meta`
(.zarray / zarr.json), `codecs/` (reversible codec stages: zstd, blosc, zlib, gzip, lz4,
shuffle, ...), `chunk` (a chunk file's stages and records: decoded at open for a small array,
on demand for a large one), `records` (record nodes, byte-order check), `tree` (array and
group directories), `values` (the `values` command).
"""
from __future__ import annotations

import os
from typing import List, Optional

from ..core import progress
from ..core.node import Node
from ..core.plugin import generic_entry_text
from ..core.remote import is_url
from . import tree
from .tree import METADATA_NAMES, ZarrContext, ZarrModel

KNOWN_FILES = {".zarray": "Zarr v2 array metadata", ".zattrs": "Zarr v2 attributes",
               ".zgroup": "Zarr v2 group metadata", ".zmetadata": "Zarr consolidated metadata",
               "zarr.json": "Zarr v3 metadata"}


class ZarrPlugin:
    name = "zarr"
    detection = tree.DETECTION
    pipeline_hint = "Select a chunk file (or a record) to see its codec chain and its records."
    browser_title = "Hierarchy"

    @staticmethod
    def source_title(name: str) -> Optional[str]:
        """A chunk key ("c/0/1", "0.1" under a group): the whole key says which chunk."""
        parts = name.split("/")
        if len(parts) > 1 and len(parts[-1]) <= 4:
            return name if len(name) <= 28 else "…" + name[-27:]
        return None

    # ---- detection -----------------------------------------------------------------------

    def container_of(self, path: str) -> Optional[str]:
        if is_url(path) or os.path.isdir(path):
            return None   # a remote chunk opens with its array's URL
        base = os.path.basename(path)
        d = os.path.dirname(os.path.abspath(path))
        if base in METADATA_NAMES and tree.node_kind(d) is not None:
            return d
        return tree.find_array_dir(path)

    def sniff(self, head: bytes, path: str) -> bool:
        return os.path.basename(path) in METADATA_NAMES

    # ---- opening ---------------------------------------------------------------------------
    def open_model(self, document, path: str) -> Node:
        """The tree with every chunk left undecoded (`values` decodes them once, itself)."""
        from ..core.engine import guarded

        document.ctx.of(ZarrContext).lazy_chunks = True
        return guarded(lambda: self.open_dir(document, path), os.path.basename(path), None)

    def open_dir(self, document, path: str) -> Node:
        model = ZarrModel()
        document.model = model
        progress.plan_tree(document, path)
        root = tree.open_any(document, path, model)
        rel = document.relname(path)
        if rel in model.arrays:
            model.root_array = rel
        return root

    def open_file_in(self, document, container: str, path: str) -> Node:
        model = ZarrModel()
        document.model = model
        base = os.path.basename(path)
        if base in METADATA_NAMES and os.path.dirname(os.path.abspath(path)) == container:
            if base in (".zarray", "zarr.json") and tree.node_kind(container) == "array":
                node, meta = tree.load_meta(document, container)
                if meta is not None and meta.rtype is not None:
                    tree.add_fill_record(document, meta)
                if node is not None:
                    return node
            return tree.json_file(document, path)[0]
        # a chunk file: its array's metadata gives the context (parsed, not shown)
        from ..core import jsontree
        from ..core.plain import file_node
        from . import meta as meta_mod
        za = os.path.join(container, ".zarray")
        mpath = za if document.fs.stat(za).is_file else os.path.join(container, "zarr.json")
        try:
            msrc = document.fs.open_source(mpath, os.path.basename(mpath))
        except OSError as e:
            return file_node(document, path, f"the array's metadata cannot be read: {e}")
        try:
            jd = jsontree.parse(msrc, Node("metadata", "file", msrc, 0, msrc.size))
            meta = (meta_mod.from_zarray if mpath == za else meta_mod.from_zarr_json)(container, jd)
        finally:
            msrc.close()
        key = os.path.relpath(os.path.abspath(path), container).replace(os.sep, "/")
        coords = meta.coords_of(key) if meta.chunks or meta.ndim == 0 else None
        if coords is None:
            return file_node(document, path, f"not a chunk key of the array at {container}")
        from .chunk import chunk_file_node
        return chunk_file_node(document, meta, path, coords, key)

    def open_file(self, document, path: str) -> Node:
        return tree.json_file(document, path)[0]

    # ---- the window ------------------------------------------------------------------------
    def describe_entry(self, document, node: Node) -> str:
        return generic_entry_text(node, KNOWN_FILES)

    def chunk_view(self, document, node: Node):
        from .chunkview import chunk_view

        return chunk_view(document, node)

    # ---- values ----------------------------------------------------------------------------
    def _arrays(self, document):
        model = document.model if isinstance(document.model, ZarrModel) else None
        if model is None:
            return []
        return list(model.arrays.items())

    def field_names(self, document) -> List[str]:
        arrays = self._arrays(document)
        model = document.model
        out: List[str] = []
        for rel, meta in arrays:
            if meta.rtype is None and not meta.vlen:
                continue
            names = ["value"] if meta.vlen else meta.rtype.field_names()
            if model.root_array == rel and len(arrays) == 1:
                out.extend(names)
            else:
                out.extend(f"{rel}/{n}" for n in names)
        return out

    def values(self, document, name: str, with_values: bool = True) -> List[dict]:
        from .values import values
        arrays = dict(self._arrays(document))
        model = document.model
        if model.root_array is not None and len(arrays) == 1:
            rel, field = model.root_array, name
        else:
            # field names may hold '/' themselves (scanpy's 'CD4+/CD25 T Reg'): the array is
            # the longest member path that prefixes the name
            rel, field = "", name
            for r in sorted(arrays, key=len, reverse=True):
                if name.startswith(r + "/"):
                    rel, field = r, name[len(r) + 1:]
                    break
            if rel not in arrays:
                raise KeyError(name)
        meta = arrays[rel]
        entry_name = os.path.basename(meta.path.rstrip(os.sep))
        return [values(meta, field, entry_name, with_values=with_values, fs=document.fs)]

    def verify(self, document) -> List[Node]:
        from .verify import verify

        return verify(document)

    @property
    def verify_units(self):
        from .verify import VERIFY_UNITS

        return VERIFY_UNITS


PLUGIN = ZarrPlugin()

"""TileDB arrays: every file of an array directory, annotated to the byte."""
from __future__ import annotations

import os
from typing import Optional

from .model import layout


class _TileDBPlugin:
    name = "tiledb"
    detection = layout.DETECTION
    pipeline_hint = "Select a tile or a chunk to see its filter pipeline."
    browser_title = "Array"

    @staticmethod
    def source_title(name: str) -> Optional[str]:
        """A fragment's file (`__t1_t2_uuid_v/a0.tdb`): which fragment, by the tail of its
        first timestamp, beside the file."""
        parts = name.split("/")
        if len(parts) > 1 and parts[-1].endswith(".tdb") and parts[-2].startswith("__") \
                and len(parts[-2]) > 20:
            frag = parts[-2].split("_")
            if len(frag) > 2 and frag[2].isdigit():
                return f"…{frag[2][-5:]}/{parts[-1]}"
        return None

    def open_dir(self, document, path: str):
        if not layout.is_array_dir(path) and layout.is_group_dir(path):
            from .parse.group import open_group_dir

            return open_group_dir(document, path)
        from .parse.array import open_array_dir

        return open_array_dir(document, path)

    def open_model(self, document, path: str):
        """The array model only (schemas, fragments; metadata read on use): for `values`.
        A group's tree is already lazy (members open on demand): it is the model."""
        if not layout.is_array_dir(path) and layout.is_group_dir(path):
            from .parse.group import open_group_dir

            return open_group_dir(document, path)
        from .model.model_loader import open_array_model

        return open_array_model(document, path)

    def container_of(self, path: str):
        return layout.group_dir_of(path) or layout.array_dir_of(path)

    def open_file_in(self, document, container: str, path: str):
        if layout.group_dir_of(path) == container:
            from .parse.group import open_group_file

            return open_group_file(document, container, path)
        from .parse.array import open_file_in_array

        return open_file_in_array(document, container, path)

    def sniff(self, head: bytes, path: str) -> bool:
        # A stray generic tile: u32 version (1..40), then sizes; or a known file name.
        name = os.path.basename(path)
        if name == layout.FRAGMENT_METADATA_FILE or layout.TIMESTAMPED_RE.match(name):
            return True
        if len(head) >= 34:
            version = int.from_bytes(head[0:4], "little")
            dtype, enc = head[20], head[29]
            return 1 <= version <= 40 and dtype < 44 and enc in (0, 1)
        return False

    def open_file(self, document, path: str):
        from .parse.stray import open_stray_file

        return open_stray_file(document, path)

    def field_names(self, document):
        from .model.group_walk import is_group_document
        from .values import field_values as v

        return [] if is_group_document(document) else v.field_names(document.model)

    def values(self, document, name: str, with_values: bool = True, buffers=None):
        """(`buffers`: where the cells are decoded into, `field_values.values`; `values
        --raw` gives its output file's.)"""
        from .values import field_values as v

        return v.values(document, name, document.ctx.key, with_values, buffers)

    def health(self, document, at=None, reader=None):
        from .health.array import array_health

        return None if _is_group(document) else array_health(document, at, reader)

    def extents(self, document):
        from .health.array import array_extents

        return None if _is_group(document) else array_extents(document)

    def space(self, document):
        from .health.space import array_space

        return None if _is_group(document) else array_space(document)

    def group_health(self, document, at=None, reader=None, member=None):
        from .health.group_health import group_health

        return group_health(document, at, reader, member) if _is_group(document) else None

    def group_space(self, document, member=None):
        from .health.group_health import group_space

        return group_space(document, member) if _is_group(document) else None

    def group_arrays(self, document):
        from .health.group_health import arrays_of

        return arrays_of(document) if _is_group(document) else None

    def member_document_light(self, document, path: str):
        from .health.group_health import member_document

        return member_document(document, path)

    def array_summary(self, document):
        from .window.summary import array_summary

        return None if _is_group(document) else array_summary(document)

    def describe_entry(self, document, node):
        from .window.entries import describe_entry

        return describe_entry(document, node)

    def chunk_view(self, document, node):
        from .window.chunkview import chunk_view

        return chunk_view(document, node)

    def verify(self, document):
        from .model.group_walk import is_group_document, verify_group

        if is_group_document(document):
            return verify_group(document)
        from .verify.array_verify import verify_array

        return verify_array(document)

    @property
    def verify_units(self):
        from .verify.verify_units import VERIFY_UNITS

        return VERIFY_UNITS

    def can_stream(self, document) -> bool:
        """Whether `verify_streamed` applies: a lazily opened local array (a group's members
        and remote arrays take the whole-tree path)."""
        from ..core.remote import is_url
        from .model.group_walk import is_group_document

        return bool(getattr(document, "lazy", False)) and document.model is not None and \
            document.root is not None and not is_url(document.path) and \
            not is_group_document(document)

    def verify_streamed(self, document):
        """`verify` with the diagnostics, one fragment built at a time; None when it does
        not apply (`can_stream`)."""
        if not self.can_stream(document):
            return None
        from .verify.array_verify import verify_streamed

        return verify_streamed(document)

    def member_names(self, document):
        from .model.group_walk import array_member_paths, is_group_document

        return array_member_paths(document.root) if is_group_document(document) else []

    def member_document(self, document, member_path: str):
        from .model.group_walk import is_group_document, member_document

        if not is_group_document(document):
            raise LookupError("not a TileDB group: --array names a member of a group")
        return member_document(document, member_path)


def _is_group(document) -> bool:
    """A group has no fragments of its own (health, extents, space are its arrays')."""
    path = getattr(document, "path", "")
    return layout.is_group_dir(path) and not layout.is_array_dir(path)


PLUGIN = _TileDBPlugin()

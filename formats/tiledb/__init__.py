"""TileDB arrays: every file of an array directory, annotated to the byte."""
from __future__ import annotations

import os

from . import layout


class _TileDBPlugin:
    name = "tiledb"

    def detect_dir(self, path: str) -> bool:
        return layout.is_array_dir(path)

    def open_dir(self, document, path: str):
        from .array import open_array_dir

        return open_array_dir(document, path)

    def open_model(self, document, path: str):
        """The array model only (schemas, fragments; metadata read on use): for `values`."""
        from .model_loader import open_array_model

        return open_array_model(document, path)

    def container_of(self, path: str):
        return layout.array_dir_of(path)

    def open_file_in(self, document, container: str, path: str):
        from .array import open_file_in_array

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
        from .stray import open_stray_file

        return open_stray_file(document, path)

    def field_names(self, document):
        from . import values as v

        return v.field_names(document.model)

    def values(self, document, name: str, with_values: bool = True):
        from . import values as v

        return v.values(document, name, document.ctx.key, with_values)

    def verify(self, document):
        try:
            from .checks import verify_array
        except ImportError:
            return []
        return verify_array(document)


PLUGIN = _TileDBPlugin()

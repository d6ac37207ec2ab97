"""SCDL archives (bionemo-scdl single-cell memmap datasets), to the byte.

Modules: `enums` (ArrayDType, Backend, file names), `header` (header.sch), `arrays` (the raw
array files), `parquet` (+ `thrift_compact`), `archive` (the directory and its files),
`checks` (cross-file validation), `values` (the `values` command), `model`.
NPY files of the feature folders are annotated by `formats.core.npy`, JSON files by
`formats.core.jsontree`.
"""
from __future__ import annotations

from ..core.plugin import generic_entry_text
from . import archive as _archive
from . import values as _values
from .enums import METADATA_FILE, VERSION_FILE

KNOWN_FILES = {METADATA_FILE: "SCDL metadata", VERSION_FILE: "SCDL version"}


class _ScdlPlugin:
    name = "scdl"

    detection = _archive.DETECTION
    pipeline_hint = ("SCDL arrays are stored raw (no filters, no codecs): their values are the "
                     "tree's nodes and the hex view's bytes.")
    browser_title = "Archive"
    open_dir = staticmethod(_archive.open_dir)
    container_of = staticmethod(_archive.container_of)
    open_file_in = staticmethod(_archive.open_file_in)
    sniff = staticmethod(_archive.sniff)
    open_file = staticmethod(_archive.open_file)
    field_names = staticmethod(_values.field_names)
    values = staticmethod(_values.values)

    @staticmethod
    def describe_entry(document, node):
        return generic_entry_text(node, KNOWN_FILES)

    @staticmethod
    def chunk_view(document, node):
        """SCDL arrays are stored raw: no chunks, no stages."""
        return None

    @staticmethod
    def verify(document):
        """Every SCDL check is a node of the tree already."""
        return []

    verify_units = None   # nothing to split: verify is the tree's own diagnostics


PLUGIN = _ScdlPlugin()

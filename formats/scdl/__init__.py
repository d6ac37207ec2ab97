"""SCDL archives (bionemo-scdl single-cell memmap datasets), to the byte.

Modules: `enums` (ArrayDType, Backend, file names), `header` (header.sch), `arrays` (the raw
array files), `parquet` (+ `thrift_compact`), `archive` (the directory and its files),
`checks` (cross-file validation), `values` (the `values` command), `model`.
NPY files of the feature folders are annotated by `formats.npy`, JSON files by
`formats.jsontree`.
"""
from __future__ import annotations

from . import archive as _archive
from . import values as _values


class _ScdlPlugin:
    name = "scdl"

    detect_dir = staticmethod(_archive.detect_dir)
    open_dir = staticmethod(_archive.open_dir)
    container_of = staticmethod(_archive.container_of)
    open_file_in = staticmethod(_archive.open_file_in)
    sniff = staticmethod(_archive.sniff)
    open_file = staticmethod(_archive.open_file)
    field_names = staticmethod(_values.field_names)
    values = staticmethod(_values.values)

    @staticmethod
    def verify(document):
        """Every SCDL check is a node of the tree already."""
        return []


PLUGIN = _ScdlPlugin()

"""The filter model: one `Filter` per TileDB filter type, driven by the pipeline runner.

A chunk between two filters is a `Stage`: metadata parts and data parts, exactly TileDB's
FilterBuffer model (a filter that passes earlier metadata through prepends its own part).
On disk a chunk holds the last stage's metadata and data, each concatenated.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..cursor import Cursor


class FilterError(Exception):
    """A stage that cannot be reversed or applied: corrupt bytes, wrong key, bad checksum.

    `where` is the offset inside the stage's concatenated [metadata][data] bytes, when known."""

    def __init__(self, message: str, where: Optional[int] = None):
        super().__init__(message)
        self.where = where


@dataclass
class FilterSpec:
    """One filter as serialized in a pipeline: its type and decoded options.

    Option keys: `compressor`, `level`, `reinterpret` (a datatype), `max_window`, `scale`,
    `offset`, `byte_width`, `quality`, `format`, `lossless`, `y_extent`, `x_extent`."""

    type: int
    options: Dict[str, object] = field(default_factory=dict)

    @property
    def name(self) -> str:
        from ..tiledb.enums import FILTER_TYPES

        return FILTER_TYPES.get(self.type, f"UNKNOWN_{self.type}")


@dataclass
class DataInfo:
    """What the filters need to know about the values in a tile.

    `datatype` is the TileDB datatype of the values the pipeline's first filter sees
    (the attribute's type, UINT64 for offsets, UINT8 for validity, CHAR for generic tiles);
    `cell_val_num` is the attribute's values per cell (VAR_NUM for var-sized);
    `role` is one of attribute, dimension, coords, offsets, validity, generic."""

    datatype: int = 4
    cell_val_num: int = 1
    role: str = "attribute"
    var: bool = False

    @property
    def value_size(self) -> int:
        from ..tiledb.enums import datatype_size

        return datatype_size(self.datatype)


@dataclass
class Stage:
    metadata: List[bytes] = field(default_factory=list)
    data: List[bytes] = field(default_factory=list)

    @property
    def metadata_bytes(self) -> bytes:
        return b"".join(self.metadata)

    @property
    def data_bytes(self) -> bytes:
        return b"".join(self.data)

    @property
    def nbytes(self) -> int:
        return sum(map(len, self.metadata)) + sum(map(len, self.data))


@dataclass
class RunContext:
    """Per-run inputs: the AES key, and the chunk's declared original length (decompression
    never produces more)."""

    key: Optional[bytes] = None
    original_length: Optional[int] = None


class Filter:
    """Base class. Subclasses set `type`, and override what they do."""

    type: int = -1
    # True when this filter's own metadata is followed by the previous filters' metadata
    # (on disk); False when earlier metadata is folded into its data (compressors, AES).
    passes_metadata: bool = True
    # True when forward output is a function of the input alone (compressors may differ
    # by library version; they are checked by decoding instead).
    deterministic: bool = True

    def output_datatype(self, spec: FilterSpec, datatype: int) -> int:
        """The datatype the next filter sees."""
        return datatype

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        """Add nodes for this filter's own chunk metadata at `cur` (default: none)."""

    def reverse(self, spec: FilterSpec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        raise FilterError(f"reversing {spec.name} is not supported")

    def forward(self, spec: FilterSpec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        raise FilterError(f"applying {spec.name} is not supported")

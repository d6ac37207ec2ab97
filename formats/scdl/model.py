"""What the SCDL parsers learn from one archive: the header's descriptors and the files,
with the nodes that hold them (so cross-file checks can put their findings on the bytes)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..core.node import Node
from ..core.source import ByteSource


@dataclass
class ArrayDesc:
    """One array descriptor of header.sch (or a legacy default when there is no header)."""

    name: str
    length: Optional[int]          # None: not recorded (legacy archive, neighbour files)
    dtype: Optional[int]           # ArrayDType number; None: legacy/neighbour (see `numpy`)
    numpy: Optional[str]           # numpy dtype of the raw file, little-endian; None: untypable
    shape: Optional[Tuple[int, ...]] = None
    node: Optional[Node] = None    # the descriptor's struct node in header.sch
    length_node: Optional[Node] = None
    dtype_node: Optional[Node] = None
    source_of_dtype: str = "header.sch"   # or "legacy default", "library hard-coded"


@dataclass
class FeatureIndexDesc:
    name: str
    length: int
    dtype: int
    files: List[str]
    shape: Optional[Tuple[int, ...]] = None
    node: Optional[Node] = None
    length_node: Optional[Node] = None
    file_nodes: List[Node] = field(default_factory=list)


@dataclass
class Header:
    version: Tuple[int, int, int] = (0, 0, 0)
    arrays: List[ArrayDesc] = field(default_factory=list)
    feature_indices: List[FeatureIndexDesc] = field(default_factory=list)
    complete: bool = False          # parsed to the end without a fatal error
    node: Optional[Node] = None


@dataclass
class ArrayFile:
    """A raw array file as parsed: its descriptor, its source and its typed items."""

    desc: ArrayDesc
    path: str
    source: Optional[ByteSource] = None
    node: Optional[Node] = None
    items: Optional[np.ndarray] = None  # numpy view of the whole items in the file (header dtype)


@dataclass
class Archive:
    path: str
    header: Optional[Header] = None     # None: no header.sch (legacy archive)
    header_source: object = None
    arrays: Dict[str, ArrayFile] = field(default_factory=dict)     # by descriptor name
    metadata_num_rows: Optional[int] = None
    metadata_node: Optional[Node] = None
    feature_dirs: Dict[str, "FeatureDir"] = field(default_factory=dict)


@dataclass
class FeatureDir:
    """A feature-index folder: the row blocks and the feature count of each block."""

    name: str
    cumsum: Optional[list] = None           # cumulative_sum_index.npy values
    cumsum_node: Optional[Node] = None
    parquet_rows: Dict[str, Optional[int]] = field(default_factory=dict)   # file -> num_rows
    parquet_nodes: Dict[str, Node] = field(default_factory=dict)

"""The filter model: one `Filter` per TileDB filter type, driven by the pipeline runner.

A chunk between two filters is a `Stage`: metadata parts and data parts, exactly TileDB's
FilterBuffer model (a filter that passes earlier metadata through prepends its own part).
On disk a chunk holds the last stage's metadata and data, each concatenated.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..core.cursor import Cursor
from ..core.fielddoc import FieldDoc
from . import enums as E
from .options import Option, read_options
from .options import defaults as option_defaults
from .options import describe as describe_options


class FilterError(Exception):
    """A stage that cannot be reversed or applied: corrupt bytes, wrong key, bad checksum.

    `where` is the offset inside the stage's concatenated [metadata][data] bytes, when known;
    `kind` tells apart what is not damage: NO_KEY (encrypted, no key given), TAG (an AES-GCM
    tag fails: a wrong key or changed bytes), NO_CODEC (a codec this install lacks)."""

    NO_KEY, TAG, NO_CODEC = "no-key", "aes-tag", "no-codec"

    def __init__(self, message: str, where: Optional[int] = None, kind: Optional[str] = None):
        super().__init__(message)
        self.where = where
        self.kind = kind


@dataclass
class FilterSpec:
    """One filter as serialized in a pipeline: its type and decoded options.

    Option keys: `compressor`, `level`, `reinterpret` (a datatype), `max_window`, `scale`,
    `offset`, `byte_width`, `quality`, `format`, `lossless`, `y_extent`, `x_extent`."""

    type: int
    options: Dict[str, Any] = field(default_factory=dict)  # values of the declared Options

    @property
    def name(self) -> str:
        return E.FILTER_TYPES.get(self.type, f"UNKNOWN_{self.type}")


@dataclass
class DataInfo:
    """What the filters need to know about the values in a tile.

    `datatype` is the TileDB datatype of the values the pipeline's first filter sees
    (the attribute's type, UINT64 for offsets, UINT8 for validity, CHAR for generic tiles);
    `cell_val_num` is the attribute's values per cell (VAR_NUM for var-sized);
    `role` is one of attribute, dimension, coords, offsets, validity, generic."""

    datatype: int = E.Datatype.CHAR
    cell_val_num: int = 1
    role: str = "attribute"
    var: bool = False
    # The tile's own datatype (what the first filter saw); `datatype` changes along the
    # pipeline (SCALE_FLOAT, XOR, reinterpreting deltas) but the tile's cell size does not.
    tile_datatype: Optional[int] = None
    # The format version of the fragment the tile belongs to (None: not known, take
    # `RunContext.format_version`). Filters behave by the *writer's* version (libtiledb's
    # `tile.format_version()`): e.g. RLE on a var UTF-8 tile of a format-16 fragment is the
    # plain byte RLE, with a normal offsets tile (checked on 2.13 bytes), though a 2.30
    # reader sees the same array. Carried along the pipeline by `stage_infos`.
    format_version: Optional[int] = None

    @property
    def value_size(self) -> int:
        return E.datatype_size(self.datatype)

    @property
    def base_datatype(self) -> int:
        return self.datatype if self.tile_datatype is None else self.tile_datatype

    @property
    def cell_size(self) -> int:
        """TileDB's `tile.cell_size()`: what RLE runs are made of. Offsets tiles hold u64
        cells, validity and generic tiles 1-byte cells, var data tiles one value per cell
        and fixed tiles `cell_val_num` values."""
        if self.role == "offsets":
            return 8
        if self.role in ("validity", "generic"):
            return 1
        size = E.datatype_size(self.base_datatype)
        if self.var or self.cell_val_num in (E.VAR_NUM, 0):
            return size
        return size * max(1, int(self.cell_val_num))

    @property
    def var_strings(self) -> bool:
        """Var-sized ASCII/UTF-8 data: RLE and DICTIONARY then encode the cell offsets
        inside the var tile (and the offsets tile is written with 0 chunks)."""
        return (self.var and self.base_datatype in (E.Datatype.STRING_ASCII, E.Datatype.STRING_UTF8)
                and self.role in ("attribute", "dimension"))


@dataclass
class Stage:
    metadata: List[bytes] = field(default_factory=list)
    data: List[bytes] = field(default_factory=list)
    # The cell offsets (u64, relative to the tile) that RLE / DICTIONARY rebuilt from a
    # var-sized string tile; None everywhere else.
    offsets: Optional[bytes] = None
    # Forward only: (offset, length) ranges of `metadata_bytes` that libtiledb leaves
    # uninitialised (BIT_WIDTH_REDUCTION's offset of a window whose range is the whole
    # type), so stored bytes there are whatever was in memory; `unverifiable` is set once a
    # compressor or cipher folded such bytes into its output.
    uninitialised: List[Tuple[int, int]] = field(default_factory=list)
    unverifiable: bool = False
    # Forward only: known writer bugs this encoding reproduced (the forward check reports
    # them when the stored bytes match it).
    notes: List[str] = field(default_factory=list)
    # Reverse only: bytes at the end of the filter's input metadata that it neither read nor
    # passed on (libtiledb ignores them too: `unread.py`)
    unread: int = 0

    @property
    def metadata_bytes(self) -> bytes:
        return b"".join(self.metadata)

    @property
    def data_bytes(self) -> bytes:
        return b"".join(self.data)

    @property
    def nbytes(self) -> int:
        return sum(map(len, self.metadata)) + sum(map(len, self.data))

    def passed_on(self) -> "Stage":
        """This stage as a filter that passes its input on (NOOP, a checksum's parts,
        a window filter that does not apply) gives it: libtiledb's
        `FilterBuffer::append_view` views the bytes from the first byte to the last, so
        empty parts before and after them are dropped, and no bytes are no part."""
        return Stage(_views(self.metadata), _views(self.data), offsets=self.offsets)


def _views(parts: List[bytes]) -> List[bytes]:
    full = [i for i, p in enumerate(parts) if len(p)]
    return list(parts[full[0]:full[-1] + 1]) if full else []


@dataclass
class RunContext:
    """Per-run inputs: the AES key, and the chunk's declared original length (decompression
    never produces more)."""

    key: Optional[bytes] = None
    original_length: Optional[int] = None
    # Forward only: the u64 cell offsets of a var-sized string tile (RLE / DICTIONARY
    # encode cell boundaries); reverse rebuilds them into `Stage.offsets`.
    offsets: Optional[bytes] = None
    # The array's format version (RLE/DICTIONARY string encoding needs 12/13+, ASCII; 17+ UTF-8;
    # BIT_WIDTH_REDUCTION / POSITIVE_DELTA reduce datetimes from 20).
    format_version: int = 22
    # Forward only: the name of the `WriterRule` to encode by (None: the filter's first,
    # i.e. the newest writer's rule).
    writer_rule: Optional[str] = None

    def size_limit(self) -> int:
        """The most bytes any intermediate stage of this chunk may hold: a bound for sizes
        read from (possibly corrupt) metadata, so nothing huge is ever allocated."""
        if self.original_length is None:
            return 1 << 28
        return 4 * int(self.original_length) + (1 << 20)


@dataclass(frozen=True)
class WriterRule:
    """One way released writers of some format versions apply a filter forward. Most filters
    have one; where libtiledb changed its encoder without a new format version, the forward
    check must accept each rule a writer of the fragment's version used, and say which one
    matched. `accepts(made, stored)` replaces byte equality where the writer's output is not
    reproducible at all (bytes read past the input)."""

    name: str
    first_format: int = 0
    last_format: int = 1 << 30
    accepts: Optional[Callable[["Stage", "Stage"], bool]] = None
    note: str = ""   # a known writer bug the stored bytes show when this rule matched

    def applies(self, format_version: Optional[int]) -> bool:
        return format_version is None or self.first_format <= format_version <= self.last_format

_CLASSES: Dict[int, type] = {}


class Filter:
    """Base class. A subclass that sets `type` is registered by that alone (the package
    imports every module of `formats.filters`): its type, options, metadata and transforms
    are all declared in its own module."""

    type: int = -1
    # The option bytes of a serialized pipeline, in order (`options.Option`); trailing bytes
    # after them are struct padding when `option_padding` documents them.
    options: Tuple[Option, ...] = ()
    option_padding: Optional[FieldDoc] = None
    # True when this filter's own metadata is followed by the previous filters' metadata
    # (on disk); False when earlier metadata is folded into its data (compressors, AES).
    passes_metadata: bool = True
    # True when forward output is a function of the input alone (compressors may differ
    # by library version; they are checked by decoding instead).
    deterministic: bool = True
    # Forward encodings of released writers, newest first (empty: one encoding, no name).
    writer_rules: Tuple[WriterRule, ...] = ()

    def rules_for(self, format_version: Optional[int]) -> List[WriterRule]:
        """The rules a writer of `format_version` may have used (never empty)."""
        rules = [r for r in self.writer_rules if r.applies(format_version)]
        return rules or [WriterRule("")]

    # True when forward output starts from a fresh random IV (never equal to the stored bytes).
    random_iv: bool = False

    def __init_subclass__(cls, **kw) -> None:
        super().__init_subclass__(**kw)
        if "type" in cls.__dict__ and cls.type >= 0:
            _CLASSES[int(cls.type)] = cls

    def describe(self, spec: FilterSpec) -> str:
        """The filter with its options, as a pipeline summary shows it (`ZSTD(5)`)."""
        return describe_options(spec.name, self.options, spec.options)

    def default_options(self) -> Dict[str, object]:
        """The options TileDB writes for this filter when none are given."""
        return option_defaults(self.options)

    def parse_options(self, cur: Cursor, size: int, spec: FilterSpec) -> None:
        """Annotate this filter's `size` option bytes at `cur` into `spec.options`."""
        read_options(cur, self.options, size, spec.name, spec.options, self.option_padding)

    def output_datatype(self, spec: FilterSpec, datatype: int) -> int:
        """The datatype the next filter sees."""
        return datatype

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        """Add nodes for this filter's own chunk metadata at `cur` (default: none)."""

    def reverse(self, spec: FilterSpec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        raise FilterError(f"reversing {spec.name} is not supported")

    def forward(self, spec: FilterSpec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        raise FilterError(f"applying {spec.name} is not supported")

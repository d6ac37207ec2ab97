"""A filter's options, declared once by the filter class: the layout of its option bytes in
a serialized pipeline (format_spec/filter_pipeline.md), their meaning, their defaults (what
TileDB writes when none is given), how a pipeline summary shows them and how the pipeline
editor edits them. `formats.tiledb.parse.pipeline` reads the bytes through these declarations."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Literal, Optional, Sequence, Tuple

from ..core.cursor import Cursor
from ..core.fielddoc import FieldDoc
from ..core.node import WARNING

PRIM_SIZE = {"u8": 1, "bool": 1, "u16": 2, "u32": 4, "i32": 4, "f32": 4, "u64": 8, "f64": 8}


@dataclass(frozen=True)
class Editor:
    """How the pipeline editor edits an option."""

    kind: Literal["int", "float", "choice"]
    minimum: float = 0
    maximum: float = 0
    choices: Tuple[Tuple[str, object], ...] = ()
    special_text: str = ""         # shown for the minimum ("default" for level -1)
    label: str = ""                # the field's label when not the option's own


@dataclass(frozen=True)
class Option:
    """One option of a filter: one field of its option bytes, in order."""

    key: str                       # the FilterSpec.options key
    label: str                     # the node's name ("Compression level")
    prim: str                      # u8, bool, u16, u32, i32, f32, u64, f64
    doc: FieldDoc
    default: object = None         # None: no default (not set by the editor)
    enum: Optional[Dict[int, str]] = None
    # the value a filter type must carry here (a compressor id): anything else is a warning
    expected: Optional[int] = None
    # read only when the option bytes are long enough (DOUBLE_DELTA's reinterpret type)
    optional: bool = False
    # its part of a pipeline summary ("window=256"; None: not shown, "" nothing)
    shown: Optional[Callable[[object], Optional[str]]] = None
    editor: Optional[Editor] = None

    @property
    def size(self) -> int:
        return PRIM_SIZE[self.prim]


def required_size(options: Sequence[Option]) -> int:
    return sum(o.size for o in options if not o.optional)


def read_options(cur: Cursor, options: Sequence[Option], size: int, filter_name: str,
                 out: Dict[str, object], padding: Optional[FieldDoc] = None) -> None:
    """Annotate `size` option bytes at `cur` into `out` (nothing when they are fewer than the
    required options take); `padding`: trailing bytes are struct padding."""
    if not options or size < required_size(options):
        return
    left = size
    for o in options:
        if o.optional and left < o.size:
            break
        n = cur.boolean(o.label, o.doc) if o.prim == "bool" else \
            cur.prim(o.prim, o.label, o.doc, enum=o.enum)
        left -= o.size
        if o.expected is not None and n.value != o.expected:
            name = o.enum.get(o.expected, "?") if o.enum else ""
            n.mark(WARNING, f"{o.label}: expected {o.expected} ({name}) for filter {filter_name}, "
                            f"found {n.value}")
        out[o.key] = n.value
    if padding is not None and cur.remaining:
        cur.raw("Padding", cur.remaining, padding, kind="padding")


def defaults(options: Sequence[Option]) -> Dict[str, object]:
    return {o.key: o.default for o in options if o.default is not None}


def describe(name: str, options: Sequence[Option], values: Dict[str, object]) -> str:
    """`ZSTD(5)`, `BIT_WIDTH_REDUCTION(window=256)`, `DOUBLE_DELTA(-1, reinterpret=INT32)`."""
    parts: List[str] = []
    for o in options:
        if o.shown is None or o.key not in values:
            continue
        text = o.shown(values[o.key])
        if text:
            parts.append(text)
    return f"{name}({', '.join(parts)})" if parts else name

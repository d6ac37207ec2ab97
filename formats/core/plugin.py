"""The core's contract with format plugins, and with the window.

A format plugin (`formats.tiledb`, `formats.scdl`, `formats.zarr`) exposes one `PLUGIN`
object that satisfies `FormatPlugin`. Everything the window shows of a format reaches it
through these types; the window imports this module, never a plugin module
(`tests/core/test_architecture.py` enforces it).

    FormatPlugin   detection (declarative `Detection`, plus an optional magic sniff),
                   opening a directory or a file into a Node tree, the `values` command,
                   extra `verify` checks (`VerifyUnits`: them as units for workers), the
                   words the array browser shows for an entry
                   (`describe_entry`), the chunk views it offers for a node (`chunk_view`)
    ChunkView      one chunk or codec chain, stage by stage: stage k is the bytes before
                   filter/codec k was applied (stage 0 the cells, stage n the stored bytes);
                   reversing makes derived sources with nodes, a forward check says whether
                   re-applying a stage gives the stored bytes, and `cell_table` the values.
                   One rule for every format: a chunk is shown reversed down to its cells
                   (`open`, when it is first selected), its stages stay steppable
    CellTable      the values of one chunk as rows and columns of text (coordinates, units
                   and nulls already rendered), painted lazily by the window, and the
                   bytes of each cell (`cell_ranges`) for the hex view to select
    PipelineLab    an editable copy of a chunk's pipeline to try on its cells (teaching)
    FieldValues    one entry of the `values` command

Stage indices follow the pipeline's order: filter k (0-based) turns stage k into stage
k+1. Rows are shown from the disk side, so the window walks k = n-1 .. 0.

All of it is plain Python (no Qt): the CLI and the tests use the same objects.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Literal, Optional, Protocol, Sequence, Tuple, TypedDict, runtime_checkable

from .node import Node
from .status import Status


# ---- detection ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Detection:
    """What marks a directory as one of a format's containers, declared rather than coded.

    `dir_markers` lists alternatives; each is a tuple of entry names that must all exist in
    the directory (a name ending in "/" must be a folder, any other a file)."""

    dir_markers: Tuple[Tuple[str, ...], ...] = ()

    def matches_dir(self, path: str) -> bool:
        """Whether `path` (a local path or a URL) is such a directory; markers are looked up
        inside it only (a link that leaves the directory marks nothing: `dataset_fs`)."""
        from .filesystems import fs_of

        fs = fs_of(None, path)   # no stat of `path` itself: an object store has no folders
        for names in self.dir_markers:
            if names and all(_has_entry(fs, path, n) for n in names):
                return True
        return False


def _has_entry(fs, path: str, name: str) -> bool:
    if name.endswith("/"):
        return fs.stat(os.path.join(path, name[:-1])).is_dir
    return fs.stat(os.path.join(path, name)).is_file


# ---- values ---------------------------------------------------------------------------------
class _FieldValuesRequired(TypedDict):
    name: str        # the fragment (TileDB) or the array (SCDL, Zarr)
    values: list     # Python values in stored order (empty when only `raw` was asked for)
    raw: bytes       # the decoded cells as little-endian bytes (var data for var fields)


class FieldValues(_FieldValuesRequired, total=False):
    """One entry of `values`: what one fragment / array holds of a field."""

    error: str       # why this entry is short or empty


# ---- chunk views ----------------------------------------------------------------------------
CheckStatus = Literal["identical", "re-encoded", "different", "failed"]


@dataclass(frozen=True)
class ForwardCheck:
    """Stage k applied forward, compared with stage k+1 (the stored bytes for the last)."""

    k: int
    status: CheckStatus
    text: str

    @property
    def ok(self) -> bool:
        return self.status in ("identical", "re-encoded")


RowStatus = Literal["stored", "reversed", "pending", "failed", "decoded"]


@dataclass
class StageRow:
    """One row of a chunk's stage list, as the pipeline panel shows it (disk side first).

    `k` is the stage the row reverses to (its filter's index), None for the stored bytes
    and for the values row; `node` is what selecting the row shows; `details` are the nodes
    of this stage's metadata or framing; `note` fills the last column (a forward check or
    what the stage gave), `note_status` colours it."""

    label: str
    size: Optional[int]
    status: RowStatus
    k: Optional[int] = None
    node: Optional[Node] = None
    tooltip: str = ""
    error: Optional[str] = None
    note: str = ""
    note_tooltip: str = ""
    note_status: Optional[Status] = None
    details: List[Node] = field(default_factory=list)
    kind: str = "filter"          # icon: "payload" (stored), "filter", "cells"
    expanded: bool = False


@dataclass(frozen=True)
class Column:
    name: str
    tooltip: str = ""
    numeric: bool = False         # right-aligned
    mono: bool = False            # offsets and hex bytes


@dataclass(frozen=True)
class CellRange:
    """Bytes of one cell in a buffer the window can show: `source` is a file's source (an
    unfiltered tile) or a derived stage source (the decoded tile)."""

    source: object
    offset: int
    length: int
    part: str = "value"           # "value", "offset" (var cell's entry), "var", "validity"


@dataclass(frozen=True)
class ForwardResult:
    """A chunk's cells re-encoded by its pipeline, compared with the stored bytes."""

    node: Optional[Node]          # root node of the re-encoded bytes (a derived source)
    status: Status                # ok: reproduced; warning: re-encoded / writer quirk; error
    verdict: str                  # one line ("✓ forward reproduces the stored 1,234 B")
    detail: str = ""              # each filter's check, one per line


@runtime_checkable
class CellTable(Protocol):
    """The values of one chunk, a row per cell or record; only painted rows are formatted."""

    caption: str                  # one line above the table (what the rows are, from where)
    columns: Sequence[Column]

    def row_count(self) -> int: ...

    def text(self, row: int, col: int) -> str: ...

    def muted(self, row: int, col: int) -> bool:
        """Whether the cell is greyed (a null cell, edge padding; `tooltip` says why)."""
        ...

    def tooltip(self, row: int, col: int) -> Optional[str]: ...

    def node_of_row(self, row: int) -> Optional[Node]:
        """The node of that cell or record, when one exists (clicking a row selects it)."""
        ...

    def row_of_node(self, node: Node) -> Optional[int]: ...

    def cell_ranges(self, row: int) -> List[CellRange]:
        """The bytes of that cell: its value (fixed), its offset entry and its var bytes
        (var-sized), its validity byte (nullable); the first is the table's own buffer."""
        ...


@dataclass(frozen=True)
class OptionField:
    """One option of a pipeline step, as an editor field."""

    key: str
    label: str
    kind: Literal["int", "float", "choice"]
    value: object
    minimum: float = 0
    maximum: float = 0
    choices: Tuple[Tuple[str, object], ...] = ()
    special_text: str = ""        # shown for the minimum ("default" for level -1)


@dataclass
class Experiment:
    """An edited pipeline applied forward to a chunk's cells, then reversed back."""

    labels: List[str]                                   # "cells", then each step
    sizes: List[int] = field(default_factory=list)      # bytes after each step (cells first)
    seconds: List[float] = field(default_factory=list)  # time of each step
    error: Optional[str] = None
    failed_at: Optional[int] = None
    round_trip: Optional[bool] = None


class PipelineLab(Protocol):
    """An editable copy of a chunk's pipeline. Steps are opaque to the window: it keeps them
    in a list, reorders them, and asks the lab for everything else."""

    def original(self) -> List[object]:
        """Fresh copies of the chunk's own steps."""
        ...

    def available(self) -> List[Tuple[str, object]]:
        """(menu text, step id) of every step that can be added."""
        ...

    def new_step(self, step_id: object) -> object:
        """A step with the format's default options."""
        ...

    def describe(self, step: object) -> str: ...

    def options(self, step: object) -> List[OptionField]: ...

    def set_option(self, step: object, key: str, value: object) -> None: ...

    def run(self, steps: List[object], cells: bytes) -> Experiment:
        """Apply `steps` forward to `cells`, then reverse the result (a round trip)."""
        ...


class ChunkView(Protocol):
    """One chunk (TileDB) or chunk file (Zarr): its stages, reversible one by one.

    A view keeps what has been done with its chunk (stages reversed, forward checks), so
    the window can come back to it. Derived sources it makes are the document's
    (`Document.add_derived`); nodes it makes hang under `node` once the window attaches
    them (`attach_stage`)."""

    node: Optional[Node]          # the chunk's node in the tree
    identity: object              # equal for two views of the same chunk
    # True when the view holds what the user did (stages reversed on demand): the window
    # keeps such a view per chunk; a view without state is made afresh at each selection.
    keeps_state: bool
    title: str                    # what the chunk is ("Chunk 1 of a0.tdb @ 0x68: ...")
    heading: str                  # the field / array it belongs to (may be "")
    subtitle: str                 # the pipeline in one line
    tooltip: str

    def rows(self) -> List[StageRow]:
        """The stage list as it stands."""
        ...

    def open(self, key: Optional[bytes]) -> List[int]:
        """Reverse every stage down to the cells (the one rule: a selected chunk is shown
        reversed); the stages newly made. Cheap when already done."""
        ...

    def stage_count(self) -> int:
        """n: the number of filters / codecs (stage n is the stored bytes)."""
        ...

    def stage_of(self, node: Optional[Node]) -> Optional[int]:
        """The stage `node` shows (n for the stored chunk), None when not this chunk's."""
        ...

    def forward_result(self, key: Optional[bytes]) -> Optional[ForwardResult]:
        """Apply the pipeline forward to the cells: the re-encoded bytes (a derived source
        with a node, for the window to attach and show) and the verdict; None when the
        format cannot apply it forward."""
        ...

    def siblings(self) -> List[Tuple[str, Optional[Node]]]:
        """Other chunks of the same tile (label, node), empty when there is one."""
        ...

    def sibling_index(self) -> int: ...

    def sibling_view(self, i: int) -> Optional["ChunkView"]: ...

    def value_unit(self) -> Optional[str]:
        """The numpy datetime unit of the cells, when they are datetimes (for the inspector)."""
        ...

    def reverse_to(self, k: int, key: Optional[bytes]) -> List[int]:
        """Reverse down to stage k; the stages newly made (their `stage_node`s exist)."""
        ...

    def lowest(self) -> int:
        """The lowest stage reached so far (n: nothing reversed)."""
        ...

    def stage_node(self, k: int) -> Optional[Node]: ...

    def stage_source(self, k: int) -> object: ...

    def remake_stage(self, k: int) -> bool:
        """Make stage k's source and node again (its tab was closed); False if not reached."""
        ...

    def forget_source(self, source: object) -> Optional[Node]:
        """Drop the stage that `source` holds; its node (for the window to detach)."""
        ...

    def owns_source(self, source: object) -> bool: ...

    def held_sources(self) -> Sequence[object]:
        """The derived sources this view made and holds (stage outputs, forward bytes): what
        the window counts against its budget of reversed bytes and drops on eviction."""
        ...

    def forward_check(self, key: Optional[bytes]) -> List[ForwardCheck]:
        """Apply every reversed stage forward and compare (needs all stages reversed)."""
        ...

    def cell_table(self, key: Optional[bytes]) -> Optional[CellTable]:
        """The cells once stage 0 is reached, else None (`cells_message` says why)."""
        ...

    def cells_message(self) -> str: ...

    def cells(self) -> Optional[bytes]:
        """Stage 0's bytes, once reached (the editor starts from them)."""
        ...

    def lab(self) -> Optional[PipelineLab]:
        """An editable copy of the pipeline, when the format can apply it forward."""
        ...


# ---- the array as a whole (the window's Array dock) -----------------------------------------
@dataclass
class SummaryRow:
    """One row of an array's summary: what the structure tree's file list does not say at a
    glance (schema, fields, fragments with their times and cell counts)."""

    label: str
    text: str = ""
    size: str = ""                # right column (bytes, cells)
    node: Optional[Node] = None   # what selecting the row shows
    tooltip: str = ""
    children: List["SummaryRow"] = field(default_factory=list)
    # children made when first shown (an array's 10 000 fragment rows read 10 000 footers):
    # `expand()` calls it once; the dock shows an expand arrow until then
    load: Optional[Callable[[], List["SummaryRow"]]] = None

    def expand(self) -> List["SummaryRow"]:
        if self.load is not None:
            load, self.load = self.load, None
            self.children = load()
        return self.children


# ---- verify as units of work -----------------------------------------------------------------
@dataclass(frozen=True)
class VerifyUnit:
    """One independent piece of a format's verify work (plain, picklable data: it travels
    to worker processes), with its cost in stored bytes, by which the core sizes tasks."""

    cost: int
    work: object


@dataclass(frozen=True)
class NotDone:
    """A unit a worker did not check: the caller checks it itself. `reason` says why when
    the worker could not do its part (the dataset does not open there, its files differ);
    empty when the data stopped it (then the caller's own check says what is wrong)."""

    reason: str = ""


class VerifyUnits(Protocol):
    """How a format's verify splits into units that run anywhere (`verify --workers N`,
    `--dask`): the core (formats/core/verify_tasks.py) plans, groups units into tasks, runs them
    on an executor and hands the results back here to merge, in order. The results must
    give exactly the findings of the plugin's single-process `verify`, in its order."""

    def units(self, document, workers: int) -> Optional[List[VerifyUnit]]:
        """The units of the document's verify work, in verify order; None: nothing to split
        (the plugin's `verify` runs in the calling process)."""
        ...

    def open(self, path: str, key: Optional[bytes], as_format: Optional[str], stamp: str):
        """A worker's document of the dataset at `path`, to run units on (opened once per
        worker process). `stamp` is the caller's `verify_tasks.fingerprint`."""
        ...

    def run(self, document, work: object) -> object:
        """Check one unit's `work`: its result as plain data, or a `NotDone`."""
        ...

    def merge(self, document, units: List[VerifyUnit], results: List[object]) -> List[object]:
        """Every finding (or finding node) of the document — the tree's own diagnostics and
        the plugin's checks — in single-process verify's order, from the units' results (a
        `NotDone`: checked here)."""
        ...


# ---- the plugin -----------------------------------------------------------------------------
class FormatPlugin(Protocol):
    """One format. Members beyond `name` and `detection` may be missing where a format has
    nothing to offer (the registry treats a missing member as "no"): see `registry`.

    Optional members not listed as methods here (duck-typed by their single callers):
    `open_model(document, path)` (the model without the tree, for `values`),
    `health` / `extents` / `space` (`formats.core.health`), `member_names` / `member_document`
    (a group's member arrays, `--array`), `array_summary(document) -> Optional[SummaryRow]`
    (the array as a whole, for the Array dock; None: the dock lists the folders and files),
    `source_title(name) -> Optional[str]` (a hex tab's title for a file of the dataset,
    where its base name says too little; None: the base name),
    `verify_units` (a `VerifyUnits`: verify split into units for workers; absent: verify runs
    in the calling process), `can_stream` / `verify_streamed(document)` (verify of a lazily
    opened dataset, one part of the tree built at a time).

    The window reads what it shows differently by format from these members
    (`registry`), never from a format's name."""

    name: str
    detection: Detection
    # Shown in the pipeline panel when nothing is selected (what this format stores).
    pipeline_hint: str
    # What the window calls a directory of this format ("Array", "Archive", "Hierarchy"):
    # the title of the dock that lists it.
    browser_title: str

    def container_of(self, path: str) -> Optional[str]: ...

    def sniff(self, head: bytes, path: str) -> bool: ...

    def open_dir(self, document, path: str) -> Node: ...

    def open_file_in(self, document, container: str, path: str) -> Node: ...

    def open_file(self, document, path: str) -> Node: ...

    def field_names(self, document) -> List[str]: ...

    # (a plugin may take `buffers=`, a callable giving the writable uint8 array of n bytes
    # the cells of "raw" are decoded into: `values --raw` then decodes into its output
    # file, `explorer/commands/raw_output.py`)
    def values(self, document, name: str, with_values: bool = True) -> List[FieldValues]: ...

    def verify(self, document) -> List[Node]: ...

    def describe_entry(self, document, node: Node) -> str:
        """What a folder or file is, in the array browser's words ("fragment: 2024-…")."""
        ...

    def chunk_view(self, document, node: Node) -> Optional[ChunkView]:
        """The chunk view `node` belongs to (a chunk, a tile, a stage, a record...), or None."""
        ...


def generic_entry_text(node: Node, known: Optional[Dict[str, str]] = None) -> str:
    """An entry described by its parser's words (its node's display or type), for formats
    whose folder and file names say little."""
    if node.kind == "file" and known and node.name in known:
        return known[node.name]
    what = node.display_text()
    if node.kind == "file" and (not what or what.startswith(("{", "[", '"'))):
        t = node.type or ""
        what = f"{t}: {what}" if t and what else (t or what)
    what = " ".join(what.split())
    return what if len(what) <= 90 else what[:89] + "…"

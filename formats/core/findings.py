"""Findings: what `verify`, the diagnostics panel and the tests report about a dataset.

A finding is plain data (it crosses threads, processes and Dask workers): where (source,
offset, node path), how bad (`status`), what kind (`code`, stable across releases: tools and
tests match on it, never on the message) and what to do (`hint`)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Dict, Iterable, List, Optional, Set, Tuple

from .status import Status


class Code(str, Enum):
    """Every stable code, in one place: its word (what tools and tests match on, never the
    message), the severity it is usually reported with (the check sets each finding's own:
    a file longer than its footer says is a warning, shorter an error) and what it means.
    A new kind of check adds its code here; `tests/core/test_finding_codes.py` fails on a
    code written anywhere else."""

    def __new__(cls, word: str, severity: Status, about: str) -> "Code":
        code = str.__new__(cls, word)
        code._value_ = word
        code.severity = severity
        code.about = about
        return code

    severity: Status
    about: str

    PARSE_ERROR = ("parse-error", Status.ERROR, "bytes that do not parse as the format says")
    PARSE_WARNING = ("parse-warning", Status.WARNING, "bytes that parse, with something unusual")
    CHECK_CRASHED = ("check-crashed", Status.ERROR, "a format's checks could not finish (a bug: report it)")
    NOT_VERIFIABLE = ("not-verifiable", Status.INFO, "nothing here that arrayscope can verify")
    UNCHECKED = ("unchecked", Status.WARNING, "a part that could not be checked (no key, no codec...)")
    # The dataset's files (formats/core/dataset_fs.py) and declared sizes.
    OUTSIDE_DATASET = ("outside-dataset", Status.WARNING,
        "a link or a named path that leaves the opened dataset")
    SYMLINK_LOOP = ("symlink-loop", Status.ERROR, "a link to a folder that contains it")
    SPECIAL_FILE = ("special-file", Status.ERROR, "a FIFO, socket or device where a file was expected")
    BROKEN_LINK = ("broken-link", Status.ERROR, "a symbolic link to nothing")
    UNREADABLE_ENTRY = ("unreadable-entry", Status.ERROR, "a directory entry that cannot be examined")
    OBJECT_KEY_NOT_A_PATH = ("object-key-not-a-path", Status.ERROR,
        "a key with a `.`/`..`/empty segment: not followed")
    SIZE_OVER_LIMIT = ("size-over-limit", Status.ERROR,
        "a declared or decoded size beyond what the format allows")
    # TileDB groups (formats/tiledb/model/group_members.py)
    GROUP_MEMBER_OUTSIDE = ("group-member-outside", Status.WARNING, "a group member elsewhere: not followed")
    GROUP_MEMBER_MISSING = ("group-member-missing", Status.ERROR, "a group member that points to nothing")
    GROUP_MEMBER_TYPE = ("group-member-type", Status.ERROR, "a member that is not what its entry says")
    NO_KEY = ("no-key", Status.WARNING, "encrypted and no key given: nothing can be checked")
    WRONG_KEY = ("wrong-key", Status.ERROR, "the key given does not open this file")
    AES_TAG = ("aes-tag-mismatch", Status.ERROR, "an AES-GCM tag fails under the right key: changed bytes")
    CHUNK_DECODE = ("chunk-decode-failed", Status.ERROR,
        "a chunk's filters cannot be reversed (checksum, codec...)")
    CHUNK_METADATA_UNREAD = ("chunk-metadata-unread", Status.WARNING,
        "chunk metadata after what its filters read: libtiledb ignores it, its writer never leaves any")
    FORWARD_MISMATCH = ("forward-mismatch", Status.ERROR,
        "decoded cells filtered forward differ from the stored stage")
    FORWARD_FAILED = ("forward-failed", Status.ERROR,
        "a filter cannot be applied forward to the decoded stage")
    WRITER_QUIRK = ("writer-quirk", Status.INFO, "info: a known writer difference, not damage")
    WRITER_BUG = ("writer-bug", Status.WARNING,
        "a known writer bug (named with its versions): the file is as that writer made it, "
        "its values may not be")
    # Checks that need no checksum (TileDB cells against the fragment metadata and the schema)
    CELL_COUNT = ("cell-count-mismatch", Status.ERROR,
        "a tile's decoded cells vs the count the metadata implies")
    VAR_SIZE = ("var-size-mismatch", Status.ERROR, "a var tile's decoded size vs the metadata's var size")
    OFFSETS_ORDER = ("offsets-not-monotonic", Status.ERROR,
        "var cell offsets decrease (or do not start at 0)")
    OFFSET_RANGE = ("offset-outside-var-tile", Status.ERROR, "a var cell offset points past its var tile")
    VALIDITY_VALUE = ("validity-not-0-1", Status.ERROR, "a validity byte that is neither 0 nor 1")
    TILE_STAT = ("tile-stat-mismatch", Status.ERROR, "per-tile min/max/sum/null count vs the decoded cells")
    MBR_MISMATCH = ("mbr-mismatch", Status.ERROR, "a sparse tile's MBR vs its decoded coordinates")
    COORD_DOMAIN = ("coordinate-outside-domain", Status.ERROR, "a coordinate outside its dimension's domain")
    COORD_NED = ("coordinate-outside-non-empty-domain", Status.ERROR,
        "outside the fragment's non-empty domain")
    COORD_ORDER = ("coordinates-out-of-order", Status.ERROR, "sparse cells not in the array's global order")
    COORD_DUP = ("duplicate-coordinates", Status.ERROR, "repeated coordinates where the schema forbids dups")
    DENSE_DOMAIN = ("dense-domain-outside-array", Status.ERROR,
        "a dense fragment's domain outside the array domain")
    UNCOMMITTED = ("fragment-uncommitted", Status.WARNING, "a fragment no commit names")
    GENERIC_TILE_SIZE = ("generic-tile-size", Status.ERROR,
        "a generic tile's Tile size vs what its chunks unfilter to: libtiledb refuses the tile")
    GENERIC_TILE_VERSION = ("generic-tile-version", Status.ERROR,
        "a generic tile's version vs the format its file names (fragment footer, schema payload)")
    COMMIT_LOST = ("fragment-commit-lost", Status.ERROR,
        "a complete fragment (its metadata written, the writer's last step before the commit) "
        "no commit names and no .vac lists: its .wrt was lost")
    COMMIT_ORPHAN = ("commit-without-fragment", Status.ERROR, "a commit naming a fragment that is not there")
    FILE_MISSING = ("fragment-file-missing", Status.ERROR, "a file the fragment metadata sizes is missing")
    FILE_SIZE = ("fragment-file-size", Status.ERROR,
        "a data file's size vs the footer (longer: a warning, libtiledb reads it; shorter: error)")
    # What makes libtiledb refuse (or misread) the array as a whole (tiledb/verify/reader_faults.py)
    METADATA_MISSING = ("fragment-metadata-missing", Status.ERROR,
        "a committed fragment without its __fragment_metadata.tdb: opening fails")
    EMPTY_TILE_UNREADABLE = ("empty-tile-unreadable", Status.WARNING,
        "an empty var tile libtiledb wrote through a shuffle then a checksum / AES: it cannot read it")
    READ_TWICE = ("fragment-read-twice", Status.ERROR,
        "a consolidated fragment and one it replaced, both read: duplicates allowed, cells twice")
    NO_SCHEMA = ("schema-missing", Status.ERROR,
        "an array folder without schema, or a fragment written with a schema file that is gone")
    STAND_IN = ("stand-in-file", Status.ERROR,
        "a git-lfs pointer or an HTML page where a format's file should be")
    # SCDL
    SCDL_ROW_POINTERS = ("scdl-row-pointers", Status.ERROR,
        "row_ptr not starting at 0, decreasing, or not ending at nnz")
    SCDL_NEIGHBORS = ("scdl-neighbors", Status.ERROR, "the neighbour graph's CSR arrays disagree")
    SCDL_COLUMN_INDEX = ("scdl-column-index", Status.ERROR,
        "a column index not below its block's feature count")
    SCDL_LENGTHS = ("scdl-lengths", Status.ERROR, "data / col_ptr / feature index lengths that disagree")
    SCDL_METADATA = ("scdl-metadata", Status.WARNING, "metadata.json rows vs row_ptr.npy")
    SCDL_MISSING = ("scdl-file-missing", Status.ERROR, "a file header.sch lists is missing")
    PLUGIN_FAILED = ("plugin-failed", Status.ERROR, "a format plugin could not be imported")
    # Zarr
    ZARR_NOT_A_KEY = ("zarr-not-a-chunk-key", Status.WARNING, "a file in an array that no chunk key spells")
    ZARR_OUTSIDE_GRID = ("zarr-chunk-outside-grid", Status.ERROR, "a chunk key beyond the array's chunk grid")
    ZARR_SHARD_INDEX = ("zarr-shard-index", Status.ERROR,
        "a shard index short, failing its crc32c, or with entries outside the shard / overlapping")
    ZARR_SHARD_UNREFERENCED = ("zarr-shard-unreferenced", Status.WARNING,
        "shard bytes no index entry points to")
    ZARR_TRAILING = ("zarr-trailing-bytes", Status.WARNING,
        "bytes after a codec frame's declared end (readers ignore them: the values are right)")
    ZARR_KEY_SEPARATOR = ("zarr-key-separator", Status.ERROR,
        "chunk files spelled with the other separator or chunk key encoding: readers never find them")
    ZARR_LOST_METADATA = ("zarr-array-metadata-missing", Status.ERROR,
        "a folder of chunk files in a group with no .zarray / zarr.json: readers skip the array")
    ZARR_CONSOLIDATED = ("zarr-consolidated-mismatch", Status.WARNING,
        "consolidated metadata that says otherwise than the array's own metadata")

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


# The codes by name, as the engine's modules import them (`from .findings import NO_KEY`).
PARSE_ERROR = Code.PARSE_ERROR
PARSE_WARNING = Code.PARSE_WARNING
CHECK_CRASHED = Code.CHECK_CRASHED
NOT_VERIFIABLE = Code.NOT_VERIFIABLE
UNCHECKED = Code.UNCHECKED
OUTSIDE_DATASET = Code.OUTSIDE_DATASET
SYMLINK_LOOP = Code.SYMLINK_LOOP
SPECIAL_FILE = Code.SPECIAL_FILE
BROKEN_LINK = Code.BROKEN_LINK
UNREADABLE_ENTRY = Code.UNREADABLE_ENTRY
OBJECT_KEY_NOT_A_PATH = Code.OBJECT_KEY_NOT_A_PATH
SIZE_OVER_LIMIT = Code.SIZE_OVER_LIMIT
GROUP_MEMBER_OUTSIDE = Code.GROUP_MEMBER_OUTSIDE
GROUP_MEMBER_MISSING = Code.GROUP_MEMBER_MISSING
GROUP_MEMBER_TYPE = Code.GROUP_MEMBER_TYPE
NO_KEY = Code.NO_KEY
WRONG_KEY = Code.WRONG_KEY
AES_TAG = Code.AES_TAG
CHUNK_DECODE = Code.CHUNK_DECODE
CHUNK_METADATA_UNREAD = Code.CHUNK_METADATA_UNREAD
FORWARD_MISMATCH = Code.FORWARD_MISMATCH
FORWARD_FAILED = Code.FORWARD_FAILED
WRITER_QUIRK = Code.WRITER_QUIRK
WRITER_BUG = Code.WRITER_BUG
CELL_COUNT = Code.CELL_COUNT
VAR_SIZE = Code.VAR_SIZE
OFFSETS_ORDER = Code.OFFSETS_ORDER
OFFSET_RANGE = Code.OFFSET_RANGE
VALIDITY_VALUE = Code.VALIDITY_VALUE
TILE_STAT = Code.TILE_STAT
MBR_MISMATCH = Code.MBR_MISMATCH
COORD_DOMAIN = Code.COORD_DOMAIN
COORD_NED = Code.COORD_NED
COORD_ORDER = Code.COORD_ORDER
COORD_DUP = Code.COORD_DUP
DENSE_DOMAIN = Code.DENSE_DOMAIN
UNCOMMITTED = Code.UNCOMMITTED
COMMIT_LOST = Code.COMMIT_LOST
GENERIC_TILE_SIZE = Code.GENERIC_TILE_SIZE
GENERIC_TILE_VERSION = Code.GENERIC_TILE_VERSION
COMMIT_ORPHAN = Code.COMMIT_ORPHAN
FILE_MISSING = Code.FILE_MISSING
FILE_SIZE = Code.FILE_SIZE
METADATA_MISSING = Code.METADATA_MISSING
EMPTY_TILE_UNREADABLE = Code.EMPTY_TILE_UNREADABLE
READ_TWICE = Code.READ_TWICE
NO_SCHEMA = Code.NO_SCHEMA
STAND_IN = Code.STAND_IN
SCDL_ROW_POINTERS = Code.SCDL_ROW_POINTERS
SCDL_NEIGHBORS = Code.SCDL_NEIGHBORS
SCDL_COLUMN_INDEX = Code.SCDL_COLUMN_INDEX
SCDL_LENGTHS = Code.SCDL_LENGTHS
SCDL_METADATA = Code.SCDL_METADATA
SCDL_MISSING = Code.SCDL_MISSING
PLUGIN_FAILED = Code.PLUGIN_FAILED
ZARR_NOT_A_KEY = Code.ZARR_NOT_A_KEY
ZARR_OUTSIDE_GRID = Code.ZARR_OUTSIDE_GRID
ZARR_SHARD_INDEX = Code.ZARR_SHARD_INDEX
ZARR_SHARD_UNREFERENCED = Code.ZARR_SHARD_UNREFERENCED
ZARR_TRAILING = Code.ZARR_TRAILING
ZARR_KEY_SEPARATOR = Code.ZARR_KEY_SEPARATOR
ZARR_LOST_METADATA = Code.ZARR_LOST_METADATA
ZARR_CONSOLIDATED = Code.ZARR_CONSOLIDATED

# The kind of node a finding of these codes is about, when its offset is where that node
# starts (formats/core/finding_nodes.py): the cells of a tile are wrong, not its first field.
# Other findings name the deepest node holding their offset.
NODE_KIND: Dict[str, str] = {code: "tile" for code in (
    CELL_COUNT, VAR_SIZE, OFFSETS_ORDER, OFFSET_RANGE, VALIDITY_VALUE, TILE_STAT, MBR_MISMATCH,
    COORD_DOMAIN, COORD_NED, COORD_ORDER, COORD_DUP)}


@dataclass(frozen=True)
class Finding:
    status: Status
    code: str
    source: str          # path of the file relative to the opened dataset, or a derived source
    offset: int
    node: str            # node path ("/"-joined names) inside the annotation tree
    message: str
    hint: str = ""

    def __post_init__(self) -> None:
        # a finding read back from JSON (the verify worker's) says its status as a word
        object.__setattr__(self, "status", Status(self.status))

    def to_json(self) -> Dict[str, object]:
        return asdict(self)

    def line(self) -> str:
        """`source:offset: message` (warnings and infos say so), as `verify` prints it."""
        from .printable import printable  # names come from the dataset: escaped

        prefix = "" if self.status == Status.ERROR else f"{self.status}: "
        return printable(f"{self.source}:{self.offset}: {prefix}{self.message}")


def default_code(status: Status, code: Optional[str]) -> str:
    if code:
        return code
    return Code.PARSE_ERROR if status == Status.ERROR else Code.PARSE_WARNING


def of_node(node, document) -> Finding:
    """The finding a warning or error node of `document`'s tree stands for."""
    return Finding(status=node.status, code=default_code(node.status, node.code),
                   source=document.source_name(node.source) if node.source is not None else "",
                   offset=node.offset, node=node.path(), message=node.message or node.name,
                   hint=getattr(node.doc, "hint", "") or "")


def unique(findings: Iterable[Finding]) -> List[Finding]:
    """The findings in order, each place and message once."""
    seen: Set[Tuple[str, int, str]] = set()
    out: List[Finding] = []
    for f in findings:
        key = (f.source, f.offset, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out

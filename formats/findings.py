"""Findings: what `verify`, the diagnostics panel and the tests report about a dataset.

A finding is plain data (it crosses threads, processes and Dask workers): where (source,
offset, node path), how bad (`status`), what kind (`code`, stable across releases: tools and
tests match on it, never on the message) and what to do (`hint`)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Dict, Iterable, List, Literal, Optional, Set, Tuple

Status = Literal["error", "warning", "info"]

# Stable codes. A new kind of check adds its code here (one definition, used everywhere).
PARSE_ERROR = "parse-error"            # bytes that do not parse as the format says
PARSE_WARNING = "parse-warning"        # bytes that parse, with something unusual
CHECK_CRASHED = "check-crashed"        # a format's checks could not finish (a bug: report it)
NOT_VERIFIABLE = "not-verifiable"      # nothing here that arrayscope can verify
UNCHECKED = "unchecked"                # a part that could not be checked (no key, no codec...)
# The dataset's files (formats/dataset_fs.py) and declared sizes.
OUTSIDE_DATASET = "outside-dataset"    # a link or a named path that leaves the opened dataset
SYMLINK_LOOP = "symlink-loop"          # a link to a folder that contains it
SPECIAL_FILE = "special-file"          # a FIFO, socket or device where a file was expected
BROKEN_LINK = "broken-link"            # a symbolic link to nothing
UNREADABLE_ENTRY = "unreadable-entry"  # a directory entry that cannot be examined
OBJECT_KEY_NOT_A_PATH = "object-key-not-a-path"  # a key with a `.`/`..`/empty segment: not followed
SIZE_OVER_LIMIT = "size-over-limit"    # a declared or decoded size beyond what the format allows
# TileDB groups (formats/tiledb/group_members.py)
GROUP_MEMBER_OUTSIDE = "group-member-outside"  # a group member elsewhere: not followed
GROUP_MEMBER_MISSING = "group-member-missing"  # a group member that points to nothing
GROUP_MEMBER_TYPE = "group-member-type"        # a member that is not what its entry says
NO_KEY = "no-key"                      # encrypted and no key given: nothing can be checked
WRONG_KEY = "wrong-key"                # the key given does not open this file
AES_TAG = "aes-tag-mismatch"           # an AES-GCM tag fails under the right key: changed bytes
CHUNK_DECODE = "chunk-decode-failed"   # a chunk's filters cannot be reversed (checksum, codec...)
CHUNK_METADATA_UNREAD = "chunk-metadata-unread"  # chunk metadata after what its filters read:
                                       # libtiledb ignores it, its writer never leaves any
FORWARD_MISMATCH = "forward-mismatch"  # decoded cells filtered forward differ from the stored stage
FORWARD_FAILED = "forward-failed"      # a filter cannot be applied forward to the decoded stage
WRITER_QUIRK = "writer-quirk"          # info: a known writer difference, not damage
WRITER_BUG = "writer-bug"              # a known writer bug (named with its versions): the file
                                       # is as that writer made it, its values may not be
# Checks that need no checksum (TileDB cells against the fragment metadata and the schema)
CELL_COUNT = "cell-count-mismatch"           # a tile's decoded cells vs the count the metadata implies
VAR_SIZE = "var-size-mismatch"               # a var tile's decoded size vs the metadata's var size
OFFSETS_ORDER = "offsets-not-monotonic"      # var cell offsets decrease (or do not start at 0)
OFFSET_RANGE = "offset-outside-var-tile"     # a var cell offset points past its var tile
VALIDITY_VALUE = "validity-not-0-1"          # a validity byte that is neither 0 nor 1
TILE_STAT = "tile-stat-mismatch"             # per-tile min/max/sum/null count vs the decoded cells
MBR_MISMATCH = "mbr-mismatch"                # a sparse tile's MBR vs its decoded coordinates
COORD_DOMAIN = "coordinate-outside-domain"   # a coordinate outside its dimension's domain
COORD_NED = "coordinate-outside-non-empty-domain"  # outside the fragment's non-empty domain
COORD_ORDER = "coordinates-out-of-order"     # sparse cells not in the array's global order
COORD_DUP = "duplicate-coordinates"          # repeated coordinates where the schema forbids dups
DENSE_DOMAIN = "dense-domain-outside-array"  # a dense fragment's domain outside the array domain
UNCOMMITTED = "fragment-uncommitted"         # a fragment no commit names
COMMIT_ORPHAN = "commit-without-fragment"    # a commit naming a fragment that is not there
FILE_MISSING = "fragment-file-missing"       # a file the fragment metadata sizes is missing
FILE_SIZE = "fragment-file-size"             # a data file's size vs the footer (longer:
                                             # a warning, libtiledb reads it; shorter: error)
# What makes libtiledb refuse (or misread) the array as a whole (tiledb/reader_faults.py)
METADATA_MISSING = "fragment-metadata-missing"  # a committed fragment without its
                                             # __fragment_metadata.tdb: opening fails
EMPTY_TILE_UNREADABLE = "empty-tile-unreadable"  # an empty var tile libtiledb wrote through
                                             # a shuffle then a checksum / AES: it cannot read it
READ_TWICE = "fragment-read-twice"           # a consolidated fragment and one it replaced,
                                             # both read: duplicates allowed, cells twice
NO_SCHEMA = "schema-missing"                 # an array folder without schema, or a fragment
                                             # written with a schema file that is gone
STAND_IN = "stand-in-file"                   # a git-lfs pointer or an HTML page where a
                                             # format's file should be
# SCDL
SCDL_ROW_POINTERS = "scdl-row-pointers"     # row_ptr not starting at 0, decreasing, or not ending at nnz
SCDL_NEIGHBORS = "scdl-neighbors"           # the neighbour graph's CSR arrays disagree
SCDL_COLUMN_INDEX = "scdl-column-index"     # a column index not below its block's feature count
SCDL_LENGTHS = "scdl-lengths"               # data / col_ptr / feature index lengths that disagree
SCDL_METADATA = "scdl-metadata"             # metadata.json rows vs row_ptr.npy
SCDL_MISSING = "scdl-file-missing"          # a file header.sch lists is missing
PLUGIN_FAILED = "plugin-failed"        # a format plugin could not be imported
# Zarr
ZARR_NOT_A_KEY = "zarr-not-a-chunk-key"            # a file in an array that no chunk key spells
ZARR_OUTSIDE_GRID = "zarr-chunk-outside-grid"      # a chunk key beyond the array's chunk grid
ZARR_SHARD_INDEX = "zarr-shard-index"              # a shard index short, failing its crc32c, or
                                                   # with entries outside the shard / overlapping
ZARR_SHARD_UNREFERENCED = "zarr-shard-unreferenced"  # shard bytes no index entry points to
ZARR_TRAILING = "zarr-trailing-bytes"            # bytes after a codec frame's declared end
                                                   # (readers ignore them: the values are right)
ZARR_KEY_SEPARATOR = "zarr-key-separator"         # chunk files spelled with the other
                                                   # dimension separator: readers never find them
ZARR_LOST_METADATA = "zarr-array-metadata-missing"  # a folder of chunk files in a group with no
                                                   # .zarray / zarr.json: readers skip the array
ZARR_CONSOLIDATED = "zarr-consolidated-mismatch"  # consolidated metadata that says otherwise
                                                   # than the array's own metadata

# The kind of node a finding of these codes is about, when its offset is where that node
# starts (formats/finding_nodes.py): the cells of a tile are wrong, not its first field.
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

    def to_json(self) -> Dict[str, object]:
        return asdict(self)

    def line(self) -> str:
        """`source:offset: message` (warnings and infos say so), as `verify` prints it."""
        from .printable import printable  # names come from the dataset: escaped

        prefix = "" if self.status == "error" else f"{self.status}: "
        return printable(f"{self.source}:{self.offset}: {prefix}{self.message}")


def default_code(status: str, code: Optional[str]) -> str:
    if code:
        return code
    return PARSE_ERROR if status == "error" else PARSE_WARNING


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

"""The fixed layouts of tiles, declared once: a tile's chunk table (format_spec/tile.md:
`u64 num chunks`, then per chunk `u32 original length, u32 filtered length, u32 metadata
length`, the chunk metadata and the filtered data) and a generic tile's header
(format_spec/generic_tile.md). `tile.py` annotates them, `rawtile.py` decodes them and the
tests' tile builder (`tests/support/filter_arrays.encode_tile`) writes them, all from the
records below."""
from __future__ import annotations

from ...core.fielddoc import doc
from ...core.record import Field, Record
from ...filters.enums import DATATYPE_NAMES, ENCRYPTION_TYPES

D_NCHUNKS = doc("Num chunks: number of chunks in the tile", spec="tile.md")
D_ORIG = doc("Original length of chunk: unfiltered bytes of the chunk's data", spec="tile.md")
D_FILT = doc("Filtered chunk length: bytes of the chunk's filtered data on disk", spec="tile.md")
D_MDLEN = doc("Chunk metadata length: bytes of the chunk metadata (0 for an empty pipeline)",
              spec="tile.md")
D_MD = doc("Chunk metadata: each filter's metadata, the last filter's first; compressors and "
           "encryption hold the earlier filters' metadata inside their data", spec="tile.md")
D_DATA = doc("Chunk filtered data: the chunk's bytes after the whole pipeline", spec="tile.md")

CHUNK_HEADER = Record(
    Field("Original length of chunk", "u32", D_ORIG),
    Field("Filtered chunk length", "u32", D_FILT),
    Field("Chunk metadata length", "u32", D_MDLEN, item_size=1, unit="bytes"),
)
# each chunk takes at least its header: a count beyond that cannot fit
NUM_CHUNKS = Record(Field("Num chunks", "u64", D_NCHUNKS, item_size=CHUNK_HEADER.size,
                          unit="chunks"))


D_GT_VERSION = doc("Version number: format version of the generic tile", spec="generic_tile.md")
D_GT_PERSISTED = doc("Persisted size: bytes of the filtered tile that follows the header",
                     spec="generic_tile.md")
D_GT_SIZE = doc("Tile size: bytes of the tile before filtering (the payload)",
                spec="generic_tile.md")
D_GT_TYPE = doc("Datatype of the tile's cells (CHAR for every generic tile written by 2.30)",
                spec="generic_tile.md")
D_GT_CELL = doc("Cell size of the tile's cells (1)", spec="generic_tile.md")
D_GT_ENC = doc("Encryption type used in filtering the tile (1 = AES-256-GCM: the pipeline "
               "then also lists filter 11)", spec="generic_tile.md")
D_GT_PIPE_SIZE = doc("Filter pipeline size: bytes of the serialized pipeline that follows",
                     spec="generic_tile.md")

# A generic tile's header (format_spec/generic_tile.md); the pipeline and the tile follow.
GENERIC_HEADER = Record(
    Field("Version number", "u32", D_GT_VERSION),
    Field("Persisted size", "u64", D_GT_PERSISTED),
    Field("Tile size", "u64", D_GT_SIZE),
    Field("Datatype", "u8", D_GT_TYPE, enum=DATATYPE_NAMES),
    Field("Cell size", "u64", D_GT_CELL),
    Field("Encryption type", "u8", D_GT_ENC, enum=ENCRYPTION_TYPES),
    Field("Filter pipeline size", "u32", D_GT_PIPE_SIZE, item_size=1, unit="bytes"),
)

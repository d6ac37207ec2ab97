"""The one rule for chunk metadata bytes that no filter reads.

What libtiledb does on read (2.30; seen with tiledb-py 0.36.1 on edited chunks):
`FilterPipeline::filter_chunks_reverse` (tiledb/sm/filter/filter_pipeline.cc) hands a
chunk's metadata to the filters, last first; each reads its own table
(`CompressionFilter::run_reverse` the two part counts, then `decompress_part` one
(original, compressed) pair per part) and nothing checks that the metadata was read to its
end. Bytes after the tables are ignored: the chunk decodes to the same cells. The format
spec (format_spec/filter_pipeline.md) does not speak of them; we follow libtiledb.

So, on every path that decodes (`reverse_chunk`, `batch.reverse_into`, the compiled
kernels of `nativekernels.py`): metadata at least as long as the tables decodes, and alike;
shorter cannot. libtiledb's writer never leaves such bytes, so `verify` reports them (a
warning, `findings.CHUNK_METADATA_UNREAD`): its fast paths take only chunks whose metadata
is exactly their tables and leave the others to the per-chunk checks, which say where the
bytes are.

It lives in `accel/`, the layer below `filters/`, because the compiled kernels compile this
very function (`nativekernels._md_decodes`) and `accel` imports nothing of `filters`.
"""
from __future__ import annotations

from typing import Any


def unread_metadata(md_len: Any, tables: int) -> Any:
    """Bytes of a chunk's `md_len` bytes of metadata after the `tables` bytes its filters
    read: negative when the tables run past the metadata (the chunk cannot be decoded), 0
    as libtiledb writes it, positive when there are bytes libtiledb ignores. (`md_len` may
    be a numpy array of lengths: one per chunk.)"""
    return md_len - tables


def metadata_decodes(md_len: int, tables: int) -> bool:
    """Whether a chunk with `md_len` bytes of metadata decodes when its filters read
    `tables` bytes of it: whenever they fit (bytes after them are ignored, as libtiledb
    ignores them). Plain integers only: the compiled kernels call it too."""
    return md_len >= tables

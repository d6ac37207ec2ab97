"""A shard rewritten without some of its inner chunks: the kept chunks' bytes as they were,
one after another, and an index (zarr/shard.py's layout: entries in C order, 2^64-1 twice
for a missing chunk, the CRC32C where the codec has one) that points to them."""
from __future__ import annotations

from typing import Optional, Set

import numpy as np

from ..zarr.meta import ENTRY, ShardSpec
from ..zarr.shard import MISSING, read_index


def without_inner(sp: ShardSpec, data: bytes, drop: Set[int]) -> Optional[bytes]:
    """Shard `data` less the inner chunks at flat indexes `drop`; None when the index cannot
    be read or no chunk is left (the shard file is then left out: all fill)."""
    idx, _why = read_index(sp, data)
    if idx is None or idx.problems:
        return None
    entries = np.full((sp.count, 2), MISSING, dtype=np.uint64)
    body = bytearray()
    base = 0 if sp.index_at_end else sp.index_size
    for i in range(sp.count):
        if i in drop or not idx.present(i):
            continue
        off, nb = int(idx.entries[i, 0]), int(idx.entries[i, 1])
        entries[i] = (base + len(body), nb)
        body += data[off:off + nb]
    if not body and all(i in drop or not idx.present(i) for i in range(sp.count)):
        return None
    raw = entries.astype(np.dtype(sp.index_endian + "u8")).tobytes()
    assert len(raw) == ENTRY * sp.count
    if sp.index_crc:
        from ..zarr.codecs.simple import crc32c
        raw += crc32c(raw).to_bytes(4, "little")
    return bytes(body) + raw if sp.index_at_end else raw + bytes(body)

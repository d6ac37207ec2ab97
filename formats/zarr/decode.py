"""A chunk's stored bytes to its decoded bytes, no nodes: the codec chain reversed by each
codec's `decode` (the fast path of `values`, of a shard's inner chunks and of verify), and
the most bytes any stage may produce."""
from __future__ import annotations

from .codecs import get
from .meta import ArrayMeta
from .vlen import stage_limit as vlen_limit


def stage_limit(meta: ArrayMeta) -> int:
    """Most bytes a decoder may produce for one chunk (twice the expected size, so a wrong
    length is reported by the records check rather than as a codec failure)."""
    if meta.shard is not None:   # a shard's codecs: its inner chunks may each grow a little
        sp = meta.shard
        return sp.count * (stage_limit(sp.inner) + 64) + sp.index_size
    if meta.vlen:
        return vlen_limit(meta)
    return 2 * meta.records_per_chunk * meta.itemsize + 4096


def decode_chunk(meta: ArrayMeta, data: bytes) -> bytes:
    limit = stage_limit(meta)
    for spec in reversed(meta.codecs):
        data = get(spec.name).decode(spec, data, limit)
    return data

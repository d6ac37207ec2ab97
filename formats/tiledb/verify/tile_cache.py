"""Tiles `verify` decoded once, kept for its cell checks.

The chunk checks (verify_chunks.py) reverse every chunk of every tile; the cell checks
(cell_checks.py) need the same tiles' cells. While one `verify_array` runs, the chunk checks
put each tile that decoded whole here and the cell checks take it back instead of decoding
it again. Bounded: once `budget` decoded bytes are held, further tiles are not kept (they
are decoded again, as before) — the first tiles stay, so a large array still shares the
first part instead of thrashing. A tile is only shared under the same pipeline and data
description, so what the cell checks get is exactly what decoding it again would give.
"""
from __future__ import annotations

import contextvars
from typing import Dict, Hashable, Optional, Tuple

from ...core import compiled

Decoded = Tuple[bytes, Optional[bytes]]   # (cells, offsets RLE/DICTIONARY rebuilt)


class TileCache:
    def __init__(self, budget: Optional[int] = None):
        self.budget = compiled.TUNING.tile_cache if budget is None else budget
        self.held = 0
        self.tiles: Dict[Hashable, Decoded] = {}
        self.hits = 0
        self._by_id: Dict[Tuple[int, int], Tuple[object, object, int]] = {}
        self._by_text: Dict[Tuple[str, str], int] = {}

    def key(self, source_name: str, offset: int, specs, info) -> Hashable:
        return (source_name, offset, self._pipeline(specs, info))

    def _pipeline(self, specs, info) -> int:
        """A small number per distinct (pipeline, data description), by value; the objects
        are remembered by identity (and kept alive, so an id is never reused meanwhile):
        a million tiles repr their few pipelines once."""
        k = (id(specs), id(info))
        hit = self._by_id.get(k)
        if hit is None:
            text = (repr(specs), repr(info))
            hit = self._by_id[k] = (specs, info, self._by_text.setdefault(text, len(self._by_text)))
        return hit[2]

    def put(self, key: Hashable, decoded: Decoded) -> None:
        size = len(decoded[0]) + (len(decoded[1]) if decoded[1] is not None else 0)
        if self.held + size <= self.budget and key not in self.tiles:
            self.tiles[key] = decoded
            self.held += size

    def take(self, key: Hashable) -> Optional[Decoded]:
        """The tile, forgotten here (each is read once)."""
        d = self.tiles.pop(key, None)
        if d is not None:
            self.hits += 1
            self.held -= len(d[0]) + (len(d[1]) if d[1] is not None else 0)
        return d


_CURRENT: contextvars.ContextVar[Optional[TileCache]] = contextvars.ContextVar(
    "arrayscope_tile_cache", default=None)


def current() -> Optional[TileCache]:
    return _CURRENT.get()


def use(cache: Optional[TileCache]):
    """Make `cache` the current one; returns the token to `reset` with."""
    return _CURRENT.set(cache)


def reset(token) -> None:
    _CURRENT.reset(token)

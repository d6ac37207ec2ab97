"""Budgets that bound what the engine decodes from sizes a file declares.

A size the format itself bounds (TileDB tile cells × cell size, a var tile's recorded size,
Zarr chunk shape × item size) is checked against that bound; where nothing in the format
bounds it (a TileDB generic tile, one Zarr chunk's decoded size), the engine decodes for the
tree and for `verify` at most DECODE_BUDGET bytes of one tile or chunk, and says so with a
`size-over-limit` finding instead of allocating more."""
from __future__ import annotations

DECODE_BUDGET = 256 << 20

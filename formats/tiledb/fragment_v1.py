"""Fragment metadata of formats 1–2 (TileDB 1.4–1.5): one generic tile, no footer."""
from __future__ import annotations

from ..cursor import Cursor


def parse_v1_v2(cur: Cursor, document, ctx, key, fm, schema) -> None:
    cur.fail("Fragment metadata (format 1–2)", "format 1–2 fragment metadata (one generic "
                                               "tile) is not parsed yet")

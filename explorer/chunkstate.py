"""What the user has done with one chunk in the pipeline panel: how far it is reversed, the
forward checks, and the stage sources and nodes made so far."""
from __future__ import annotations

from typing import Dict, List, Optional

from arrayscope.formats import filters as F
from arrayscope.formats.tiledb import tile_cells as TC

from . import stages as S


class ChunkState:
    """What the user has done with one chunk so far."""

    def __init__(self, chunk_node, ci):
        self.chunk_node = chunk_node
        self.ci = ci
        self.reached = len(ci.specs)   # lowest stage index reversed so far
        self.run: Optional[F.ChunkRun] = None
        self.checks: List[S.ForwardCheck] = []
        self.sources: Dict[int, object] = {}   # k -> derived source
        self.nodes: Dict[int, object] = {}     # k -> stage root node
        self.where: Optional[TC.FieldTile] = None   # field / part / tile of a data file
        self.paired: Optional[TC.TileCells] = None  # the tile's cells with sibling tiles


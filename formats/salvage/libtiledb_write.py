"""Writing a damaged fragment's surviving cells back as fragments libtiledb made itself.

The cells are written through tiledb-py (an optional dependency: without it a damaged
fragment is left out whole) into a scratch array that holds only the schema the fragment
was written with, so the new fragment names that schema, is filtered, encrypted and
tiled by the library's own writer, and reads back through it. The buffers are the bytes
the engine decoded (`tile_cells.FieldCells`), set on a write query as they are: the
high-level `A[...] = ...` assignment would take a NaN in a nullable float attribute for a
null and turn every value into a Python object.

The scratch fragment is then copied into OUT under the damaged fragment's timestamps and
UUID (only the format version in its name is the writer's), so it sorts among the other
fragments exactly where the damaged one did and a reader at any time sees it when it
saw the original."""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import Dict, List, Optional, Sequence, Tuple

from ..tiledb.model import layout
from .tile_cells import FieldCells

Rect = Sequence[Tuple[int, int]]


def unavailable() -> Optional[str]:
    """Why fragments cannot be rewritten here (None: tiledb-py is importable)."""
    try:
        import tiledb  # noqa: F401
    except ImportError:
        return "tiledb-py is not installed (pip install tiledb): damaged fragments are " \
               "left out whole"
    return None


class ScratchArray:
    """An empty array with one schema (its files' bytes), in a temporary folder."""

    def __init__(self, schema_files: Dict[str, bytes], key: Optional[bytes]):
        import tiledb

        self.root = tempfile.mkdtemp(prefix="arrayscope-salvage-")
        self.uri = os.path.join(self.root, "array")
        for rel, data in schema_files.items():
            target = os.path.join(self.uri, *rel.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "xb") as f:
                f.write(data)
        for name in (layout.COMMITS_DIR, layout.FRAGMENTS_DIR, layout.FRAGMENT_META_DIR,
                     layout.META_DIR):
            os.makedirs(os.path.join(self.uri, name), exist_ok=True)
        cfg = {}
        if key is not None:   # libtiledb takes the key as config text
            cfg = {"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key.decode("latin-1")}
        self.ctx = tiledb.Ctx(tiledb.Config(cfg))

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def write(self, timestamp: int, cells: Dict[str, FieldCells], rect: Optional[Rect] = None
              ) -> str:
        """One write of `cells` (every field of the fragment; dense: the cells of `rect` in
        row-major order) at `timestamp`; the new fragment's folder."""
        import tiledb
        from tiledb import libtiledb as lt

        before = set(os.listdir(os.path.join(self.uri, layout.FRAGMENTS_DIR)))
        with tiledb.open(self.uri, "w", timestamp=timestamp, ctx=self.ctx) as A:
            q = lt.Query(lt.Context(self.ctx), A.array, lt.QueryType.WRITE)
            if rect is None:
                q.layout = lt.LayoutType.UNORDERED
            else:
                q.layout = lt.LayoutType.ROW_MAJOR
                sub = tiledb.Subarray(A, self.ctx)
                sub.add_ranges([[(int(lo), int(hi))] for lo, hi in rect])
                q.set_subarray(sub)
            held = []   # the buffers stay alive until the query is submitted
            for name, fc in cells.items():
                data, offsets, validity = fc.buffers()
                held += [data, offsets, validity]
                # counted in values of the field's datatype (not cells, not bytes)
                q.set_data_buffer(name, data, len(data) // max(1, fc.element))
                if offsets is not None:
                    q.set_offsets_buffer(name, offsets, len(offsets))
                if validity is not None:
                    q.set_validity_buffer(name, validity, len(validity))
            q._submit()   # tiledb-py's own write path submits the same way
            q.finalize()
        (made,) = set(os.listdir(os.path.join(self.uri, layout.FRAGMENTS_DIR))) - before
        return os.path.join(self.uri, layout.FRAGMENTS_DIR, made)


def fragment_name(t1: int, t2: int, uuid: str, written: str, nth: int) -> str:
    """The name a rewritten fragment takes: the damaged one's timestamps and UUID (the
    `nth` piece of a dense fragment: the UUID plus `nth`, so the pieces sort together),
    the format version the writer wrote."""
    version = written.rsplit("_", 1)[-1]
    if nth:
        uuid = f"{(int(uuid, 16) + nth) % (1 << (4 * len(uuid))):0{len(uuid)}x}"
    return f"__{t1}_{t2}_{uuid}_{version}"


def rectangles(grid: List[int], lost: List[Tuple[int, ...]]) -> List[List[Tuple[int, int]]]:
    """Cover the tiles of a grid (`grid[d]` tiles along dimension d) that are not `lost`
    with few disjoint boxes of tile indices [lo, hi] per dimension: around each lost tile,
    the slabs before and after it along the first dimension, then inside its slab along
    the next (at most 2 × dimensions boxes per lost tile)."""
    def cover(box: List[Tuple[int, int]], holes: List[Tuple[int, ...]]) -> List:
        inside = [h for h in holes if all(lo <= c <= hi for c, (lo, hi) in zip(h, box))]
        if not inside:
            return [box]
        h = inside[0]
        out = []
        for d in range(len(box)):
            lo, hi = box[d]
            if lo < h[d]:
                out += cover(box[:d] + [(lo, h[d] - 1)] + box[d + 1:], inside)
            if h[d] < hi:
                out += cover(box[:d] + [(h[d] + 1, hi)] + box[d + 1:], inside)
            box = box[:d] + [(h[d], h[d])] + box[d + 1:]
        return out   # the last box is the lost tile itself: left out

    return cover([(0, n - 1) for n in grid], list(lost))

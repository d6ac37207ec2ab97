"""verify's TileDB work named by data-level coordinates, checkable without the tree.

`verify --workers/--dask` (formats/verify_tasks.py) sends each worker a fragment's data
files by name (relative to the array), not by their place in the annotation tree: a worker
opens the array's model only (schemas, fragment list), reads the metadata of the fragments
it is given, parses just those data files (`data_files.parse_data_file`, the node the tree
has for them) and runs the same chunk checks (`checks.verify_chunks`) and cell checks
(`cell_checks.check_fragment_cells`) on them. So a worker never builds the whole tree, and
what it finds is what the single-process verify finds for those files, in the same order.

The calling side lists the work in verify order (`slots`): a data file of the array's own
fragments is a slot the workers can take; anything else with chunks (generic tiles of the
metadata, files of nested arrays, tiles the tree parsed eagerly) stays in the caller."""
from __future__ import annotations

import dataclasses
import os
import posixpath
from typing import Dict, List, Optional, Tuple

from ..findings import Finding
from ..node import OK, Node
from .data_files import D_DATA_FILE, TileRun
from .model import Fragment
from .tile import ChunkInfo, TileInfo

FileSlot = Tuple[str, str]                 # (fragment name, data file name)
Slot = Tuple[Optional[FileSlot], Node]     # (where a worker finds it or None, the node)


# ---- the calling side ------------------------------------------------------------------------
def slots(document, root: Node) -> List[Slot]:
    """What `checks.iter_chunks(root)` visits, in its order (the same stack discipline), as
    slots: ((fragment, file), node) for a data file of one of the array's fragments, else
    (None, node) for a subtree whose chunks the caller checks itself. Each slot's chunks
    are `iter_chunks(node)`."""
    frags = _fragments_by_dir(document)
    out: List[Slot] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.doc is D_DATA_FILE and n.kind == "file":
            where = _file_slot(document, n, frags)
            if where is not None and not n.pending:
                out.append((where, n))
                continue
        if isinstance(n.data, (ChunkInfo, TileRun)) or \
                (isinstance(n.data, TileInfo) and n.pending):
            out.append((None, n))
            continue
        if n.is_lazy:
            if n.child_count() and n.child(0).kind == "tile":
                stack.extend(n.child(i) for i in reversed(range(n.child_count())))
            continue
        stack.extend(n.iter_children())
    return out


def _fragments_by_dir(document) -> Dict[str, str]:
    """relative fragment folder -> fragment name, for the fragments of the array's model."""
    array = getattr(document, "model", None)
    frags = getattr(array, "fragments", None) or []
    return {document.relname(f.path): f.name for f in frags}


def _file_slot(document, n: Node, frags: Dict[str, str]) -> Optional[FileSlot]:
    name = document.source_name(n.source)
    folder, _, file_name = name.rpartition("/")
    if os.sep != "/" and not folder:
        folder, _, file_name = name.rpartition(os.sep)
    frag = frags.get(folder)
    return (frag, file_name) if frag is not None else None


# ---- the worker side -------------------------------------------------------------------------
class FragmentFiles:
    """One fragment of a model-only document, its metadata read once, its data files
    parsed on demand as the tree would parse them."""

    def __init__(self, document, frag_name: str):
        self.document = document
        self.array = document.model
        frag = next((f for f in getattr(self.array, "fragments", []) or []
                     if f.name == frag_name), None)
        if frag is None:
            raise LookupError(f"no fragment {frag_name} in {document.path}")
        self.frag: Fragment = frag
        if self.frag.metadata is None or self.frag.metadata.loader is None:
            from .values import _metadata

            _metadata(document, self.array, self.frag)

    def file_node(self, file_name: str) -> Node:
        """The node `array.parse_data` gives this data file in the tree."""
        from ..remote import build_read_deferred
        from .array import parse_data
        from .model import with_schema

        fm = self.frag.metadata
        schema = self.array.schema_for(getattr(fm, "schema_name", None)) if fm is not None \
            else self.array.latest_schema
        src = self.document.open_source(os.path.join(self.frag.path, file_name))
        node = parse_data(self.document, src, with_schema(self.document.ctx, schema),
                          self.frag, schema)
        build_read_deferred(node)   # remote: the tiles the caller's tree has built too
        return node

    def check_file(self, file_name: str, part: Optional[Tuple[int, int]] = None) -> List[Finding]:
        """`checks.verify_chunks` over the data file: its chunk findings, in verify order;
        with `part` (a, b), over pieces a..b of it only (`pieces`)."""
        from ..verify import finding
        from .checks import verify_chunks

        node = self.file_node(file_name)
        if part is None:
            found = verify_chunks(self.document, node)
        else:
            found = [f for sub in piece_nodes(pieces(node)[part[0]:part[1]])
                     for f in verify_chunks(self.document, sub)]
        # A node of the file's own tree (a lazily listed tile that did not parse) is named
        # as the caller's whole tree names it: the file's folder path above it.
        above = posixpath.join(self.document.root.name, self.document.relname(self.frag.path))

        def as_found(f) -> Finding:
            if isinstance(f, Finding):
                return f
            got = finding(f, self.document)
            top = f
            while top.parent is not None:
                top = top.parent
            return dataclasses.replace(got, node=f"{above}/{got.node}") if top is node else got

        return [as_found(f) for f in found if getattr(f, "status", OK) != OK]

    def check_cells(self) -> List[Finding]:
        """The fragment's cell checks, as `checks.verify_bookkeeping` runs them (guarded)."""
        from ..verify import finding
        from .cell_checks import check_fragment_cells
        from .checks import _guard

        out: list = []
        _guard(out, self.document.relname(self.frag.path),
               lambda: check_fragment_cells(self.document, self.array, self.frag,
                                            self.document.ctx.key), document=self.document)
        return [f if isinstance(f, Finding) else finding(f, self.document)
                for f in out if getattr(f, "status", OK) != OK]


# ---- a data file in parts ------------------------------------------------------------------
Piece = Tuple[Node, Optional[int]]   # a child of the file node, or tile i of its TileRun child


def pieces(file_node: Node) -> List[Piece]:
    """The parts of a data file's chunks in the order `checks.iter_chunks` visits them (its
    children popped off a stack: last first; a lazy run of tiles in file order), so checking
    pieces a..b then b..c is checking the file. Empty when the file cannot be split so."""
    if file_node.is_lazy:
        return []
    out: List[Piece] = []
    for child in reversed(list(file_node.iter_children())):
        if isinstance(child.data, TileRun):
            out.extend((child, i) for i in range(len(child.data)))
        else:
            out.append((child, None))
    return out


def piece_size(piece: Piece) -> int:
    node, i = piece
    if i is None:
        return int(node.size)
    run = node.data
    return int(run.ends[i]) - int(run.offsets[i])


def piece_nodes(run_of: List[Piece]) -> List[Node]:
    """Nodes whose chunks are those of the pieces, in order: a child as it is; consecutive
    tiles of a run as a run of their own (each tile's own node where it is damaged)."""
    out: List[Node] = []
    k = 0
    while k < len(run_of):
        node, i = run_of[k]
        if i is None:
            out.append(node)
            k += 1
            continue
        j = k
        while j + 1 < len(run_of) and run_of[j + 1][0] is node:
            j += 1
        a, b = i, run_of[j][1] + 1   # type: ignore[operator]
        out.append(_sub_run(node, a, b))
        k = j + 1
    return out


def _sub_run(tiles: Node, a: int, b: int) -> Node:
    from ..node import LazyChildren

    run = tiles.data
    sub = Node(tiles.name, tiles.kind, tiles.source, int(run.offsets[a]),
               int(run.ends[b - 1]) - int(run.offsets[a]),
               data=TileRun(run.source, run.role, run.offsets[a:b], run.ends[a:b]))
    sub.set_lazy(LazyChildren(b - a, lambda i: tiles.child(a + i), uniform=True))
    return sub


def bookkeeping_with(document, cells: Dict[str, List[Finding]]) -> List[object]:
    """`checks.verify_bookkeeping`, in its order, with the cell findings of the fragments
    in `cells` (by name) as the workers found them; other fragments are checked here."""
    from .cell_checks import check_fragment_cells
    from .checks import _guard, check_array, check_fragments_one

    out: List[object] = []
    key = document.ctx.key
    array = document.model
    if array is not None and hasattr(array, "fragments") and \
            document.fs.stat(getattr(array, "path", "")).is_dir:
        for frag in array.fragments:
            where = document.relname(frag.path)
            _guard(out, where, lambda f=frag: check_fragments_one(document, array, f),
                   document=document)
            if frag.name in cells:
                out.extend(cells[frag.name])
            else:
                _guard(out, where, lambda f=frag: check_fragment_cells(document, array, f, key),
                       document=document)
        _guard(out, document.relname(array.path), check_array, document, array,
               document=document)
    return out

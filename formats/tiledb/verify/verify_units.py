"""verify's TileDB work as units for workers (`plugin.VerifyUnits`), named by data-level
coordinates and checkable without the tree.

`verify --workers/--dask` (formats/core/verify_tasks.py) sends each worker a fragment's data
files by name (relative to the array), not by their place in the annotation tree: a worker
opens the array's model only (schemas, fragment list), reads the metadata of the fragments
it is given, parses just those data files (`data_files.parse_data_file`, the node the tree
has for them) and runs the same chunk checks (`verify_chunks`) and cell checks
(`cell_checks.check_fragment_cells`) on them, the chunk and cell checks sharing a tile
cache (as `array_verify.verify_array` does). So a worker never builds the whole tree, and
what it finds is what the single-process verify finds for those files, in the same order.

The calling side lists the work in verify order (`slots`): a data file of the array's own
fragments is a slot the workers can take; anything else with chunks (generic tiles of the
metadata, files of nested arrays, tiles the tree parsed eagerly) stays in the caller. A unit
is a whole fragment (files and cell checks together, the tiles decoded once); a fragment
over a worker's share is split by file and its big files into runs of tiles, its cell
checks a unit of their own (they decode its tiles again). Whatever a worker cannot do (a
fragment whose metadata it cannot read) is done by the caller, so a worker never changes
the result."""
from __future__ import annotations

import dataclasses
import os
import posixpath
from typing import Any, Dict, List, Optional, Tuple

from ...core.findings import Finding, of_node
from ...core.node import OK, Node
from ...core.plugin import NotDone, VerifyUnit
from ...core.verify_tasks import Stamp, file_stamp, task_bytes
from ..model.array_model import Fragment
from ..parse.data_files import D_DATA_FILE, TileRun
from ..parse.rawtile import GenericTileSpan
from ..parse.tile import ChunkInfo, TileInfo

FileSlot = Tuple[str, str]                 # (fragment name, data file name)
Slot = Tuple[Optional[FileSlot], Node]     # (where a worker finds it or None, the node)


# ---- the calling side ------------------------------------------------------------------------
def slots(document, root: Node) -> List[Slot]:
    """What `chunk_walk.iter_chunks(root)` visits, in its order (the same stack discipline), as
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
            if where is not None:   # unbuilt (a remote file, read deferred): a worker builds it
                out.append((where, n))
                continue
        if isinstance(n.data, (ChunkInfo, TileRun, GenericTileSpan)) or \
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
            from ..values.field_values import _metadata

            _metadata(document, self.array, self.frag)

    def file_node(self, file_name: str) -> Node:
        """The node `array.parse_data` gives this data file in the tree."""
        from ...core.remote import build_read_deferred
        from ..model.array_model import with_schema
        from ..parse.array import parse_data

        fm = self.frag.metadata
        schema = self.array.schema_for(getattr(fm, "schema_name", None)) if fm is not None \
            else self.array.latest_schema
        src = self.document.open_source(os.path.join(self.frag.path, file_name))
        node = parse_data(self.document, src, with_schema(self.document.ctx, schema),
                          self.frag, schema)
        build_read_deferred(node)   # remote: the tiles the caller's tree has built too
        return node

    def check_file(self, file_name: str, part: Optional[Tuple[int, int]] = None) -> List[Finding]:
        """`verify_chunks.verify_chunks` over the data file: its chunk findings, in verify order;
        with `part` (a, b), over pieces a..b of it only (`pieces`)."""
        from .verify_chunks import verify_chunks

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
            got = of_node(f, self.document)
            top = f
            while top.parent is not None:
                top = top.parent
            return dataclasses.replace(got, node=f"{above}/{got.node}") if top is node else got

        return [as_found(f) for f in found if getattr(f, "status", OK) != OK]

    def check_cells(self) -> List[Finding]:
        """The fragment's cell checks, as `bookkeeping.verify_bookkeeping` runs them (guarded)."""
        from .cell_checks import check_fragment_cells
        from .check_findings import guard

        out: list = []
        guard(out, self.document.relname(self.frag.path),
               lambda: check_fragment_cells(self.document, self.array, self.frag,
                                            self.document.ctx.key), document=self.document)
        return [f if isinstance(f, Finding) else of_node(f, self.document)
                for f in out if getattr(f, "status", OK) != OK]


# ---- a data file in parts ------------------------------------------------------------------
Piece = Tuple[Node, Optional[int]]   # a child of the file node, or tile i of its TileRun child


def pieces(file_node: Node) -> List[Piece]:
    """The parts of a data file's chunks in the order `chunk_walk.iter_chunks` visits them (its
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
    from ...core.node import LazyChildren

    run = tiles.data
    sub = Node(tiles.name, tiles.kind, tiles.source, int(run.offsets[a]),
               int(run.ends[b - 1]) - int(run.offsets[a]),
               data=TileRun(run.source, run.role, run.offsets[a:b], run.ends[a:b]))
    sub.set_lazy(LazyChildren(b - a, lambda i: tiles.child(a + i), uniform=True))
    return sub


def bookkeeping_with(document, cells: Dict[str, List[Finding]]) -> List[object]:
    """`bookkeeping.verify_bookkeeping`, in its order, with the cell findings of the
    fragments in `cells` (by name) as the workers found them; other fragments are checked
    here."""
    from .bookkeeping import check_array, check_fragments_one, folder_checked, verify_label_arrays
    from .cell_checks import check_fragment_cells
    from .check_findings import guard

    out: List[object] = []
    key = document.ctx.key
    array = document.model
    if array is not None and hasattr(array, "fragments") and \
            document.fs.stat(getattr(array, "path", "")).is_dir:
        for frag in array.fragments:
            where = document.relname(frag.path)
            guard(out, where, lambda f=frag: check_fragments_one(document, array, f),
                   document=document)
            if frag.name in cells:
                out.extend(cells[frag.name])
            else:
                guard(out, where, lambda f=frag: check_fragment_cells(document, array, f, key),
                       document=document)
            folder_checked(document, frag)
        guard(out, document.relname(array.path), check_array, document, array,
               document=document)
    out += verify_label_arrays(document)   # small arrays of their own: checked here
    return out


# ---- the plugin's verify units -------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FragmentWork:
    """Part of one TileDB fragment: the chunk checks of some of its data files (by file
    name) and, with `cells`, its cell checks."""

    fragment: str
    files: Tuple[str, ...]
    cells: bool
    stamps: Tuple[Stamp, ...] = ()   # of the files read, as the caller saw them
    part: Optional[Tuple[int, int]] = None   # pieces a..b of its one file (`pieces`)


# A unit's result: the findings of each of its files (in `files` order) and of its cell
# checks (None without `cells`), or a `NotDone`.
FragmentResult = Any


class TileDBVerifyUnits:
    """`plugin.VerifyUnits` of a TileDB array (a group verifies member by member in the
    calling process: no units)."""

    def units(self, document, workers: int) -> Optional[List[VerifyUnit]]:
        """A lazily opened array (`can_stream`): one unit a fragment folder, listed from
        the model (nothing built here); else the data files of the built tree."""
        from ...core.registry import plugin_named
        from ..model.group_walk import is_group_document

        if document.root is None or is_group_document(document):
            return None
        if plugin_named("tiledb").can_stream(document):   # type: ignore[union-attr]
            from ...core.verify_tally import folder_bytes

            return [VerifyUnit(folder_bytes(f.path) + FOLDER_COST,
                               FolderWork(document.relname(f.path)))
                    for f in document.model.fragments]
        return fragment_units(document, slots(document, document.root), workers)

    def open(self, path: str, key: Optional[bytes], as_format: Optional[str], stamp: str):
        """Lazily (folders are units: built one at a time, as the caller's streamed
        verify would) — the tree's nodes are needed for the folder's diagnostics."""
        from ... import open as open_dataset

        return open_dataset(path, key=key, as_format=as_format, lazy=True)

    def run(self, document, work) -> FragmentResult:
        if isinstance(work, FolderWork):
            return _run_folder(document, work)
        return self._run_files(document, work)

    def _run_files(self, document, work: FragmentWork) -> FragmentResult:
        """The checks of `work` in this worker, the chunk and cell checks sharing a tile
        cache (as in `array_verify.verify_array`)."""
        from . import tile_cache

        token = tile_cache.use(tile_cache.TileCache() if work.cells and work.files else None)
        try:
            part = FragmentFiles(document, work.fragment)
            files = tuple(part.check_file(name, work.part) for name in work.files)
            cells = part.check_cells() if work.cells else None
        except Exception:  # noqa: BLE001 - what stops a worker here, the caller checks itself
            return NotDone()
        finally:
            tile_cache.reset(token)
        for name, size, mtime in work.stamps:
            src = document.source_by_name(name)
            if src is not None and file_stamp(src) != (name, size, mtime):
                return NotDone(f"{name} is not the caller's file here ({file_stamp(src)[1]} "
                               f"bytes, the caller's {size}): another copy, or changed "
                               f"meanwhile")
        return files, cells

    def merge(self, document, units: List[VerifyUnit], results: List[FragmentResult]
              ) -> List[object]:
        """`array_verify.verify_array`'s findings in its order: the chunk checks slot by
        slot (a data file a worker checked, or the caller's own), then the bookkeeping with
        the workers' cell checks, after the tree's own diagnostics; for fragment folders,
        `array_verify.verify_streamed` with the workers' folders in their places. What a
        worker did not do is done here."""
        from ...core.remote import build_read_deferred
        from .verify_chunks import verify_chunks

        if units and isinstance(units[0].work, FolderWork):
            from .array_verify import verify_streamed

            done = {posixpath.basename(u.work.folder): r   # type: ignore[attr-defined]
                    for u, r in zip(units, results) if not isinstance(r, NotDone)}
            return verify_streamed(document, done)
        build_read_deferred(document.root)
        head: List[object] = [n for n in document.diagnostics() if n.status != OK]

        parts: Dict[Tuple[str, str], Dict[int, Optional[List[Finding]]]] = {}  # file -> a -> found
        cells: Dict[str, List[Finding]] = {}
        for unit, got in zip(units, results):
            work: FragmentWork = unit.work   # type: ignore[assignment]
            a = work.part[0] if work.part is not None else 0
            if not isinstance(got, tuple):
                for name in work.files:
                    parts.setdefault((work.fragment, name), {})[a] = None
                continue
            files, cell = got
            for name, found in zip(work.files, files):
                parts.setdefault((work.fragment, name), {})[a] = found
            if cell is not None:
                cells[work.fragment] = cell
        by_file: Dict[Tuple[str, str], List[Finding]] = {}
        for file_key, got_parts in parts.items():
            if all(f is not None for f in got_parts.values()):   # else: this file, here
                by_file[file_key] = [f for a in sorted(got_parts) for f in got_parts[a] or ()]
        out: List[object] = head
        for where, node in slots(document, document.root):
            got = by_file.get(where) if where is not None else None
            out.extend(got if got is not None else verify_chunks(document, node))
        return out + bookkeeping_with(document, cells)


# A fragment folder's cost beyond its stored bytes, in stored bytes decoded in the same
# time: building and checking its tree (metadata sections, file nodes, bookkeeping) took
# about 60 ms a fragment of 8 192 int64 cells (cProfile of 1 000 of them), the time to
# decode some 4 MiB. Without it 1 000 small fragments are one 16 MiB task: one worker.
FOLDER_COST = 4 << 20


@dataclasses.dataclass(frozen=True)
class FolderWork:
    """A fragment folder of a lazily opened array, by its path relative to the array:
    checked whole in the worker as the streamed verify checks it (diagnostics, chunks,
    bookkeeping and cells), so the caller builds no fragment's tree."""

    folder: str


def _run_folder(document, work: FolderWork):
    """`array_verify.check_folder` of the folder; NotDone where it is not in this tree."""
    from .array_verify import check_folder

    node = document.root
    for name in work.folder.split("/"):
        node = node.find(name) if node is not None else None
    if node is None:
        return NotDone(f"no fragment folder {work.folder} here: another copy, or changed "
                       f"meanwhile")
    return check_folder(document, node)


def fragment_units(document, found: List[Slot], workers: int) -> List[VerifyUnit]:
    """The data files of `found` (`slots`) as units of whole fragments; with more than one
    worker, a fragment over a worker's share split by file and its big files into runs of
    tiles of about a task's size (`verify_tasks.task_bytes`), its cell checks a unit of
    their own, given first (the biggest part: they decode every tile again)."""
    files: Dict[str, List[Tuple[str, Stamp]]] = {}
    nodes: Dict[FileSlot, Node] = {}
    meta: Dict[str, Tuple[Stamp, ...]] = {}
    for where, node in found:
        if where is not None and node.source is not None:
            frag, name = where
            files.setdefault(frag, []).append((name, file_stamp(node.source)))
            nodes[where] = node
            if frag not in meta:
                folder = document.source_name(node.source).rpartition("/")[0]
                src = document.source_by_name(f"{folder}/__fragment_metadata.tdb")
                meta[frag] = (file_stamp(src),) if src is not None else ()
    if not files:
        return []
    size = {frag: sum(s[1] for _n, s in fs) for frag, fs in files.items()}
    total = sum(size.values())
    workers = max(1, workers)
    target = task_bytes(total, workers)
    share = total / workers
    out: List[VerifyUnit] = []
    for frag, fs in files.items():
        base = meta[frag]
        every = base + tuple(s for _n, s in fs)
        if workers > 1 and size[frag] > share:
            out.append(VerifyUnit(max(size[frag], target), FragmentWork(frag, (), True, every)))
            for name, st in fs:
                for part, nbytes in _file_parts(nodes[(frag, name)], st[1], target):
                    out.append(VerifyUnit(nbytes, FragmentWork(frag, (name,), False,
                                                               base + (st,), part)))
        else:
            out.append(VerifyUnit(size[frag],
                                  FragmentWork(frag, tuple(n for n, _s in fs), True, every)))
    return out


def _file_parts(node: Node, nbytes: int,
                target: int) -> List[Tuple[Optional[Tuple[int, int]], int]]:
    """(pieces a..b, stored bytes) of the data file, about `target` bytes each; one part
    (None: the whole file) when it is not bigger or cannot be split."""
    found = pieces(node) if nbytes > target and not node.pending else []   # unread: whole
    if len(found) < 2:
        return [(None, nbytes)]
    parts: List[Tuple[Optional[Tuple[int, int]], int]] = []
    a, held = 0, 0
    for k, p in enumerate(found):
        held += piece_size(p)
        if held >= target:
            parts.append(((a, k + 1), held))
            a, held = k + 1, 0
    if a < len(found):
        parts.append(((a, len(found)), held))
    return parts if len(parts) > 1 else [(None, nbytes)]


VERIFY_UNITS = TileDBVerifyUnits()

"""verify's TileDB checks of one array beyond the tree's own diagnostics: every chunk, then
the bookkeeping and the cells against the fragment metadata — over a whole tree
(`verify_array`) or a lazily opened one, one fragment built at a time (`verify_streamed`)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ...core.dataset_fs import listings_kept
from ...core.findings import Finding, of_node
from ...core.node import OK, Node
from ...core.verify_tally import Tally, counting_into, folder_bytes, tally
from . import tile_cache
from .bookkeeping import (
    _commits_of,
    check_array,
    check_fragments_one,
    verify_bookkeeping,
    verify_label_arrays,
)
from .check_findings import guard
from .chunk_walk import Splice, walk_chunks
from .verify_chunks import thread_count, verify_chunks


def verify_array(document) -> List[object]:
    """Findings beyond the tree's own diagnostics: every chunk under the root, then the
    fragments' and commits' bookkeeping and the cells against the fragment metadata
    (formats/core/verify_tasks.py splits the first part into tasks and keeps this order). The
    tiles the chunk checks decode are kept (up to a budget) for the cell checks."""
    token = tile_cache.use(tile_cache.TileCache())
    try:
        return verify_chunks(document, document.root) + verify_bookkeeping(document)
    finally:
        tile_cache.reset(token)




# ---- streamed: one fragment built at a time -----------------------------------------------
@dataclass(frozen=True)
class FolderFindings:
    """What checking one fragment folder of a lazily opened array gives, in the streamed
    verify's places: its subtree's diagnostics (tree order), its chunk findings, and its
    bookkeeping and cell findings (None: its metadata did not load; the caller checks it)."""

    diagnostics: Tuple[Finding, ...]
    chunks: Tuple[Finding, ...]
    book: Optional[Tuple[Finding, ...]]


def verify_streamed(document, done: Optional[Dict[str, FolderFindings]] = None) -> List[object]:
    """What `document.diagnostics()` followed by `verify_array` give on a fully built tree,
    in the same order, for a lazily opened array: each fragment folder is built, its
    diagnostics, chunk checks and bookkeeping taken, and released before the next (memory:
    one fragment's tree, not 10 000 of them). `done`: the folders (by name) already checked
    elsewhere (`verify_units`: by workers, `check_folder`), put in their places unbuilt."""
    from ..parse.array import _CommitsDeferred, _FragmentDeferred

    root = document.root
    run = _Streamed(document)
    diags: List[object] = []
    splices: Dict[int, Splice] = {}
    book: Dict[str, List[object]] = {}

    def fragment(m: Node, kids) -> object:
        if not isinstance(kids, _FragmentDeferred) or isinstance(kids, _CommitsDeferred):
            return None
        elsewhere = done.get(m.name) if done else None
        got = elsewhere if elsewhere is not None else run.fast(m)
        if got is None:
            return _Done(m)
        if elsewhere is None:
            young.collect(built=False)
        diags.extend(got.diagnostics)
        splices[id(m)] = Splice(list(got.chunks))
        frag = run.frags.get(m.name)
        if frag is not None and got.book is not None:
            book[frag.path] = list(got.book)
            if elsewhere is not None:   # (`fast` counted its own)
                tally().finished(folder_bytes(frag.path), document.relname(frag.path))
        return SKIP

    class _Done:
        def __init__(self, node: Node):
            self.node = node

        def finish(self) -> None:
            got = run.check(self.node)
            splices[id(self.node)] = Splice(list(got.chunks))
            frag = run.frags.get(self.node.name)
            if frag is not None and got.book is not None:
                book[frag.path] = list(got.book)
            self.node.release_deferred()
            young.collect()

    token = tile_cache.use(tile_cache.TileCache())
    young = _YoungCollections()
    with listings_kept(document.fs):   # each folder listed once in the run
        try:
            _visit(document, root, diags, fragment)
            out: List[object] = list(diags)
            out += verify_chunks(document, root, walk_chunks(root, runs=True, splices=splices))
            if run.checkable:
                array = document.model
                for frag in array.fragments:
                    if frag.path in book:
                        out += book[frag.path]
                        continue
                    out += run.bookkeeping(frag)
                guard(out, document.relname(array.path), check_array, document, array,
                      document=document)
            out += verify_label_arrays(document)   # small arrays of their own: not streamed
            return out
        finally:
            young.close()
            tile_cache.reset(token)
            run.close()


def check_folder(document, node: Node) -> FolderFindings:
    """One fragment folder of a lazily opened array checked as `verify_streamed` checks it
    (a worker's unit): built, its diagnostics, chunks and bookkeeping taken, released. What
    the folders of one document share (its fragments, its commits read once) is kept for
    the next folder; the chunks are checked on this thread (a worker is one of many)."""
    run = _SHARED.get(id(document))
    if run is None or run.document is not document:
        _SHARED.clear()
        run = _SHARED[id(document)] = _Streamed(document, threads=False)
    token = tile_cache.use(tile_cache.TileCache())
    try:
        fast = run.fast(node)
        if fast is not None:
            return fast
        diags: List[object] = []
        node.ensure_built()   # then its subtree as the streamed walk takes it
        _visit(document, node, diags, lambda m, kids: None)
        got = run.check(node)
        node.release_deferred()
        return FolderFindings(tuple(diags), got.chunks, got.book)   # type: ignore[arg-type]
    finally:
        tile_cache.reset(token)


_SHARED: Dict[int, "_Streamed"] = {}   # the last document `check_folder` was given


# Whether a fragment folder is first checked with its metadata file read from the model
# (`_Streamed.fast`); off: the annotated tree of every folder (the reference the tests hold
# the model path to, tests/tiledb/test_verify_paths_differential.py).
MODEL_PATH = True

SKIP = object()   # `_visit`'s `fragment` answer: done elsewhere, neither built nor entered


def _visit(document, n: Node, diags: List[object], fragment) -> None:
    """The tree's diagnostics under `n`, in tree order, into `diags`, building what is
    deferred; `fragment(node, deferred)` is asked first of each deferred node: an object
    with `finish()` to run after its subtree, SKIP, or None (built and entered)."""
    from ...core.node import BuildDeferred

    stack: list = [n]
    while stack:
        m = stack.pop()
        if not isinstance(m, Node):
            m.finish()
            continue
        kids = m._children
        if type(kids) is list:   # the common case, in short (every node of the tree)
            if m.status != OK:
                diags.append(of_node(m, document))
            for c in kids:
                if c.parent is None:   # what `iter_children` does
                    c.parent = m
            stack.extend(reversed(kids))
            continue
        if isinstance(kids, BuildDeferred):
            after = fragment(m, kids)
            if after is SKIP:
                continue
            m.ensure_built()
            if after is not None:
                stack.append(after)   # after its subtree: check it, then release it
        if m.status != OK:
            diags.append(of_node(m, document))
        if m.is_lazy:
            continue
        stack.extend(reversed(list(m.iter_children())))


def _plain_folder(document, path: str):
    """(metadata entry, data file entries in name order) of a fragment folder that holds
    regular files only, its `__fragment_metadata.tdb` and `.tdb` data files (what its tree
    shows without a finding of its own); None for anything else, or one that cannot be
    listed (the tree says what it is)."""
    from ..model.layout import FRAGMENT_METADATA_FILE

    try:
        entries = document.fs.list(path)
    except OSError:
        return None
    meta, data = None, []
    for e in entries:
        if not e.is_file:
            return None
        if e.name == FRAGMENT_METADATA_FILE:
            meta = e
        elif e.name.endswith(".tdb"):
            data.append(e)
        else:
            return None
    return (meta, data) if meta is not None else None


def _data_walk(document, data, fm) -> Optional[List[object]]:
    """The chunk walk of the folder's data files as its tree gives it (`walk_chunks`: the
    files popped off a stack, last first); None where a file's tree has a finding."""
    from .fast_data import chunk_items

    walk: List[object] = []
    for entry in reversed(data):
        items = chunk_items(document, document.open_listed(entry), entry.name,
                            document.model, fm)
        if items is None:
            return None
        walk += items
    return walk


class _Streamed:
    """What the streamed checks of one lazily opened array share: its fragments by folder
    name, its commits (read once), one thread pool for every fragment's chunks (not two
    threads started for each; none with `threads` False)."""

    def __init__(self, document, threads: bool = True):
        self.document = document
        self.threads = threads
        array = document.model
        self.checkable = array is not None and hasattr(array, "fragments") and \
            document.fs.stat(getattr(array, "path", "")).is_dir
        self.frags = {os.path.basename(f.path): f for f in array.fragments} \
            if self.checkable else {}
        self.known = _commits_of(document, array) if self.checkable else None
        self._pool: list = []
        from .fast_metadata import Seen

        self.seen = Seen()   # metadata sections checked clean (`fast`)

    def pool(self):
        if not self.threads:
            return None
        if not self._pool:
            from concurrent.futures import ThreadPoolExecutor

            workers = thread_count()
            self._pool.append(ThreadPoolExecutor(workers) if workers > 1 else None)
        return self._pool[0]

    def fast(self, node: Node) -> Optional[FolderFindings]:
        """The fragment folder checked from the model and the raw bytes, its tree not built:
        listed, its metadata file read by `fast_metadata`, its data files' chunks walked by
        `fast_data` and checked as `check` checks them, then its bookkeeping — when nothing
        at all is found there; else None, and the caller checks it with the tree (which
        locates what is found)."""
        from .fast_metadata import clean_metadata

        frag = self.frags.get(node.name)
        if not MODEL_PATH or frag is None or self.known is None or not node.pending:
            return None
        document = self.document
        files = _plain_folder(document, frag.path)
        if files is None:
            return None
        meta, data = files
        aside = Tally()
        clean = False
        with counting_into(aside):
            got = clean_metadata(document, document.open_listed(meta), document.model,
                                 self.seen)
            if got is not None:
                frag.metadata = got.metadata
                if frag.version is None and got.metadata.version:
                    frag.version = got.metadata.version
                for name, nbytes in got.tallied:
                    tally().tile(name, nbytes)
                walk = _data_walk(document, data, got.metadata)
                clean = walk is not None and \
                    not verify_chunks(document, node, walk, pool=self.pool()) and \
                    not self.bookkeeping(frag)
        frag.metadata = None   # as the released folder's tree leaves it (one at a time)
        if not clean:
            return None
        where = document.relname(frag.path)
        tally().add(aside, where)
        tally().finished(meta.size + sum(e.size for e in data), where)
        return FolderFindings((), (), ())

    def check(self, node: Node) -> FolderFindings:
        """The built fragment folder's chunk checks and bookkeeping (no diagnostics)."""
        document = self.document
        found = verify_chunks(document, node, pool=self.pool())
        chunks = tuple(f if isinstance(f, Finding) else of_node(f, document) for f in found)
        frag = self.frags.get(node.name)
        book = None
        if frag is not None and frag.metadata is not None and self.known is not None:
            book = tuple(self.bookkeeping(frag))
            tally().finished(folder_bytes(frag.path), document.relname(frag.path))
        return FolderFindings((), chunks, book)

    def bookkeeping(self, frag) -> List[Finding]:
        from .cell_checks import check_fragment_cells

        document, array = self.document, self.document.model
        mine: List[object] = []
        where = document.relname(frag.path)
        guard(mine, where, lambda: check_fragments_one(document, array, frag, self.known),
              document=document)
        guard(mine, where, lambda: check_fragment_cells(document, array, frag,
                                                        document.ctx.key),
              document=document)
        return [f if isinstance(f, Finding) else of_node(f, document) for f in mine]

    def close(self) -> None:
        if self._pool and self._pool[0] is not None:
            self._pool[0].shutdown()


class _YoungCollections:
    """No automatic cyclic garbage collection while the fragments are checked one by one;
    instead the youngest generation is collected after each fragment is released (the
    cycles of its tree: parent and child nodes) and the next one every `OLDER` fragments.
    Why: the automatic collections this many allocations trigger scan the whole heap, the
    model of every fragment included, and free little; measured 10-20 % of verify's CPU on
    100 fragments. Collection resumes after (and is left alone when it was off)."""

    OLDER = 64
    UNBUILT = 16   # fragments checked with no tree (the model path) between collections

    def __init__(self) -> None:
        import gc

        self.gc, self.n, self.unbuilt = gc, 0, 0
        self.was = gc.isenabled()
        gc.disable()

    def collect(self, built: bool = True) -> None:
        """After a fragment; `built` False: none of its tree was built (few cycles: the
        youngest generation is collected every `UNBUILT` of those, not after each)."""
        if not self.was:
            return
        if not built:
            self.unbuilt += 1
            if self.unbuilt % self.UNBUILT:
                return
        self.n += 1
        self.gc.collect(1 if self.n % self.OLDER == 0 else 0)

    def close(self) -> None:
        if self.was:
            self.gc.enable()

"""verify's TileDB checks of one array beyond the tree's own diagnostics: every chunk, then
the bookkeeping and the cells against the fragment metadata — over a whole tree
(`verify_array`) or a lazily opened one, one fragment built at a time (`verify_streamed`)."""
from __future__ import annotations

import os
from typing import Dict, List

from ..findings import Finding, of_node
from ..node import OK, Node
from ..verify_tally import folder_bytes, tally
from . import tile_cache
from .bookkeeping import _commits_of, check_array, check_fragments_one, verify_bookkeeping
from .check_findings import guard
from .chunk_walk import Splice, walk_chunks
from .verify_chunks import thread_count, verify_chunks


def verify_array(document) -> List[object]:
    """Findings beyond the tree's own diagnostics: every chunk under the root, then the
    fragments' and commits' bookkeeping and the cells against the fragment metadata
    (formats/verify_tasks.py splits the first part into tasks and keeps this order). The
    tiles the chunk checks decode are kept (up to a budget) for the cell checks."""
    token = tile_cache.use(tile_cache.TileCache())
    try:
        return verify_chunks(document, document.root) + verify_bookkeeping(document)
    finally:
        tile_cache.reset(token)




# ---- streamed: one fragment built at a time -----------------------------------------------
def verify_streamed(document) -> List[object]:
    """What `document.diagnostics()` followed by `verify_array` give on a fully built tree,
    in the same order, for a lazily opened array: each fragment folder is built, its
    diagnostics, chunk checks and bookkeeping taken, and released before the next (memory:
    one fragment's tree, not 10 000 of them)."""
    from ..node import BuildDeferred
    from .array import _CommitsDeferred, _FragmentDeferred

    root = document.root
    array = document.model
    key = document.ctx.key
    diags: List[object] = []
    splices: Dict[int, Splice] = {}
    book: Dict[str, List[object]] = {}
    checkable = array is not None and hasattr(array, "fragments") and \
        document.fs.stat(getattr(array, "path", "")).is_dir
    frags = {os.path.basename(f.path): f for f in array.fragments} if checkable else {}
    known = _commits_of(document, array) if checkable else None

    def visit(n: Node) -> None:
        stack: list = [n]
        while stack:
            m = stack.pop()
            if m.__class__ is _Done:
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
                m.ensure_built()
                d = m._deferred
                if isinstance(d, _FragmentDeferred) and not isinstance(d, _CommitsDeferred):
                    stack.append(_Done(m))   # after its subtree: check it, then release it
            if m.status != OK:
                diags.append(of_node(m, document))
            if m.is_lazy:
                continue
            stack.extend(reversed(list(m.iter_children())))

    class _Done:
        def __init__(self, node: Node):
            self.node = node

        def finish(self) -> None:
            node = self.node
            found = verify_chunks(document, node, pool=pool())
            splices[id(node)] = Splice([f if isinstance(f, Finding) else of_node(f, document)
                                         for f in found])
            frag = frags.get(node.name)
            if frag is not None and frag.metadata is not None and known is not None:
                mine: List[object] = []
                where = document.relname(frag.path)
                guard(mine, where, lambda: check_fragments_one(document, array, frag, known),
                       document=document)
                guard(mine, where, lambda: check_fragment_cells(document, array, frag, key),
                       document=document)
                book[frag.path] = [f if isinstance(f, Finding) else of_node(f, document)
                                   for f in mine]
                tally().finished(folder_bytes(frag.path), document.relname(frag.path))
            node.release_deferred()
            young.collect()

    from .cell_checks import check_fragment_cells

    shared: list = []

    def pool():
        """One thread pool for every fragment's chunks (not two threads started for each)."""
        if not shared:
            from concurrent.futures import ThreadPoolExecutor

            workers = thread_count()
            shared.append(ThreadPoolExecutor(workers) if workers > 1 else None)
        return shared[0]

    token = tile_cache.use(tile_cache.TileCache())
    young = _YoungCollections()
    try:
        visit(root)
        out: List[object] = list(diags)
        out += verify_chunks(document, root, walk_chunks(root, runs=True, splices=splices))
        if checkable:
            for frag in array.fragments:
                if frag.path in book:
                    out += book[frag.path]
                    continue
                where = document.relname(frag.path)
                guard(out, where, lambda f=frag: check_fragments_one(document, array, f, known),
                       document=document)
                guard(out, where, lambda f=frag: check_fragment_cells(document, array, f, key),
                       document=document)
            guard(out, document.relname(array.path), check_array, document, array,
                   document=document)
        return out
    finally:
        young.close()
        tile_cache.reset(token)
        if shared and shared[0] is not None:
            shared[0].shutdown()


class _YoungCollections:
    """No automatic cyclic garbage collection while the fragments are checked one by one;
    instead the youngest generation is collected after each fragment is released (the
    cycles of its tree: parent and child nodes) and the next one every `OLDER` fragments.
    Why: the automatic collections this many allocations trigger scan the whole heap, the
    model of every fragment included, and free little; measured 10-20 % of verify's CPU on
    100 fragments. Collection resumes after (and is left alone when it was off)."""

    OLDER = 64

    def __init__(self) -> None:
        import gc

        self.gc, self.n = gc, 0
        self.was = gc.isenabled()
        gc.disable()

    def collect(self) -> None:
        if self.was:
            self.n += 1
            self.gc.collect(1 if self.n % self.OLDER == 0 else 0)

    def close(self) -> None:
        if self.was:
            self.gc.enable()

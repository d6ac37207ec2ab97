"""Cross-checks for `arrayscope verify` beyond what parsing itself reports.

- every chunk is reversed: checksums verified, AES-GCM tags checked, decompression run,
  and the result must have the chunk's declared original length;
- deterministic stages are applied forward from the decoded cells and must reproduce the
  stored bytes (compressors and AES may re-encode differently: not an error);
- fragments vs commits (`.wrt`, `.ok`, `.con`, `.vac`), fragment names vs footer versions,
  footer file sizes vs the files on disk, tile offsets inside their files and in order.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from .. import compiled
from ..context import KEY_HINT
from ..dataset_fs import fs_of, unreadable_node
from ..filters import FilterError, RunContext
from ..filters.unread import unread_metadata
from ..findings import (
    AES_TAG,
    CHUNK_DECODE,
    CHUNK_METADATA_UNREAD,
    COMMIT_ORPHAN,
    FILE_MISSING,
    FILE_SIZE,
    FORWARD_FAILED,
    FORWARD_MISMATCH,
    NO_KEY,
    UNCHECKED,
    UNCOMMITTED,
    WRITER_BUG,
    WRITER_QUIRK,
    Finding,
)
from ..forward_check import DIFFERENT, FAILED, TOLERATED, check_forward
from ..node import ERROR, OK, WARNING, Node
from ..standin import HEAD as STAND_IN_HEAD
from ..standin import stand_in
from ..verify import folder_bytes, tally
from . import layout, tile_cache
from .data_files import TileRun, data_file_stem
from .decode import join_chunks
from .rawtile import TileError
from .tile import ChunkInfo, TileInfo


def finding(source, offset: int, status: str, message: str, name: str = "verify",
            code: Optional[str] = None) -> Node:
    n = Node(name, "error" if status == ERROR else "field", source, offset, 0, code=code)
    n.status, n.message = status, message
    return n


# ---- chunks ----------------------------------------------------------------------------
def iter_chunks(root: Node) -> Iterable[ChunkInfo]:
    """Every chunk of every tile under `root` (expanding lazy lists of tiles), in the verify
    order that formats/verify_tasks.py lists its units in."""
    for ci, _tile in iter_chunks_with_tiles(root):
        yield ci


def iter_chunks_with_tiles(root: Node) -> Iterable[Tuple[ChunkInfo, Optional[TileInfo]]]:
    """`iter_chunks`, each chunk with its tile (None outside a tile)."""
    for item in _walk(root, runs=False):
        assert not isinstance(item, _Run)
        if isinstance(item, _Splice):   # findings, not chunks
            continue
        yield item


class _Run:
    """A lazy "Tiles" node whose tiles `verify_chunks` checks in one batch (tile_batch)."""

    __slots__ = ("node", "run")

    def __init__(self, node: Node, run: TileRun):
        self.node, self.run = node, run


def _walk(root: Node, runs: bool, splices: Optional[Dict[int, "_Splice"]] = None):
    """The chunks under `root` in verify order; with `runs`, a `_Run` in place of the chunks
    of each lazy list of tiles; with `splices`, the `_Splice` of a node in place of its
    subtree (a fragment checked, then released, by `verify_streamed`)."""
    stack = [root]
    while stack:
        n = stack.pop()
        if splices is not None and id(n) in splices:
            yield splices[id(n)]
            continue
        if n.data is None and type(n._children) is list:   # most nodes: only their children
            kids = n._children
            for c in kids:
                if c.parent is None:   # what `iter_children` does
                    c.parent = n
            stack.extend(kids)
            continue
        if isinstance(n.data, ChunkInfo):
            tile = n.parent.data if n.parent is not None else None
            yield n.data, tile if isinstance(tile, TileInfo) else None
            continue
        if isinstance(n.data, TileInfo) and n.pending:  # chunk nodes not built: none needed
            for ci in n.data.chunks:
                yield ci, n.data
            continue
        if isinstance(n.data, TileRun):  # a million tiles: one chunk table at a time
            if runs:
                yield _Run(n, n.data)
                continue
            for i in range(len(n.data)):
                yield from _tile_chunks(n, n.data, i)
            continue
        if n.is_lazy:
            if n.child_count() and n.child(0).kind == "tile":  # popped in file order
                stack.extend(n.child(i) for i in reversed(range(n.child_count())))
            continue
        stack.extend(n.iter_children())


class _Splice:
    """Findings of a subtree already checked, in its place in the walk."""

    __slots__ = ("found",)

    def __init__(self, found: List[object]):
        self.found = found


def _tile_chunks(n: Node, run: TileRun, i: int
                 ) -> Iterable[Union[Tuple[ChunkInfo, Optional[TileInfo]], "_Splice"]]:
    """The chunks of tile `i` of lazy tiles node `n`, each with its tile (and a `_Splice` of
    the tile node's findings when its chunk table does not parse)."""
    try:
        chunks = run.chunks(i)
    except TileError:
        # The tile's node says what is wrong. It is built here, after the tree's diagnostics
        # were taken, so its findings go into the walk in its place (else a damaged chunk
        # table in a file of more than LAZY tiles went unreported).
        node = n.child(i)
        bad: List[object] = [m for m in node.walk() if m.status != OK]
        if bad:
            yield _Splice(bad)
        yield from iter_chunks_with_tiles(node)
        return
    start = int(run.offsets[i])
    tile = TileInfo(run.source, start, int(run.ends[i]) - start, run.role.specs,
                    run.role.info, chunks)
    for ci in chunks:
        yield ci, tile


def _src_name(ci: ChunkInfo) -> str:
    return getattr(ci.source, "name", str(ci.source))


# Per-chunk findings that formats/verify.py says once per file with a count start so:
PER_CHUNK = "chunk: "


class _Checked:
    """What checking one chunk gave: its findings, the bytes to tally (None: not counted)
    and, when it reversed cleanly, its (cells, rebuilt offsets)."""

    __slots__ = ("findings", "tallied", "decoded", "last_ok")

    def __init__(self) -> None:
        self.findings: List[Finding] = []
        self.tallied: Optional[Tuple[str, int]] = None
        self.decoded: Optional[Tuple[bytes, Optional[bytes]]] = None
        # the forward checks of the last filters (`_checked`: from `skip_from` on) ran and
        # none failed (None: none ran)
        self.last_ok: Optional[bool] = None


def check_chunk(ci: ChunkInfo, key: Optional[bytes],
                tile: Optional[TileInfo] = None) -> List[Finding]:
    """Reverse the chunk (checksums, tags, codecs, declared length), then the forward check."""
    r = _check_chunk(ci, key, tile)
    if r.tallied is not None:
        tally().tile(*r.tallied)
    return r.findings


def _check_chunk(ci: ChunkInfo, key: Optional[bytes], tile: Optional[TileInfo],
                 skip_from: Optional[int] = None) -> _Checked:
    """`check_chunk` without the tally (the caller's: it may run on a thread, and the tally
    belongs to the calling context). `skip_from`: no forward check of the filters from
    there on (`tile_batch.silent_forward`: a failing forward is all they could find, and
    the file's first chunk showed theirs do not fail: `_FastChunks.last_codec`)."""
    r = _Checked()
    if ci.source is None or not hasattr(ci.source, "path"):
        return r  # chunks of derived sources are checked through their parents
    if ci.blocked is not None:
        return r  # its tile node carries the finding; nothing is decoded
    r.tallied = (_src_name(ci), ci.metadata_length + ci.filtered_length)
    run = ci.reverse(key)
    r.findings = _chunk_findings(ci, key, tile, run, skip_from, r)
    if run.error is None:
        r.decoded = (run.cells, run.offsets)
    return r


def _chunk_findings(ci: ChunkInfo, key: Optional[bytes], tile: Optional[TileInfo],
                    run, skip_from: Optional[int] = None, r: Optional[_Checked] = None
                    ) -> List[Finding]:
    out: List[Finding] = []
    src = _src_name(ci)
    if run.error is not None:
        fe = run.error
        where = ci.metadata_offset if fe.where is None else ci.metadata_offset + fe.where
        kind = getattr(fe, "kind", None)
        if kind == FilterError.NO_KEY:
            out.append(Finding("warning", NO_KEY, src, ci.data_offset, "",
                               f"chunk {ci.index + 1} is encrypted and was not checked",
                               KEY_HINT))
        elif kind == FilterError.NO_CODEC:
            out.append(Finding("warning", UNCHECKED, src, ci.data_offset, "",
                               f"{PER_CHUNK}not checked: {fe}", str(fe)))
        elif kind == FilterError.TAG:
            out.append(Finding("error", AES_TAG, src, where, "",
                               f"chunk {ci.index + 1}: {fe}", KEY_HINT))
        elif not (tile is not None and tile.tree_decoded):  # else the tree says it
            stage = ci.specs[run.failed_at].name if run.failed_at is not None and \
                run.failed_at < len(ci.specs) else "chunk"
            msg, hint = f"chunk {ci.index + 1}: reversing {stage} failed: {fe}", ""
            if stage == "RLE" and ci.info.var_strings and "do not end with the data" in str(fe):
                msg += (" — probably the libtiledb 2.30 RLE string-length bug: the byte size "
                        "of the string lengths is taken from every run but the last, so a "
                        "longer last string is stored with a truncated length (libtiledb "
                        "cannot read this tile either)")
                hint = "rewrite the array without RLE on var-length strings, from a good copy"
            out.append(Finding("error", CHUNK_DECODE, src, where, "", msg, hint))
        return out
    if run.unread > 0:
        out.append(_unread_finding(ci, run.unread))
    if not ci.specs:
        return out
    stages = run.stages
    if skip_from is not None:   # stage k + 1 unknown: filter k's check is not made
        stages = list(stages[:skip_from + 1]) + [None] * (len(stages) - skip_from - 1)
    checks = check_forward(ci.specs, stages, ci.info,
                           RunContext(key, ci.original_length, offsets=run.offsets))
    if r is not None:
        last = [c.status != FAILED for c in checks if c.k >= _silent_from(ci.specs)]
        r.last_ok = all(last) if last else None
    for c in checks:
        if c.status in (DIFFERENT, FAILED):
            off = ci.metadata_offset
            if c.k == len(ci.specs) - 1 and c.ranges:  # the stored stage is the file's bytes
                o = c.ranges[0][0]
                off = ci.metadata_offset + o if o < ci.metadata_length else \
                    ci.data_offset + (o - ci.metadata_length)
            out.append(Finding(
                "error", FORWARD_MISMATCH if c.status == DIFFERENT else FORWARD_FAILED, src, off,
                "", f"chunk {ci.index + 1}: {c.message}",
                "the decoded cells do not give the stored bytes back: damage, or a writer "
                "arrayscope does not model (report it with the writer's version)"))
            continue
        if c.ok:
            for note in c.notes:
                out.append(Finding("warning", WRITER_BUG, src, ci.data_offset, "",
                                   f"{PER_CHUNK}{c.filter}: {note}",
                                   "rewrite the array with a fixed libtiledb from a good copy"))
        if c.ok and c.quirk:
            if c.status == TOLERATED and c.default_rule:
                text = (f"{c.filter}: bytes the writer leaves uninitialised (the offset of a "
                        f"window stored unreduced) hold other values; not damage")
            else:
                text = f"{c.filter} encoded as by {c.rule}"
            out.append(Finding("info", WRITER_QUIRK, src, ci.data_offset, "",
                               f"{PER_CHUNK}{text}"))
    return out


def _unread_finding(ci: ChunkInfo, unread: int) -> Finding:
    """Chunk metadata after what the filters read (`filters/unread.py`): a warning, since
    libtiledb reads the chunk alike but never writes such bytes."""
    read = ci.metadata_length - unread
    return Finding(
        "warning", CHUNK_METADATA_UNREAD, _src_name(ci), ci.metadata_offset + read, "",
        f"chunk {ci.index + 1}: {unread} bytes of chunk metadata after the {read} its filters "
        f"read; libtiledb ignores them on read (the cells decode alike) and never writes any",
        "the chunk was edited after writing (its metadata length grew): compare with a good "
        "copy")


# ---- fragments and commits -------------------------------------------------------------
def _commit_names(array_dir: str, fs=None):
    fs = fs_of(None, array_dir) if fs is None else fs
    cdir = os.path.join(array_dir, layout.COMMITS_DIR)
    names: Dict[str, Any] = {"wrt": set(), "con": set(), "vac": [], "del": set(), "ign": set()}
    if not fs.stat(cdir).is_dir:
        return names
    try:
        entries = fs.list(cdir)
    except OSError:
        return names
    for e in entries:
        f = e.name
        stem, _, ext = f.rpartition(".")
        if ext == "wrt":
            names["wrt"].add(stem)
        elif ext in ("con", "ign", "vac"):
            if not e.is_file:
                continue  # a FIFO or a link out of the array: shown as a finding in the tree
            try:
                text = fs.read_bytes(e.path, 1 << 20)[0].decode("utf-8", "replace")
            except OSError:
                continue
            for line in text.splitlines():
                line = line.strip()
                base = os.path.basename(line)
                if not base:
                    continue
                if ext == "vac":
                    names["vac"].append((f, base))
                else:
                    names[ext].add(base.rsplit(".", 1)[0])
        elif ext == "del":
            names["del"].add(stem)
    return names


def check_fragments_one(document, array, f, known: Optional[tuple] = None) -> List[Node]:
    """Fragment `f` against the commits; `known` is `_commits_of` of the array, read once
    for all its fragments (listing __commits per fragment is quadratic in fragments)."""
    out: List[Node] = []
    commits, new_layout = known if known is not None else _commits_of(document, array)
    committed = commits["wrt"] | commits["con"]
    src = document.source_by_name(document.relname(os.path.join(f.path, layout.FRAGMENT_METADATA_FILE)))
    where = src if src is not None else document.relname(f.path)
    if new_layout and f.name not in committed and f.name not in commits["ign"]:
        out.append(finding(where, 0, WARNING,
                           f"fragment {f.name} has no commit (.wrt) in __commits: readers ignore it",
                           code=UNCOMMITTED))
    if not new_layout and not document.fs.stat(f.path + ".ok").is_file and \
            not document.fs.stat(os.path.join(f.path, layout.FRAGMENT_METADATA_FILE)).is_file:
        out.append(finding(where, 0, WARNING, f"fragment {f.name} has no .ok marker",
                           code=UNCOMMITTED))
    fm = f.metadata
    if fm is None:
        return out
    if f.version is not None and getattr(fm, "version", None) not in (None, f.version):
        out.append(finding(where, 0, ERROR,
                           f"fragment name says format version {f.version}, its footer says "
                           f"{fm.version}"))
    out.extend(_check_sizes(document, array, f, where))
    from .reader_faults import check_unreadable_empty_tiles

    out.extend(check_unreadable_empty_tiles(document, array, f))
    return out


def _commits_of(document, array) -> tuple:
    """(commit names, new layout) of the array."""
    return (_commit_names(array.path, document.fs),
            document.fs.stat(os.path.join(array.path, layout.FRAGMENTS_DIR)).is_dir)


def check_commits(document, array) -> List[Node]:
    out: List[Node] = []
    array_dir = array.path
    commits = _commit_names(array_dir, document.fs)
    frag_names = {f.name for f in array.fragments}
    new_layout = document.fs.stat(os.path.join(array_dir, layout.FRAGMENTS_DIR)).is_dir
    for stem in sorted(commits["wrt"] - frag_names):
        if new_layout:
            out.append(finding(document.relname(os.path.join(array_dir, layout.COMMITS_DIR, stem + ".wrt")),
                               0, ERROR, f"commit {stem}.wrt names a fragment that does not exist",
                               code=COMMIT_ORPHAN))
    for vac_file, base in commits["vac"]:
        if base not in frag_names:
            out.append(finding(document.relname(os.path.join(array_dir, layout.COMMITS_DIR, vac_file)),
                               0, WARNING, f"{vac_file} lists fragment {base}, which is not present "
                                           f"(already vacuumed?)"))
    return out


def check_array(document, array) -> List[Node]:
    """The array-level checks, after every fragment's: commits, then what makes libtiledb
    refuse or misread the array (reader_faults.py)."""
    from .reader_faults import check_reader_faults

    return check_commits(document, array) + check_reader_faults(document, array)


def _slot_files(schema, fm):
    version = getattr(fm, "version", None)
    names: List[Optional[str]] = [data_file_stem(schema, version, a) for a in schema.attributes]
    # legacy __coords slot: a file only in formats < 5 (zipped coordinates)
    names.append("__coords" if version is not None and version < 5 else None)
    for d in schema.dimensions:
        names.append(data_file_stem(schema, version, d))
    if getattr(fm, "has_timestamps", False):
        names.append("t")
    if getattr(fm, "has_delete_meta", False):
        names += ["dt", "dci"]
    return names


def _check_sizes(document, array, frag, where) -> List[Node]:
    out: List[Node] = []
    fm = frag.metadata
    schema = array.schema_for(getattr(fm, "schema_name", None))
    if schema is None:
        return out
    slots = _slot_files(schema, fm)
    for kind, sizes, suffix in (("file", fm.file_sizes, ""), ("var file", fm.file_var_sizes, "_var"),
                                ("validity file", fm.file_validity_sizes, "_validity")):
        for i, declared in enumerate(sizes or []):
            if i >= len(slots) or slots[i] is None or not declared:
                continue
            p = os.path.join(frag.path, f"{slots[i]}{suffix}.tdb")
            entry = document.fs.stat(p)
            actual = entry.size if entry.is_file else None
            if actual is None:
                out.append(finding(where, 0, ERROR, f"footer gives {slots[i]}{suffix}.tdb "
                                                    f"{declared} bytes, but the file is missing",
                                   code=FILE_MISSING))
            elif actual < declared and not _stands_in(document, p):
                # (longer: libtiledb reads it, the tree's warning; a stand-in: the tree's)
                src = document.source_by_name(document.relname(p)) or where
                out.append(finding(src, actual, ERROR,
                                   f"footer gives {slots[i]}{suffix}.tdb {declared} bytes, the file "
                                   f"has {actual}", code=FILE_SIZE))
    for label, offsets_list, sizes, suffix in (
            ("tile offsets", fm.tile_offsets, fm.file_sizes, ""),
            ("var tile offsets", fm.tile_var_offsets, fm.file_var_sizes, "_var"),
            ("validity tile offsets", fm.tile_validity_offsets, fm.file_validity_sizes, "_validity")):
        for i, offs in enumerate(offsets_list or []):
            if offs is None or i >= len(slots) or slots[i] is None or len(offs) == 0:
                continue
            size = sizes[i] if sizes and i < len(sizes) else None
            import numpy as np

            a = np.asarray(offs, dtype=np.uint64)
            if len(a) > 1 and not np.all(a[1:] > a[:-1]) and np.any(a):
                bad = int(np.argmax(a[1:] <= a[:-1])) + 1
                out.append(finding(where, 0, ERROR, f"{slots[i]}{suffix}.tdb: {label} not increasing "
                                                    f"at tile {bad + 1} ({int(a[bad - 1])} then "
                                                    f"{int(a[bad])})"))
            if size and np.any(a >= np.uint64(size)):
                bad = int(np.argmax(a >= np.uint64(size)))
                out.append(finding(where, 0, ERROR, f"{slots[i]}{suffix}.tdb: {label}[{bad}] = "
                                                    f"{int(a[bad])} is past the file's {size} bytes"))
    return out


def _stands_in(document, path: str) -> bool:
    """Whether the file at `path` is a stand-in (a git-lfs pointer, an HTML page): its node
    in the tree says so."""
    try:
        return stand_in(document.fs.read_bytes(path, STAND_IN_HEAD)[0]) is not None
    except OSError:
        return False


def _guard(out: list, where, fn, *args, document=None) -> None:
    """Run one check; a check that trips over damaged input reports it instead of raising.
    A file it cannot read is said as its node in the tree says it (`unreadable_node`: the
    same finding, kept once)."""
    try:
        out.extend(fn(*args) or ())
    except OSError as e:
        if document is None or not e.filename:
            out.append(finding(where, 0, ERROR, f"check {fn.__name__} could not finish: "
                                                f"{type(e).__name__}: {e}"))
            return
        node = unreadable_node(document, os.fsdecode(e.filename), e)
        out.append(finding(node.source or where, 0, ERROR, node.message or "", code=node.code))
    except Exception as e:  # noqa: BLE001 - verify never raises
        out.append(finding(where, 0, ERROR, f"check {fn.__name__} could not finish: "
                                            f"{type(e).__name__}: {e}"))


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


# Chunks are checked on a thread pool (zstd, zlib, bz2, lz4, numpy and cryptography release
# the GIL) in batches of this many chunks or bytes, so tiny chunks cost no task each.
_BATCH_CHUNKS = 256
_BATCH_BYTES = 4 << 20
_THREAD_MIN_BYTES = 1 << 20   # a batch of less runs in the calling thread


def verify_chunks(document, root: Node, items=None, pool=None) -> List[object]:
    """The checks of every chunk under `root`, in `iter_chunks` order. `items` (streamed
    verify): the walk to take instead, with `_Splice`s of findings already made. `pool`: a
    thread pool of `_workers()` threads to use (and leave running) instead of a new one."""
    out: List[object] = []
    key = document.ctx.key
    keep = _TileKeeper(tile_cache.current())

    def take(ci: ChunkInfo, tile: Optional[TileInfo], r: Optional[_Checked],
             err: Optional[Exception]) -> None:
        if err is not None:   # what _guard says
            out.append(finding(ci.source, 0, ERROR, f"check check_chunk could not finish: "
                                                    f"{type(err).__name__}: {err}"))
            keep.add(ci, tile, None)
            return
        assert r is not None
        if r.tallied is not None:
            tally().tile(*r.tallied)
        out.extend(r.findings)
        keep.add(ci, tile, r.decoded)

    spliced = items is not None
    walk = _batched(items if spliced else _walk(root, runs=True))
    for got in _checked(walk, key, 1 if spliced else _workers(), None if spliced else pool):
        if isinstance(got, _Splice):
            out.extend(got.found)
        else:
            take(*got)
    keep.flush()
    return out


def _batched(items) -> Iterable[Union[Tuple[ChunkInfo, Optional[TileInfo]], "_Splice"]]:
    """The chunks of `_walk(root, runs=True)` left to the per-chunk path: the tiles of a lazy
    tiles list that decode in one pass (tile_batch: no finding possible) are tallied here."""
    from . import tile_batch

    for item in items:
        if not isinstance(item, _Run):
            yield item
            continue
        run, node = item.run, item.node
        name = _src_name_of(run.source)
        cache = tile_cache.current()
        for w in tile_batch.decode_run(run.source, run.offsets, run.ends, run.role, probe=True):
            done = len(w.cells) - w.cells.count(None)
            if done:
                tally().batch(name, done, w.stored)
            if cache is not None and run.role.specs:   # kept for the cell checks, as
                for k, cells in enumerate(w.cells):      # _TileKeeper keeps the others
                    if cells is not None and len(cells) >= _KEEP_MIN:
                        cache.put(cache.key(name, int(run.offsets[w.first + k]), run.role.specs,
                                            run.role.info), (cells, None))
            for k, cells in enumerate(w.cells):
                if cells is None:
                    yield from _tile_chunks(node, run, w.first + k)


# Decoded tiles of at least this many bytes are kept for the cell checks (a codec call saved
# each); smaller ones are decoded again, in one pass, rather than held a million at a time.
_KEEP_MIN = 4096


def _src_name_of(source) -> str:
    return getattr(source, "name", str(source))


def _workers() -> int:
    return compiled.TUNING.workers


_SILENT_FROM: Dict[Tuple[int, ...], int] = {}   # filter types -> _silent_from


def _silent_from(specs) -> int:
    """Where the filters whose forward checks can only fail on their options begin (the
    end of the pipeline's run of `tile_batch.silent_forward` filters); len(specs): none.
    Kept by filter types (what `silent_forward` looks at): asked twice a chunk."""
    key = tuple(s.type for s in specs)
    got = _SILENT_FROM.get(key)
    if got is None:
        from .tile_batch import silent_forward

        got = len(specs)
        while got > 0 and silent_forward(specs[got - 1]):
            got -= 1
        _SILENT_FROM[key] = got
    return got


def _run_one(ci: ChunkInfo, key, tile, skip_from: Optional[int] = None
             ) -> Tuple[Optional[_Checked], Optional[Exception]]:
    try:
        return _check_chunk(ci, key, tile, skip_from), None
    except Exception as e:  # noqa: BLE001 - verify never raises
        return None, e


Result = Tuple[ChunkInfo, Optional[TileInfo], Optional[_Checked], Optional[Exception]]

# Chunks left to the per-chunk path are checked this many (or bytes) at a time between the
# fast windows: bounded memory for a million tiles, few waits for the pool.
_SLOW_CHUNKS = 8 * _BATCH_CHUNKS
_SLOW_BYTES = 8 * _BATCH_BYTES


def _checked(items, key, workers: int, shared=None) -> Iterable[Union[_Splice, Result]]:
    """Each chunk of `items` with its check, in order (`_Splice`s in their place). The
    chunks of pipelines `tile_batch.chunk_plan` covers are decoded in windows, one slice of
    a window per thread (`_FastChunks`); the rest, and what a window leaves, are checked one
    by one, on the pool in batches (`_slow`). One pool for the whole walk (`shared`, when
    given: the caller's, left running)."""
    from concurrent.futures import ThreadPoolExecutor

    pool = None if workers <= 1 else shared if shared is not None else \
        ThreadPoolExecutor(workers)
    fast = _FastChunks(key, pool, workers)
    slow: list = []
    size = 0
    try:
        for item in items:
            if not isinstance(item, _Splice):
                ci, tile = item
                how = fast.how(ci)
                if how != _SLOW:
                    if slow:
                        yield from _slow(slow, key, pool, workers)
                        slow, size = [], 0
                    if how == _FAST:
                        yield from fast.add(ci, tile)
                    else:   # the first chunk of its file: checked in full first
                        yield from fast.flush()
                        r, err = _run_one(ci, key, tile)
                        fast.probed(ci, r, err)
                        yield ci, tile, r, err
                    continue
                size += ci.filtered_length + ci.original_length
                last = fast.last_codec(ci)
                if last == _PROBE:   # the file's first chunk of it: in full, first
                    yield from fast.flush()
                    yield from _slow(slow, key, pool, workers)
                    slow, size = [], 0
                    r, err = _run_one(ci, key, tile)
                    fast.last_probed(ci, r, err)
                    yield ci, tile, r, err
                    continue
                item = (ci, tile, _silent_from(ci.specs) if last == _FAST else None)
            yield from fast.flush()
            slow.append(item)
            if len(slow) >= _SLOW_CHUNKS or size >= _SLOW_BYTES:
                yield from _slow(slow, key, pool, workers)
                slow, size = [], 0
        yield from fast.flush()
        yield from _slow(slow, key, pool, workers)
    finally:
        if pool is not None and pool is not shared:
            pool.shutdown()


_FAST, _PROBE, _SLOW = "fast", "probe", "slow"
_CHUNK_MAX = 64 << 20    # a chunk declaring more cells goes the per-chunk way (its limits)
_WINDOW_CELLS = 64 << 20  # decoded bytes of one window (plus one chunk)


class _FastChunks:
    """Chunks of one file and pipeline gathered into a window (up to `tile_batch.WINDOW`
    stored bytes, `_WINDOW_CELLS` decoded), then decoded together by
    `decode.Planned` (a `clean` run); each comes out clean (no finding, its cells) or through the
    per-chunk checks, which say what is wrong."""

    def __init__(self, key, pool, workers: int):
        self.key, self.pool, self.workers = key, pool, workers
        self.plans: Dict[Tuple[int, int], Tuple[Any, int, int, Any, Any]] = {}
        self.pipelines: Dict[Tuple[str, str], int] = {}   # (specs, info) by value -> number
        self.probes: Dict[Tuple[str, int], bool] = {}   # (file name, pipeline) -> clean
        self.lasts: Dict[Tuple[str, int], bool] = {}    # -> its last codec's forward is ok
        self.codecs: Dict[int, bool] = {}               # pipeline -> ends with a lone codec
        self.items: List[Tuple[ChunkInfo, Optional[TileInfo]]] = []
        self.lo = self.hi = self.cells = 0
        self.group: Optional[Tuple[int, int]] = None

    def _plan(self, ci: ChunkInfo) -> Tuple[Any, int, int]:
        """(plan or None, its metadata length, the pipeline's number): by value, as every
        generic tile (fragment metadata sections) has a pipeline object of its own."""
        k = (id(ci.specs), id(ci.info))
        got = self.plans.get(k)
        if got is None:
            from .tile_batch import chunk_plan, plan_metadata

            p = chunk_plan(ci.specs, ci.info)
            number = self.pipelines.setdefault((repr(ci.specs), repr(ci.info)),
                                               len(self.pipelines))
            # the objects are kept: an id is not reused while this walk runs
            got = self.plans[k] = (p, plan_metadata(p) if p is not None else 0, number,
                                   ci.specs, ci.info)
        return got[0], got[1], got[2]

    def how(self, ci: ChunkInfo) -> str:
        if ci.blocked is not None or not hasattr(ci.source, "path"):
            return _SLOW
        p, mdl, number = self._plan(ci)
        if p is None or unread_metadata(ci.metadata_length, mdl) != 0 or \
                not 0 < ci.original_length <= _CHUNK_MAX \
                or ci.metadata_offset < 0 or \
                ci.data_offset + ci.filtered_length > getattr(ci.source, "size", 0):
            return _SLOW
        state = self.probes.get((_src_name(ci), number))
        return _PROBE if state is None else _FAST if state else _SLOW

    def last_codec(self, ci: ChunkInfo) -> str:
        """For a chunk checked in full: _FAST when its last filter's forward check can be
        left out (a lone compressor, and the file's first chunk showed its forward does not
        fail: all it could find, as it depends on the options alone — see tile_batch), _PROBE
        for that first chunk, else _SLOW (every check)."""
        number = self._plan(ci)[2]
        ends = self.codecs.get(number)
        if ends is None:
            ends = self.codecs[number] = compiled.TUNING.planned and _silent_from(ci.specs) < len(ci.specs)
        if not ends or ci.blocked is not None or not hasattr(ci.source, "path"):
            return _SLOW
        state = self.lasts.get((_src_name(ci), number))
        return _PROBE if state is None else _FAST if state else _SLOW

    def last_probed(self, ci: ChunkInfo, r: Optional[_Checked],
                    err: Optional[Exception]) -> None:
        """What the first chunk showed (nothing when its forward checks did not run: the
        next chunk is the probe)."""
        ok = r.last_ok if err is None and r is not None else None
        if ok is not None:
            self.lasts[(_src_name(ci), self._plan(ci)[2])] = ok

    def probed(self, ci: ChunkInfo, r: Optional[_Checked], err: Optional[Exception]) -> None:
        """The file's first chunk checked in full: clean and decoded, its other chunks come
        here; else (a forward that raises, damage) every one of them is checked in full."""
        self.probes[(_src_name(ci), self._plan(ci)[2])] = \
            err is None and r is not None and not r.findings and r.decoded is not None

    def add(self, ci: ChunkInfo, tile: Optional[TileInfo]) -> Iterable[Result]:
        group = (id(ci.source), self._plan(ci)[2])
        start, end = ci.metadata_offset, ci.data_offset + ci.filtered_length
        lo, hi = (min(self.lo, start), max(self.hi, end)) if self.items else (start, end)
        if self.items and (group != self.group or hi - lo > compiled.TUNING.window or
                           self.cells + ci.original_length > _WINDOW_CELLS):
            yield from self.flush()
            lo, hi = start, end
        self.group, self.lo, self.hi = group, lo, hi
        self.items.append((ci, tile))
        self.cells += ci.original_length

    def flush(self) -> Iterable[Result]:
        items, lo, hi = self.items, self.lo, self.hi
        self.items, self.cells, self.group = [], 0, None
        if not items:
            return
        import numpy as np

        from .decode import Piece, Planned, Run
        from .rawtile import Chunk

        first = items[0][0]
        src = first.source
        view = src.view(lo, hi - lo)   # what a file that shrank lacks, the chunks it cuts
        pieces = []                    # are declined and checked in full
        at = 0
        for ci, _t in items:
            pieces.append(Piece(view, Chunk(ci.original_length, ci.filtered_length,
                                            ci.metadata_offset - lo, ci.metadata_length,
                                            ci.data_offset - lo), at))
            at += ci.original_length
        out = np.empty(at, np.uint8)
        run = Run(first.specs, first.info, pieces, self.key, clean=True)
        left = set(Planned(self.workers, self.pool).decode(run, out))
        done = stored = 0
        results: List[Result] = []
        for (ci, tile), pc in zip(items, pieces):
            n, pos = pc.chunk.original, pc.at
            if len(results) in left:
                results.append((ci, tile) + _run_one(ci, self.key, tile))
                continue
            r = _Checked()
            r.decoded = (out[pos:pos + n], None)   # type: ignore[assignment]
            results.append((ci, tile, r, None))
            done += 1
            stored += ci.metadata_length + ci.filtered_length
        if done:
            tally().batch(_src_name(first), done, stored)
        release = getattr(src, "release", None)
        if release is not None:   # the stored pages read once: not kept resident
            release(lo, hi - lo)
        self.lo = self.hi = 0
        yield from results


def _slow(items: list, key, pool, workers: int) -> Iterable[Union[_Splice, Result]]:
    """The per-chunk checks of `items` in order: in this thread, or on the pool (batches of
    `_BATCH_CHUNKS` chunks or `_BATCH_BYTES` bytes, a few ahead; batches of tiny chunks run
    here: Python-bound, threads would only fight over the GIL)."""
    from collections import deque

    if pool is None:
        for item in items:
            yield item if isinstance(item, _Splice) else (item[0], item[1]) + _run_one(
                item[0], key, item[1], item[2])
        return

    def run(batch):
        return [_run_one(ci, key, tile, skip) for ci, tile, skip in batch]

    def batches():
        batch: list = []
        size = 0
        for item in items:
            if isinstance(item, _Splice):
                if batch:
                    yield batch, size
                    batch, size = [], 0
                yield [item], -1
                continue
            ci = item[0]
            batch.append(item)
            size += ci.filtered_length + ci.original_length
            if len(batch) >= _BATCH_CHUNKS or size >= _BATCH_BYTES:
                yield batch, size
                batch, size = [], 0
        if batch:
            yield batch, size

    def done(batch, results):
        for (ci, tile, _skip), (r, err) in zip(batch, results):
            yield ci, tile, r, err

    pending: deque = deque()
    for batch, size in batches():
        if size < 0 or size < _THREAD_MIN_BYTES:   # a _Splice, or tiny chunks: here, in order
            while pending:
                b, fut = pending.popleft()
                yield from done(b, fut.result())
            if size < 0:
                yield batch[0]
            else:
                yield from done(batch, run(batch))
            continue
        pending.append((batch, pool.submit(run, batch)))
        if len(pending) > 2 * workers:
            b, fut = pending.popleft()
            yield from done(b, fut.result())
    while pending:
        b, fut = pending.popleft()
        yield from done(b, fut.result())


class _TileKeeper:
    """Puts each tile whose chunks all reversed cleanly into the verify's tile cache (the
    chunks of a tile come one after the other)."""

    def __init__(self, cache: Optional[tile_cache.TileCache]):
        self.cache = cache
        self.tile: Optional[TileInfo] = None
        self.parts: Optional[list] = []

    def add(self, ci: ChunkInfo, tile: Optional[TileInfo], decoded) -> None:
        if self.cache is None:
            return
        if tile is not self.tile:
            self.flush()
            self.tile, self.parts = tile, []
        if tile is None or self.parts is None:
            return
        if decoded is None or ci.index != len(self.parts):
            self.parts = None   # not whole: the cell checks decode it (and skip it) themselves
            return
        self.parts.append(decoded)

    def flush(self) -> None:
        t, parts = self.tile, self.parts
        self.tile, self.parts = None, []
        if self.cache is None or t is None or not parts or len(parts) != len(t.chunks) or \
                not t.specs or t.source is None:
            return
        name = getattr(t.source, "name", None)
        if name is not None:
            self.cache.put(self.cache.key(name, t.offset, t.specs, t.info),
                           _adjacent(parts) or join_chunks(parts))


def _adjacent(parts: list) -> Optional[Tuple[Any, None]]:
    """The tile's cells as one slice when its chunks were decoded side by side into one
    array (`_FastChunks`): no copy; else None."""
    if len(parts) < 2 or any(o is not None or not hasattr(c, "base") for c, o in parts):
        return None
    import numpy as np

    first = parts[0][0]
    base, at = first.base, first.ctypes.data
    for c, _o in parts:
        if c.base is not base or c.ctypes.data != at:
            return None
        at += len(c)
    whole = np.asarray(base)
    start = first.ctypes.data - whole.ctypes.data
    return whole[start:start + (at - first.ctypes.data)], None


def verify_bookkeeping(document) -> List[object]:
    """Fragments against commits, footers against files, cells against the metadata."""
    out: List[object] = []
    key = document.ctx.key
    array = document.model
    if array is not None and hasattr(array, "fragments") and \
            document.fs.stat(getattr(array, "path", "")).is_dir:
        from .cell_checks import check_fragment_cells

        known = _commits_of(document, array)
        for frag in array.fragments:
            where = document.relname(frag.path)
            _guard(out, where, lambda f=frag: check_fragments_one(document, array, f, known),
                   document=document)
            _guard(out, where, lambda f=frag: check_fragment_cells(document, array, f, key),
                   document=document)
        _guard(out, document.relname(array.path), check_array, document, array, document=document)
    return out


# ---- streamed: one fragment built at a time -----------------------------------------------
def verify_streamed(document) -> List[object]:
    """What `document.diagnostics()` followed by `verify_array` give on a fully built tree,
    in the same order, for a lazily opened array: each fragment folder is built, its
    diagnostics, chunk checks and bookkeeping taken, and released before the next (memory:
    one fragment's tree, not 10 000 of them)."""
    from ..node import BuildDeferred
    from ..verify import finding as as_finding
    from .array import _CommitsDeferred, _FragmentDeferred

    root = document.root
    array = document.model
    key = document.ctx.key
    diags: List[object] = []
    splices: Dict[int, _Splice] = {}
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
                    diags.append(as_finding(m, document))
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
                diags.append(as_finding(m, document))
            if m.is_lazy:
                continue
            stack.extend(reversed(list(m.iter_children())))

    class _Done:
        def __init__(self, node: Node):
            self.node = node

        def finish(self) -> None:
            node = self.node
            found = verify_chunks(document, node, pool=pool())
            splices[id(node)] = _Splice([f if isinstance(f, Finding) else as_finding(f, document)
                                         for f in found])
            frag = frags.get(node.name)
            if frag is not None and frag.metadata is not None and known is not None:
                mine: List[object] = []
                where = document.relname(frag.path)
                _guard(mine, where, lambda: check_fragments_one(document, array, frag, known),
                       document=document)
                _guard(mine, where, lambda: check_fragment_cells(document, array, frag, key),
                       document=document)
                book[frag.path] = [f if isinstance(f, Finding) else as_finding(f, document)
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

            workers = _workers()
            shared.append(ThreadPoolExecutor(workers) if workers > 1 else None)
        return shared[0]

    token = tile_cache.use(tile_cache.TileCache())
    young = _YoungCollections()
    try:
        visit(root)
        out: List[object] = list(diags)
        out += verify_chunks(document, root, _walk(root, runs=True, splices=splices))
        if checkable:
            for frag in array.fragments:
                if frag.path in book:
                    out += book[frag.path]
                    continue
                where = document.relname(frag.path)
                _guard(out, where, lambda f=frag: check_fragments_one(document, array, f, known),
                       document=document)
                _guard(out, where, lambda f=frag: check_fragment_cells(document, array, f, key),
                       document=document)
            _guard(out, document.relname(array.path), check_array, document, array,
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

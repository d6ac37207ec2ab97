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
from typing import Iterable, List, Optional

from ..context import KEY_HINT
from ..dataset_fs import fs_of
from ..filters import RunContext, forward_chunk, get
from ..node import ERROR, WARNING, Node
from . import layout
from .data_files import TileRun
from .rawtile import TileError
from .tile import ChunkInfo, TileInfo


def finding(source, offset: int, status: str, message: str, name: str = "verify") -> Node:
    n = Node(name, "error" if status == ERROR else "field", source, offset, 0)
    n.status, n.message = status, message
    return n


# ---- chunks ----------------------------------------------------------------------------
def iter_chunks(root: Node) -> Iterable[ChunkInfo]:
    """Every chunk of every tile under `root` (expanding lazy lists of tiles)."""
    stack = [root]
    while stack:
        n = stack.pop()
        if isinstance(n.data, ChunkInfo):
            yield n.data
            continue
        if isinstance(n.data, TileInfo) and n.pending:  # chunk nodes not built: none needed
            yield from n.data.chunks
            continue
        if isinstance(n.data, TileRun):  # a million tiles: one chunk table at a time,
            for i in reversed(range(len(n.data))):  # in the order the stack gave them
                try:
                    yield from n.data.chunks(i)
                except TileError:
                    yield from iter_chunks(n.child(i))  # its node says what is wrong
            continue
        if n.is_lazy:
            if n.child_count() and n.child(0).kind == "tile":
                stack.extend(n.child(i) for i in range(n.child_count()))
            continue
        stack.extend(n.iter_children())


def check_chunk(ci: ChunkInfo, key: Optional[bytes]) -> List[Node]:
    out: List[Node] = []
    if ci.source is None or not hasattr(ci.source, "path"):
        return out  # chunks of derived sources are checked through their parents
    if ci.blocked is not None:
        return out  # its tile node carries the finding; nothing is decoded
    run = ci.reverse(key)
    if run.error is not None:
        fe = run.error
        where = ci.metadata_offset if fe.where is None else ci.metadata_offset + fe.where
        if "no key given" in str(fe):
            out.append(finding(ci.source, ci.data_offset, WARNING,
                               f"chunk {ci.index + 1} is encrypted and was not checked: {KEY_HINT}"))
        else:
            stage = ci.specs[run.failed_at].name if run.failed_at is not None and \
                run.failed_at < len(ci.specs) else "chunk"
            out.append(finding(ci.source, where, ERROR,
                               f"chunk {ci.index + 1}: reversing {stage} failed: {fe}"))
        return out
    # forward reproduction: deterministic filters must give the stored bytes back
    specs = ci.specs
    if not specs:
        return out
    try:
        # RLE / DICTIONARY string tiles encode their cell offsets: forward needs the ones
        # the reverse rebuilt (None for every other tile)
        fwd = forward_chunk(specs, run.stages[0].data_bytes, ci.info,
                            RunContext(key, offsets=run.offsets))
    except Exception as e:  # a forward failure on decoded cells is itself a finding
        out.append(finding(ci.source, ci.data_offset, ERROR,
                           f"chunk {ci.index + 1}: applying the pipeline forward failed: {e}"))
        return out
    for k in range(1, len(specs) + 1):
        f = get(specs[k - 1].type)
        if not f.deterministic:
            break  # stages above a compressor/AES need not match byte for byte
        stored = run.stages[k]
        if stored is None:
            break
        made = fwd[k]
        if made.data_bytes != stored.data_bytes or made.metadata_bytes != stored.metadata_bytes:
            if specs[k - 1].type == DELTA and ci.info.format_version == 19 and \
                    _delta_216_extra_value(made, stored):
                out.append(finding(ci.source, ci.data_offset, WARNING,
                                   f"chunk {ci.index + 1}: DELTA stores one value more per part "
                                   f"than the tile has (libtiledb 2.16, format 19: a last delta "
                                   f"read past the input; ignored by readers)"))
                continue
            out.append(finding(ci.source, ci.data_offset, ERROR,
                               f"chunk {ci.index + 1}: applying {specs[k - 1].name} forward to the "
                               f"decoded values does not reproduce the stored stage "
                               f"({made.nbytes} vs {stored.nbytes} bytes)"))
            break
    return out


DELTA = 19


def _delta_216_extra_value(made, stored) -> bool:
    """libtiledb 2.16.x (the first with DELTA, and the only writer of format 19) writes each
    part as `u64 n, first value, n - 1 deltas` plus one more delta, taken against whatever
    follows the input in memory (fixed in 2.17, which writes format 20). Checked on 2.16.3
    bytes: 2 int32 cells give a 20-byte part where 2.17 writes 16. True when `stored` is
    `made` with exactly that extra value per part (the same size in every part)."""
    import struct

    mm, sm = made.metadata_bytes, stored.metadata_bytes
    if len(mm) != len(sm) or len(mm) < 8 or mm[:8] != sm[:8]:
        return False
    nmd, ndata = struct.unpack_from("<II", mm)
    if nmd != 0 or len(mm) != 8 + 8 * ndata:
        return False
    md, sd = made.data_bytes, stored.data_bytes
    extra, mp, sp = None, 0, 0
    for i in range(ndata):
        mo, mc = struct.unpack_from("<II", mm, 8 + 8 * i)
        so, sc = struct.unpack_from("<II", sm, 8 + 8 * i)
        e = sc - mc
        if mo != so or e not in (1, 2, 4, 8) or (extra is not None and e != extra):
            return False
        extra = e
        if md[mp:mp + mc] != sd[sp:sp + mc]:
            return False
        mp, sp = mp + mc, sp + sc
    return mp == len(md) and sp == len(sd)


# ---- fragments and commits -------------------------------------------------------------
def _commit_names(array_dir: str, fs=None):
    fs = fs_of(None, array_dir) if fs is None else fs
    cdir = os.path.join(array_dir, layout.COMMITS_DIR)
    names = {"wrt": set(), "con": set(), "vac": [], "del": set(), "ign": set()}
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


def check_fragments_one(document, array, f) -> List[Node]:
    out: List[Node] = []
    array_dir = array.path
    commits = _commit_names(array_dir, document.fs)
    committed = commits["wrt"] | commits["con"]
    new_layout = document.fs.stat(os.path.join(array_dir, layout.FRAGMENTS_DIR)).is_dir
    src = document.source_by_name(document.relname(os.path.join(f.path, layout.FRAGMENT_METADATA_FILE)))
    where = src if src is not None else document.relname(f.path)
    if new_layout and f.name not in committed and f.name not in commits["ign"]:
        out.append(finding(where, 0, WARNING,
                           f"fragment {f.name} has no commit (.wrt) in __commits: readers ignore it"))
    if not new_layout and not document.fs.stat(f.path + ".ok").is_file and \
            not document.fs.stat(os.path.join(f.path, layout.FRAGMENT_METADATA_FILE)).is_file:
        out.append(finding(where, 0, WARNING, f"fragment {f.name} has no .ok marker"))
    fm = f.metadata
    if fm is None:
        return out
    if f.version is not None and getattr(fm, "version", None) not in (None, f.version):
        out.append(finding(where, 0, ERROR,
                           f"fragment name says format version {f.version}, its footer says "
                           f"{fm.version}"))
    out.extend(_check_sizes(document, array, f, where))
    return out


def check_commits(document, array) -> List[Node]:
    out: List[Node] = []
    array_dir = array.path
    commits = _commit_names(array_dir, document.fs)
    frag_names = {f.name for f in array.fragments}
    new_layout = document.fs.stat(os.path.join(array_dir, layout.FRAGMENTS_DIR)).is_dir
    for stem in sorted(commits["wrt"] - frag_names):
        if new_layout:
            out.append(finding(document.relname(os.path.join(array_dir, layout.COMMITS_DIR, stem + ".wrt")),
                               0, ERROR, f"commit {stem}.wrt names a fragment that does not exist"))
    for vac_file, base in commits["vac"]:
        if base not in frag_names:
            out.append(finding(document.relname(os.path.join(array_dir, layout.COMMITS_DIR, vac_file)),
                               0, WARNING, f"{vac_file} lists fragment {base}, which is not present "
                                           f"(already vacuumed?)"))
    return out


def _slot_files(schema, fm):
    names = []
    for i, _a in enumerate(schema.attributes):
        names.append(f"a{i}")
    names.append(None)  # legacy __coords slot: no file
    for j, _d in enumerate(schema.dimensions):
        names.append(f"d{j}")
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
                                                    f"{declared} bytes, but the file is missing"))
            elif actual != declared:
                src = document.source_by_name(document.relname(p)) or where
                out.append(finding(src, min(actual, declared), ERROR,
                                   f"footer gives {slots[i]}{suffix}.tdb {declared} bytes, the file "
                                   f"has {actual}"))
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


def _guard(out: List[Node], where, fn, *args) -> None:
    """Run one check; a check that trips over damaged input reports it instead of raising."""
    try:
        out.extend(fn(*args))
    except Exception as e:  # noqa: BLE001 - verify never raises
        out.append(finding(where, 0, ERROR, f"check {fn.__name__} could not finish: "
                                            f"{type(e).__name__}: {e}"))


def verify_array(document) -> List[Node]:
    """Findings beyond the tree's own diagnostics: every chunk under the root, then the
    fragments' and commits' bookkeeping (formats/verify_tasks.py splits the first part
    into tasks and keeps this order)."""
    return verify_chunks(document, document.root) + verify_bookkeeping(document)


def verify_chunks(document, root: Node) -> List[Node]:
    """The checks of every chunk under `root`, in `iter_chunks` order."""
    out: List[Node] = []
    key = document.ctx.key
    for ci in iter_chunks(root):
        _guard(out, ci.source, check_chunk, ci, key)
    return out


def verify_bookkeeping(document) -> List[Node]:
    """Fragments against commits, footers against files."""
    out: List[Node] = []
    array = document.model
    if array is not None and hasattr(array, "fragments") and \
            document.fs.stat(getattr(array, "path", "")).is_dir:
        for frag in array.fragments:
            where = document.relname(frag.path)
            _guard(out, where, lambda f=frag: check_fragments_one(document, array, f))
        _guard(out, document.relname(array.path), check_commits, document, array)
    return out

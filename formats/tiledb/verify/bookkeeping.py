"""verify's bookkeeping checks of a TileDB array: fragments against the commits (`.wrt`,
`.ok`, `.con`, `.vac`), fragment names against footer versions, footer file sizes against
the files, tile offsets inside their files and in order; then the array-level checks."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from ...core.dataset_fs import listable
from ...core.filesystems import fs_of
from ...core.findings import COMMIT_LOST, COMMIT_ORPHAN, FILE_MISSING, FILE_SIZE, UNCOMMITTED
from ...core.node import ERROR, WARNING, Node
from ...core.standin import HEAD as STAND_IN_HEAD
from ...core.standin import stand_in
from ..model import layout
from ..parse.data_files import data_file_stem
from .check_findings import finding, guard


def _commit_names(array_dir: str, fs=None):
    fs = fs_of(None, array_dir) if fs is None else fs
    cdir = os.path.join(array_dir, layout.COMMITS_DIR)
    names: Dict[str, Any] = {"wrt": set(), "con": set(), "vac": [], "del": set(), "ign": set(),
                             "unlisted": False}
    if not fs.stat(cdir).is_dir:
        return names
    try:
        entries = fs.list(cdir)
    except OSError:   # the folder's own finding says so: no fragment is called uncommitted
        names["unlisted"] = True
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
    # (asked of each set: their union, made for each of 10 000 fragments, was quadratic)
    committed = f.name in commits["wrt"] or f.name in commits["con"]
    src = document.source_by_name(document.relname(os.path.join(f.path, layout.FRAGMENT_METADATA_FILE)))
    where = src if src is not None else document.relname(f.path)
    if new_layout and not committed and f.name not in commits["ign"] and \
            not commits["unlisted"]:
        # libtiledb writes the fragment metadata last, then the commit: a fragment whose
        # metadata is there lost its commit (a write cut short has no metadata yet), unless
        # a .vac lists it (a vacuum removes the commits first, then the folders)
        vacuumed = any(base == f.name for _, base in commits["vac"])
        meta = document.fs.stat(os.path.join(f.path, layout.FRAGMENT_METADATA_FILE))
        if _committed_since(document, array, f.name):
            pass   # a live writer committed it after `commits` was listed: no finding
        elif meta.is_file and meta.size and not vacuumed:
            out.append(finding(where, 0, ERROR,
                               f"fragment {f.name} is complete but no commit (.wrt) in __commits "
                               f"names it: readers ignore its cells (the commit file lost?)",
                               code=COMMIT_LOST))
        else:
            out.append(finding(where, 0, WARNING,
                               f"fragment {f.name} has no commit (.wrt) in __commits: readers "
                               f"ignore it", code=UNCOMMITTED))
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


def _committed_since(document, array, name: str) -> bool:
    """Whether `__commits/<name>.wrt` exists now. `known` was listed once, before the
    fragment checks: on an array being written, a fragment's metadata lands just before its
    commit, so a fragment seen between the two is asked again before it is called lost."""
    return document.fs.stat(os.path.join(array.path, layout.COMMITS_DIR, name + ".wrt")).is_file


def _commits_of(document, array) -> tuple:
    """(commit names, new layout) of the array."""
    return (_commit_names(array.path, document.fs),
            document.fs.stat(os.path.join(array.path, layout.FRAGMENTS_DIR)).is_dir)


def check_commits(document, array) -> List[Node]:
    out: List[Node] = []
    array_dir = array.path
    commits = _commit_names(array_dir, document.fs)
    frag_names = {f.name for f in array.fragments}
    fragments_dir = os.path.join(array_dir, layout.FRAGMENTS_DIR)
    new_layout = document.fs.stat(fragments_dir).is_dir
    orphans = sorted(commits["wrt"] - frag_names)
    if orphans and new_layout and not listable(document.fs, fragments_dir):
        orphans = []   # __fragments/ cannot be listed: its own finding says so
    for stem in orphans:
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



def verify_bookkeeping(document) -> List[object]:
    """Fragments against commits, footers against files, cells against the metadata: of
    the array, then of each of its dimension-label arrays."""
    out: List[object] = []
    array = document.model
    if array is not None and hasattr(array, "fragments") and \
            document.fs.stat(getattr(array, "path", "")).is_dir:
        out += _array_bookkeeping(document, array, progress=True)
    out += verify_label_arrays(document)
    return out


def _array_bookkeeping(document, array, progress: bool = False) -> List[object]:
    from .cell_checks import check_fragment_cells

    out: List[object] = []
    key = document.ctx.key
    known = _commits_of(document, array)
    for frag in array.fragments:
        where = document.relname(frag.path)
        guard(out, where, lambda f=frag: check_fragments_one(document, array, f, known),
              document=document)
        guard(out, where, lambda f=frag: check_fragment_cells(document, array, f, key),
              document=document)
        if progress:   # the opened array's folders count for progress; a label array's do not
            folder_checked(document, frag)
    guard(out, document.relname(array.path), check_array, document, array, document=document)
    return out


def label_arrays(document) -> List[Node]:
    """The tree nodes (`data`: the model) of the dimension-label arrays under the opened array's `__labels/` (arrays
    of their own: `parse/array.py` opens each; their fragments are not the array's)."""
    root = document.root
    labels = root.find(layout.LABELS_DIR) if root is not None and root.kind == "dir" else None
    if labels is None or labels.is_lazy:
        return []
    return [c for c in labels.iter_children()
            if c.kind == "dir" and hasattr(c.data, "fragments") and c.data is not document.model]


def verify_label_arrays(document) -> List[object]:
    """Each dimension-label array's bookkeeping and cells, as the array's own (a label read
    goes through them: libtiledb fails or misreads on a damaged label fragment). In a lazy
    open a fragment's metadata loads with its folder: those built here are released after."""
    out: List[object] = []
    for node in label_arrays(document):
        array = node.data
        if not document.fs.stat(array.path).is_dir:
            continue
        frags = node.find(layout.FRAGMENTS_DIR)
        built = []
        for f in array.fragments:
            folder = frags.find(f.name) if f.metadata is None and frags is not None else None
            if folder is not None and folder.deferred:
                built.append(folder)
                for file in folder.iter_children():   # the metadata file's parse loads it
                    file.ensure_built()
        try:
            out += _array_bookkeeping(document, array)
        finally:
            for folder in built:
                folder.release_deferred()
    return out


def folder_checked(document, frag) -> None:
    """Progress of a whole-tree verify (a remote array): the fragment's folder, its chunks
    checked before, is checked to the end — counted whole (its files' sizes in the
    document: a remote folder has no local size), as the streamed verify counts it."""
    from ...core.verify_tally import tally

    where = document.relname(frag.path)
    inside = where.rstrip("/") + "/"
    size = sum(int(getattr(s, "size", 0) or 0) for s in getattr(document, "sources", [])
               if document.source_name(s).startswith(inside))
    tally().finished(size, where)

"""Salvage of one TileDB array: what a reader at T sees, less what verify found damaged.

Copied byte for byte (so an encrypted array stays encrypted under its key): every schema
file, the array-metadata files a reader at T loads, and each fragment it sees whose files
verify finds no error in. A fragment with errors in its data tiles is rewritten without
those tiles (`tiledb_fragment.py`); one that cannot be (its own metadata damaged, an old
format) is left out whole and its cells reported lost. Bookkeeping is written anew so
it names only what OUT holds: one empty `__commits/<fragment>.wrt` per fragment kept or written (a
`<fragment>.ok` before format 12), the delete conditions that count at T (one a consolidated
commits file holds written out as its own `.del`); no consolidated
commits, ignore or vacuum file (the fragments they name or hide are not in OUT), and no
consolidated fragment metadata (each fragment's own metadata is read instead)."""
from __future__ import annotations

import math
import os
from typing import Dict, List, Optional, Set, Tuple

from ..core.context import Context
from ..core.document import Document
from ..tiledb.health import visibility
from ..tiledb.health.snapshot import take
from ..tiledb.model import layout, listing
from .job import Job, join_rel
from .report import Loss, Part

# Folders libtiledb makes when it creates an array: made in OUT too (empty where nothing
# in them is kept), so OUT looks like what it wrote.
_MADE_FOLDERS = (layout.SCHEMA_DIR, layout.COMMITS_DIR, layout.FRAGMENTS_DIR,
                 layout.FRAGMENT_META_DIR, layout.META_DIR, layout.LABELS_DIR)


def salvage_array(job: Job, path: str, out_rel: str) -> bool:
    """Salvage the array at `path` (inside the dataset) to `out_rel` of OUT ("" for OUT
    itself); False when nothing of it could be written (no readable schema)."""
    rel = job.rel(path)
    doc = Document(path, Context(key=job.key))
    try:
        with take(doc) as snap:
            schema = snap.latest_schema
            if schema is None:
                job.report.notes.append(f"{rel}: no readable schema: the array is not written")
                return False
            broken = [s for s in snap.listing.schemas if job.damage.in_file(join_rel(rel, s))]
            if snap.schemas and any(os.path.basename(s) == max(snap.schemas) for s in broken):
                job.report.notes.append(f"{rel}: its latest schema is damaged: not written")
                return False
            for name in _MADE_FOLDERS:
                if job.fs.stat(os.path.join(path, name)).is_dir:
                    job.out.mkdir(join_rel(out_rel, name))
            _schemas(job, path, out_rel)
            fields = [a.name for a in schema.attributes]
            if not schema.dense:
                fields = [d.name for d in schema.dimensions] + fields
            book = visibility.bookkeeping(snap)   # read once: the fragments' and conditions'
            _fragments(job, snap, book, path, rel, out_rel, fields, schema.dense)
            _array_metadata(job, snap, path, rel, out_rel)
            _conditions(job, snap, book.ignored, path, out_rel)
            _left_out(job, snap, rel)
    finally:
        doc.close()
    return True


def _schemas(job: Job, path: str, out_rel: str) -> None:
    """Every schema (a fragment names the one it was written with) and enumeration."""
    folder = os.path.join(path, layout.SCHEMA_DIR)
    if job.fs.stat(folder).is_dir:
        job.copy_tree(folder, join_rel(out_rel, layout.SCHEMA_DIR))
    legacy = os.path.join(path, layout.LEGACY_SCHEMA_FILE)
    if job.fs.stat(legacy).is_file:
        job.copy(legacy, join_rel(out_rel, layout.LEGACY_SCHEMA_FILE))


def _fragments(job: Job, snap, book: visibility.Bookkeeping, path: str, rel: str, out_rel: str,
               fields: List[str], dense: bool) -> None:
    by_rel = {fd.rel: fd for fd in snap.listing.fragments.values()}
    damaged: Dict[str, List[Loss]] = {}
    for frag_rel in sorted(book.committed):
        fd: Optional[listing.FragmentDir] = by_rel.get(frag_rel)
        why = job.damage.under(join_rel(rel, frag_rel))
        if fd is not None and not why:
            why = job.uncopyable(fd.path)
        if fd is None or snap.metadata.get(fd.name) is None:
            why = why or [Loss("fragment-metadata-missing", join_rel(rel, frag_rel), 0, frag_rel,
                               "committed, but its folder or fragment metadata cannot be read")]
        if why:
            damaged[frag_rel] = why
    view, replaced = _view(book, job.at, dense, set(damaged))
    # a damaged consolidated fragment metadata file: its footers and each fragment's own may
    # disagree, and which one a damaged fragment's rewrite should trust cannot be told
    cons_meta = [loss for m in sorted(snap.listing.fragment_meta)
                 for loss in job.damage.in_file(join_rel(rel, m))]
    recovered: Dict[str, int] = {}   # damaged consolidated fragment -> the cells its replaced ones give back
    for frag_rel in view.fragments:
        fd = by_rel.get(frag_rel)
        fm = snap.metadata.get(fd.name) if fd is not None else None
        why = damaged.get(frag_rel, [])
        if why and fd is not None and frag_rel not in replaced and cons_meta:
            job.report.notes.append(f"{rel}: {frag_rel} left out whole, not rewritten tile by "
                                    f"tile: the consolidated fragment metadata "
                                    f"{cons_meta[0].source} is damaged ({cons_meta[0].code})")
        elif why and fd is not None and frag_rel not in replaced:
            kept = _tiles(job, fd, frag_rel, fm, rel, out_rel, fields, why)
            if kept is not None:
                for c, listed in replaced.items():
                    if frag_rel in listed:
                        recovered[c] = recovered.get(c, 0) + kept
                continue
        part = Part(rel, "fragment", frag_rel, fields, _cells(fm), kept=not why, why=why)
        job.report.parts.append(part)
        for c, listed in replaced.items():
            if frag_rel in listed and part.kept:
                recovered[c] = recovered.get(c, 0) + (part.cells or 0)
        if not part.kept or fd is None:
            continue
        job.copy_tree(fd.path, join_rel(out_rel, frag_rel))
        job.out.write(join_rel(out_rel, _commit_of(frag_rel)), b"")
        _read_in_part(job, rel, frag_rel, fd.t2)
    for c, listed in replaced.items():
        part = next(p for p in job.report.parts if p.array == rel and p.name == c)
        if part.cells is not None:
            part.cells = max(0, part.cells - recovered.get(c, 0))
        job.report.notes.append(f"{rel}: {c} (damaged, consolidated) read from the "
                                f"{len(listed)} fragment(s) it replaced, still present")


def _cells(fm) -> Optional[int]:
    """The cells a fragment holds: a dense one's inside its non-empty domain (its first and
    last tiles may hold fill values outside it), a sparse one's cell count."""
    ned = getattr(fm, "non_empty_domain", None)
    if getattr(fm, "dense", False) and ned and all(
            isinstance(v, int) and not isinstance(v, bool) for r in ned for v in r):
        return math.prod(int(hi) - int(lo) + 1 for lo, hi in ned)
    return getattr(fm, "cell_num", None)


def _read_in_part(job: Job, rel: str, frag_rel: str, t2: Optional[int]) -> None:
    """A fragment written up to `t2`, after T (a consolidated one spanning T): a reader at T
    reads only part of it, so the report says to open OUT at T."""
    if t2 is not None and t2 > job.at:
        job.report.notes.append(f"{rel}: {frag_rel} holds cells written after {job.at} "
                                f"(up to {t2}): open OUT at {job.at} to read what a "
                                f"reader at that time reads")


def _tiles(job: Job, fd: listing.FragmentDir, frag_rel: str, fm, rel: str, out_rel: str,
           fields: List[str], why: List[Loss]) -> Optional[int]:
    """Damaged fragment `frag_rel` rewritten without its damaged tiles (tiledb_fragment.py):
    a part per fragment written and per tile lost, and their commits; the cells kept. None
    (nothing written) when it cannot be, the reason noted: it is then left out whole."""
    from .tiledb_fragment import Fragment, Unwritable, rewrite

    try:
        res = rewrite(job, Fragment(job, fd.path, frag_rel, fm, why), out_rel)
    except Unwritable as e:
        job.report.notes.append(f"{rel}: {frag_rel} left out whole, not rewritten tile by "
                                f"tile: {e}")
        return None
    kept = 0
    for nf in res.fragments:
        job.report.parts.append(Part(rel, "fragment", nf.rel, fields, nf.cells, True))
        job.out.write(join_rel(out_rel, _commit_of(nf.rel)), b"")
        kept += nf.cells
    _read_in_part(job, rel, frag_rel, fd.t2)
    for i, losses in sorted(res.lost.items()):
        job.report.parts.append(Part(rel, "tile", f"{frag_rel} tile {i}", fields,
                                     res.lost_cells.get(i), False, losses))
    if len(res.fragments) > 1:
        job.report.notes.append(f"{rel}: {frag_rel} written as {len(res.fragments)} dense "
                                f"fragments around its {len(res.lost)} damaged tile(s)")
    return kept


def _view(book, at: int, dense: bool, damaged: Set[str]
          ) -> Tuple[visibility.ReaderView, Dict[str, List[str]]]:
    """What a reader at `at` sees once a damaged consolidated fragment's vacuum file is set
    aside: the fragments it replaced, where they are still committed, are read instead (the
    same cells). Returns the view and, per consolidated fragment set aside, the fragments
    its vacuum file listed."""
    replaced: Dict[str, List[str]] = {}
    while True:
        view = visibility.reader_view(book, 0, at, dense)
        aside = [vac for vac in book.vac_files
                 if _vac_fragment(vac) in damaged and _vac_fragment(vac) in view.fragments
                 and any(f in book.committed for f in book.vac_files[vac])]
        if not aside:
            return view, replaced
        for vac in aside:
            replaced[_vac_fragment(vac)] = list(book.vac_files.pop(vac))


def _vac_fragment(vac_rel: str) -> str:
    """`__commits/<name>.vac` -> `__fragments/<name>` (`<name>.vac` -> `<name>` before
    format 12): the consolidated fragment whose vacuum file it is."""
    name = vac_rel.rsplit("/", 1)[-1][:-len(".vac")]
    return f"{layout.FRAGMENTS_DIR}/{name}" if vac_rel.startswith(layout.COMMITS_DIR) else name


def _commit_of(frag_rel: str) -> str:
    """The file that commits a fragment: `__commits/<name>.wrt` (format 12 on), else
    `<name>.ok` beside it."""
    name = frag_rel.rsplit("/", 1)[-1]
    if frag_rel.startswith(layout.FRAGMENTS_DIR + "/"):
        return f"{layout.COMMITS_DIR}/{name}.wrt"
    return f"{frag_rel}.ok"


def _array_metadata(job: Job, snap, path: str, rel: str, out_rel: str) -> None:
    """The metadata files a reader at T loads (inside [0, T], not vacuumed by a `.vac`
    that counts at T); one with an error is left out and reported."""
    files = [r for r in snap.listing.meta if not r.endswith(".vac")]
    hidden: Set[str] = set()
    for vac, cf in snap.commit_files.items():
        if vac.startswith(layout.META_DIR + "/") and \
                visibility.counts_at(vac[:-4], 0, job.at, dense=True):
            hidden.update(visibility.norm_vac(u) for u in cf.uris if u.strip())
    for m in files:
        if not visibility.counts_at(m, 0, job.at, dense=True) or m in hidden:
            continue
        why = job.damage.in_file(join_rel(rel, m))
        job.report.parts.append(Part(rel, "array-metadata", m, [], None, not why, why))
        if not why:
            job.copy(os.path.join(path, m), join_rel(out_rel, m))


def _conditions(job: Job, snap, ignored: Set[str], path: str, out_rel: str) -> None:
    """Delete and update commits whose range lies inside [0, T]: they change what is read.
    One held inside a consolidated commits file (not ignored) is written out as its own
    `__commits/<name>.del` (the `.con` embeds the commit's file byte for byte), since OUT
    gets no `.con`."""
    written: Set[str] = set()
    for r, cf in sorted(snap.commit_files.items()):
        if cf.ext in (".del", ".upd") and visibility.counts_at(r, 0, job.at, dense=True):
            if job.copy(os.path.join(path, r), join_rel(out_rel, r)):
                written.add(r.rsplit("/", 1)[-1])
    for r, cf in sorted(snap.commit_files.items()):
        if cf.ext != ".con":
            continue
        for e in cf.entries:
            uri, where = str(e.get("uri") or "").strip(), e.get("commit")
            name = uri.rsplit("/", 1)[-1]
            if where is None or uri in ignored or name in written or \
                    not visibility.counts_at(name, 0, job.at, dense=True):
                continue
            data = _embedded(job, os.path.join(path, r), where)
            if data is None:
                job.report.notes.append(f"{job.rel(path)}: {name} inside {r} could not be read: "
                                        f"its condition is not carried over")
                continue
            job.out.write(join_rel(out_rel, f"{layout.COMMITS_DIR}/{name}"), data)
            written.add(name)


def _embedded(job: Job, con_path: str, where: Tuple[int, int]) -> Optional[bytes]:
    """The bytes of a commit file embedded in the `.con` at `con_path` (offset, size as its
    parse located them inside the file); None when they cannot be read whole."""
    offset, size = where
    try:
        src = job.fs.open_source(con_path, job.rel(con_path))
        try:
            data = src.read(offset, size)
        finally:
            src.close()
    except OSError:
        return None
    return data if len(data) == size else None


def _left_out(job: Job, snap, rel: str) -> None:
    seen = {p.name for p in job.report.parts if p.array == rel and p.kind == "fragment"}
    rest = [fd.rel for fd in snap.listing.fragments.values() if fd.rel not in seen]
    if rest:
        job.report.notes.append(f"{rel}: {len(rest)} fragment(s) a reader at {job.at} does not "
                                f"see (uncommitted, vacuumable or later): left out")
    if snap.listing.fragment_meta:
        job.report.notes.append(f"{rel}: consolidated fragment metadata not copied (each "
                                f"fragment's own metadata is read)")

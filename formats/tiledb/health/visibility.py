"""Which fragments a reader opening the array at time T sees, and why not the others.

The rules are libtiledb's (`tiledb/sm/array/array_directory.cc`, read mode, 2.30):

1. Commits: every line of every ignore file (`.ign`) is ignored. Every line of every
   consolidated commits file (`.con`) that is not ignored commits that URI. A `.wrt` in
   `__commits/` commits its fragment unless a `.con` already lists it (`load_consolidated_
   commit_uris`, `load_commits_dir_uris_v12_or_higher`). Before format 12, a fragment at the
   root is committed by `<fragment>.ok` (`compute_fragment_uris_v1_v11`). A committed URI is
   taken as a fragment whether or not its directory exists.
2. Time: the reader opens `[start, T]`. In a sparse array a fragment (or `.vac` file) of
   format 15 or later counts when its `[t1, t2]` *overlaps* that range (a consolidated
   fragment's cells carry their own timestamps, so a reader at T reads those written by
   T); older names, and every name in a dense array, must lie *inside* it (libtiledb asks
   `filtered_fragment_uris(full_overlap_only = schema.dense())`; `timestamps_overlap`,
   `consolidation_with_timestamps_supported`, constants.cc
   `consolidation_with_timestamps_min_version = 15`). So a dense `__t1_t3_...` made by
   consolidation is seen only at T >= t3: before, the fragments it replaced (or nothing,
   once vacuumed); checked with tiledb-py 0.36.1 (tests/tiledb/test_health_at.py).
3. Vacuum files: every line of a `.vac` that counts at T hides that fragment, when the
   fragment counts too (`compute_uris_to_vacuum`); hidden fragments are what `vacuum`
   deletes. The `.vac` needs nothing else: when the fragment it was written for is gone,
   the fragments it lists are still hidden (their cells are then unreachable).
4. Delete and update commits count when their range lies inside `[start, T]`; a delete with
   timestamp D removes the matching cells written at or before D. An update commit (`.upd`,
   written only through the experimental C API with `sm.allow_updates_experimental`) is
   loaded with the deletes (`load_delete_and_update_conditions`): libtiledb 2.30 readers
   apply its condition exactly as a delete's and never its update values, so the cells it
   was meant to update vanish from reads (checked on bytes libtiledb 2.30 wrote:
   tests/data/tiledb_updates).
5. Opening the array loads the metadata of every fragment left: a missing
   `__fragment_metadata.tdb` (or fragment directory) makes the open fail; a missing data
   file makes reads fail.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from ...core.health import ConditionHealth, FragmentHealth
from ..model import layout
from ..model.array_model import FragmentMetadata
from ..model.names import decode_name
from .snapshot import Snapshot

TIMESTAMPS_MIN_VERSION = 15     # constants.cc consolidation_with_timestamps_min_version


@dataclass
class Bookkeeping:
    """The commit-area facts that do not depend on T."""

    ignored: Set[str] = field(default_factory=set)             # rel URIs from .ign files
    con_lines: Dict[str, str] = field(default_factory=dict)    # rel URI -> .con file (not ignored)
    ignored_con_lines: Dict[str, str] = field(default_factory=dict)
    wrt_files: Set[str] = field(default_factory=set)           # rel paths of .wrt / .ok files
    vac_files: Dict[str, List[str]] = field(default_factory=dict)   # .vac rel -> fragment rels
    committed: Dict[str, str] = field(default_factory=dict)    # fragment rel -> committing file


def norm_vac(uri: str) -> str:
    """A `.vac` line as a path relative to the array (`get_full_vac_uri`: from
    `__fragments` on, else from `__meta` on, else the last path part)."""
    for marker in (layout.FRAGMENTS_DIR, layout.META_DIR):
        i = uri.find(marker)
        if i >= 0:
            return uri[i:].rstrip("/")
    return uri.rstrip("/").rsplit("/", 1)[-1]


def _stem(rel: str, ext: str) -> str:
    return rel[: -len(ext)] if rel.endswith(ext) else rel


def _fragment_rel_of_commit(rel: str) -> Optional[str]:
    """`__commits/<name>.wrt` -> `__fragments/<name>`; `<name>.ok` -> `<name>`."""
    base = rel.rsplit("/", 1)[-1]
    if base.endswith(".wrt"):
        return f"{layout.FRAGMENTS_DIR}/{base[:-4]}"
    if base.endswith(".ok"):
        return base[:-3]
    return None


def bookkeeping(snap: Snapshot) -> Bookkeeping:
    b = Bookkeeping()
    for rel, cf in snap.commit_files.items():
        if cf.ext == ".ign":
            b.ignored.update(u.strip() for u in cf.uris if u.strip())
    for rel, cf in sorted(snap.commit_files.items()):
        if cf.ext == ".con":
            for e in cf.entries:
                uri = (e.get("uri") or "").strip()
                if not uri:
                    continue
                if uri in b.ignored:
                    b.ignored_con_lines.setdefault(uri, rel)
                else:
                    b.con_lines.setdefault(uri, rel)
        elif cf.ext == ".vac" and not rel.startswith(layout.META_DIR + "/"):
            # (`__meta/*.vac` list array-metadata files, not fragments)
            b.vac_files[rel] = [norm_vac(u) for u in cf.uris if u.strip()]
    for rel in snap.listing.commits:
        if rel.endswith((".wrt", ".ok")):
            b.wrt_files.add(rel)
    for uri, con in b.con_lines.items():
        frag = _fragment_rel_of_commit(uri)
        if frag is not None:
            b.committed.setdefault(frag, f"{con} (line {uri})")
    for rel in sorted(b.wrt_files):
        if rel in b.con_lines:
            continue   # a .con lists it: that line commits the fragment
        frag = _fragment_rel_of_commit(rel)
        if frag is not None:
            b.committed.setdefault(frag, rel)
    # formats 1–4 (no version in the name) write no commit file: libtiledb takes a folder
    # holding `__fragment_metadata.tdb` for a committed fragment (ArrayDirectory::is_fragment)
    for fd in snap.listing.fragments.values():
        if fd.version is None and fd.rel == fd.name and \
                layout.FRAGMENT_METADATA_FILE in fd.files:
            b.committed.setdefault(fd.rel, f"{fd.rel}/{layout.FRAGMENT_METADATA_FILE}")
    return b


def _range(rel: str) -> Tuple[Optional[int], Optional[int], Optional[int]]:
    info = decode_name(rel.rsplit("/", 1)[-1]) or {}
    return info.get("t1"), info.get("t2"), info.get("version")


def counts_at(rel: str, start: int, end: int, dense: bool = False) -> bool:
    """Rule 2: does the fragment or `.vac` named `rel` count for a reader of [start, end]
    of a `dense` (or sparse) array?"""
    t1, t2, v = _range(rel)
    if t1 is None or t2 is None:
        return False
    if _partly(v, dense):
        return t1 <= end and start <= t2
    return t1 >= start and t2 <= end


def _partly(version: Optional[int], dense: bool) -> bool:
    """Whether a fragment of `version` may be read in part (its cells written by T): a
    sparse array's, of format 15 or later (rule 2)."""
    return not dense and version is not None and version >= TIMESTAMPS_MIN_VERSION


def _inside(rel: str, start: int, end: int) -> bool:
    t1, t2, _v = _range(rel)
    return t1 is not None and t2 is not None and t1 >= start and t2 <= end


@dataclass
class ReaderView:
    """What a reader of [start, end] loads."""

    fragments: List[str]                 # fragment rels, sorted by timestamps then name
    hidden_by: Dict[str, str]            # fragment rel -> the .vac that hides it
    conditions: List[str]                # .del/.upd commits (rel or ".con line") it applies


def reader_view(b: Bookkeeping, start: int, end: int, dense: bool = False) -> ReaderView:
    frags = sorted(b.committed)
    candidates = {f for f in frags if counts_at(f, start, end, dense)}
    hidden: Dict[str, str] = {}
    for vac, listed in sorted(b.vac_files.items()):
        if not counts_at(_stem(vac, ".vac"), start, end, dense):
            continue
        for f in listed:
            if f in candidates:
                hidden.setdefault(f, vac)
    visible = [f for f in frags if f in candidates and f not in hidden]
    visible.sort(key=lambda f: (_range(f)[0] or 0, _range(f)[1] or 0, f))
    return ReaderView(visible, hidden, [])


def expected_files(fm: FragmentMetadata) -> Dict[str, int]:
    """Data files (name -> size) the footer says the fragment holds: every slot's file with a
    non-zero size (`a<i>`, `d<i>`, `t`, `dt`, `dci`; `_var` and `_validity` beside them).
    Format 9 and later name files by index (history.md); older ones are not checked."""
    out: Dict[str, int] = {}
    if not fm.version or fm.version < 9:
        return out
    slots = fm.slots or []
    schema = fm.schema
    nattr = len(schema.attributes) if schema is not None else None
    special = {"__timestamps": "t", "__delete_timestamps": "dt",
               "__delete_condition_index": "dci", "__coords": "__coords"}
    for i, slot in enumerate(slots):
        if slot in special:
            stem = special[slot]
        elif nattr is None:
            return out   # without the schema the slot numbering is unknown
        elif i < nattr:
            stem = f"a{i}"
        else:
            stem = f"d{i - nattr - 1}"
        for sizes, suffix in ((fm.file_sizes, ""), (fm.file_var_sizes, "_var"),
                              (fm.file_validity_sizes, "_validity")):
            if i < len(sizes) and sizes[i]:
                out[f"{stem}{suffix}.tdb"] = int(sizes[i])
    return out


def missing_files(snap: Snapshot, name: str) -> List[str]:
    """Files of fragment `name` that its metadata names but the directory lacks (or holds
    shorter than the footer says)."""
    fd = snap.listing.fragments[name]
    if layout.FRAGMENT_METADATA_FILE not in fd.files:
        return [layout.FRAGMENT_METADATA_FILE]
    fm = snap.metadata.get(name)
    if fm is None:
        return []
    out = []
    for fn, size in expected_files(fm).items():
        have = fd.files.get(fn)
        if have is None:
            out.append(fn)
        elif have < size:
            out.append(f"{fn} ({have} of {size} bytes)")
    return out


def open_failure(path: str) -> str:
    # What libtiledb 2.30 says (checked with tiledb-py 0.36.1) when a fragment it loads has
    # no metadata file.
    return f"IO Error: Cannot get file size of '{path}'; No such file or directory"


def fragment_rows(snap: Snapshot, start: int, end: int) -> Tuple[List[FragmentHealth],
                                                                  List[ConditionHealth],
                                                                  Optional[str], Optional[str],
                                                                  List[str]]:
    """(rows, conditions, open error, read error, notes) for a reader of [start, end]."""
    b = bookkeeping(snap)
    schema = snap.latest_schema
    dense = bool(schema is not None and schema.dense)
    view = reader_view(b, start, end, dense)
    visible = set(view.fragments)
    listed_in_vac: Dict[str, str] = {}
    for vac_rel, listed in sorted(b.vac_files.items()):
        for f in listed:
            listed_in_vac.setdefault(f, vac_rel)
    rels = {fd.rel: name for name, fd in snap.listing.fragments.items()}
    rows: List[FragmentHealth] = []
    notes: List[str] = []
    open_error: Optional[str] = None
    read_error: Optional[str] = None
    committed_consolidated = [f for f in b.committed
                              if f in rels and (_range(f)[0] or 0) < (_range(f)[1] or 0)]
    replaced = _replaced_unlisted(b, rels, committed_consolidated, listed_in_vac)

    for name, fd in sorted(snap.listing.fragments.items(),
                           key=lambda kv: (kv[1].t1 or 0, kv[1].t2 or 0, kv[0])):
        rel = fd.rel
        fm = snap.metadata.get(name)
        row = _base_row(snap, name, fm)
        commit = b.committed.get(rel)
        row.commit = commit
        missing = missing_files(snap, name)
        row.missing = missing
        vac: Optional[str] = listed_in_vac.get(rel)
        if vac is not None:
            into = _stem(vac, ".vac").rsplit("/", 1)[-1]
            row.consolidated_into = into
            into_rel = f"{layout.FRAGMENTS_DIR}/{into}" if vac.startswith(layout.COMMITS_DIR) \
                else into
            alive = into_rel in b.committed and into_rel in rels
            row.state = "vacuumable"
            if alive:
                row.reason = f"consolidated into {into}; {vac} lists it for vacuum"
            else:
                row.reason = (f"listed in {vac}, but {into}, the fragment it was consolidated "
                              f"into, is {'missing' if into_rel not in rels else 'not committed'}:"
                              f" no reader sees these cells")
                note = f"{vac} hides the fragments it lists while {into} is gone: their cells " \
                       f"are unreachable"
                if note not in notes:
                    notes.append(note)
        elif commit is None:
            ign: Optional[str] = next(
                (u for u in list(b.ignored_con_lines) + sorted(b.ignored)
                 if _fragment_rel_of_commit(u) == rel), None)
            if ign is not None:
                row.state = "ignored"
                row.reason = f"its commit {ign} is listed in an ignore file: readers skip it"
            else:
                row.state = "uncommitted"
                row.reason = "no commit file: readers never see it (a write that did not finish?)"
        elif missing:
            row.state = "missing-files"
            row.reason = "missing " + ", ".join(missing)
        else:
            row.state = "committed"
            cover = replaced.get(rel)
            if cover is not None:
                row.state = "consolidated"
                row.consolidated_into = cover.rsplit("/", 1)[-1]
                row.reason = (f"its time range lies inside {row.consolidated_into}'s and no .vac "
                              f"lists it: if consolidation made that fragment, readers read "
                              f"these cells from both")
        row.visible = rel in visible
        if row.visible:
            if missing and layout.FRAGMENT_METADATA_FILE in missing:
                err = open_failure(os.path.join(fd.path, layout.FRAGMENT_METADATA_FILE))
                open_error = open_error or err
                row.reason = f"opening the array at T fails: {err}"
            elif missing:
                err = open_failure(os.path.join(fd.path, missing[0].split(" ")[0]))
                read_error = read_error or err
                row.reason = f"a read at T fails: {err}"
            elif fd.t2 is not None and fd.t2 > end:
                row.reason = _join(row.reason, "a reader at T reads only its cells written by T")
        else:
            why_not = _why_not(rel, row, view, b, start, end, dense)
            row.reason = _join(row.reason, why_not) if why_not not in row.reason else row.reason
        rows.append(row)

    # Commits whose fragment directory is gone.
    for frag_rel, commit in sorted(b.committed.items()):
        if frag_rel in rels:
            continue
        name = frag_rel.rsplit("/", 1)[-1]
        t1, t2, v = _range(frag_rel)
        row = FragmentHealth(name, (t1, t2), v, None, None, "orphan", False, "", commit=commit)
        if frag_rel in view.fragments:
            err = open_failure(os.path.join(snap.path, frag_rel, layout.FRAGMENT_METADATA_FILE))
            open_error = open_error or err
            row.reason = f"{commit} commits a fragment that does not exist: opening the array " \
                         f"at T fails: {err}"
        else:
            row.reason = f"{commit} commits a fragment that does not exist " + \
                         ("(hidden by " + view.hidden_by[frag_rel] + ")"
                          if frag_rel in view.hidden_by else "(not read at T)")
        rows.append(row)

    rows.extend(_stale_vacs(snap, b, rels))
    rows.extend(_stray_files(snap))
    conds = _conditions(snap, b, start, end, rows, visible, rels)
    return rows, conds, open_error, read_error, notes


def _replaced_unlisted(b: Bookkeeping, rels: Dict[str, str], consolidated: List[str],
                       listed_in_vac: Dict[str, str]) -> Dict[str, str]:
    """Committed fragments that a consolidated fragment replaced while no `.vac` lists
    them: fragment rel -> the consolidated one. libtiledb names a consolidated fragment by
    the first and last timestamps of the fragments it read and writes its own `.vac` listing
    them; so a fragment inside its range is one of them only when that `.vac` is gone and
    the unlisted fragments in the range span it from end to end. Otherwise it was written
    later at an earlier timestamp (a back-dated write), which readers rightly read."""
    own_vac = {_stem(v, ".vac").rsplit("/", 1)[-1] for v in b.vac_files}
    out: Dict[str, str] = {}
    for c in consolidated:
        if c.rsplit("/", 1)[-1] in own_vac:
            continue   # its .vac says which fragments it replaced: the listed ones
        inside = [f for f in b.committed if f in rels and f != c and f not in listed_in_vac
                  and _covers(c, f)]
        t1, t2, _ = _range(c)
        if inside and min(_range(f)[0] or 0 for f in inside) == t1 and \
                max(_range(f)[1] or 0 for f in inside) == t2:
            for f in inside:
                out.setdefault(f, c)
    return out


def _covers(outer: str, inner: str) -> bool:
    a1, a2, _ = _range(outer)
    b1, b2, _ = _range(inner)
    if None in (a1, a2, b1, b2):
        return False
    return a1 <= b1 and b2 <= a2 and (a1, a2) != (b1, b2)  # type: ignore[operator]


def _join(a: str, b: str) -> str:
    return b if not a else (a if not b else f"{a}; {b}")


def _why_not(rel: str, row: FragmentHealth, view: ReaderView, b: Bookkeeping, start: int,
             end: int, dense: bool) -> str:
    if row.state in ("uncommitted", "ignored"):
        return ""
    if rel in view.hidden_by:
        return "" if row.state == "vacuumable" else f"hidden by {view.hidden_by[rel]}"
    if rel not in b.committed:
        return ""
    t1, t2, v = _range(rel)
    if _partly(v, dense):
        return f"written at {t1}, after T" if (t1 or 0) > end else f"ends at {t2}, before start"
    return f"its time range [{t1}, {t2}] is not inside [{start}, {end}]"


def _base_row(snap: Snapshot, name: str, fm: Optional[FragmentMetadata]) -> FragmentHealth:
    fd = snap.listing.fragments[name]
    stored = sum(fd.files.values())
    row = FragmentHealth(name, (fd.t1, fd.t2), fd.version, None, None, "committed", False, "",
                         stored_bytes=stored)
    if fm is None:
        return row
    row.format_version = fm.version or fd.version
    row.schema = fm.schema_name or None
    row.cell_num = fm.cell_num
    row.dense = fm.dense
    if fm.non_empty_domain is not None:
        row.non_empty_domain = [[_plain(lo), _plain(hi)] for lo, hi in fm.non_empty_domain]
    return row


def _plain(v):
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    if hasattr(v, "item"):
        return v.item()
    return v


def _stale_vacs(snap: Snapshot, b: Bookkeeping, rels: Dict[str, str]) -> List[FragmentHealth]:
    out = []
    for vac, listed in sorted(b.vac_files.items()):
        if not listed or any(f in rels for f in listed):
            continue
        t1, t2, v = _range(vac)
        out.append(FragmentHealth(
            vac.rsplit("/", 1)[-1], (t1, t2), v, None, None, "orphan", False,
            f"stale vacuum file: the {len(listed)} fragment(s) it lists are gone (an "
            f"interrupted vacuum?); readers ignore it, vacuum deletes it", commit=vac))
    return out


def _stray_files(snap: Snapshot) -> List[FragmentHealth]:
    out = []
    for rel, size in sorted(snap.listing.other.items()):
        out.append(FragmentHealth(rel, (None, None), None, None, None, "orphan", False,
                                  "a file no fragment owns: libtiledb ignores it",
                                  stored_bytes=size))
    for rel in sorted(snap.listing.commits):
        base = rel.rsplit("/", 1)[-1]
        if not base.endswith((".wrt", ".ok", ".vac", ".ign", ".con", ".del", ".upd")):
            out.append(FragmentHealth(rel, (None, None), None, None, None, "orphan", False,
                                      "a file in the commits folder libtiledb does not know",
                                      stored_bytes=snap.listing.commits[rel]))
    return out


def _conditions(snap: Snapshot, b: Bookkeeping, start: int, end: int, rows, visible: Set[str],
                rels: Dict[str, str]) -> List[ConditionHealth]:
    out: List[ConditionHealth] = []
    found: List[Tuple[str, str, object, str]] = []   # (name, kind, condition, source)
    for rel, cf in sorted(snap.commit_files.items()):
        if cf.ext in (".del", ".upd") and rel not in b.con_lines:
            found.append((rel.rsplit("/", 1)[-1], cf.ext, cf.condition, rel))
        elif cf.ext == ".con":
            for e in cf.entries:
                uri = (e.get("uri") or "")
                if uri.endswith((".del", ".upd")):
                    found.append((uri.rsplit("/", 1)[-1], uri[-4:], e.get("condition"), rel))
    by_name = {r.name: r for r in rows}
    for name, ext, cond, source in found:
        t1, t2, _v = _range(name)
        kind = "delete" if ext == ".del" else "update"
        text = _condition_text(kind, cond)
        considered = _inside(name, start, end)
        applies = []
        if considered:   # an update's condition is applied as a delete (rule 4)
            for f in sorted(visible):
                ft1 = _range(f)[0]
                if ft1 is not None and t2 is not None and ft1 <= t2:
                    applies.append(f.rsplit("/", 1)[-1])
        if kind == "update" and considered:
            reason = (f"an update commit: libtiledb applies its condition as a delete (the "
                      f"cells it matches, written at or before {t2}, vanish from reads) and "
                      f"not its values")
        elif considered:
            reason = f"applies to the cells written at or before {t2}"
        else:
            reason = f"written at {t1}, after T: not applied" if (t1 or 0) > end else \
                "outside the reader's time range: not applied"
        out.append(ConditionHealth(name, kind, t1, text, source, considered, reason, applies))
        for f in applies:
            if f in by_name:
                by_name[f].conditions.append(name)
    return out


def _condition_text(kind: str, cond) -> str:
    if cond is None:
        return "(condition unreadable)"
    if kind == "update":
        c, vals = cond
        sets = ", ".join(f"{v.field_name} = {v.value!r}" for v in vals)
        return f"sets {sets} where NOT {c.text()}"
    return f"deletes cells where NOT {cond.text()}"

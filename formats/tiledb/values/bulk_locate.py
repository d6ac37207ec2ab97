"""`values` of a fixed-size field over many fragments: located and decoded in batches by
compiled calls that hold no GIL, on every core.

Why: the Python path costs about 250 µs of GIL-held work per fragment (two files opened
and read, the footer, the tile-offsets section, the chunk tables), so a thousand small
fragments ran on one core while libtiledb spreads the same work over all of them.

How: the first fragment of each format version takes the Python path
(`values._fragment_values`). When it gives a fixed-size field to decode (a `_Deferred`),
what its reading depended on becomes a `Plan`: the footer's layout
(`footer_reader.FooterShape`), the filters of its tile-offsets section, the data file's
name and role. The later fragments of that version are then read in batches
(`bulkread.read_files`), located (`locate_kernels`) and decoded by the fused kernels
(`filters.fused`), each batch on a thread of its own.

A fragment that differs in anything the plan assumed — another schema or layout, an
encrypted or damaged section, a file the bulk read refused, a chunk the kernel would not
decode — is handed back, untouched, and the Python path reads it as before and says what
is wrong: this path reports nothing itself, so its findings cannot differ.
"""
from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ...accel import bulkread
from ...core import compiled
from ...core.dataset_fs import LocalFS
from ...filters import fused
from ...filters.batch import plan as batch_plan
from ...filters.batch import reverse_into
from ..model.array_model import Fragment
from ..model.footer_reader import footer_shape
from ..model.fragment_model import GENERIC_INFO
from ..parse.decode import Route, choose_many
from ..parse.rawtile import GT_HEAD_SIZE, MAX_GENERIC_DECODE, generic_specs, peek_generic_tile
from ..parse.tile_layout import GENERIC_HEADER

METADATA_FILE = "__fragment_metadata.tdb"

# Fragments per batch (one bulk read, one kernel call each step), and the largest file the
# bulk read takes (larger ones go the Python path, which maps them).

# the generic tile header's size and where its persisted size, encryption type and
# pipeline size are (`locate_kernels.footer_tiles`)
_GHEADER = np.array([GT_HEAD_SIZE, GENERIC_HEADER.offset_of("Persisted size"),
                     GENERIC_HEADER.offset_of("Encryption type"),
                     GENERIC_HEADER.offset_of("Filter pipeline size")], np.int64)


@dataclass
class Plan:
    """What reading one fragment depended on, for the fragments read like it."""

    version: int
    template: np.ndarray        # its footer (uint8)
    same: np.ndarray            # (start, end) footer ranges every such footer repeats
    rtree_at: int
    toff_at: int                # where the field's tile-offsets section offset is
    pipeline: np.ndarray        # that section's serialized filters (uint8)
    gen_specs: list
    gen_fused: Optional[fused.FusedPlan]
    file_name: str              # the field's data file
    role: Any                   # its `DataFileRole` (shared by the fragments: no fm)
    data_fused: fused.FusedPlan
    fld: Any

    def reads_like(self, other: "Plan") -> bool:
        """Both plans read every fragment alike."""
        return (self.version, self.rtree_at, self.toff_at, self.file_name) == \
            (other.version, other.rtree_at, other.toff_at, other.file_name) and \
            self.role is other.role and self.fld is other.fld and \
            len(self.template) == len(other.template) and \
            np.array_equal(self.same, other.same) and \
            all(np.array_equal(self.template[a:b], other.template[a:b]) for a, b in self.same) \
            and np.array_equal(self.pipeline, other.pipeline)


def local_folder(document, frag: Fragment) -> Optional[str]:
    """The resolved path of `frag`'s folder when it was listed as a real folder of the local
    dataset (its files are then opened there, never through a link), else None."""
    folder = frag.entry
    fs = getattr(document, "fs", None)
    if folder is not None and isinstance(fs, LocalFS) and folder.real and \
            folder.path.startswith(fs.root.rstrip(os.sep) + os.sep):   # listed by this fs
        return folder.real
    return None


def plan_from(deferred: Any) -> Optional[Plan]:
    """The plan of a fragment the Python path read (a `values._Deferred`), or None when
    its reading cannot be repeated by the kernels."""
    fm, role = deferred.fm, deferred.role
    loader, footer = fm.loader, fm.footer
    if loader is None or footer is None or not footer.complete or fm.encrypted or \
            role is None or role.part != "fixed" or fm.version is None:
        return None
    if role.slot >= len(fm.file_sizes) or fm.file_sizes[role.slot] > compiled.TUNING.bulk_file_limit:
        return None   # files this big: the Python path maps them
    data_fused = fused.fused_plan(role.specs, role.info) if role.specs else None
    if data_fused is None:
        return None
    src = loader.source
    shape = footer_shape(src.read(footer.offset, footer.size), fm.schema)
    if shape is None:
        return None
    offs = footer.sections.get("tile_offsets") or []
    if role.slot >= len(offs):
        return None
    head = peek_generic_tile(src, offs[role.slot])
    if head is None or head[3]:
        return None
    try:
        specs = generic_specs(src, offs[role.slot], head[1])
    except Exception:   # (a damaged pipeline: the Python path says so)
        return None
    if not specs:
        return None
    return Plan(fm.version, np.frombuffer(shape.template, np.uint8),
                np.array(shape.same, np.int64).reshape(-1, 2), shape.rtree_at,
                shape.sections_at["tile_offsets"] + 8 * role.slot,
                np.frombuffer(src.read(offs[role.slot] + GT_HEAD_SIZE, head[1]), np.uint8),
                specs, fused.fused_plan(specs, GENERIC_INFO), deferred.file_name, role,
                data_fused, deferred.fld)


@dataclass
class Batch:
    """One batch's outcome: per fragment status (0: decoded, at cells[i] of `out`)."""

    status: np.ndarray
    cells: np.ndarray
    out: np.ndarray


def run_batch(plan: Plan, folders: List[str], root: str) -> Batch:
    """Read, locate and decode the field in the fragments at `folders` (see the module
    doc); a fragment not decoded has status not 0."""
    n = len(folders)
    status = np.ones(n, np.int8)
    cells = np.zeros((n, 2), np.int64)
    kernel = fused.decoder(1 << 30)
    got = bulkread.read_files([f + os.sep + METADATA_FILE for f in folders] +
                              [f + os.sep + plan.file_name for f in folders],
                              compiled.TUNING.bulk_file_limit, root)
    if got is None or kernel is None:
        return Batch(status, cells, np.empty(0, np.uint8))
    from ...accel import locate_kernels as K
    blob, starts, sizes = got
    room = int(np.maximum(sizes, 0).sum()) // 12 + 1   # a chunk takes 12 bytes at least
    rows = np.empty((room, 5), np.int64)
    first = np.zeros(n, np.int64)
    count = np.zeros(n, np.int64)
    positions = np.empty(room, np.int64)
    spans = np.zeros((n, 2), np.int64)
    total = K.footer_tiles(blob, starts[:n], sizes[:n], plan.template, plan.same,
                           plan.rtree_at, plan.toff_at, _GHEADER, plan.pipeline,
                           MAX_GENERIC_DECODE, status, rows, first, count, positions, spans)
    payloads = np.empty(total, np.uint8)
    _decode(kernel, plan.gen_fused, plan.gen_specs, GENERIC_INFO, blob, rows, positions,
            payloads, status, first, count)
    total = K.data_tiles(payloads, spans, blob, starts[n:], sizes[n:],
                         -1 if plan.role.max_bytes is None else plan.role.max_bytes,
                         status, rows, first, count, positions, cells)
    out = np.empty(total, np.uint8)
    _decode(kernel, plan.data_fused, plan.role.specs, plan.role.info, blob, rows, positions,
            out, status, first, count)
    return Batch(status, cells, out)


def _decode(kernel, fplan: Optional[fused.FusedPlan], specs, info, blob: np.ndarray,
            rows: np.ndarray, positions: np.ndarray, out: np.ndarray, status: np.ndarray,
            first: np.ndarray, count: np.ndarray) -> None:
    """Decode the rows of the fragments with status 0 into `out`; a fragment any chunk of
    which is left undecoded gets status 3."""
    live = np.flatnonzero(status == 0)
    if not len(live):
        return
    used = int((first[live] + count[live]).max())
    if fplan is not None:
        left = fused.decode_chunks(kernel, fplan, blob, rows[:used], positions[:used], out)
    else:
        p = batch_plan(specs, info)
        mv = blob.data
        chunks = [(mv[r[2]:r[2] + r[3]], mv[r[4]:r[4] + r[1]], int(r[0]), int(positions[i]))
                  for i, r in enumerate(rows[:used].tolist())]
        left = reverse_into(specs, info, chunks, out, p) if p is not None \
            else list(range(used))
    if left:
        bad = np.asarray(left, np.int64)
        for i in live:
            if count[i] and np.any((bad >= first[i]) & (bad < first[i] + count[i])):
                status[i] = 3


class FastValues:
    """The fragments of one `values` call that the kernels read: `takes` says whether a
    fragment can go this way, `add` queues it (its entry filled when its batch is
    decoded), `learn` makes a plan from a fragment the Python path read, `collect` fills
    the entries and returns the fragments handed back to the Python path."""

    def __init__(self, document, workers: int, with_values: bool):
        self.document = document
        self.with_values = with_values
        self.plans: Dict[int, Plan] = {}
        self.pool = ThreadPoolExecutor(max(1, workers))
        self.queued: List[Tuple[dict, Fragment, str]] = []
        self.queued_plan: Optional[Plan] = None
        self.batches: List[Tuple[Future, List[Tuple[dict, Fragment, str]], Plan]] = []

    @staticmethod
    def available(fragments: int) -> bool:
        """This machine reads `fragments` fragments this way, and it pays (the decision
        table: `decode.choose_many`)."""
        return choose_many(fragments) is Route.BULK

    def takes(self, frag: Fragment) -> Optional[str]:
        """`frag`'s folder when a plan of its format may read it, else None."""
        if frag.version is None or frag.version not in self.plans:
            return None
        if frag.metadata is not None and frag.metadata.loader is not None:
            return None   # loaded already (consolidated metadata): the Python path is quick
        return local_folder(self.document, frag)

    def learn(self, deferred: Any) -> bool:
        """Make `deferred`'s plan the one of its format; True when that is a new one (not
        one that reads exactly as the plan it replaces)."""
        if deferred.frag.version is None or local_folder(self.document, deferred.frag) is None:
            return False
        p = plan_from(deferred)
        if p is None or p.version != deferred.frag.version:
            return False
        old = self.plans.get(p.version)
        if old is not None and old.reads_like(p):
            return False
        self.plans[p.version] = p
        return True

    def add(self, entry: dict, frag: Fragment, folder: str) -> None:
        p = self.plans[frag.version]   # type: ignore[index]
        if self.queued and p is not self.queued_plan:
            self._submit()
        self.queued_plan = p
        self.queued.append((entry, frag, folder))
        if len(self.queued) >= compiled.TUNING.bulk_fragments:
            self._submit()

    def _submit(self) -> None:
        if self.queued and self.queued_plan is not None:
            items, p = self.queued, self.queued_plan
            self.batches.append((self.pool.submit(run_batch, p, [f for _e, _f, f in items],
                                                  self.document.fs.real_root), items, p))
        self.queued = []

    def collect(self) -> List[Tuple[dict, Fragment, int]]:
        """Wait for every batch queued so far and fill the entries of the fragments they
        decoded; returns the others (entry, fragment, status: 1 when its metadata did not
        read like the plan's, more when its data file or a chunk did not), for the Python
        path."""
        from .cells import cell_values
        self._submit()
        left: List[Tuple[dict, Fragment, int]] = []
        batches, self.batches = self.batches, []
        for future, items, p in batches:
            try:
                b = future.result()
            except Exception:   # never to the caller: the Python path reads them
                left += [(entry, frag, 1) for entry, frag, _f in items]
                continue
            mv = b.out.data
            for k, (entry, frag, _folder) in enumerate(items):
                if b.status[k] != 0:
                    left.append((entry, frag, int(b.status[k])))
                    continue
                a, size = int(b.cells[k, 0]), int(b.cells[k, 1])
                raw = mv[a:a + size] if size else b""
                entry["raw"] = raw
                if self.with_values:
                    entry["values"] = cell_values(p.fld.datatype, p.fld.cell_val_num, raw)
        return left

    def close(self) -> None:
        self.pool.shutdown()

"""What a mutant is put through beyond open/dump/verify/values: the health API (fragments,
stats, extents, group health), the array summary, and every chunk view (reverse all
stages, the cell table with its coordinates, the forward result); plus the shard-index
mutation (entries pointing outside the shard, or over another entry).

Used by run_fuzz.py (on demand) and by the default suite's sampling test."""
from __future__ import annotations

import os
import random
import struct
from typing import List, Optional

from arrayscope import formats
from arrayscope.formats.core import health as H
from arrayscope.formats.core import registry
from arrayscope.formats.core.node import to_json
from arrayscope.formats.core.verify import verify
from tests.support.mutations import Mutation, mutate

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
MAX_CHUNK_VIEWS = 24     # per mutant: the chunks of the mutated file first, then the others
BLOAT = 256 << 20        # one mutant raising the peak RSS by more is an over-allocation
MAX_ROWS = 64            # cell-table rows formatted per chunk view (coordinates included)


def surface_fixtures() -> List[str]:
    """This session's fixtures: sharded/crc Zarr (tensorstore, anndata), TileDB `.upd`
    commits, the SOMA experiment (group health), the writer-rule arrays."""
    out: List[str] = []
    ts = os.path.join(DATA, "zarr", "tensorstore_0.1.86")
    if os.path.isdir(ts):
        out += [os.path.join(ts, a) for a in sorted(os.listdir(ts))
                if os.path.isdir(os.path.join(ts, a))]
    z = os.path.join(DATA, "zarr")
    if os.path.isdir(z):
        out += [os.path.join(z, a, "store") for a in sorted(os.listdir(z))
                if a.startswith("anndata") and os.path.isdir(os.path.join(z, a, "store"))]
    for rel in ("tiledb_updates/sparse_upd", "soma/pbmc68k"):
        if os.path.isdir(os.path.join(DATA, rel)):
            out.append(os.path.join(DATA, rel))
    wr = os.path.join(DATA, "writer_rules")
    for d, dirs, _files in os.walk(wr):
        if "__schema" in dirs or "__array_schema.tdb" in _files:
            out.append(d)
            dirs[:] = []
    return sorted(set(out))


def _chunk_nodes(doc, first_source: Optional[str]):
    """Chunk nodes (TileDB tiles' chunks, Zarr chunk files and inner chunks), those over
    the mutated file first."""
    from arrayscope.formats.zarr.chunk import ChunkFile

    picked, rest = [], []
    for n in doc.root.walk(expand_lazy=True):
        if n.kind != "chunk" and not isinstance(n.data, ChunkFile):
            continue
        src = getattr(n.source, "name", None)
        (picked if first_source and src == first_source else rest).append(n)
        if len(picked) >= MAX_CHUNK_VIEWS:
            break
    return (picked + rest)[:MAX_CHUNK_VIEWS]


def exercise_chunk_views(doc, key: Optional[bytes], first_source: Optional[str] = None) -> int:
    """Open every chunk view (reverse all stages), read its cell table (coordinates too)
    and its forward result. Returns the number of views seen."""
    seen = set()
    views = 0
    for n in _chunk_nodes(doc, first_source):
        cv = registry.chunk_view(doc, n)
        if cv is None or cv.identity in seen:
            continue
        seen.add(cv.identity)
        views += 1
        cv.rows()
        cv.open(key)
        cv.reverse_to(0, key)
        cv.rows()
        cv.cells()
        cv.cells_message()
        for k in range(cv.stage_count() + 1):
            cv.stage_node(k)
        table = cv.cell_table(key)
        if table is not None:
            cols = len(table.columns)
            for r in range(min(table.row_count(), MAX_ROWS)):
                for c in range(cols):
                    table.text(r, c)
                    table.muted(r, c)
                    table.tooltip(r, c)
                table.cell_ranges(r)
                node = table.node_of_row(r)
                if node is not None:
                    table.row_of_node(node)
        cv.forward_check(key)
        fr = cv.forward_result(key)
        if fr is not None and fr.node is not None:
            to_json(fr.node, doc.source_name)
        for i in range(min(len(cv.siblings()), 4)):
            cv.sibling_view(i)
    return views


def exercise_health(doc) -> None:
    """`fragments` / `stats` (arrays and groups), extents, the array dock summary."""
    for report in (H.health(doc), H.space(doc), H.extents(doc)):
        if report is not None and hasattr(report, "to_json"):
            report.to_json()
    if H.health(doc) is None:
        for fn in (H.group_health, H.group_space):
            report = fn(doc)
            if report is not None and hasattr(report, "to_json"):
                report.to_json()
    rows = [registry.array_summary(doc)]
    while rows:   # its lazy rows too (the fragments: their footers are read when expanded)
        row = rows.pop()
        if row is not None:
            rows.extend(row.expand())


def exercise_all(path: str, key: Optional[bytes] = None, first_source: Optional[str] = None,
                 with_values: bool = True):
    """open, dump, verify, values, health, summary, chunk views. Must never raise."""
    doc = formats.open(path, key=key)
    try:
        to_json(doc.root, doc.source_name)
        findings = verify(doc)
        if with_values and doc.format:
            plugin = registry.plugin_named(doc.format)
            if plugin is not None and hasattr(plugin, "field_names"):
                for name in plugin.field_names(doc):
                    plugin.values(doc, name)
        exercise_health(doc)
        exercise_chunk_views(doc, key, first_source)
    finally:
        doc.close()
    return findings


# ---- the shard-index mutation --------------------------------------------------------------
def shard_indexes(doc):
    """(file, entries offset, entry count) of every shard index the engine found."""
    out = []
    for n in doc.root.walk():
        if n.name == "Shard index" and n.kind == "struct":
            ent = next((c for c in n.children if c.name == "Entries"), None)
            if ent is not None and ent.size >= 16:
                out.append((n.source.name, ent.offset, ent.size // 16))
    return out


def mutate_shard(src_dir: str, dst_dir: str, rng: random.Random, doc) -> Optional[Mutation]:
    """Rewrite one shard index entry: outside the shard, overlapping another entry, or an
    inflated length. None when the fixture has no shard."""
    idx = shard_indexes(doc)
    if not idx:
        return None
    import shutil

    if os.path.exists(dst_dir):
        shutil.rmtree(dst_dir)
    shutil.copytree(src_dir, dst_dir)
    rel, at, count = rng.choice(idx)
    path = os.path.join(dst_dir, rel)
    data = bytearray(open(path, "rb").read())
    i = rng.randrange(count)
    off = at + 16 * i
    o, nb = struct.unpack_from("<QQ", data, off)
    j = rng.randrange(count)
    oj, nbj = struct.unpack_from("<QQ", data, at + 16 * j)
    size = len(data)
    choice = rng.choice(["outside", "straddle", "overlap", "overlap-half", "huge-nbytes",
                         "huge-offset", "half-missing", "zero", "into-index"])
    new = {"outside": (size + rng.randrange(1, 1 << 20), nb),
           "straddle": (max(0, size - 3), max(nb, 8)),
           "overlap": (oj, nbj),
           "overlap-half": (oj + nbj // 2 if nbj < (1 << 63) else 0, max(nb, 4)),
           "huge-nbytes": (o, rng.choice([2 ** 31, 2 ** 32 - 1, 2 ** 63, 2 ** 64 - 2])),
           "huge-offset": (rng.choice([2 ** 31, 2 ** 32 - 1, 2 ** 63, 2 ** 64 - 2]), nb),
           "half-missing": (2 ** 64 - 1, nb),
           "zero": (0, 0),
           "into-index": (at, 16 * count)}[choice]
    struct.pack_into("<QQ", data, off, new[0] & (2 ** 64 - 1), new[1] & (2 ** 64 - 1))
    with open(path, "wb") as fh:
        fh.write(bytes(data))
    return Mutation(rel, "shard", off, f"entry {i}: {choice} -> {new}")


def mutate_any(src_dir: str, dst_dir: str, rng: random.Random, doc) -> Mutation:
    """A shard-index mutation one time in four when the fixture has shards, else the
    generic ones (flip, run, truncate at a node boundary, inflate a length, swap)."""
    if rng.random() < 0.25:
        m = mutate_shard(src_dir, dst_dir, rng, doc)
        if m is not None:
            return m
    return mutate(src_dir, dst_dir, rng, doc)


def run_surface_campaign(src_dir: str, work_dir: str, count: int, seed: int = 0,
                         key: Optional[bytes] = None, budget: float = 30.0, log=print):
    """Mutate and put through `exercise_all` `count` times, each run under `budget` seconds.
    Returns (runs, crashes, hangs, peak RSS bytes, slowest run in seconds)."""
    import faulthandler
    import resource
    import time

    from tests.support.mutations import WALL_FACTOR, Hang, time_limit

    rng = random.Random(seed)
    base = formats.open(src_dir, key=key)
    for _ in base.root.walk(expand_lazy=True):   # shard indexes and chunks, for the mutators
        pass
    crashes, hangs = [], []
    slowest = 0.0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # Linux: KiB
    try:
        for _i in range(count):
            dst = os.path.join(work_dir, "m")
            m = mutate_any(src_dir, dst, rng, base)
            t = time.process_time()   # CPU seconds: a busy machine does not inflate them
            # a signal cannot stop C code (a numpy allocation): the watchdog at least names it
            faulthandler.dump_traceback_later(budget * 2 * WALL_FACTOR, exit=False)
            try:
                with time_limit(budget):
                    exercise_all(dst, key, first_source=m.file)
            except Hang as e:
                hangs.append((str(m), str(e)))
                log(f"HANG {m}")
            except Exception as e:  # noqa: BLE001 - counting every escape
                crashes.append((str(m), f"{type(e).__name__}: {e}"))
                log(f"CRASH {m}: {type(e).__name__}: {e}")
            finally:
                faulthandler.cancel_dump_traceback_later()
            took = time.process_time() - t
            slowest = max(slowest, took)
            if took > budget:    # finished, but past the budget inside C code
                hangs.append((str(m), f"took {took:.0f} CPU s"))
                log(f"HANG {m}: took {took:.0f} CPU s")
            now = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            if now - rss > BLOAT:
                crashes.append((str(m), f"peak RSS grew by {(now - rss) >> 20} MiB"))
                log(f"OVER-ALLOCATION {m}: peak RSS grew by {(now - rss) >> 20} MiB")
            rss = now
    finally:
        base.close()
    peak = rss
    return count, crashes, hangs, peak, slowest


__all__ = ["surface_fixtures", "exercise_all", "mutate_any", "run_surface_campaign"]

"""Mutations of real files for robustness tests and the on-demand fuzz run.

Each mutation copies an array (or archive) directory, damages one file, and says what it did
so a failure names its cause. Structural boundaries and length fields come from the
engine's own annotation of the intact file (leaf node offsets, fields named like counts)."""
from __future__ import annotations

import os
import random
import resource
import shutil
import signal
from contextlib import contextmanager
from dataclasses import dataclass
from typing import List, Optional

from arrayscope import formats
from arrayscope.formats.core.node import to_json

LENGTH_WORDS = ("length", "size", "num", "count", "len", "nchunks", "offset")
INFLATED = (2 ** 31, 2 ** 32 - 1, 2 ** 63, 2 ** 64 - 1)


@dataclass
class Mutation:
    file: str          # path relative to the copied directory
    kind: str          # flip, run, truncate, inflate, swap
    offset: int
    detail: str

    def __str__(self):
        return f"{self.kind} {self.file}@{self.offset}: {self.detail}"


def files_of(root: str) -> List[str]:
    out = []
    for d, _dirs, fs in os.walk(root):
        for f in fs:
            p = os.path.join(d, f)
            if os.path.getsize(p) > 0:
                out.append(os.path.relpath(p, root))
    return sorted(out)


def length_fields(doc, rel: str):
    """(offset, size) of integer leaves of `rel` whose names say they count or measure."""
    src = doc.source_by_name(rel)
    out = []
    if src is None:
        return out
    for n in doc.root.walk():
        if n.source is src and n.kind == "field" and n.size in (4, 8) and \
                any(w in n.name.lower() for w in LENGTH_WORDS):
            out.append((n.offset, n.size))
    return out


def boundaries(doc, rel: str):
    src = doc.source_by_name(rel)
    if src is None:
        return []
    return sorted({n.offset for n in doc.root.walk() if n.source is src and 0 < n.offset < src.size})


def mutate(src_dir: str, dst_dir: str, rng: random.Random, doc=None, kinds=None) -> Mutation:
    if os.path.exists(dst_dir):
        shutil.rmtree(dst_dir)
    shutil.copytree(src_dir, dst_dir)
    rel = rng.choice(files_of(dst_dir))
    path = os.path.join(dst_dir, rel)
    data = bytearray(open(path, "rb").read())
    kind = rng.choice(kinds or ["flip", "flip", "run", "truncate", "inflate", "swap"])
    if kind == "inflate":
        fields = length_fields(doc, rel) if doc is not None else []
        if not fields:
            kind = "flip"
        else:
            off, size = rng.choice(fields)
            val = rng.choice(INFLATED) & ((1 << (8 * size)) - 1)
            data[off:off + size] = val.to_bytes(size, "little")
            m = Mutation(rel, kind, off, f"set {size}-byte field to {val}")
    if kind == "truncate":
        cuts = boundaries(doc, rel) if doc is not None else []
        off = rng.choice(cuts) if cuts else rng.randrange(len(data))
        del data[off:]
        m = Mutation(rel, kind, off, f"cut at {off} of {off + 0}")
    if kind == "flip":
        off = rng.randrange(len(data))
        bit = rng.randrange(8)
        data[off] ^= 1 << bit
        m = Mutation(rel, kind, off, f"bit {bit}")
    if kind == "run":
        off = rng.randrange(len(data))
        n = rng.randint(1, 64)
        b = rng.choice([0x00, 0xFF, rng.randrange(256)])
        data[off:off + n] = bytes([b]) * len(data[off:off + n])
        m = Mutation(rel, kind, off, f"{n} bytes of {b:#04x}")
    if kind == "swap":
        n = len(data)
        if n < 16:
            off = 0
            data.reverse()
        else:
            a, b = sorted(rng.sample(range(n // 2), 2))
            size = min(n // 4, b - a) or 1
            data[a:a + size], data[b:b + size] = data[b:b + size], data[a:a + size]
            off = a
        m = Mutation(rel, kind, off, "swapped two byte ranges")
    with open(path, "wb") as fh:
        fh.write(bytes(data))
    return m


class Hang(Exception):
    pass


# a run that waits (a blocked open) uses no CPU: the wall clock still ends it, this many
# times later than the CPU budget (a busy machine stretches wall time, not CPU time)
WALL_FACTOR = 10


@contextmanager
def time_limit(seconds: float):
    """Raise Hang in the block after `seconds` of this process's CPU time (all threads:
    ITIMER_PROF), or WALL_FACTOR times as long on the wall clock (a blocked call)."""
    def cpu(signum, frame):
        raise Hang(f"did not finish within {seconds} CPU seconds")

    def wall(signum, frame):
        raise Hang(f"blocked for {seconds * WALL_FACTOR} s")
    old_cpu = signal.signal(signal.SIGPROF, cpu)
    old_wall = signal.signal(signal.SIGALRM, wall)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * WALL_FACTOR)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, old_cpu)
        signal.signal(signal.SIGALRM, old_wall)


def exercise(path: str, key: Optional[bytes] = None, with_values: bool = True):
    """Everything a user can do to a path without a window: open, dump, verify, values.
    Returns the findings of verify. Must never raise."""
    from arrayscope.formats.core import registry
    from arrayscope.formats.core.verify import verify

    doc = formats.open(path, key=key)
    to_json(doc.root, doc.source_name)
    findings = verify(doc)
    if with_values and doc.format:
        plugin = registry.plugin_named(doc.format)
        if plugin is not None and hasattr(plugin, "field_names"):
            for name in plugin.field_names(doc):
                plugin.values(doc, name)
    doc.close()
    return findings


def run_campaign(src_dir: str, work_dir: str, count: int, seed: int = 0,
                 key: Optional[bytes] = None, budget: float = 20.0, log=print):
    """Mutate and exercise `count` times. Returns (runs, crashes, hangs, peak RSS bytes)."""
    rng = random.Random(seed)
    base_doc = formats.open(src_dir, key=key)
    crashes, hangs = [], []
    for i in range(count):
        dst = os.path.join(work_dir, "m")
        m = mutate(src_dir, dst, rng, base_doc)
        try:
            with time_limit(budget):
                exercise(dst, key)
        except Hang as e:
            hangs.append((str(m), str(e)))
            log(f"HANG {m}")
        except Exception as e:  # noqa: BLE001 - counting every escape
            crashes.append((str(m), f"{type(e).__name__}: {e}"))
            log(f"CRASH {m}: {type(e).__name__}: {e}")
    base_doc.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    return count, crashes, hangs, peak

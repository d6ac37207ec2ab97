"""Damage a copy of a clean array the ways real files get damaged (issue 30) and judge
`arrayscope verify` by tiledb-py's read of it: a damage MATTERS when a read of the damaged
copy (damage_oracle.py: the whole array, each fragment at its timestamp range) raises or
gives other cells than the clean one; then verify must report an error located in the
damaged file. Every damage is described well enough to redo it (file, offset, length) and
to say what it hit (the node of the clean array's tree holding the offset)."""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from arrayscope import formats
from arrayscope.formats.core.finding_nodes import node_at
from arrayscope.formats.core.verify import open_for_verify, verify_report

KINDS = ("flip", "zeros", "truncate", "missing")
_ORACLE_TIMEOUT_S = 120
_ORACLE_MEMORY = 4 << 30   # a damaged length may make libtiledb allocate: bounded


@dataclass
class Damage:
    kind: str            # one of KINDS
    file: str            # relative to the array's folder, "/"-separated
    offset: int = 0      # flip: the byte; zeros: the block's start; truncate: the new size
    length: int = 0      # flip: the xor mask; zeros: the block size

    def apply(self, root: str) -> None:
        path = os.path.join(root, *self.file.split("/"))
        if self.kind == "missing":
            os.remove(path)
            return
        with open(path, "r+b") as fh:
            if self.kind == "truncate":
                fh.truncate(self.offset)
            elif self.kind == "flip":
                fh.seek(self.offset)
                b = fh.read(1)[0]
                fh.seek(self.offset)
                fh.write(bytes([b ^ self.length]))
            else:   # zeros: a lost block (as much of it as the file holds)
                size = os.path.getsize(path)
                fh.seek(self.offset)
                fh.write(bytes(min(self.length, size - self.offset)))

    def __str__(self) -> str:
        what = {"flip": f"byte {self.offset} ^= {self.length:#04x}",
                "zeros": f"{self.length} B zeroed at {self.offset}",
                "truncate": f"cut at {self.offset} B", "missing": "removed"}[self.kind]
        return f"{self.file}: {what}"


@dataclass
class Outcome:
    damage: Damage
    node: str                          # what the damage hit (clean tree), "" when no node
    mattered: List[str]                # the reads it changed: "label: clean -> damaged"
    errors: List[str]                  # verify's errors (lines)
    located: bool                      # an error in the damaged file
    raised: str = ""                   # verify itself raised (a defect of its own)
    exit_code: int = 0
    inherent: bool = False             # damage no reader can tell (`inherent`)

    @property
    def miss(self) -> bool:
        return bool(self.mattered) and not self.located and not self.inherent

    @property
    def unnoticeable(self) -> bool:
        return bool(self.mattered) and not self.located and self.inherent

    @property
    def alarm_on_benign(self) -> bool:
        return not self.mattered and bool(self.errors)

    def line(self) -> str:
        said = "; ".join(self.mattered[:3])
        return (f"{self.damage} [node {self.node or '-'}] tiledb-py: {said or 'unchanged'}; "
                f"verify exit {self.exit_code}: {self.raised or ' | '.join(self.errors[:3]) or 'clean'}")


def files_of(root: str) -> List[str]:
    out = []
    for d, _, names in os.walk(root):
        for n in names:
            out.append(os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/"))
    return sorted(out)


def draw_damage(rng: random.Random, root: str) -> Optional[Damage]:
    """One damage of one file of the array at `root` (a file drawn with the weight of its
    kind of damage: every kind hits every file that can take it)."""
    kind = rng.choice(KINDS)
    files = [f for f in files_of(root) if not f.endswith("__lock.tdb")]
    if kind != "missing":
        files = [f for f in files if os.path.getsize(os.path.join(root, f)) > 0]
    if not files:
        return None
    f = rng.choice(files)
    size = os.path.getsize(os.path.join(root, f))
    if kind == "flip":
        return Damage(kind, f, rng.randrange(size), rng.choice([0x01, 0x80, 0xFF, rng.randrange(1, 256)]))
    if kind == "zeros":
        block = rng.choice([512, 4096])
        return Damage(kind, f, block * rng.randrange((size + block - 1) // block), block)
    if kind == "truncate":
        return Damage(kind, f, rng.randrange(size))
    return Damage(kind, f)


def oracle(uri: str, ranges: List[Tuple[int, int]], key: Optional[str]) -> Dict[str, str]:
    """tiledb-py's digests of the array, read in a process of its own (a crash is an answer)."""
    cmd = [sys.executable, "-m", "tests.tiledb.damage_oracle", uri, json.dumps(ranges)] + \
        ([key] if key else [])
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (_ORACLE_MEMORY, _ORACLE_MEMORY))

    try:
        p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, preexec_fn=limit,
                           timeout=_ORACLE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"whole": "hangs"}
    if p.returncode != 0:
        return {"whole": f"the reading process died ({p.returncode})"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def owner(clean: str, key: Optional[bytes], d: Damage) -> Tuple[str, bool]:
    """The node of the clean array's tree holding the damaged offset, and whether a checksum
    or an AES tag covers it (a filter of its chunk or generic tile says so)."""
    try:
        doc = formats.open(clean, key=key)
        n = node_at(doc.root, d.file, d.offset)
        if n is None:
            return "", False
        path = n.path()
        chunk = n
        while chunk is not None and not chunk.name.startswith(("Chunk ", "Generic tile")):
            chunk = chunk.parent
        tile = chunk.parent if chunk is not None else None
        # a checksum or tag, or a compressor (its stream re-made by the forward check)
        guarded = tile is not None and any(
            any(w in m.name for w in ("CHECKSUM", "AES", "MD5", "SHA256", "ZSTD", "GZIP",
                                      "LZ4", "BZIP2"))
            for m in tile.walk())
        return path, guarded
    except Exception as e:   # noqa: BLE001 - only a description
        return f"(tree: {type(e).__name__})", False


def located(finding, d: Damage) -> bool:
    """The finding is about the damaged file: its own, or (the file missing or cut short,
    so that what refers to it notices) one naming it."""
    if finding.source == d.file:
        return True
    parts = d.file.split("/")
    if d.kind in ("missing", "truncate"):
        # the file itself, or what it names (a commit: its fragment), or (the last of its
        # folder gone) the folder, by name
        names = [parts[-1], parts[-1].rsplit(".", 1)[0]] + \
            ([parts[-2] + "/"] if len(parts) > 1 else [])
        return any(n and (n in finding.message or n in finding.node) for n in names)
    return False


# Damage no reader can tell from data: bytes that are values (cells, metadata keys and
# values, dictionary strings) where no checksum or AES tag covers them and the statistics
# still agree, and a removed `__meta` file (nothing names one). Counted apart, not missed.
_VALUE_NODES = ("/Chunk filtered data", "/String", "/Value", "/Key")


def inherent(d: Damage, node: str, guarded: bool) -> bool:
    if d.kind == "missing":
        return d.file.startswith("__meta/")
    if d.kind != "flip" or guarded:
        return False
    return node.endswith(_VALUE_NODES) or ("/Dictionary/Entry" in node)


def judge(clean: str, work: str, d: Damage, key: Optional[str], ranges: List[Tuple[int, int]],
          before: Dict[str, str]) -> Outcome:
    """Damage a copy of `clean` (at `work`), read it both ways, say what happened."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(clean, work)
    d.apply(work)
    after = oracle(work, ranges, key)
    mattered = [f"{k}: {before.get(k)} -> {after.get(k)}" for k in sorted(set(before) | set(after))
                if before.get(k) != after.get(k)]
    bkey = key.encode() if key else None
    node, guarded = owner(clean, bkey, d) if d.kind != "missing" else ("", False)
    try:
        report = verify_report(open_for_verify(work, bkey))
    except Exception as e:   # noqa: BLE001 - the engine must not raise: recorded
        return Outcome(d, node, mattered, [], False, raised=f"{type(e).__name__}: {e}",
                       exit_code=-1)
    errors = [f for f in report.findings if f.status == "error"]
    return Outcome(d, node, mattered, [f.line() for f in errors],
                   any(located(f, d) for f in errors), exit_code=report.exit_code(),
                   inherent=inherent(d, node, guarded))


@dataclass
class Tally:
    copies: int = 0
    mattered: int = 0
    misses: List[Outcome] = field(default_factory=list)
    raised: List[Outcome] = field(default_factory=list)
    benign_alarms: List[Outcome] = field(default_factory=list)
    unnoticeable: List[Outcome] = field(default_factory=list)

    def add(self, o: Outcome) -> None:
        self.copies += 1
        self.mattered += bool(o.mattered)
        if o.unnoticeable:
            self.unnoticeable.append(o)
        if o.raised:
            self.raised.append(o)
        elif o.miss:
            self.misses.append(o)
        if o.alarm_on_benign:
            self.benign_alarms.append(o)

    def summary(self) -> str:
        return (f"{self.copies} damaged copies, {self.mattered} mattered to tiledb-py, "
                f"{len(self.misses)} missed, {len(self.unnoticeable)} in values no reader can "
                f"check, {len(self.raised)} raised, "
                f"{len(self.benign_alarms)} errors on damage tiledb-py did not notice")

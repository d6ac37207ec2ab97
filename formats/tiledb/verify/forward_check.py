"""The forward check: apply a chunk's filters forward to its decoded stages and compare each
result with the stage the writer stored. One definition, used by `verify`, the window's
pipeline panel and the tests.

Reversing a chunk gives every stage (`ChunkRun.stages`: stages[0] the cells, the last one the
bytes on disk). Filter k applied forward to stage k must give stage k + 1 back, except:

- bytes the writer leaves uninitialised (`Stage.uninitialised`: BIT_WIDTH_REDUCTION's
  offset of a window stored unreduced) may hold anything;
- where released writers of the fragment's format version encode differently (the
  filter's `writer_rules`), any of their rules may match: the check says which one did;
- library codecs and ciphers (`deterministic = False`) may encode differently (another
  liblz4 or zstd build, a fresh IV): the stored bytes decoded, which is their check.

The forward chain continues from what forward made while it matches (so multi-part
stages keep their parts), and from the stored stage once a codec re-encoded it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from ...filters import DataInfo, FilterSpec, RunContext, Stage, get, stage_infos

IDENTICAL = "identical"    # forward reproduces the stored bytes exactly
TOLERATED = "tolerated"    # identical except bytes the writer leaves uninitialised
RE_ENCODED = "re-encoded"  # a codec/cipher encodes differently; the stored bytes decoded
DIFFERENT = "different"    # the stored stage is not what forward makes (damage or a writer
                           # this model does not know)
FAILED = "failed"          # forward cannot be applied to the decoded stage

MAX_RANGES = 8  # differing ranges named in a message


@dataclass(frozen=True)
class StageCheck:
    """Filter `k` applied forward to stage k, compared with stored stage k + 1."""

    k: int
    filter: str
    status: str
    rule: str = ""        # the writer rule that matched (filters with several rules)
    default_rule: bool = True   # the rule matched is the newest writer's
    # differing (offset, length) ranges of the stored stage's [metadata][data] bytes
    ranges: Tuple[Tuple[int, int], ...] = ()
    metadata_size: int = 0   # of the stored stage: offsets below it are metadata
    made_size: int = 0
    stored_size: int = 0
    detail: str = ""
    notes: Tuple[str, ...] = ()   # known writer bugs the matching encoding reproduced
    # what forward made ([metadata][data]) with the rule reported (the window shows it)
    made: bytes = field(default=b"", repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.status in (IDENTICAL, TOLERATED, RE_ENCODED)

    @property
    def quirk(self) -> bool:
        """A writer difference that is not damage (reported at info level)."""
        return self.ok and (self.status == TOLERATED or not self.default_rule)

    @property
    def message(self) -> str:
        if self.status == IDENTICAL:
            text = "reproduces the stored bytes exactly"
        elif self.status == TOLERATED:
            text = ("reproduces the stored bytes except " + self.where() +
                    ", which the writer leaves uninitialised")
        elif self.status == RE_ENCODED:
            text = f"re-encodes differently ({self.detail}); the stored bytes decode"
        elif self.status == FAILED:
            return f"{self.filter} cannot be applied forward to the decoded stage: {self.detail}"
        else:
            text = (f"does not reproduce the stored stage: {self.where()} differ "
                    f"({self.made_size} bytes made, {self.stored_size} stored)")
        if self.rule and not self.default_rule:
            text += f"; writer rule: {self.rule}"
        return f"{self.filter} forward {text}"

    def where(self) -> str:
        """The ranges as text: `metadata bytes 8-15, data bytes 0-3, ...`."""
        parts = []
        for off, n in self.ranges[:MAX_RANGES]:
            region, base = ("metadata", 0) if off < self.metadata_size else \
                ("data", self.metadata_size)
            a, b = off - base, off - base + n - 1
            parts.append(f"{region} byte {a}" if n == 1 else f"{region} bytes {a}-{b}")
        more = len(self.ranges) - MAX_RANGES
        if more > 0:
            parts.append(f"{more} more ranges")
        return ", ".join(parts) or "no bytes"


def diff_ranges(made: bytes, stored: bytes,
                tolerated: Sequence[Tuple[int, int]] = ()) -> List[Tuple[int, int]]:
    """(offset, length) runs where `made` and `stored` differ, outside `tolerated`; a length
    difference is a run from the shorter one's end."""
    n = min(len(made), len(stored))
    skip = bytearray(n)
    for off, ln in tolerated:
        lo, hi = max(0, off), min(n, off + ln)
        if lo < hi:
            skip[lo:hi] = b"\x01" * (hi - lo)
    out: List[Tuple[int, int]] = []
    if made[:n] != stored[:n]:
        import numpy as np

        a = np.frombuffer(made, np.uint8, n)
        b = np.frombuffer(stored, np.uint8, n)
        bad = (a != b) & (np.frombuffer(bytes(skip), np.uint8) == 0)
        if bad.any():
            edges = np.flatnonzero(np.diff(np.concatenate([[0], bad.astype(np.int8), [0]])))
            # as Python ints in one call: a rule that does not match may differ in 10^4
            # ranges a chunk (BIT_WIDTH_REDUCTION's older rules), int() each cost 4 ms
            out = list(zip(edges[::2].tolist(), (edges[1::2] - edges[::2]).tolist()))
    if len(made) != len(stored):
        out.append((n, abs(len(made) - len(stored))))
    return out


def _bytes(st: Stage) -> bytes:
    return st.metadata_bytes + st.data_bytes


def check_forward(specs: Sequence[FilterSpec], stages: Sequence[Optional[Stage]],
                  info: DataInfo, run: Optional[RunContext] = None) -> List[StageCheck]:
    """One `StageCheck` per filter whose input and output stages are both known (`stages`
    as `reverse_chunk` gives them). `run` carries the key, the chunk's original length and
    the cell offsets a var string tile's RLE / DICTIONARY reverse rebuilt."""
    run = run or RunContext()
    if info.format_version is not None and run.format_version != info.format_version:
        run = dataclasses.replace(run, format_version=info.format_version)
    infos = stage_infos(list(specs), info)
    out: List[StageCheck] = []
    chain: Optional[Stage] = None   # what forward made of stage k, while it matched
    for k, spec in enumerate(specs):
        before, stored = stages[k], stages[k + 1]
        if before is None or stored is None:
            chain = None
            continue
        f = get(spec.type)
        src = chain if chain is not None else before
        stored_b = _bytes(stored)
        proto = StageCheck(k=k, filter=spec.name, status=DIFFERENT,
                           metadata_size=len(stored.metadata_bytes), stored_size=len(stored_b))
        rep = dataclasses.replace
        rules = f.rules_for(info.format_version)
        rules0 = f.writer_rules[0] if f.writer_rules else rules[0]
        best: Optional[StageCheck] = None
        made_ok: Optional[Stage] = None
        for rule in rules:
            r = dataclasses.replace(run, writer_rule=rule.name or None)
            try:
                made = f.forward(spec, src, infos[k], r)
            except Exception as e:  # noqa: BLE001 - a forward failure is a finding
                if best is None:
                    best = rep(proto, status=FAILED, detail=f"{type(e).__name__}: {e}")
                continue
            made_b = _bytes(made)
            if rule.accepts is not None:
                if rule.accepts(made, stored):
                    best = rep(proto, status=TOLERATED, rule=rule.name,
                               default_rule=rule is rules0, made_size=len(made_b), made=made_b,
                               notes=(rule.note,) if rule.note else ())
                    made_ok = stored
                    break
                continue
            bad = diff_ranges(made_b, stored_b, made.uninitialised)
            if not bad:
                status = IDENTICAL if made_b == stored_b else TOLERATED
                tol = tuple(made.uninitialised) if status == TOLERATED else ()
                best = rep(proto, status=status, rule=rule.name, default_rule=rule is rules0,
                           ranges=_merge(tol, len(stored_b)), made_size=len(made_b),
                           notes=tuple(made.notes), made=made_b)
                made_ok = made if status == IDENTICAL else _with_bytes_of(made, stored)
                break
            if best is None or best.status == FAILED:
                best = rep(proto, rule=rule.name if len(rules) > 1 else "",
                           ranges=tuple(bad), made_size=len(made_b), made=made_b)
        assert best is not None
        if best.ok and not best.default_rule and rules0 not in rules:
            best = dataclasses.replace(best, default_rule=_matches(f, spec, src, infos[k], run,
                                                                   rules0, stored_b))
        if best.status == DIFFERENT and not f.deterministic:
            why = "a fresh random IV" if spec.type == 11 else \
                "another build of the codec library, or another level"
            best = dataclasses.replace(best, status=RE_ENCODED, ranges=(), detail=why)
        out.append(best)
        # keep forward's parts while they match; else go on from the stored stage
        chain = made_ok if made_ok is not None and made_ok is not stored else None
    return out


def _matches(f, spec: FilterSpec, src: Stage, info: DataInfo, run: RunContext, rule,
             stored_b: bytes) -> bool:
    """Would `rule` (the newest writer's) reproduce the stored bytes as well? Then the
    older rule that matched is no news."""
    try:
        made = f.forward(spec, src, info, dataclasses.replace(run, writer_rule=rule.name))
    except Exception:  # noqa: BLE001
        return False
    return not diff_ranges(_bytes(made), stored_b, made.uninitialised)


def _with_bytes_of(made: Stage, stored: Stage) -> Stage:
    """`made`'s parts holding `stored`'s bytes (equal sizes): the next filter sees the
    writer's uninitialised bytes, as the writer's next filter did."""
    def split(parts: List[bytes], data: bytes) -> List[bytes]:
        out, pos = [], 0
        for p in parts:
            out.append(data[pos:pos + len(p)])
            pos += len(p)
        return out
    return Stage(split(made.metadata, stored.metadata_bytes), split(made.data, stored.data_bytes),
                 offsets=made.offsets)


def _merge(ranges: Sequence[Tuple[int, int]], limit: int) -> Tuple[Tuple[int, int], ...]:
    return tuple((o, min(n, limit - o)) for o, n in sorted(ranges) if o < limit)

"""One chunk's checks: reversed (checksums, AES-GCM tags, codecs, the declared original
length), then its deterministic stages applied forward from the cells must give the stored
bytes back (compressors and AES may re-encode differently: not an error)."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ...core.context import KEY_HINT
from ...core.findings import (
    AES_TAG,
    CHUNK_DECODE,
    CHUNK_METADATA_UNREAD,
    FORWARD_FAILED,
    FORWARD_MISMATCH,
    NO_KEY,
    UNCHECKED,
    WRITER_BUG,
    WRITER_QUIRK,
    Finding,
)
from ...core.status import Status
from ...filters import FilterError, RunContext
from ..parse.tile import ChunkInfo, TileInfo
from .forward_check import DIFFERENT, FAILED, TOLERATED, check_forward
from .reader_faults import empty_tile_read_error


def src_name(ci: ChunkInfo) -> str:
    return getattr(ci.source, "name", str(ci.source))


# Per-chunk findings that formats/core/verify.py says once per file with a count start so:
PER_CHUNK = "chunk: "


class Checked:
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



def check_one(ci: ChunkInfo, key: Optional[bytes], tile: Optional[TileInfo],
                 skip_from: Optional[int] = None) -> Checked:
    """One chunk's checks, without the tally (the caller's: it may run on a thread, and the
    tally belongs to the calling context). `skip_from`: no forward check of the filters from
    there on (`tile_batch.silent_forward`: a failing forward is all they could find, and
    the file's first chunk showed theirs do not fail: route `LAST_SKIPPED` of
    `decode.choose_chunk`)."""
    r = Checked()
    if ci.source is None or not hasattr(ci.source, "path"):
        return r  # chunks of derived sources are checked through their parents
    if ci.blocked is not None:
        return r  # its tile node carries the finding; nothing is decoded
    r.tallied = (src_name(ci), ci.metadata_length + ci.filtered_length)
    run = ci.reverse(key)
    r.findings = _chunk_findings(ci, key, tile, run, skip_from, r)
    if run.error is None:
        r.decoded = (run.cells, run.offsets)
    return r


def _chunk_findings(ci: ChunkInfo, key: Optional[bytes], tile: Optional[TileInfo],
                    run, skip_from: Optional[int] = None, r: Optional[Checked] = None
                    ) -> List[Finding]:
    out: List[Finding] = []
    src = src_name(ci)
    if run.error is not None:
        fe = run.error
        where = ci.metadata_offset if fe.where is None else ci.metadata_offset + fe.where
        kind = getattr(fe, "kind", None)
        if kind == FilterError.NO_KEY:
            out.append(Finding(Status.WARNING, NO_KEY, src, ci.data_offset, "",
                               f"chunk {ci.index + 1} is encrypted and was not checked",
                               KEY_HINT))
        elif kind == FilterError.NO_CODEC:
            out.append(Finding(Status.WARNING, UNCHECKED, src, ci.data_offset, "",
                               f"{PER_CHUNK}not checked: {fe}", str(fe)))
        elif kind == FilterError.TAG:
            out.append(Finding(Status.ERROR, AES_TAG, src, where, "",
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
            out.append(Finding(Status.ERROR, CHUNK_DECODE, src, where, "", msg, hint))
        return out
    if run.unread > 0:
        out.append(_unread_finding(ci, run.unread))
    if not ci.specs:
        return out
    if ci.original_length == 0 and ci.info.var and \
            empty_tile_read_error([s.type for s in ci.specs], False) is not None:
        # an empty var tile libtiledb cannot read back: what it stored is the writer bug's
        # (a delta's stray byte), not damage; reader_faults warns once per field
        return out
    stages = run.stages
    if skip_from is not None:   # stage k + 1 unknown: filter k's check is not made
        stages = list(stages[:skip_from + 1]) + [None] * (len(stages) - skip_from - 1)
    checks = check_forward(ci.specs, stages, ci.info,
                           RunContext(key, ci.original_length, offsets=run.offsets))
    if r is not None:
        last = [c.status != FAILED for c in checks if c.k >= silent_from(ci.specs)]
        r.last_ok = all(last) if last else None
    for c in checks:
        if c.status in (DIFFERENT, FAILED):
            off = ci.metadata_offset
            if c.k == len(ci.specs) - 1 and c.ranges:  # the stored stage is the file's bytes
                o = c.ranges[0][0]
                off = ci.metadata_offset + o if o < ci.metadata_length else \
                    ci.data_offset + (o - ci.metadata_length)
            out.append(Finding(
                Status.ERROR, FORWARD_MISMATCH if c.status == DIFFERENT else FORWARD_FAILED, src, off,
                "", f"chunk {ci.index + 1}: {c.message}",
                "the decoded cells do not give the stored bytes back: damage, or a writer "
                "arrayscope does not model (report it with the writer's version)"))
            continue
        if c.ok:
            for note in c.notes:
                out.append(Finding(Status.WARNING, WRITER_BUG, src, ci.data_offset, "",
                                   f"{PER_CHUNK}{c.filter}: {note}",
                                   "rewrite the array with a fixed libtiledb from a good copy"))
        if c.ok and c.quirk:
            if c.status == TOLERATED and c.default_rule:
                text = (f"{c.filter}: bytes the writer leaves uninitialised (the offset of a "
                        f"window stored unreduced) hold other values; not damage")
            else:
                text = f"{c.filter} encoded as by {c.rule}"
            out.append(Finding(Status.INFO, WRITER_QUIRK, src, ci.data_offset, "",
                               f"{PER_CHUNK}{text}"))
    return out


def _unread_finding(ci: ChunkInfo, unread: int) -> Finding:
    """Chunk metadata after what the filters read (`accel/unread.py`): a warning, since
    libtiledb reads the chunk alike but never writes such bytes."""
    read = ci.metadata_length - unread
    return Finding(
        Status.WARNING, CHUNK_METADATA_UNREAD, src_name(ci), ci.metadata_offset + read, "",
        f"chunk {ci.index + 1}: {unread} bytes of chunk metadata after the {read} its filters "
        f"read; libtiledb ignores them on read (the cells decode alike) and never writes any",
        "the chunk was edited after writing (its metadata length grew): compare with a good "
        "copy")



_SILENT_FROM: Dict[Tuple[int, ...], int] = {}   # filter types -> silent_from


def silent_from(specs) -> int:
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

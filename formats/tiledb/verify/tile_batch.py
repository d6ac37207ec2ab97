"""All the tiles of one data file decoded in one pass, for `verify` (no nodes, no objects
per chunk).

A million one-cell tiles cost ~100 µs each through the per-chunk path (a chunk table, a
ChunkInfo, `reverse_chunk`, the forward check). Most data files are the plain case: one chunk
per tile and a pipeline of no filter or of one compressor. For those the chunk headers are
read as arrays (one numpy gather over the file's bytes) and each tile's bytes are the data
(no filter) or one codec call. A tile decodes here only when the per-chunk path would give
exactly these cells and no finding; every other tile gives None and the caller takes the
per-chunk path for it, which says what is wrong (so the findings are the same either way).

Why the forward check can be skipped for a lone compressor: it has one writer rule and no
notes, and a codec that re-encodes differently is `RE_ENCODED` (not a finding); only a
forward that raises would be one, and that depends on the filter options alone, which
`verify` checks on the first tile of the file through the per-chunk path (`needs_probe`)."""
from __future__ import annotations

from typing import Iterator, List, Optional

import numpy as np

from ...accel.unread import unread_metadata
from ...core import compiled
from ...filters import DataInfo, FilterSpec, get
from ...filters import batch as filter_batch
from ...filters.compression import CompressionFilter
from ...filters.deltas import Check, typed_check
from ...filters.enums import FilterType
from ..parse.data_files import DataFileRole
from ..parse.decode import Route, choose_windows
from ..parse.tile_layout import CHUNK_HEADER, NUM_CHUNKS

_HEAD = NUM_CHUNKS.size + CHUNK_HEADER.size   # a one-chunk tile's table
_PARTS_MD = 16      # a compressor's metadata for one data part: counts (0, 1), (orig, comp)


def _lone_codec(specs: List[FilterSpec]) -> Optional[CompressionFilter]:
    """The compressor of a one-compressor pipeline whose forward check cannot find anything
    on bytes that decode (see the module doc), else None."""
    if len(specs) != 1:
        return None
    f = get(specs[0].type)
    if not isinstance(f, CompressionFilter) or f.writer_rules or f.deterministic or \
            type(f).forward is not CompressionFilter.forward or \
            type(f).reverse is not CompressionFilter.reverse:
        return None
    return f


def simple(role: DataFileRole) -> bool:
    """Whether this file's tiles can be decoded here (the rest of the conditions are per
    tile)."""
    if role.part == "var" or role.info.var:   # var tiles: bounded per tile by the metadata
        return False
    return not role.specs or _lone_codec(role.specs) is not None




class Window:
    """Tiles `first`.. of a file: `cells[k]` those of tile first + k (None: per-chunk path),
    `stored` the chunk bytes (metadata + filtered data) of the tiles decoded."""

    __slots__ = ("first", "cells", "stored")

    def __init__(self, first: int, cells: List[Optional[bytes]], stored: int):
        self.first, self.cells, self.stored = first, cells, stored


def decode_run(source, offsets: np.ndarray, ends: np.ndarray, role: DataFileRole,
               probe: bool = False, want: Optional[np.ndarray] = None) -> Iterator[Window]:
    """The tiles of a data file decoded window by window (`offsets` and `ends` as
    `data_files.tile_bounds` gives them). With `probe`, a compressor that cannot encode the
    first decoded tile again (its forward check would fail) leaves every tile to the
    per-chunk path. `want` (bool per tile): decode only those (the others give None)."""
    n = len(offsets)
    if not n:
        return
    if choose_windows(simple(role) and hasattr(source, "path")) is not Route.WINDOWS:
        yield Window(0, [None] * n, 0)
        return
    offs = np.asarray(offsets, dtype=np.int64)
    ends_a = np.minimum(np.asarray(ends, dtype=np.int64), np.int64(source.size))
    if np.any(offs[1:] < offs[:-1]) or np.any(offs < 0):
        yield Window(0, [None] * n, 0)   # tiles out of order: damage the per-chunk path locates
        return
    codec = _lone_codec(role.specs) if role.specs else None
    i = 0
    while i < n:
        # the tiles whose bytes fit in one window from tile i (at least tile i)
        j = int(np.searchsorted(ends_a, offs[i] + compiled.TUNING.window, side="right"))
        j = min(max(j, i + 1), i + compiled.TUNING.window_tiles)
        lo, hi = int(offs[i]), int(max(ends_a[i:j].max(), offs[i]))
        view = source.view(lo, hi - lo)
        w = _decode_window(np.frombuffer(view, np.uint8), lo, offs[i:j], ends_a[i:j], role, i,
                           None if want is None else want[i:j])
        if probe and codec is not None:
            first = next((c for c in w.cells if c is not None), None)
            if first is not None:
                probe = False
                try:
                    codec.compress_part(first, role.specs[0], role.info)
                except Exception:  # noqa: BLE001 - the per-chunk path reports it per chunk
                    yield Window(i, [None] * (n - i), 0)
                    return
        yield w
        i = j


def _u32(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    return (buf[at].astype(np.uint32) | (buf[at + 1].astype(np.uint32) << 8) |
            (buf[at + 2].astype(np.uint32) << 16) | (buf[at + 3].astype(np.uint32) << 24)
            ).astype(np.int64)


def _decode_window(buf: np.ndarray, base: int, offs: np.ndarray, ends: np.ndarray,
                   role: DataFileRole, first: int, want: Optional[np.ndarray] = None) -> Window:
    out: List[Optional[bytes]] = [None] * len(offs)
    stored = 0
    rel, end = offs - base, np.minimum(ends - base, len(buf))   # a file that shrank reads short
    ok = rel + _HEAD <= end
    if want is not None:
        ok &= want
    at = np.where(ok, rel, 0)
    if len(buf) < _HEAD:
        return Window(first, out, 0)
    at = np.minimum(at, len(buf) - _HEAD)
    nchunks = _u32(buf, at) | (_u32(buf, at + 4) << 32)
    orig, filt, mdl = _u32(buf, at + 8), _u32(buf, at + 12), _u32(buf, at + 16)
    md = at + _HEAD
    data = md + mdl
    ok &= (nchunks == 1) & (data + filt <= end)
    if role.max_bytes is not None:
        ok &= orig <= role.max_bytes
    codec = _lone_codec(role.specs) if role.specs else None
    if codec is None:
        ok &= filt == orig
    else:
        # metadata after the table: decoded alike, but a finding (the per-chunk path's)
        ok &= unread_metadata(mdl, _PARTS_MD) == 0
        mdc = np.where(ok, md, 0)
        ok &= (_u32(buf, mdc) == 0) & (_u32(buf, mdc + 4) == 1) & \
            (_u32(buf, mdc + 8) == orig) & (_u32(buf, mdc + 12) == filt)
    raw = buf.data
    info = role.info
    for k in np.flatnonzero(ok).tolist():
        a = int(data[k])
        b = a + int(filt[k])
        if codec is None:
            out[k] = bytes(raw[a:b])
            stored += b - a + int(mdl[k])
            continue
        declared = int(orig[k])
        try:
            plain = codec.decompress_part(raw[a:b], declared, role.specs[0], info)
        except Exception:  # noqa: BLE001 - the per-chunk path says what is wrong
            continue
        if len(plain) == declared:
            out[k] = bytes(plain)
            stored += b - a + int(mdl[k])
    return Window(first, out, stored)


# ---- the chunks of multi-chunk tiles ------------------------------------------------------
# A tile of more than one chunk (64 KiB chunks of a 512 KiB tile) goes through the per-chunk
# checks one chunk at a time: a Stage per filter, a forward re-compress, all under the GIL.
# For the pipelines below a chunk that `filters.batch.reverse_into` decodes has no finding
# the per-chunk checks could make, so `verify` decodes their chunks in large slices, one
# `reverse_into` call per thread, and takes only what it leaves through the per-chunk path.
_SHUFFLES = (FilterType.BYTESHUFFLE, FilterType.BITSHUFFLE)


def chunk_plan(specs: List[FilterSpec], info: DataInfo) -> Optional[filter_batch.Plan]:
    """The `filters.batch` plan of a pipeline whose chunks need no per-chunk check once
    decoded, else None. Why a decoded chunk is then clean: a BYTESHUFFLE or BITSHUFFLE forward
    of what it un-shuffled gives the stored stage back (a permutation; `reverse_into` leaves
    a BITSHUFFLE part it would copy unshuffled), with the one-part table it checked; a lone
    compressor re-encoding differently is no finding (see the module doc); neither has
    writer rules or notes. What stays: a compressor whose forward raises, which depends on
    the options alone — the caller checks each file's first chunk the per-chunk way first
    (a probe). [DELTA or DOUBLE_DELTA, lone compressor]: their writer rules are checked as
    the chunks decode (`_checked_typed_plan`). Everything else: no plan. Whether a chunk
    takes the plan is decided by `decode.choose_chunk`, a run by `decode.choose`."""
    if not specs:
        return None
    if len(specs) == 2 and specs[0].type in _TYPED and _lone_codec(specs[1:]) is not None:
        return _checked_typed_plan(specs, info)
    for s in specs:
        if get(s.type).writer_rules:
            return None
        if s.type not in _SHUFFLES and _lone_codec([s]) is None:
            return None
    p = filter_batch.plan(list(specs), info)
    return p if p is not None and p.typed is None else None


_TYPED = (FilterType.DELTA, FilterType.DOUBLE_DELTA)


class _ForwardChecked(CompressionFilter):
    """A typed codec whose decode also makes its forward check (`deltas.typed_check`): a part
    the forward does not reproduce raises, so `filters.batch` leaves its chunk to the
    per-chunk checks, which say what differs."""

    def __init__(self, codec: CompressionFilter, check: Check):
        self.codec, self.check = codec, check

    def decompress_part(self, data, original: int, spec: FilterSpec, info: DataInfo) -> bytes:
        plain = self.codec.decompress_part(data, original, spec, info)
        if len(plain) != original or not self.check(plain, data):
            raise ValueError("forward does not reproduce the part")
        return plain


def _checked_typed_plan(specs: List[FilterSpec], info: DataInfo) -> Optional[filter_batch.Plan]:
    """[DELTA or DOUBLE_DELTA, lone compressor]: `filters.batch`'s typed plan, the typed
    codec's decode followed by its compiled forward check. A chunk it decodes is clean: the
    typed forward reproduced the stored part with the newest writer's rule (IDENTICAL, no
    notes: what `check_forward` would say) and the compressor's forward is silent (the
    file's first chunk probed, as for the shuffles)."""
    p = filter_batch.plan(list(specs), info)
    if p is None or p.typed is None:
        return None
    codec, tspec, tinfo = p.typed
    check = typed_check(tspec, tinfo)
    if check is None:
        return None
    return filter_batch.Plan(p.esize, p.comp, p.spec, p.info, None,
                             (_ForwardChecked(codec, check), tspec, tinfo))


def silent_forward(spec: FilterSpec) -> bool:
    """Whether the forward check of this filter can find nothing but a forward that raises,
    which depends on its options (and the key) alone: a lone compressor (see the module
    doc) or TileDB's AES-256-GCM (a fresh IV each time: its bytes never match, no writer
    rules)."""
    if spec.type == FilterType.INTERNAL_FILTER_AES_256_GCM:
        from ...filters.encryption import Aes256Gcm

        f = get(spec.type)
        return not f.writer_rules and not f.deterministic and \
            type(f).forward is Aes256Gcm.forward
    return _lone_codec([spec]) is not None


def plan_metadata(p: filter_batch.Plan) -> int:
    """The one chunk metadata length the plan's chunks have: the shuffle's part table (8),
    the compressor's (8 + 8 a part: the shuffle's or the typed codec's table and the data,
    or the data). A chunk with more metadata bytes goes through the per-chunk path, which reports them
    (`accel/unread.py`)."""
    if p.comp is None:
        return 8
    return 8 + 8 * (2 if p.esize or p.typed is not None else 1)

"""The compiled loops of `bulk_locate.py`: many fragments' footers, tile-offset sections and
data-file chunk tables read with no GIL held. Every check the Python path
(`fragment_metadata._load_model`, `fragment_model.prefetch_u64s`, `values._locate`) makes
before it decodes is made here too; a fragment that fails any is only marked (status not
0) and left to that path, which reads it again and says what is wrong. Layout positions
come in as numbers from their one definition (`footer_reader.FooterShape`,
`tile_layout`). Imported only once numba is known to load."""
from __future__ import annotations

from typing import Any

import numba

from .nativekernels import _get64 as _u64
from .nativekernels import _u32

# The chunk table's layout as numba constants (accel imports no format package): the
# declaration is `tiledb/parse/tile_layout.NUM_CHUNKS`, `CHUNK_HEADER`, and
# tests/tiledb/test_chunk_table_kernel.py holds these to it and `_chunk_rows` to
# `rawtile.chunk_table`, on written and on damaged tiles.
_HEAD = 8      # Num chunks (u64)
_ENTRY = 12    # per chunk: original length, filtered length, metadata length (u32 each)
_ORIG, _FILT, _MDLEN = 0, 4, 8


@numba.njit(nogil=True, cache=True)
def _chunk_rows(src: Any, start: int, end: int, rows: Any, at: int) -> int:
    """`rawtile.chunk_table` of the bare tile at `start` (ending by `end`) appended to
    `rows` from row `at`: (original, filtered, md offset, md length, data offset) each.
    Returns the next free row, or -1 when the table does not fit (nothing then counts)."""
    if start + _HEAD > end:
        return -1
    n = _u64(src, start)
    if n < 0 or n > (end - start - _HEAD) // _ENTRY or at + n > len(rows):
        return -1
    pos = start + _HEAD
    for _ in range(n):
        if pos + _ENTRY > end:
            return -1
        orig, filt, mdl = _u32(src, pos + _ORIG), _u32(src, pos + _FILT), _u32(src, pos + _MDLEN)
        md = pos + _ENTRY
        data = md + mdl
        if data + filt > end:
            return -1
        rows[at, 0], rows[at, 1], rows[at, 2], rows[at, 3], rows[at, 4] = \
            orig, filt, md, mdl, data
        at += 1
        pos = data + filt
    return at


@numba.njit(nogil=True, cache=True)
def footer_tiles(meta: Any, m_at: Any, m_size: Any, template: Any, same: Any,
                 rtree_at: int, toff_at: int, gheader: Any, pipeline: Any,
                 max_decode: int, status: Any, rows: Any, first: Any, count: Any,
                 positions: Any, spans: Any) -> int:
    """For each fragment i with status[i] == 1 whose metadata file is meta[m_at[i]:][:m_size[i]]:
    its footer checked to have the template's shape (the same length, the same bytes in
    each `same` range), its R-tree tile not encrypted, and its tile-offsets section (the
    generic tile whose offset is at `toff_at` in the footer) unencrypted, within the file,
    with exactly `pipeline` as its filters and a chunk table that fits, declaring 8 to
    `max_decode` bytes. Its chunks are added to `rows` (offsets in `meta`) from `first[i]`,
    `count[i]` of them, to be decoded at `positions` — the section's payload then spans
    spans[i] of the decoded buffer — and status[i] set to 0. `gheader` holds the generic
    tile header's size and where its persisted size, encryption type and pipeline size are.
    Returns the decoded buffer's size."""
    head, at_persisted, at_enc, at_psize = gheader[0], gheader[1], gheader[2], gheader[3]
    fsize = len(template)
    row = 0
    total = 0
    for i in range(len(m_at)):
        if status[i] != 1 or m_size[i] < 0:
            continue
        base, size = m_at[i], m_size[i]
        if size < 20 or _u64(meta, base + size - 8) != fsize or fsize > size - 8:
            continue
        fstart = base + size - 8 - fsize
        ok = True
        for r in range(len(same)):
            for k in range(same[r, 0], same[r, 1]):
                if meta[fstart + k] != template[k]:
                    ok = False
        if not ok:
            continue
        rtree = _u64(meta, fstart + rtree_at)
        if 0 <= rtree <= size - head and meta[base + rtree + at_enc] == 1:
            continue   # an encrypted fragment (`_encrypted_of`): the key's path reads it
        off = _u64(meta, fstart + toff_at)
        if off < 0 or off > size - head or meta[base + off + at_enc] != 0:
            continue
        psize = _u32(meta, base + off + at_psize)
        persisted = _u64(meta, base + off + at_persisted)
        if psize != len(pipeline) or persisted < 0 or off + head + psize > size \
                or persisted > size - off - head - psize:
            continue
        for k in range(psize):
            if meta[base + off + head + k] != pipeline[k]:
                ok = False
        if not ok:
            continue
        start = base + off + head + psize
        end = _chunk_rows(meta, start, start + persisted, rows, row)
        if end < 0:
            continue
        declared = 0
        for r in range(row, end):
            declared += rows[r, 0]
        if not 8 <= declared <= max_decode:
            continue
        first[i], count[i] = row, end - row
        spans[i, 0], spans[i, 1] = total, total + declared
        for r in range(row, end):
            positions[r] = total
            total += rows[r, 0]
        row = end
        status[i] = 0
    return total


@numba.njit(nogil=True, cache=True)
def data_tiles(payloads: Any, spans: Any, data: Any, d_at: Any, d_size: Any,
               max_bytes: int, status: Any, rows: Any, first: Any, count: Any,
               positions: Any, cells: Any) -> int:
    """For each fragment i with status[i] == 0: its tile offsets (the u64 list decoded at
    payloads[spans[i]]) located in its data file data[d_at[i]:][:d_size[i]] — offsets within
    the file and never going backwards, each tile's chunk table fitting before the next
    tile, each tile declaring at most `max_bytes` (unless negative) — as `values._locate`
    locates them; its chunks added to `rows` (offsets in `data`) from `first[i]`,
    `count[i]` of them, their cells at `positions`, the fragment's cells at
    cells[i] = (start, bytes). A fragment that fails gets status 2. Returns the cells'
    total size."""
    row = 0
    total = 0
    for i in range(len(status)):
        if status[i] != 0:
            continue
        status[i] = 2
        a, b = spans[i, 0], spans[i, 1]
        n = _u64(payloads, a)
        if n < 0 or n > (b - a - 8) // 8:
            continue
        if n == 0:   # no tiles: no data file is read
            first[i], count[i] = row, 0
            cells[i, 0], cells[i, 1] = total, 0
            status[i] = 0
            continue
        base, size = d_at[i], d_size[i]
        if size < 0:
            continue
        ok = True
        start_row = row
        pos = 0
        for t in range(n):
            lo = _u64(payloads, a + 8 + 8 * t)
            hi = _u64(payloads, a + 16 + 8 * t) if t + 1 < n else size
            if lo < 0 or lo > size or hi < lo or hi > size:
                ok = False
                break
            end = _chunk_rows(data, base + lo, base + hi, rows, row)
            if end < 0:
                ok = False
                break
            declared = 0
            for r in range(row, end):
                positions[r] = total + pos + declared
                declared += rows[r, 0]
            if max_bytes >= 0 and declared > max_bytes:
                ok = False
                break
            pos += declared
            row = end
        if not ok:
            row = start_row
            continue
        first[i], count[i] = start_row, row - start_row
        cells[i, 0], cells[i, 1] = total, pos
        total += pos
        status[i] = 0
    return total

"""Compiled reversal of RLE and DICTIONARY var-string tiles, straight into the output.

The numpy reversal (`strings.rle_decode`, `dictionary.Dictionary.reverse`) pads every word
into a row and gathers rows with boolean masks: several passes and temporaries the size of
the tile. These kernels walk the encoded records once and copy each cell's bytes into the
caller's buffer, writing the u64 cell offsets as they go (`formats/core/compiled.py`: numba,
`nogil`, so tiles decode on every core).

A kernel returns the number of cells written, or -1 when the bytes are not exactly what a
clean tile holds (a record past the end, an id past the dictionary, sizes that disagree):
the caller then takes the general path, which reports the damage as it always did. A
kernel therefore never decides an error, it only accepts clean tiles. What calls them (a
string stage's header read, the stage handed to filter 0): `filters/direct.py`."""
from __future__ import annotations

import numpy as np

from ..core.compiled import kernel


@kernel(stages=("RLE",))   # numpy's string expansion does not load numba (compiled.py)
def rle_strings(enc, a, b, out, offs):
    """Runs `[a-byte BE run length][b-byte BE string length][string]` filling `enc`
    exactly, expanded into `out` (exactly the cells' bytes) and `offs` (one per cell)."""
    n = enc.shape[0]
    ncells = offs.shape[0]
    cap = out.shape[0]
    pos = np.int64(0)
    cell = 0
    o = np.int64(0)
    while pos < n:
        if pos + a + b > n:
            return -1
        r = np.int64(0)
        for k in range(a):
            r = (r << 8) | np.int64(enc[pos + k])
        ln = np.int64(0)
        for k in range(b):
            ln = (ln << 8) | np.int64(enc[pos + a + k])
        s = pos + a + b
        if r < 0 or ln < 0 or ln > n - s or r > ncells - cell:
            return -1
        if ln > 0 and r > (cap - o) // ln:
            return -1
        for _ in range(r):
            offs[cell] = o
            for k in range(ln):   # a loop: a slice assignment compiles its error's formatting
                out[o + k] = enc[s + k]
            o += ln
            cell += 1
        pos = s + ln
    if cell != ncells or o != cap:
        return -1
    return cell


@kernel(stages=("DICTIONARY",))
def dict_strings(dbuf, b, ids, a, out, offs, starts, lens):
    """Dictionary entries `[b-byte BE length][string]` filling `dbuf` exactly; one a-byte
    BE id per cell in `ids`: the cells written into `out` (exactly their bytes) and `offs`.
    `starts`, `lens`: int64 scratch of `len(dbuf) // b + 1` entries (made by the caller: an
    allocation in the kernel compiles numpy's allocator into a first run)."""
    n = dbuf.shape[0]
    ncells = offs.shape[0]
    cap = out.shape[0]
    if ids.shape[0] != ncells * a or len(starts) < n // b + 1 or len(lens) < n // b + 1:
        return -1
    nent = 0
    pos = np.int64(0)
    while pos < n:
        if pos + b > n:
            return -1
        ln = np.int64(0)
        for k in range(b):
            ln = (ln << 8) | np.int64(dbuf[pos + k])
        if ln < 0 or ln > n - pos - b:
            return -1
        starts[nent] = pos + b
        lens[nent] = ln
        nent += 1
        pos += b + ln
    o = np.int64(0)
    for c in range(ncells):
        w = np.int64(0)
        for k in range(a):
            w = (w << 8) | np.int64(ids[c * a + k])
        if w < 0 or w >= nent:
            return -1
        ln = lens[w]
        if ln > cap - o:
            return -1
        s = starts[w]
        offs[c] = o
        for k in range(ln):
            out[o + k] = dbuf[s + k]
        o += ln
    if o != cap:
        return -1
    return ncells

"""Compiled kernels of the filter stages (`formats/compiled.py`: numba, nogil; each caller
keeps its numpy path for when `KERNEL.get(nbytes)` gives None).

Byte unshuffle: byte j of element i is at `j*n + i`. numpy rebuilds elements with widening
casts, shifts and ors over whole (rows, planes, n) arrays — several passes through memory —
where one loop stores each output byte once. LLVM vectorises the loop when the element size
is a constant (measured in cache: 25–29 GB/s for sizes 2, 4 and 8; 0.7–2 GB/s when the size
is only known at run time), hence one branch per common size.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..compiled import kernel


@kernel
def unshuffle(src: Any, n: int, esize: int, out: Any) -> None:
    """out[i*esize + j] = src[j*n + i] for the n elements (flat uint8 arrays)."""
    if esize == 2:
        for i in range(n):
            for j in range(2):
                out[2 * i + j] = src[j * n + i]
    elif esize == 4:
        for i in range(n):
            for j in range(4):
                out[4 * i + j] = src[j * n + i]
    elif esize == 8:
        for i in range(n):
            for j in range(8):
                out[8 * i + j] = src[j * n + i]
    else:   # plane after plane: sequential reads (the element-major order does not vectorise)
        for j in range(esize):
            for i in range(n):
                out[esize * i + j] = src[j * n + i]


def unshuffler(nbytes: int) -> Optional[Callable[[np.ndarray, int, np.ndarray], None]]:
    """A compiled `f(src, esize, out)`: byte-unshuffle the flat uint8 `src` into the flat
    uint8 `out` of the same length (the `len % esize` tail bytes copied unchanged); None
    (no numba, `ARRAYSCOPE_NO_JIT=1`, or `nbytes` small while numba is not loaded): take
    the numpy path."""
    fn = unshuffle.get(nbytes)
    if fn is None:
        return None

    def run(src: np.ndarray, esize: int, out: np.ndarray) -> None:
        n = len(src) // esize
        fn(src, n, esize, out)
        body = n * esize
        if body < len(src):
            out[body:] = src[body:]
    return run

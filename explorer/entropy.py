"""Entropy per block of a source (no Qt), for the overview bar: a sample of each block is
read (never the whole source), so a 4 GiB file costs a few MiB of reads."""
from __future__ import annotations

from typing import Callable, List, Optional

import numpy as np

SAMPLE = 4096


def byte_entropy(data: bytes) -> float:
    """Shannon entropy in bits per byte (0: one value repeated, 8: uniform noise)."""
    if not data:
        return 0.0
    counts = np.bincount(np.frombuffer(data, dtype=np.uint8), minlength=256)
    p = counts[counts > 0] / len(data)
    return float(-(p * np.log2(p)).sum())


def entropy_profile(source, bins: int, sample: int = SAMPLE,
                    cancelled: Optional[Callable[[], bool]] = None) -> List[float]:
    """Entropy of `bins` equal blocks of `source` (a block's first `sample` bytes)."""
    size = source.size
    if size <= 0 or bins <= 0:
        return []
    bins = min(bins, size)
    out = []
    for i in range(bins):
        if cancelled is not None and cancelled():
            break
        a = i * size // bins
        b = (i + 1) * size // bins
        out.append(byte_entropy(source.read(a, min(b - a, sample))))
    return out

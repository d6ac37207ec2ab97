"""Fixtures shared by the TileDB tests."""
from __future__ import annotations

import pytest


@pytest.fixture(params=["jit", "numpy"])
def jit(request, monkeypatch):
    """Which kernel path runs: the compiled kernels ("jit") or the numpy paths
    (`ARRAYSCOPE_NO_JIT=1`). A module may define its own `jit` (test_values_direct does)."""
    if request.param == "numpy":
        monkeypatch.setenv("ARRAYSCOPE_NO_JIT", "1")
    else:
        monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    return request.param


@pytest.fixture(params=[1, 2])
def threads(request, monkeypatch):
    """The decode threads `values` (and verify's windows) use: 1, then 2."""
    from arrayscope.formats.core import compiled
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(workers=request.param))
    return request.param

"""Shared fixtures of the on-demand benchmarks."""
from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def bench_dir(request, tmp_path_factory):
    """Where a benchmark module builds its arrays: ARRAYSCOPE_BENCH_DIR (kept between runs,
    so a large array is written once) or a fresh temporary folder named after the module."""
    d = os.environ.get("ARRAYSCOPE_BENCH_DIR")
    if d:
        os.makedirs(d, exist_ok=True)
        return d
    return str(tmp_path_factory.mktemp(request.module.__name__.rsplit("_", 1)[-1]))

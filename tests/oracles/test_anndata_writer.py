"""anndata's `write_zarr` (zarr formats 2 and 3) as an oracle: random AnnData objects, each
store verified clean and read as zarr reads it (README.md in this folder)."""
from __future__ import annotations

import os
import warnings

import pytest

from .adata_gen import random_adata
from .runner import run_examples
from .zarr_checks import check_zarr_store, zarr_arrays

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore")]
ad = pytest.importorskip("anndata", reason="the writer oracles need the `oracles` extra")


def _write(rng, folder: str):
    a = random_adata(rng)
    path = os.path.join(folder, "adata.zarr")
    fmt = int(rng.choice([2, 3]))
    with warnings.catch_warnings(), \
            ad.settings.override(zarr_write_format=fmt, allow_write_nullable_strings=True):
        warnings.simplefilter("ignore")
        a.write_zarr(path)
    return zarr_arrays(path)


def test_anndata_stores_read_as_zarr_reads_them():
    run_examples("anndata", _write,
                 lambda folder, truth: check_zarr_store(os.path.join(folder, "adata.zarr"),
                                                        truth))

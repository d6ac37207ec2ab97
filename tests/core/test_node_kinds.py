"""Every node the parsers build has a kind from `node.KINDS` (the GUI colours by it and the
CLI prints it, so a kind outside the list is drawn uncoloured and undocumented)."""
from __future__ import annotations

from pathlib import Path

import pytest

from arrayscope import formats
from arrayscope.formats.core.node import KINDS

SAMPLES = Path(formats.__file__).resolve().parents[1] / "resources" / "samples"
DATA = Path(__file__).resolve().parents[1] / "data"


def _kinds(node, budget: list) -> set:
    seen = {node.kind}
    for child in node.children:
        if budget[0] <= 0:
            break
        budget[0] -= 1
        seen |= _kinds(child, budget)
    return seen


def _stores() -> list:
    """The bundled samples and every store of the committed Zarr fixtures (anndata, zarr 2.18,
    tensorstore: vlen strings among them, which build `records` nodes)."""
    stores = [SAMPLES / name for name in ("tiledb_dense", "tiledb_sparse", "scdl",
                                          "zarr_struct", "zarr_v2_blosc")]
    stores += [DATA / "soma" / "pbmc68k", DATA / "zarr" / "anndata_0.12.19_zarr3.1.6_v3" / "store"]
    for folder in ("v2_2.18.7", "tensorstore_0.1.86"):
        stores += sorted(p for p in (DATA / "zarr" / folder).iterdir() if p.is_dir())
    return stores


@pytest.mark.parametrize("path", _stores(), ids=lambda p: p.name)
def test_every_node_kind_is_declared(path):
    doc = formats.open(str(path))
    kinds = _kinds(doc.root, [20_000])
    assert len(kinds) > 3, kinds     # the format was recognised and parsed
    assert kinds <= set(KINDS), sorted(kinds - set(KINDS))


def test_the_stores_include_the_kinds_that_are_easy_to_forget():
    seen: set = set()
    for path in _stores():
        seen |= _kinds(formats.open(str(path)).root, [20_000])
    assert {"records", "chunk", "filter", "tile", "cells"} <= seen

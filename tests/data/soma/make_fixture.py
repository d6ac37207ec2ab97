"""Write a small SOMA experiment with tiledbsoma itself, and record what tiledbsoma reads back.

Needs tiledbsoma and scanpy (not part of the test environment): a separate venv, e.g.

    python3.11 -m venv /work/venvs/soma && /work/venvs/soma/bin/pip install tiledbsoma scanpy
    /work/venvs/soma/bin/python tests/data/soma/make_fixture.py [--record]

(`--record` re-reads the committed experiment into expected.json without rewriting it.)

Made with tiledbsoma 2.3.0 (libtiledbsoma / TileDB core 2.30.0), scanpy 1.11.5, anndata 0.12.

The AnnData is scanpy's bundled `pbmc68k_reduced` (read from the scanpy package, no network),
cut to its first 60 cells and 40 genes; obs, var, X, obsm (X_pca, X_umap), varm (PCs) and a
few uns entries are kept, obsp dropped (its neighbour graph would no longer be consistent).

`pbmc68k/` is the experiment (a TileDB group with nested groups, written by
`tiledbsoma.io.from_anndata`); `expected.json` holds what tiledbsoma reads back:
- `members`: every member of every group, by its path of member names, with its type
  (TileDB "group" / "array") and its SOMA type;
- `obs` / `var`: every column, in soma_joinid order;
- `X_data`: the (soma_dim_0, soma_dim_1, soma_data) triples of ms/RNA/X/data, in the order
  tiledbsoma returns them (row-major), plus the shape;
- `obsm`: the obsm arrays as dense nested lists;
- `group_metadata`: the metadata of the experiment group.
The tests compare arrayscope's decoding with these, without tiledbsoma.
"""
from __future__ import annotations

import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "pbmc68k")
N_CELLS, N_GENES = 60, 40


def make_adata():
    import scanpy as sc

    full = sc.datasets.pbmc68k_reduced()
    a = full[:N_CELLS, :N_GENES].copy()
    a.obsp = {}
    a.raw = None  # 765 genes: the raw layer alone would be most of the fixture
    a.uns = {k: full.uns[k] for k in ("louvain_colors", "bulk_labels_colors")}
    a.uns["pca"] = {"variance_ratio": full.uns["pca"]["variance_ratio"][:8]}
    return a


def _plain(v):
    import numpy as np

    if isinstance(v, (np.generic,)):
        return v.item()
    if isinstance(v, float) and v != v:
        return "NaN"
    return v


def _column(series) -> list:
    return [_plain(x) for x in series.tolist()]


def _walk(coll, prefix: str, out: dict) -> None:
    import tiledbsoma

    for name in sorted(coll.keys()):
        child = coll[name]
        path = f"{prefix}{name}"
        is_group = isinstance(child, tiledbsoma.Collection) or \
            isinstance(child, (tiledbsoma.Experiment, tiledbsoma.Measurement))
        out[path] = {"type": "group" if is_group else "array",
                     "soma_type": child.soma_type}
        if is_group:
            _walk(child, path + "/", out)


def _dense(arr) -> list:
    import numpy as np

    tbl = arr.read().tables().concat().to_pandas()
    out = np.zeros(arr.shape, dtype=tbl["soma_data"].dtype)  # float64 X_umap stays float64
    out[tbl["soma_dim_0"].to_numpy(), tbl["soma_dim_1"].to_numpy()] = tbl["soma_data"].to_numpy()
    return [[float(x) for x in row] for row in out]


def record(path: str) -> dict:
    import numpy as np
    import tiledbsoma

    exp = tiledbsoma.Experiment.open(path)
    members: dict = {}
    _walk(exp, "", members)
    obs = exp.obs.read().concat().to_pandas().sort_values("soma_joinid")
    var = exp.ms["RNA"].var.read().concat().to_pandas().sort_values("soma_joinid")
    X = exp.ms["RNA"].X["data"]
    tbl = X.read().tables().concat().to_pandas()
    shape = [int(n) for n in X.shape]
    obsm = {k: _dense(exp.ms["RNA"].obsm[k]) for k in sorted(exp.ms["RNA"].obsm.keys())}
    md = {k: _plain(v) for k, v in sorted(exp.metadata.items())}
    exp.close()
    return {
        "tiledbsoma": tiledbsoma.__version__,
        "members": members,
        "group_metadata": md,
        "obs": {c: _column(obs[c].astype(object) if str(obs[c].dtype) == "category" else obs[c])
                for c in obs.columns},
        "var": {c: _column(var[c].astype(object) if str(var[c].dtype) == "category" else var[c])
                for c in var.columns},
        "X_data": {"shape": shape,
                   "soma_dim_0": [int(x) for x in tbl["soma_dim_0"]],
                   "soma_dim_1": [int(x) for x in tbl["soma_dim_1"]],
                   "soma_data": [float(np.float32(x)) for x in tbl["soma_data"]]},
        "obsm": obsm,
    }


def main() -> None:
    """Write the experiment anew, or with `--record` only re-read the committed one."""
    import sys

    import tiledbsoma.io

    if "--record" not in sys.argv:
        if os.path.exists(OUT):
            shutil.rmtree(OUT)
        tiledbsoma.io.from_anndata(OUT, make_adata(), measurement_name="RNA")
    with open(os.path.join(HERE, "expected.json"), "w") as fh:
        json.dump(record(OUT), fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()

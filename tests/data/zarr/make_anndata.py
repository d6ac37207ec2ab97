"""Write a small AnnData with anndata's `write_zarr` (zarr format 2 and 3) and record what
zarr reads back from every array of the store.

    .venv/bin/pip install anndata
    .venv/bin/python tests/data/zarr/make_anndata.py            # anndata + zarr 3.x
    # with zarr 2.18 (its own venv): pip install anndata "zarr<3"; same command

Output: `anndata_<anndata version>_zarr<zarr version>_v<format>/store/` and beside it
`expected.json`: per array (path inside the store), its shape and the values the writer's
zarr reads, flattened in C order (struct arrays one entry per field; strings as str;
floats exact, NaN/±Infinity as strings) with sha256 of the little-endian bytes for fixed-size
types. The sparse X is also checked here against anndata's own read (data, indices, indptr).
The AnnData: obs with categoricals, var with strings, X a csr matrix, obsm, layers, uns with
nested dicts and scanpy's `rank_genes_groups` record arrays whose field names hold '/' and
'+' ('CD4+/CD25 T Reg').
"""
from __future__ import annotations

import json
import os
import shutil
import warnings
from importlib.metadata import version

import anndata as ad
import numpy as np
import pandas as pd
import scipy.sparse as sp
import zarr
from fixture_json import field_entry

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
GROUPS = ["CD4+/CD25 T Reg", "B cells", "NK"]


def adata() -> ad.AnnData:
    rng = np.random.default_rng(5)
    n_obs, n_var = 12, 7
    dense = rng.poisson(0.7, (n_obs, n_var)).astype(np.float32)
    obs = pd.DataFrame({
        "cell_type": pd.Categorical([GROUPS[i % 3] for i in range(n_obs)]),
        "batch": pd.Categorical(["b1", "b2"] * (n_obs // 2), categories=["b2", "b1"],
                                ordered=True),
        "n_counts": dense.sum(1).astype(np.float64),
        "ok": [i % 2 == 0 for i in range(n_obs)],
    }, index=[f"cell{i}" for i in range(n_obs)])
    var = pd.DataFrame({"gene_name": [f"GENE-{i}é" for i in range(n_var)],
                        "highly_variable": [i % 3 == 0 for i in range(n_var)],
                        "mean": dense.mean(0).astype(np.float32)},
                       index=[f"ENSG{i:05d}" for i in range(n_var)])
    a = ad.AnnData(X=sp.csr_matrix(dense), obs=obs, var=var)
    a.obsm["X_pca"] = rng.normal(size=(n_obs, 3)).astype(np.float32)
    a.layers["counts"] = sp.csr_matrix(dense.astype(np.int32))
    n_top = 4
    names = np.rec.fromarrays([np.array([f"GENE-{(i + k) % n_var}é" for i in range(n_top)],
                                        dtype=object) for k in range(3)], names=GROUPS)
    scores = np.rec.fromarrays([rng.normal(size=n_top).astype(np.float32) for _ in GROUPS],
                               names=GROUPS)
    pvals = np.rec.fromarrays([rng.uniform(size=n_top) for _ in GROUPS], names=GROUPS)
    a.uns["rank_genes_groups"] = {
        "params": {"groupby": "cell_type", "method": "wilcoxon", "reference": "rest"},
        "names": names, "scores": scores, "pvals": pvals}
    a.uns["neighbors"] = {"params": {"n_neighbors": 15, "method": "umap"}}
    a.uns["cell_type_colors"] = np.array(["#1f77b4", "#ff7f0e", "#279e68"], dtype=object)
    return a


def arrays(group, prefix="") -> dict:
    out = {}
    for name, arr in sorted(group.arrays()):
        a = np.asarray(arr[...])
        rel = prefix + name
        if a.dtype.names:
            fields = {f: field_entry(a[f]) for f in a.dtype.names}
        else:
            fields = {"value": field_entry(a)}
        out[rel] = {"shape": list(a.shape), "dtype": str(a.dtype), "fields": fields}
    for name, sub in sorted(group.groups()):
        out.update(arrays(sub, prefix + name + "/"))
    return out


def main() -> None:
    zv = version("zarr")
    formats = [2, 3] if int(zv.split(".")[0]) >= 3 else [2]
    for fmt in formats:
        out = os.path.join(HERE, f"anndata_{version('anndata')}_zarr{zv}_v{fmt}")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        store = os.path.join(out, "store")
        a = adata()
        if fmt == 3:
            ad.settings.zarr_write_format = 3
            a.write_zarr(store)
        else:
            if hasattr(ad.settings, "zarr_write_format"):
                ad.settings.zarr_write_format = 2
            a.write_zarr(store)
        back = ad.read_zarr(store)
        exp = arrays(zarr.open_group(store, mode="r"))
        # anndata's own read of the sparse X is what the store's arrays say
        for part in ("data", "indices", "indptr"):
            got = np.asarray(getattr(back.X, part))
            assert got.tolist() == [x if not isinstance(x, str) else x for x in
                                    np.asarray(zarr.open_array(store, path=f"X/{part}",
                                                               mode="r")[...]).tolist()]
        assert list(back.uns["rank_genes_groups"]["names"].dtype.names) == GROUPS
        with open(os.path.join(out, "expected.json"), "w") as fh:
            json.dump({"writer": f"anndata {version('anndata')} with zarr {zv}",
                       "zarr_format": fmt, "store": "store", "arrays": exp}, fh, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()

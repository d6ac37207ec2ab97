"""Random AnnData objects for the writer oracles: the columns, matrices and nested `uns`
that scanpy/anndata users store (a numpy Generator draws them, so a seed replays one)."""
from __future__ import annotations

import numpy as np


def random_adata(rng: np.random.Generator, need_cells: bool = False):
    import anndata as ad
    import pandas as pd
    import scipy.sparse as sp

    n_obs, n_var = int(rng.integers(0, 40)), int(rng.integers(0, 25))
    if need_cells:
        n_obs, n_var = max(n_obs, 1), max(n_var, 1)
    dtype = rng.choice([np.float32, np.float64, np.int32, np.int64, np.uint16, np.int8])
    dense = rng.poisson(0.5, (n_obs, n_var)).astype(dtype)
    kind = int(rng.integers(0, 4 if not need_cells else 3))
    x = [dense, sp.csr_matrix(dense), sp.csc_matrix(dense), None][kind]
    obs = pd.DataFrame(index=[f"c{rng.integers(1 << 40)}_{i}" for i in range(n_obs)])
    var = pd.DataFrame(index=[f"g{i}" for i in range(n_var)])
    for frame, n in ((obs, n_obs), (var, n_var)):
        for j in range(int(rng.integers(0, 6))):
            _add_column(frame, j, n, rng)
    a = ad.AnnData(X=x, obs=obs, var=var)
    if rng.integers(0, 2) and n_obs:
        a.obsm["X_pca"] = rng.normal(size=(n_obs, int(rng.integers(1, 5)))).astype(np.float32)
    if rng.integers(0, 2) and x is not None:
        a.layers["counts"] = sp.csr_matrix(dense.astype(np.int32)) if rng.integers(0, 2) \
            else dense.astype(np.int64)
    if rng.integers(0, 2) and n_obs:
        a.obsp["distances"] = sp.random(n_obs, n_obs, density=0.2, format="csr",
                                        random_state=int(rng.integers(1 << 30)))
    if rng.integers(0, 2):
        a.uns["params"] = {"k": int(rng.integers(100)), "name": "umap",
                           "arr": np.arange(int(rng.integers(0, 5))),
                           "nested": {"x": 1.5, "strs": np.array(["p", "qq"], dtype=object)}}
    return a


def _add_column(frame, j: int, n: int, rng: np.random.Generator) -> None:
    import pandas as pd

    kind = int(rng.integers(0, 9))
    if kind == 0:
        frame[f"cat{j}"] = pd.Categorical(rng.choice(["a", "bb", "ccc é", None], n))
    elif kind == 1:
        frame[f"f{j}"] = rng.normal(size=n).astype(rng.choice([np.float32, np.float64]))
    elif kind == 2:
        frame[f"i{j}"] = rng.integers(-5, 5, n).astype(
            rng.choice([np.int8, np.int16, np.int64, np.uint32]))
    elif kind == 3:
        frame[f"b{j}"] = rng.integers(0, 2, n).astype(bool)
    elif kind == 4:
        frame[f"s{j}"] = np.array([("x" * int(k)) + "ü" for k in rng.integers(0, 9, n)],
                                  dtype=object)
    elif kind == 5:
        frame[f"ni{j}"] = pd.array([None if k == 0 else int(k) for k in rng.integers(0, 4, n)],
                                   dtype="Int32")
    elif kind == 6:
        frame[f"nb{j}"] = pd.array([None if k == 0 else bool(k - 1)
                                    for k in rng.integers(0, 3, n)], dtype="boolean")
    elif kind == 7:
        frame[f"oc{j}"] = pd.Categorical(rng.choice(["lo", "hi"], n), categories=["lo", "hi"],
                                         ordered=True)
    else:
        frame[f"ns{j}"] = pd.array([None if k == 0 else "v" * int(k)
                                    for k in rng.integers(0, 4, n)], dtype="string")

"""Build the SCDL fixture archives with bionemo-scdl itself, and record what its reader returns.

Run from anywhere (needs torch==2.13.0, bionemo-scdl 0.1.3, anndata; the legacy fixture also
needs bionemo-scdl 0.0.8 unpacked with `pip install --no-deps --target DIR bionemo-scdl==0.0.8`
and DIR given as SCDL_008_PATH; v012_basic likewise 0.1.2 in SCDL_012_PATH. --no-deps keeps pip
from pulling another torch: the child process uses this interpreter's packages):

    python tests/data/scdl/make_fixtures.py

Each archive directory gets an `expected.json` beside it (in this folder, named
`<archive>.expected.json`) with the library's own view: number of rows, a few rows
(values and columns), and each array as its memmap reader returns it. The tests compare
arrayscope's decoding with these, so they need no torch.

Fixtures (all tiny):
- basic/            20x10 float32 counts from one h5ad: var columns, obs columns, neighbours
- uint_data/        20x10 integer counts stored with data_dtype="uint16", var without columns
- concat_blocks/    three in-memory datasets (two var tables) concatenated: 3 var blocks,
                    metadata.json num_rows stale (library keeps the first dataset's count)
- concat_stale/     FORMAT_NOTES §6: a uint8 dataset re-opened from disk, concatenated with a
                    uint16 one: header.sch still describes the first dataset (stale)
- legacy_008/       written by bionemo-scdl 0.0.8: no header.sch, `features/` folder
- v012_basic/       written by bionemo-scdl 0.1.2: header.sch with one feature index `features`,
                    row_ptr uint64 / col_ptr uint32 whatever the sizes, 9x7 integer counts
- header_api/       single header files written with SCDLHeader directly: every field branch
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS_TO_RECORD = (0, 1, 5, -1)


def make_adata(seed: int, n_obs: int = 20, n_vars: int = 10, density: float = 0.2,
               var_columns: bool = True, int_values: bool = False, big: bool = False,
               neighbors: bool = False, gene_prefix: str = "g"):
    import anndata as ad
    import pandas as pd
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    mask = rng.random((n_obs, n_vars)) < density
    if int_values:
        vals = rng.integers(1, 3000 if big else 200, size=(n_obs, n_vars))
    else:
        vals = np.round(rng.random((n_obs, n_vars)) * 10 + 0.25, 2)
    dense = np.where(mask, vals, 0).astype(np.float32)
    X = sp.csr_matrix(dense)
    obs = pd.DataFrame({"cell_type": [f"t{i % 3}" for i in range(n_obs)],
                        "n_counts": dense.sum(axis=1).astype(np.int64)},
                       index=[f"c{seed}_{i}" for i in range(n_obs)])
    genes = [f"{gene_prefix}{j}" for j in range(n_vars)]
    var = (pd.DataFrame({"gene_name": genes, "length": np.arange(n_vars, dtype=np.int64) * 100},
                        index=genes) if var_columns else pd.DataFrame(index=genes))
    adata = ad.AnnData(X=X, obs=obs, var=var)
    adata.raw = adata.copy()
    if neighbors:
        nb = sp.random(n_obs, n_obs, density=0.15, format="csr", random_state=seed,
                       dtype=np.float32)
        adata.obsp["next_cell_ids"] = nb
    return adata


def record(ds, path: str) -> None:
    """What the library's reader returns, as JSON beside the archive."""
    n = len(ds.row_index) - 1
    rows = {}
    for r in ROWS_TO_RECORD:
        r = r % n if n else 0
        try:
            vals, cols = ds.get_row(r)[0]  # 0.1.x: (row, var, obs); 0.0.8: (row, features)
            rows[str(r)] = {"values": np.asarray(vals).tolist(), "columns": np.asarray(cols).tolist()}
        except Exception as e:  # the stale archive: the reader may fail
            rows[str(r)] = {"error": f"{type(e).__name__}: {e}"}
    out = {
        "library": "bionemo-scdl " + _version(),
        "num_rows": n,
        "nnz": int(len(ds.data)),
        "dtypes": {"DATA": str(ds.data.dtype), "ROWPTR": str(ds.row_index.dtype),
                   "COLPTR": str(ds.col_index.dtype)},
        "arrays": {"DATA": np.asarray(ds.data).tolist(),
                   "ROWPTR": np.asarray(ds.row_index).tolist(),
                   "COLPTR": np.asarray(ds.col_index).tolist()},
        "rows": rows,
    }
    if getattr(ds, "_has_neighbors", False):
        out["neighbors"] = {"INDPTR": np.asarray(ds._neighbor_indptr).tolist(),
                            "INDICES": np.asarray(ds._neighbor_indices).tolist(),
                            "VALUES": np.asarray(ds._neighbor_data).tolist()}
    with open(os.path.join(HERE, os.path.basename(path) + ".expected.json"), "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("bionemo-scdl")
    except Exception:
        return "?"


def _fresh(name: str) -> str:
    path = os.path.join(HERE, name)
    shutil.rmtree(path, ignore_errors=True)
    return path


def build_013(tmp: str) -> None:
    from bionemo.scdl.io.single_cell_memmap_dataset import SingleCellMemMapDataset

    # basic: float32 data, neighbours, var/obs columns
    h5 = os.path.join(tmp, "basic.h5ad")
    make_adata(1, neighbors=True).write_h5ad(h5)
    out = _fresh("basic")
    ds = SingleCellMemMapDataset(out, h5, load_neighbors=True)
    record(SingleCellMemMapDataset(out, load_neighbors=True), out)
    del ds

    # uint_data: integer counts stored as uint16, var table without columns
    h5 = os.path.join(tmp, "uint.h5ad")
    make_adata(2, int_values=True, big=True, var_columns=False).write_h5ad(h5)
    out = _fresh("uint_data")
    SingleCellMemMapDataset(out, h5, data_dtype="uint16")
    record(SingleCellMemMapDataset(out), out)

    # concat_blocks: in-memory datasets, two var tables -> var blocks, stale metadata.json
    parts = []
    for i, (n, prefix) in enumerate([(10, "g"), (8, "g"), (6, "h")]):
        h5 = os.path.join(tmp, f"part{i}.h5ad")
        make_adata(10 + i, n_obs=n, gene_prefix=prefix).write_h5ad(h5)
        parts.append(SingleCellMemMapDataset(os.path.join(tmp, f"part{i}"), h5))
    out = _fresh("concat_blocks")
    parts[0].concat(parts[1:], output_path=out)
    record(SingleCellMemMapDataset(out), out)

    # concat_stale: FORMAT_NOTES §6 — a uint8 dataset re-opened from disk, then concat
    h5a, h5b = os.path.join(tmp, "a.h5ad"), os.path.join(tmp, "b.h5ad")
    make_adata(20, n_obs=10, int_values=True).write_h5ad(h5a)
    make_adata(21, n_obs=8, int_values=True, big=True).write_h5ad(h5b)
    SingleCellMemMapDataset(os.path.join(tmp, "sa"), h5a, data_dtype="uint8")
    b = SingleCellMemMapDataset(os.path.join(tmp, "sb"), h5b, data_dtype="uint16")
    a = SingleCellMemMapDataset(os.path.join(tmp, "sa"))  # re-opened: keeps its header
    out = _fresh("concat_stale")
    a.concat(b, output_path=out)
    record(SingleCellMemMapDataset(out), out)


def build_header_api() -> None:
    from bionemo.scdl.schema.header import ArrayInfo, FeatureIndexInfo, SCDLHeader
    from bionemo.scdl.schema.version import CurrentSCDLVersion
    from bionemo.scdl.util.scdl_constants import ArrayDType, Backend

    out = _fresh("header_api")
    os.makedirs(out)
    h = SCDLHeader(CurrentSCDLVersion(), Backend.MEMMAP_V0, [
        ArrayInfo("DATA", 6, ArrayDType.FLOAT16_ARRAY, (1, 2, 3)),
        ArrayInfo("ROWPTR", 3, ArrayDType.UINT64_ARRAY),
        ArrayInfo("COLPTR", 6, ArrayDType.FLOAT64_ARRAY),
        ArrayInfo("gène_ü", 2, ArrayDType.FIXED_STRING_ARRAY, (2,)),
    ], [
        FeatureIndexInfo("var_features", 2, ArrayDType.STRING_ARRAY,
                         ["var_features/labels.npy"], (4, 5)),
        FeatureIndexInfo("obs_features", 0, ArrayDType.STRING_ARRAY, []),
    ])
    h.save(os.path.join(out, "shapes_and_dtypes.sch"))
    SCDLHeader(CurrentSCDLVersion(), Backend.MEMMAP_V0,
               [ArrayInfo("DATA", 1, ArrayDType.FLOAT32_ARRAY)]).save(
        os.path.join(out, "no_feature_indices.sch"))
    SCDLHeader(CurrentSCDLVersion(), Backend.MEMMAP_V0).save(os.path.join(out, "no_arrays.sch"))
    exp = {}
    for name in sorted(os.listdir(out)):
        hh = SCDLHeader.load(os.path.join(out, name))
        exp[name] = json.loads(hh.to_json())
    with open(os.path.join(HERE, "header_api.expected.json"), "w") as fh:
        json.dump(exp, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


LEGACY_SCRIPT = r"""
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[3])
import bionemo.scdl
assert bionemo.scdl.__file__.startswith(sys.argv[3]), bionemo.scdl.__file__
sys.path.insert(0, sys.argv[4])
from make_fixtures import record
from bionemo.scdl.io.single_cell_memmap_dataset import SingleCellMemMapDataset
SingleCellMemMapDataset(sys.argv[2], sys.argv[1])
record(SingleCellMemMapDataset(sys.argv[2]), sys.argv[2])
"""


def _build_other_version(tmp: str, env_var: str, version: str, name: str, adata) -> None:
    """Write `name` with another bionemo-scdl, unpacked (--no-deps --target) in $env_var,
    in a child process that imports it first (this interpreter's torch etc. serve it)."""
    lib = os.environ.get(env_var)
    if not lib:
        print(f"{env_var} not set: {name} not rebuilt", file=sys.stderr)
        return
    h5 = os.path.join(tmp, f"{name}.h5ad")
    adata.write_h5ad(h5)
    out = _fresh(name)
    env = dict(os.environ, PYTHONPATH=lib)
    subprocess.run([sys.executable, "-c", LEGACY_SCRIPT, h5, out, lib, HERE], check=True, env=env)
    with open(os.path.join(HERE, f"{name}.expected.json")) as fh:
        exp = json.load(fh)
    if exp["library"] != f"bionemo-scdl {version}":   # importlib.metadata saw the other one
        print(f"{name}: recorded as {exp['library']!r}, written by {version}", file=sys.stderr)
    exp["library"] = f"bionemo-scdl {version}"
    with open(os.path.join(HERE, f"{name}.expected.json"), "w") as fh:
        json.dump(exp, fh, indent=1)
        fh.write("\n")


def build_legacy(tmp: str) -> None:
    _build_other_version(tmp, "SCDL_008_PATH", "0.0.8", "legacy_008",
                         make_adata(30, n_obs=12, n_vars=8))


def build_012(tmp: str) -> None:
    # 0.1.2: header.sch (one feature index, `features`), row_ptr uint64, col_ptr uint32
    _build_other_version(tmp, "SCDL_012_PATH", "0.1.2", "v012_basic",
                         make_adata(40, n_obs=9, n_vars=7, int_values=True))


BUILDERS = {"0.1.3": build_013, "header_api": lambda tmp: build_header_api(),
            "legacy_008": build_legacy, "v012_basic": build_012}


def main(only=()) -> None:
    """Build every fixture, or only the builders named on the command line
    (0.1.3, header_api, legacy_008, v012_basic)."""
    warnings.simplefilter("ignore")
    # A fixed, short source path: labels.npy records the absolute path of each h5ad.
    tmp = os.path.join(tempfile.gettempdir(), "scdl_fixture_src")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        for name, build in BUILDERS.items():
            if not only or name in only:
                build(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    total = 0
    for root, _, files in os.walk(HERE):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print(f"fixtures: {total} bytes in {HERE}")


if __name__ == "__main__":
    main(sys.argv[1:])

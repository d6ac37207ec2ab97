"""tiledbsoma as an oracle: random SOMA experiments (from_anndata, an append through
register_anndatas, update_obs, add_X_layer), the experiment verified clean and every member
array checked as the TileDB generator checks tiledb-py's arrays (README.md here)."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

from .adata_gen import random_adata
from .runner import WriterRefused, run_examples

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore")]
soma = pytest.importorskip("tiledbsoma", reason="the writer oracles need the `oracles` extra")

import tiledb  # noqa: E402  (after the skip: tiledbsoma brings the libtiledb it was built with)
import tiledbsoma.io  # noqa: E402

from arrayscope.formats.core.verify import open_for_verify, verify_report  # noqa: E402
from tests.tiledb.generated import differential  # noqa: E402
from tests.tiledb.generated.strategies import GenScript  # noqa: E402


def _write(rng, folder: str):
    exp = os.path.join(folder, "exp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _history(rng, exp)
        except (ValueError, tiledbsoma.SOMAError) as e:
            raise WriterRefused(str(e)) from None
    return None


def _history(rng, exp: str) -> None:
    first = random_adata(rng, need_cells=True)
    tiledbsoma.io.from_anndata(exp, first, measurement_name="RNA")
    if rng.integers(0, 3) == 0:   # a second batch of cells, appended as the docs show
        more = first.copy()
        more.obs_names = [n + "_b" for n in first.obs_names]
        for k in list(more.obsp.keys()):   # tiledbsoma does not append obsp
            del more.obsp[k]
        plan = tiledbsoma.io.register_anndatas(exp, [more], measurement_name="RNA",
                                               obs_field_name="obs_id",
                                               var_field_name="var_id", append_obsm_varm=True)
        plan.prepare_experiment(exp)
        tiledbsoma.io.from_anndata(exp, more, measurement_name="RNA", registration_mapping=plan)
    if rng.integers(0, 3) == 0:   # a new obs column
        with tiledbsoma.Experiment.open(exp, "r") as e:
            obs = e.obs.read().concat().to_pandas()
        obs["new_col"] = np.arange(len(obs), dtype=np.int32)
        with tiledbsoma.Experiment.open(exp, "w") as e:
            tiledbsoma.io.update_obs(e, obs.set_index("obs_id").drop(columns=["soma_joinid"]),
                                     default_index_name="obs_id")
    if rng.integers(0, 4) == 0:   # another X layer
        import scipy.sparse as sp
        with tiledbsoma.Experiment.open(exp, "r") as e:
            shape = (len(e.obs), len(e.ms["RNA"].var))
        layer = sp.random(*shape, density=0.3, format="csr", dtype=np.float32,
                          random_state=int(rng.integers(1 << 30)))
        with tiledbsoma.Experiment.open(exp, "w") as e:
            tiledbsoma.io.add_X_layer(e, "RNA", "extra", layer)


def _member_arrays(uri: str) -> list:
    out, todo = [], [uri]
    while todo:
        with tiledb.Group(todo.pop()) as g:
            for m in g:
                path = m.uri[len("file://"):] if m.uri.startswith("file://") else m.uri
                (todo if m.type == tiledb.Group else out).append(path)
    return out


def _check(folder: str, _truth) -> None:
    exp = os.path.join(folder, "exp")
    report = verify_report(open_for_verify(exp, None))
    bad = [f.line() for f in report.findings if f.status in ("error", "warning")]
    assert not bad and report.exit_code() == 0, (report.exit_code(), bad[:6])
    for uri in _member_arrays(exp):
        times = sorted({t for f in tiledb.FragmentInfoList(uri) for t in f.timestamp_range})
        try:
            differential.check(GenScript(text="", write_times=times), uri)
        except AssertionError as e:
            raise AssertionError(f"{os.path.relpath(uri, exp)}: {e}") from None


def test_soma_experiments_read_as_tiledb_reads_them():
    run_examples("soma", _write, _check)

"""The differential matrix of the decode routes (docs/DESIGN.md, "Decode"): every committed
dataset × a few damage mutations × {reference, planned, planned on 2 threads, worker} gives
the same `values` entries and the same `verify` findings.

- reference: every chunk through `decode.Reference` (`TUNING.planned` off: verify's tile
  batches off too), on one thread;
- planned: `decode.choose` as the commands run it, on one thread; then on 2 threads;
- worker: verify's decoding run as tasks through the task entry the process and Dask
  workers run (`verify_tasks.run_task`), here in this process (`executors.InProcess`).

Each run records the routes the decision table (`decode.choose`, `choose_many`,
`choose_windows`, `choose_chunk`) gave: the reference takes no planned route, both planned runs take the
same ones, and `test_every_route_is_taken` sees every `Route` taken.

The mutations are made on a copy, in the largest data file of the dataset (the one most
tiles live in): none, 8 bytes inverted two thirds in, and the last third cut off. The
datasets were written by the real libraries (tiledb-py / libtiledb of many versions, zarr,
anndata, tiledbsoma, the SCDL writer: see each folder's make script)."""
from __future__ import annotations

import os
import shutil
from typing import Dict, List, Set, Tuple

import pytest

from arrayscope import formats
from arrayscope.formats.core import compiled
from arrayscope.formats.core.executors import InProcess
from arrayscope.formats.core.verify import verify
from arrayscope.formats.tiledb.parse import decode as D
from arrayscope.formats.tiledb.values import bulk_locate
from arrayscope.formats.tiledb.verify import fast_metadata, tile_batch, verify_chunks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEYS = {"tiledb_encrypted": os.path.join(ROOT, "resources", "samples", "tiledb_encrypted.key")}


def _datasets() -> List[str]:
    """Every committed dataset: the samples, and each dataset folder under tests/data."""
    out = []
    samples = os.path.join(ROOT, "resources", "samples")
    out += [os.path.join(samples, n) for n in sorted(os.listdir(samples))
            if os.path.isdir(os.path.join(samples, n))]
    data = os.path.join(ROOT, "tests", "data")
    for kind in sorted(os.listdir(data)):
        folder = os.path.join(data, kind)
        if not os.path.isdir(folder):
            continue
        for n in sorted(os.listdir(folder)):
            p = os.path.join(folder, n)
            if not os.path.isdir(p) or n in ("__pycache__",):
                continue
            if kind in ("writer_rules",):   # version folders of arrays
                out += [os.path.join(p, m) for m in sorted(os.listdir(p))
                        if os.path.isdir(os.path.join(p, m))]
            else:
                out.append(p)
    return out


DATASETS = _datasets()
MUTATIONS = ("clean", "flip", "cut")
MODES = ("reference", "planned", "planned2", "worker")


def _largest_data_file(root: str) -> str:
    best, size = "", -1
    for d, _dirs, files in os.walk(root):
        for f in files:
            if "metadata" in f or f.endswith((".json", ".py", ".ok", ".wrt")):
                continue
            p = os.path.join(d, f)
            n = os.path.getsize(p)
            if n > size:
                best, size = p, n
    return best


def _mutated(src: str, how: str, tmp: str) -> str:
    dest = os.path.join(tmp, os.path.basename(src))
    shutil.copytree(src, dest, symlinks=True)
    if how == "clean":
        return dest
    victim = _largest_data_file(dest)
    raw = bytearray(open(victim, "rb").read())
    if how == "flip":
        at = min(2 * len(raw) // 3, max(0, len(raw) - 8))
        raw[at:at + 8] = bytes(b ^ 0xFF for b in raw[at:at + 8])
    else:
        raw = raw[:2 * len(raw) // 3]
    with open(victim, "wb") as fh:
        fh.write(bytes(raw))
    return dest


def _key(path: str):
    k = KEYS.get(os.path.basename(path))
    return open(k, "rb").read().strip() if k else None


def _entries(path: str, key) -> Dict[str, List[Tuple]]:
    """Every field's `values` entries of a TileDB array (nothing for other datasets)."""
    doc = formats.open(path, key=key)
    model = getattr(doc, "model", None)
    if model is None or not hasattr(model, "fragments"):
        return {}
    from arrayscope.formats.tiledb.values import field_values as V

    out = {}
    for name in V.field_names(model):
        out[name] = [(e["name"], bytes(e["raw"]), e.get("error"), repr(e["values"]))
                     for e in V.values(doc, name, key)]
    return out


def _findings(path: str, key, executor=None) -> List[Tuple]:
    doc = formats.open(path, key=key)
    return [(f.status, f.code, f.source, f.offset, f.node, f.message)
            for f in verify(doc, executor=executor)]


def _spy(m, routes: Set) -> None:
    """Record every route the decision table gives, where its callers look it up."""
    for owner, name in ((D, "choose"), (bulk_locate, "choose_many"),
                        (tile_batch, "choose_windows"), (verify_chunks, "choose_chunk"),
                        (fast_metadata, "choose_chunk")):
        fn = getattr(D, name)

        def spied(*a, _fn=fn, **k):
            r = _fn(*a, **k)
            routes.add(r)
            return r
        m.setattr(owner, name, spied)


def _run(mode: str, path: str, key, monkeypatch, routes: Set, **tuning_changes
         ) -> Tuple[Dict, List]:
    tuning = {"reference": compiled.tuned(planned=False, workers=1, **tuning_changes),
              "planned": compiled.tuned(workers=1, **tuning_changes),
              "planned2": compiled.tuned(workers=2, **tuning_changes),
              "worker": compiled.tuned(workers=1, **tuning_changes)}[mode]
    with monkeypatch.context() as m:
        m.setattr(compiled, "TUNING", tuning)
        _spy(m, routes)
        if mode == "worker":
            return {}, _findings(path, key, InProcess())
        return _entries(path, key), _findings(path, key)


def _tiledb_array(path: str) -> bool:
    return os.path.isdir(os.path.join(path, "__schema")) or \
        os.path.exists(os.path.join(path, "__array_schema.tdb"))


def _cases():
    """The default run: every dataset clean, and each TileDB array damaged once (the
    mutations taken in turn); every other pairing is marked slow (`-m slow`)."""
    arrays = 0
    for d in DATASETS:
        damaged = None
        if _tiledb_array(d):
            damaged = MUTATIONS[1 + arrays % (len(MUTATIONS) - 1)]
            arrays += 1
        for m in MUTATIONS:
            fast = m == "clean" or m == damaged
            yield pytest.param(d, m, id=f"{os.path.relpath(d, ROOT)}-{m}",
                               marks=() if fast else pytest.mark.slow)


@pytest.mark.parametrize("dataset,mutation", list(_cases()))
def test_routes_agree(dataset, mutation, tmp_path, monkeypatch):
    path = _mutated(dataset, mutation, str(tmp_path))
    key = _key(dataset)
    routes: Dict[str, Set] = {m: set() for m in MODES}
    ref_entries, ref_found = _run("reference", path, key, monkeypatch, routes["reference"])
    if mutation == "clean":   # the clean datasets decode: the matrix compares real cells
        assert all(not e[2] for es in ref_entries.values() for e in es), ref_entries
    for mode in MODES[1:]:
        entries, found = _run(mode, path, key, monkeypatch, routes[mode])
        if mode != "worker":
            assert entries == ref_entries, mode
        assert found == ref_found, mode
    assert routes["reference"] <= {D.Route.REFERENCE, D.Route.COPY}, routes
    assert routes["planned"] == routes["planned2"], routes
    assert routes["worker"] <= routes["planned"], routes
    if _tiledb_array(dataset):   # a TileDB array's values and verify take planned routes
        assert routes["planned"] & {D.Route.PLANNED, D.Route.CHECKED, D.Route.WINDOWS}, routes


# datasets whose runs take each route (bulk: `values` of their fragments with
# `min_files` lowered to 1, so a committed array of few fragments reads them in bulk)
ROUTE_CASES = ("resources/samples/tiledb_dense", "resources/samples/tiledb_sparse",
               "tests/data/writer_rules/2.30.0/dd_steps", "tests/data/tiledb_versions/4_1.7.7")


def test_every_route_is_taken(tmp_path, monkeypatch):
    seen: Dict[str, Set] = {m: set() for m in ("reference", "planned")}
    for rel in ROUTE_CASES:
        path = _mutated(os.path.join(ROOT, rel), "clean", str(tmp_path / rel.replace("/", "_")))
        for mode in seen:
            _run(mode, path, None, monkeypatch, seen[mode], min_files=1)
    assert seen["planned"] | seen["reference"] == set(D.Route), seen
    assert seen["reference"] == {D.Route.REFERENCE, D.Route.COPY}, seen


def test_choose_chunk_follows_its_table(monkeypatch):
    """Each row of `decode.choose_chunk`'s table (the module doc), and `TUNING.planned` off
    answering every chunk `REFERENCE`."""
    R = D.Route
    big = compiled.TUNING.window_chunk_max
    rows = [  # (checkable, planned, cells, probe, silent_last, last_probe) -> route
        ((False, True, 10, True, True, True), R.REFERENCE),
        ((True, True, 10, None, True, None), R.PROBE),
        ((True, True, 10, True, True, True), R.CHECKED),
        ((True, True, 10, False, True, None), R.LAST_PROBE),     # a probe that found something
        ((True, True, big + 1, None, True, True), R.LAST_SKIPPED),   # too many cells to fit
        ((True, True, 0, None, False, None), R.REFERENCE),
        ((True, False, 10, None, True, False), R.REFERENCE),
        ((True, False, 10, None, False, True), R.REFERENCE),
    ]
    assert [D.choose_chunk(*facts) for facts, _ in rows] == [want for _, want in rows]
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(planned=False))
    assert {D.choose_chunk(*facts) for facts, _ in rows} == {R.REFERENCE}

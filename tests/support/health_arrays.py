"""TileDB arrays the real library (tiledb-py) put into each bookkeeping state, for the array
health tests: several fragments at fixed timestamps, consolidated with and without vacuum,
fragment-metadata and commit consolidation, deletes, a fragment that lost a file, a commit
whose fragment was removed, an uncommitted fragment, an ignored commit, stale `.vac` files.

Every array is sparse with duplicates allowed, so a read returns every cell of every
fragment it reads; a cell written at timestamp t holds `v = t * 1000 + x`, so a read at T
tells which writes a reader saw. Deletes use `x < 30` (every write keeps cells above).
Damage (removed files) is done with `os`/`shutil` after the library wrote the array, the way
a crash or a partial copy leaves it."""
from __future__ import annotations

import glob
import os
import shutil
from typing import Dict, List, Tuple

import numpy as np
import tiledb

from tests.support.catalogue import Catalogue

WRITES: Tuple[int, ...] = (1, 2, 3)
DELETE_X = 30
_CATALOGUE = Catalogue()
CATALOG = _CATALOGUE.builders
array = _CATALOGUE.array
build = _CATALOGUE.build
# name -> the timestamps written (when not WRITES), and the delete timestamps
WRITTEN: Dict[str, Tuple[int, ...]] = {}
DELETES: Dict[str, Tuple[int, ...]] = {}


def cells_of_write(t: int) -> np.ndarray:
    return np.arange(t, 60, 7, dtype=np.int32)


def _create(uri: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4,
                                                allows_duplicates=True,
                                                attrs=[tiledb.Attr("v", dtype=np.int32)]))


def _write(uri: str, ts) -> None:
    for t in ts:
        with tiledb.open(uri, "w", timestamp=t) as A:
            x = cells_of_write(t)
            A[x] = x + t * 1000


def _base(uri: str, ts=WRITES) -> None:
    _create(uri)
    _write(uri, ts)


def _delete(uri: str, t: int) -> None:
    with tiledb.open(uri, "d", timestamp=t) as A:
        A.query(cond=f"x < {DELETE_X}").submit()


def fragment_dirs(uri: str) -> List[str]:
    return sorted(glob.glob(os.path.join(uri, "__fragments", "*")))


def _frag_at(uri: str, t: int) -> str:
    """The fragment directory written at exactly t."""
    return next(d for d in fragment_dirs(uri) if os.path.basename(d).startswith(f"__{t}_{t}_"))


def _commit_of(uri: str, frag_dir: str) -> str:
    return os.path.join(uri, "__commits", os.path.basename(frag_dir) + ".wrt")


# ---- healthy states --------------------------------------------------------------------------
@array
def three_writes(uri):
    _base(uri)


@array
def consolidated(uri):
    _base(uri)
    tiledb.consolidate(uri)


@array
def consolidated_vacuumed(uri):
    _base(uri)
    tiledb.consolidate(uri)
    tiledb.vacuum(uri)


@array
def consolidated_partly(uri):
    """Writes 1-3 consolidated (1_3, vacuumable 1, 2, 3), then a write at 4."""
    _base(uri)
    tiledb.consolidate(uri)
    _write(uri, (4,))


WRITTEN["consolidated_partly"] = (1, 2, 3, 4)


@array
def fragment_meta_consolidated(uri):
    _base(uri)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragment_meta"}))


@array
def commits_consolidated(uri):
    _base(uri)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "commits"}))


@array
def commits_consolidated_vacuumed(uri):
    _base(uri)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "commits"}))
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "commits"}))


@array
def deletes(uri):
    """Writes 1, 2, 4; a delete of x < 30 at 2 (applies to writes 1 and 2)."""
    _base(uri, (1, 2, 4))
    _delete(uri, 2)


WRITTEN["deletes"] = (1, 2, 4)
DELETES["deletes"] = (2,)


@array
def deletes_in_consolidated_commits(uri):
    """Writes 1, 2, 4, a delete at 3, then the commits consolidated: the `.con` carries the
    delete's condition tile."""
    _base(uri, (1, 2, 4))
    _delete(uri, 3)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "commits"}))
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "commits"}))


WRITTEN["deletes_in_consolidated_commits"] = (1, 2, 4)
DELETES["deletes_in_consolidated_commits"] = (3,)


@array
def deletes_consolidated(uri):
    """Writes 1, 2, 4, a delete at 3, fragments consolidated (1_4 keeps per-cell timestamps
    and delete metadata) and vacuumed."""
    _base(uri, (1, 2, 4))
    _delete(uri, 3)
    tiledb.consolidate(uri)
    tiledb.vacuum(uri)


WRITTEN["deletes_consolidated"] = (1, 2, 4)
DELETES["deletes_consolidated"] = (3,)


# ---- damaged states ----------------------------------------------------------------------------
@array
def lost_data_file(uri):
    """Fragment 2 lost its attribute file: opening works, reads fail."""
    _base(uri)
    os.remove(os.path.join(_frag_at(uri, 2), "a0.tdb"))


@array
def lost_metadata_file(uri):
    """Fragment 2 lost `__fragment_metadata.tdb`: opening fails (at T >= 2)."""
    _base(uri)
    os.remove(os.path.join(_frag_at(uri, 2), "__fragment_metadata.tdb"))


@array
def commit_without_fragment(uri):
    """Fragment 2's directory was removed, its `.wrt` was not."""
    _base(uri)
    shutil.rmtree(_frag_at(uri, 2))


@array
def uncommitted(uri):
    """Fragment 2's `.wrt` is gone (a write that never committed)."""
    _base(uri)
    os.remove(_commit_of(uri, _frag_at(uri, 2)))


@array
def stale_vac(uri):
    """Consolidated and vacuumed, then the `.vac` put back (an interrupted vacuum)."""
    _base(uri)
    tiledb.consolidate(uri)
    vac = glob.glob(os.path.join(uri, "__commits", "*.vac"))[0]
    with open(vac, "rb") as fh:
        keep = fh.read()
    tiledb.vacuum(uri)
    with open(vac, "wb") as fh:
        fh.write(keep)


@array
def vac_without_consolidated(uri):
    """Consolidated, then the consolidated fragment and its commit removed: the `.vac` still
    hides the fragments it lists, so no reader sees any cell."""
    _base(uri)
    tiledb.consolidate(uri)
    vac = glob.glob(os.path.join(uri, "__commits", "*.vac"))[0]
    name = os.path.basename(vac)[:-4]
    shutil.rmtree(os.path.join(uri, "__fragments", name))
    os.remove(os.path.join(uri, "__commits", name + ".wrt"))


@array
def ignored_commit(uri):
    """Commits consolidated, then fragment 2 deleted with `delete_fragments` (which writes an
    `.ign` for its `.con` line), then its directory put back: readers still skip it."""
    _base(uri)
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "commits"}))
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "commits"}))
    frag = _frag_at(uri, 2)
    keep = frag + ".keep"
    shutil.copytree(frag, keep)
    tiledb.Array.delete_fragments(uri, 2, 2)
    shutil.move(keep, frag)


def written(name: str) -> Tuple[int, ...]:
    return WRITTEN.get(name, WRITES)

"""What a Zarr store written by another writer must give: verify with no error or warning,
and every array's values equal the writer's own read (fixed-size types byte for byte,
strings item for item)."""
from __future__ import annotations

import contextlib
import io
import json
from typing import Dict

import numpy as np

from arrayscope import formats
from arrayscope.explorer.cli import main as cli
from arrayscope.formats.zarr import PLUGIN
from tests.support import zarr_gen as G


def check_zarr_store(path: str, truth: Dict[str, np.ndarray]) -> None:
    doc = formats.open(path)
    try:
        fixed = {rel: a for rel, a in truth.items() if doc.model.arrays[rel].rtype is not None}
    finally:
        doc.close()
    G.check_store(path, fixed)   # verify clean, then every fixed-size field byte for byte
    for rel, want in truth.items():
        if rel not in fixed:
            assert _strings(path, rel) == [str(x) for x in want.reshape(-1).tolist()], rel


def _strings(path: str, rel: str) -> list:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli(["values", path, "--field", f"{rel}/value", "--json"])
    assert code == 0, (rel, out.getvalue()[:300])
    return json.loads(out.getvalue())["fragments"][0]["values"]


def zarr_arrays(path: str) -> Dict[str, np.ndarray]:
    """Every array of the store as zarr-python reads it, by its path in the store."""
    import zarr

    out: Dict[str, np.ndarray] = {}

    def walk(group, prefix: str) -> None:
        for name, arr in group.arrays():
            out[prefix + name] = np.asarray(arr[...])
        for name, sub in group.groups():
            walk(sub, prefix + name + "/")

    walk(zarr.open_group(path, mode="r"), "")
    return out


def check_lone_array(path: str, want: np.ndarray) -> None:
    """A store that is one array (no group): verify clean, its one field byte-equal."""
    G.check_store(path, {})   # verify clean (no array named: the lone one is read below)
    doc = formats.open(path)
    try:
        [name] = PLUGIN.field_names(doc)
        [entry] = PLUGIN.values(doc, name)
        assert "error" not in entry, entry.get("error")
        assert len(entry["values"]) == want.size, (len(entry["values"]), want.size)
        assert entry["raw"] == G._le_bytes(want), (entry["values"][:8], want.reshape(-1)[:8])
    finally:
        doc.close()

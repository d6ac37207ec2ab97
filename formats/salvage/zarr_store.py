"""Salvage of a Zarr hierarchy (v2, v3, sharded v3): every file copied byte for byte except
the chunk files verify finds an error in, which are left out so readers see the fill value
there (a missing chunk is how Zarr spells "never written"). A damaged shard is left out
whole (its inner chunks are not yet rewritten one by one). An array whose own metadata is
damaged is left out with all its chunks. Consolidated metadata (`.zmetadata`, a v3 root's
`consolidated_metadata`) is written anew from the metadata OUT holds."""
from __future__ import annotations

import json
import math
import os
from typing import Dict, List, Optional, Tuple

from ..zarr.meta import ArrayMeta
from ..zarr.tree import METADATA_NAMES
from .job import Job, join_rel
from .report import Loss, Part

ZMETADATA = ".zmetadata"
V2_META = (".zarray", ".zgroup", ".zattrs")


def salvage_zarr(job: Job, path: str, arrays: Dict[str, ArrayMeta]) -> None:
    """Salvage the Zarr hierarchy at `path` (the dataset root); `arrays`: the engine's array
    metadata found there, by any key (each names its folder)."""
    by_dir = {job.rel(m.path): m for m in arrays.values()}
    dropped = {d for d in by_dir if _meta_damage(job, d)}
    for d in sorted(dropped):
        m = by_dir[d]
        # its metadata is what is damaged: its shape (its cells) is not known
        job.report.parts.append(Part(d, "array", d, _fields(m), None, kept=False,
                                     why=_meta_damage(job, d)))
    _walk(job, path, "", by_dir, dropped)
    _consolidated(job, path, dropped)


def _fields(m: ArrayMeta) -> List[str]:
    return list(m.rtype.field_names()) if m.rtype is not None and not m.vlen else ["value"]


def _meta_damage(job: Job, d: str) -> List[Loss]:
    return [loss for n in (".zarray", "zarr.json") for loss in job.damage.in_file(join_rel(d, n))]


def _owner(rel: str, by_dir: Dict[str, ArrayMeta]) -> Optional[Tuple[str, ArrayMeta, str]]:
    """(array folder, its metadata, the key below it) of file `rel`: the deepest array
    folder holding it; None outside every array."""
    parts = rel.split("/")
    for i in range(len(parts) - 1, -1, -1):
        d = "/".join(parts[:i]) or "."
        if d in by_dir:
            return d, by_dir[d], "/".join(parts[i:])
    return None


def _cells(m: ArrayMeta, coords: Tuple[int, ...]) -> int:
    """The array cells a chunk (or shard) holds: edge chunks only up to the array's shape."""
    return math.prod(max(0, min(c, s - i * c)) for i, c, s in zip(coords, m.chunks, m.shape))


def _walk(job: Job, path: str, rel: str, by_dir: Dict[str, ArrayMeta], dropped) -> None:
    for e in job.fs.list(path):
        r = join_rel(rel, e.name)
        if e.is_dir:
            if r in dropped:
                continue
            _walk(job, e.path, r, by_dir, dropped)
            continue
        if e.name == ZMETADATA and rel == "":
            continue   # written anew (_consolidated)
        owner = _owner(r, by_dir)
        if owner is not None and owner[0] in dropped:
            continue
        coords = owner[1].coords_of(owner[2]) if owner is not None else None
        if e.name in METADATA_NAMES or owner is None or coords is None:
            why = job.damage.in_file(r) if e.name == ".zattrs" else []
            if why:   # the attributes are lost, the array is not
                where = (owner[0], owner[2]) if owner else (rel or ".", e.name)
                job.report.parts.append(Part(*where[:1], "attributes", where[1], [], None,
                                             False, why))
            else:
                job.copy(e.path, r)
            continue
        d, m, key = owner
        why = job.damage.in_file(r)
        inner = job.damage.inner(r) if m.shard is not None and not why else {}
        if inner:
            _shard(job, e.path, r, d, m, key, coords, inner)
            continue
        kind = "shard" if m.shard is not None else "chunk"
        job.report.parts.append(Part(d, kind, key, _fields(m), _cells(m, coords), not why, why))
        if not why:
            job.copy(e.path, r)


def _shard(job: Job, path: str, r: str, d: str, m: ArrayMeta, key: str,
           coords: Tuple[int, ...], inner: Dict[Tuple[int, ...], List[Loss]]) -> None:
    """A shard with damaged inner chunks: rewritten without them (each reported lost), or
    left out whole when its index cannot be rewritten."""
    import numpy as np

    from ..zarr.shard import global_coords
    from .zarr_shard import without_inner

    sp = m.shard
    assert sp is not None   # called for sharded arrays only
    data, more = job.fs.read_bytes(path, job.fs.stat(path).size)
    drop = {int(np.ravel_multi_index(c, sp.per_shard)) for c in inner
            if len(c) == len(sp.per_shard) and all(0 <= x < n for x, n in zip(c, sp.per_shard))}
    rebuilt = None if more else without_inner(sp, data, drop)
    total = _cells(m, coords)
    if rebuilt is None and len(drop) < sp.count:
        why = [loss for ls in inner.values() for loss in ls]
        job.report.parts.append(Part(d, "shard", key, _fields(m), total, False, why))
        return
    lost = 0
    for local, why in sorted(inner.items()):
        g = global_coords(sp, coords, local)
        cells = _cells(sp.inner, g) if g is not None else 0
        lost += cells
        job.report.parts.append(Part(d, "inner-chunk", f"{key} {list(local)}", _fields(m),
                                     cells, False, why))
    job.report.parts.append(Part(d, "shard", key, _fields(m), total - lost, True))
    if rebuilt is not None:
        job.out.write(r, rebuilt)


def _read_json(job: Job, path: str) -> Optional[dict]:
    try:
        data, more = job.fs.read_bytes(path, 64 << 20)
        out = json.loads(data) if not more else None
    except (OSError, ValueError):
        return None
    return out if isinstance(out, dict) else None


def _consolidated(job: Job, path: str, dropped) -> None:
    """Consolidated metadata naming exactly the metadata OUT holds, in the form the source
    had (v2 `.zmetadata`; v3 inline `consolidated_metadata` of the root `zarr.json`)."""
    root = job.out.root
    if job.out.dry:
        return   # written from what OUT holds: nothing to read in a dry run
    if job.fs.stat(os.path.join(path, ZMETADATA)).is_file:
        meta = {}
        for dirpath, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(files):
                if name in V2_META:
                    rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                    with open(os.path.join(dirpath, name), "rb") as f:
                        meta[rel] = json.load(f)
        job.out.write(ZMETADATA, _dumps({"metadata": meta, "zarr_consolidated_format": 1}))
    top = _read_json(job, os.path.join(path, "zarr.json"))
    cm = top.get("consolidated_metadata") if top is not None else None
    if top is not None and isinstance(cm, dict) and isinstance(cm.get("metadata"), dict):
        kept = {k: v for k, v in cm["metadata"].items()
                if not any(k == d or k.startswith(d + "/") for d in dropped)}
        if len(kept) != len(cm["metadata"]):
            top["consolidated_metadata"] = dict(cm, metadata=kept)
            os.remove(os.path.join(root, "zarr.json"))   # the copy just made: written anew
            job.out.write("zarr.json", _dumps(top))


def _dumps(obj) -> bytes:
    return json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=True,
                      allow_nan=True).encode() + b"\n"

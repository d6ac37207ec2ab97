"""`arrayscope values` for SCDL: one array of the archive, as its file holds it."""
from __future__ import annotations

import os
from typing import Dict, List

import numpy as np

from ..core.dataset_fs import member_path
from .enums import ARRAY_FILES, CORE_ARRAYS, HEADER_FILE, NEIGHBOR_DTYPES
from .model import Archive


def field_names(document) -> List[str]:
    from .archive import descriptors

    archive = document.model
    if not isinstance(archive, Archive):
        return []
    if archive.header is not None:
        names = [a.name for a in archive.header.arrays]
    else:
        names = list(CORE_ARRAYS)
    for d in descriptors(archive).values():
        if d.name in NEIGHBOR_DTYPES and d.name not in names:
            names.append(d.name)
    return names


def values(document, name: str, with_values: bool = True) -> List[Dict]:
    """One entry: the array's items decoded with its dtype, every whole item of the file
    (as the library's memmap reader does), and `error` when the file and header.sch disagree.
    `raw` is a view of the file's bytes (memory-mapped, never copied); `with_values=False`
    (`values --raw`) leaves "values" empty instead of making a Python object per item."""
    from .archive import descriptors

    archive: Archive = document.model
    desc = next((d for d in descriptors(archive).values() if d.name == name), None)
    entry: Dict = {"name": name, "values": [], "raw": b""}
    if desc is None:
        outside = name not in ARRAY_FILES and member_path(name) is None
        entry["error"] = (f"{name}: the array name is a path outside the archive; it is never "
                          f"read" if outside else f"{name}: no file for this array in {archive.path}")
        return [entry]
    af = archive.arrays.get(name)
    if af is not None and af.items is not None and af.source is not None:
        items, size, fname = af.items, af.source.size, os.path.basename(af.path)
    else:
        path = next(os.path.join(archive.path, rel) for rel, d in descriptors(archive).items()
                    if d is desc)
        fname = os.path.basename(path)
        if not document.fs.stat(path).is_file:
            entry["error"] = f"{name}: {fname} is missing"
            return [entry]
        if not desc.numpy:
            entry["error"] = f"{name}: dtype {desc.dtype} has no numeric layout"
            return [entry]
        src = document.open_source(path)
        dt = np.dtype(desc.numpy).newbyteorder("<")
        size = src.size
        items = src.array(0, size // dt.itemsize, dt)
    if with_values:
        entry["values"] = items.tolist()
    entry["raw"] = np.ascontiguousarray(items).view(np.uint8).data
    isz = items.itemsize
    if desc.length is not None and desc.length * isz != size:
        entry["error"] = (f"{name}: {HEADER_FILE} says {desc.length} items "
                          f"({desc.length * isz} bytes), {fname} has {size} bytes; values are "
                          f"every whole item of the file, as the library's reader returns them")
    elif size % isz:
        entry["error"] = f"{name}: {fname} ends with {size % isz} bytes of a partial item"
    return [entry]

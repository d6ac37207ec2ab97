"""What a TileDB-SOMA object is, from the metadata tiledbsoma writes on every group and array.

tiledbsoma stores `soma_object_type` (SOMAExperiment, SOMAMeasurement, SOMACollection,
SOMADataFrame, SOMASparseNDArray, SOMADenseNDArray...) and `soma_encoding_version` in each
object's `__meta`. The role of a member follows from its parent's type and its name
(the SOMA data model: an experiment's `obs` and `ms`, a measurement's `var`, `X`, `obsm`...),
so a window can show an experiment as one: cell annotations, measurements, matrix layers.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional

from . import layout

SOMA_TYPE_KEY = "soma_object_type"

# (parent SOMA type, member name) -> what the member is in the SOMA data model
ROLES = {
    ("SOMAExperiment", "obs"): "cell (observation) annotations",
    ("SOMAExperiment", "ms"): "measurements",
    ("SOMAExperiment", "spatial"): "spatial scenes",
    ("SOMAMeasurement", "var"): "feature (variable) annotations",
    ("SOMAMeasurement", "X"): "matrix layers (cells × features)",
    ("SOMAMeasurement", "obsm"): "per-cell matrices (embeddings)",
    ("SOMAMeasurement", "varm"): "per-feature matrices (loadings)",
    ("SOMAMeasurement", "obsp"): "cell × cell matrices (graphs)",
    ("SOMAMeasurement", "varp"): "feature × feature matrices",
    ("SOMAMeasurement", "uns"): "unstructured annotations (AnnData uns)",
}
# members of these collections get a role from the collection's name
CHILD_ROLES = {"X": "matrix layer", "obsm": "per-cell matrix", "varm": "per-feature matrix",
               "obsp": "cell × cell matrix", "varp": "feature × feature matrix",
               "ms": "measurement"}


def soma_type(metadata: Dict[str, Any]) -> Optional[str]:
    v = metadata.get(SOMA_TYPE_KEY)
    return v if isinstance(v, str) and v else None


def role(parent_type: Optional[str], parent_name: str, name: str) -> Optional[str]:
    """What member `name` is in its parent (None when SOMA gives it no particular role)."""
    r = ROLES.get((parent_type or "", name))
    if r is not None:
        return r
    if parent_type in ("SOMACollection", "SOMAExperiment") and parent_name in CHILD_ROLES:
        return CHILD_ROLES[parent_name]
    return None


def peek_metadata(path: str, key: Optional[bytes] = None, fs=None) -> Dict[str, Any]:
    """The metadata of the group or array at `path` (its `__meta` files merged in timestamp
    order), parsed aside: nothing is added to any document. Files are listed and read
    through `fs` (the opening document's dataset FS: confined to the dataset). {} when
    unreadable."""
    from ...core.context import Context
    from ...core.document import Document
    from ...core.filesystems import fs_of
    from ..parse.array_metadata import ArrayMetadata, parse_array_metadata_file

    fs = fs if fs is not None else fs_of(None, path)
    meta_dir = os.path.join(path, layout.META_DIR)
    try:
        files = sorted((e for e in fs.list(meta_dir) if e.is_file and
                        not e.name.endswith(".vac") and layout.TIMESTAMPED_RE.match(e.name)),
                       key=lambda e: layout.timestamp_order(e.name))
    except OSError:
        return {}
    out: Dict[str, Any] = {}
    scratch = Document(path, Context(key=key))
    scratch.fs = fs
    try:
        for e in files:
            node = parse_array_metadata_file(scratch, scratch.open_source(e.path), scratch.ctx)
            if isinstance(node.data, ArrayMetadata):
                for entry in node.data.entries:
                    if entry.deleted:
                        out.pop(entry.key, None)
                    else:
                        out[entry.key] = entry.value
    except Exception:  # noqa: BLE001 - a label is a nicety: the real parse reports problems
        return out
    finally:
        scratch.close()
    return out

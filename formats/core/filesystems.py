"""The one choice of a dataset's file system: the local one (`dataset_fs.LocalFS`) or, for
an fsspec URL, the object store opened there (`remote.RemoteStore`). Both implement
`dataset_fs.DatasetFS`; this module sits above the two so that neither names the other."""
from __future__ import annotations

import os
from typing import Optional

from .dataset_fs import DatasetFS, LocalFS
from .remote import is_url, store_for


def fs_of(document, path: Optional[str] = None) -> DatasetFS:
    """The document's dataset FS, or (no document, as in detection) one rooted at `path`."""
    fs = getattr(document, "fs", None) if document is not None else None
    if fs is not None:
        return fs
    if is_url(path):   # an fsspec URL: the store of the dataset opened there
        return store_for(str(path))
    return LocalFS(path if path is not None else os.getcwd())

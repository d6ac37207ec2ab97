"""What makes libtiledb refuse or misread the array as a whole, as `verify` findings: the
fragment view (visibility.py) of a reader opening the array now, turned into errors.

- a committed fragment that a reader loads has no `__fragment_metadata.tdb` (a partial copy;
  consolidated fragment metadata does not stand in for it: libtiledb still asks the file's
  size): opening the array fails;
- a consolidated commits file (`.con`) commits a fragment whose folder is gone: opening fails
  (a `.wrt` without its fragment is `check_commits`');
- a fragment consolidated into another that no `.vac` hides, in a sparse array that allows
  duplicates: readers read the cells from both, so every one of them twice.

Each was checked with tiledb-py 0.36.1 / libtiledb 2.30 (tests/tiledb/test_reader_faults.py).
"""
from __future__ import annotations

import os
from typing import List

from ..findings import COMMIT_ORPHAN, METADATA_MISSING, READ_TWICE
from ..health import now_ms
from ..node import ERROR, Node
from . import layout, visibility
from .snapshot import take_bookkeeping


def check_reader_faults(document, array) -> List[Node]:
    from .checks import finding

    out: List[Node] = []
    schema = array.latest_schema
    with take_bookkeeping(document, array.path, array.schemas) as snap:
        rows, _conds, _open, _read, _notes = visibility.fragment_rows(snap, 0, now_ms())
    by_name = {r.name: r for r in rows}
    for r in rows:
        fd = snap.listing.fragments.get(r.name)
        if r.state == "missing-files" and r.visible and fd is not None and \
                layout.FRAGMENT_METADATA_FILE in r.missing:
            meta = os.path.join(fd.path, layout.FRAGMENT_METADATA_FILE)
            out.append(finding(document.relname(fd.path), 0, ERROR,
                               f"{document.relname(meta)} is missing: fragment {r.name} is "
                               f"committed ({r.commit}), so libtiledb loads it and opening the "
                               f"array fails: {visibility.open_failure(meta)}",
                               code=METADATA_MISSING))
        elif r.state == "orphan" and r.commit and " (line " in r.commit and \
                "opening the array" in r.reason:   # visible: a reader loads it
            con = r.commit.split(" (line ", 1)[0]
            meta = os.path.join(array.path, layout.FRAGMENTS_DIR, r.name,
                                layout.FRAGMENT_METADATA_FILE)
            out.append(finding(con, 0, ERROR,
                               f"{con} commits fragment {r.name}, whose folder is gone: "
                               f"opening the array fails: {visibility.open_failure(meta)}",
                               code=COMMIT_ORPHAN))
        elif r.state == "consolidated" and r.visible and schema is not None and \
                not schema.dense and schema.allows_dups:
            cover = by_name.get(r.consolidated_into or "")
            if cover is None or not cover.visible or fd is None:
                continue
            out.append(finding(document.relname(fd.path), 0, ERROR,
                               f"fragment {r.name} was consolidated into {cover.name}, but no "
                               f".vac file hides it: readers read both, and as the array allows "
                               f"duplicates they return each of its cells twice (vacuum the "
                               f"array, or delete {r.name})", code=READ_TWICE))
    return out

"""Fragment metadata read for health as verify reads it (`snapshot.take`'s reader for the
Fragments, Extents and Space views and `arrayscope fragments` / `stats`).

Verify's model path (`verify.fast_metadata.clean_metadata`: the checks the file's tree
would run, on its bytes, no node) gives the model where those checks find nothing; the
file's annotated tree (`fragment_metadata.parse_fragment_metadata_file`) is built where they
find something or cannot say — so the facts health shows come from the same reading as
verify's findings, and nodes are built only where a finding lands. On 1 000 small fragments
(one write each) the health of the array took ~10-17 CPU-s building every file's tree, ~1.6
with this (DESIGN.md, "The window")."""
from __future__ import annotations

from typing import Optional

from ...core.context import Context
from ...core.document import Document
from ..model.array_model import FragmentMetadata, tiledb_context
from ..parse import fragment_metadata
from ..verify.fast_metadata import Seen, clean_metadata
from .snapshot import MetadataReader


def reader() -> MetadataReader:
    """A reader for one snapshot: the metadata sections it checked clean are remembered
    (most fragments' sections repeat another's bytes: `fast_metadata.Seen`)."""
    seen = Seen()

    def read(scratch: Document, src, fctx: Context) -> Optional[FragmentMetadata]:
        clean = clean_metadata(scratch, src, tiledb_context(fctx).array, seen)
        if clean is not None:
            return clean.metadata
        return fragment_metadata.parse_fragment_metadata_file(scratch, src, fctx)[1]
    return read

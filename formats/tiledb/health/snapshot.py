"""What the health model needs of one array, read once: the listing, every schema, each
fragment's metadata (footer facts and the sections read on demand) and the content of every
commit, vacuum, ignore and consolidated-commits file.

Only small files are read: schemas, fragment metadata, commit files (never the data files).
Per array, so a group's members are each one snapshot (the groups work calls this per member).
A document already opened on the array lends its parsed model instead of parsing again.

Each fragment's metadata is read by the caller's `MetadataReader`: the model alone
(`model_only`, the default: salvage wants its facts) or as verify reads it (health:
`verified_metadata.reader`)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from ...core.context import Context
from ...core.document import Document
from ...core.filesystems import fs_of
from ...core.remote import absolute
from ..model import layout, listing
from ..model.array_model import (
    ArraySchema,
    FragmentMetadata,
    TileDBArray,
    TileDBContext,
    with_schema,
)
from ..parse import commits as commits_mod
from ..parse import fragment_metadata
from ..parse import schema as schema_mod


@dataclass
class CommitFile:
    """One commit-area file: its parsed content (URIs of a list file, `.con` entries, or a
    delete/update condition)."""

    rel: str
    size: int
    ext: str
    uris: List[str] = field(default_factory=list)          # .vac / .ign lines
    entries: List[Dict[str, Any]] = field(default_factory=list)   # .con: {"uri", "condition"}
    condition: Any = None                                  # .del: ConditionNode; .upd: (c, vals)
    error: Optional[str] = None


@dataclass
class Snapshot:
    path: str
    listing: listing.ArrayListing
    schemas: Dict[str, ArraySchema] = field(default_factory=dict)     # by file name
    schema_versions: Dict[str, Optional[int]] = field(default_factory=dict)  # rel -> version
    metadata: Dict[str, Optional[FragmentMetadata]] = field(default_factory=dict)  # by fragment
    commit_files: Dict[str, CommitFile] = field(default_factory=dict)  # rel -> parsed
    key: Optional[bytes] = None
    scratch: Optional[Document] = None   # holds the sources the metadata reads on demand

    def close(self) -> None:
        if self.scratch is not None:
            self.scratch.close()

    def __enter__(self) -> "Snapshot":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def latest_schema(self) -> Optional[ArraySchema]:
        return self.schemas[max(self.schemas)] if self.schemas else None

    def schema_for(self, name: Optional[str]) -> Optional[ArraySchema]:
        if name and name in self.schemas:
            return self.schemas[name]
        return self.latest_schema


def _scratch(path: str, key: Optional[bytes]) -> Document:
    return Document(path, Context(key=key))


def first_u32(path: str) -> Optional[int]:
    """The file's first u32 (a generic tile's format version), None when it is unreadable
    or shorter."""
    try:   # a regular file of its folder only (never a FIFO, never through a link out)
        b = fs_of(None, path).read_bytes(path, 4)[0]
    except OSError:
        return None
    return int.from_bytes(b, "little") if len(b) == 4 else None


# reads one `__fragment_metadata.tdb`: (the snapshot's document, its source, the context
# with the array and its latest schema) -> the model, None where nothing of it is readable
MetadataReader = Callable[[Document, Any, Context], Optional[FragmentMetadata]]


def model_only(scratch: Document, src, fctx: Context) -> Optional[FragmentMetadata]:
    """The metadata as the model alone (`fragment_metadata.load_fragment_metadata`: the
    footer, sections on first use, no nodes): its facts, not its findings."""
    fm = fragment_metadata.load_fragment_metadata(src, fctx)
    return fm if fm.footer is not None else None


def take(document, read_metadata: MetadataReader = model_only) -> Snapshot:
    """The snapshot of the array `document` was opened on (its own model reused when the
    document parsed the whole array), each fragment's metadata read by `read_metadata`. Use
    it in a `with` block: it holds files open for the fragment metadata it reads on
    demand."""
    path = document.path
    key = getattr(document.ctx, "key", None)
    snap = Snapshot(path, listing.list_array(path, getattr(document, "fs", None)), key=key)
    model = document.model if isinstance(getattr(document, "model", None), TileDBArray) else None
    if model is not None and absolute(model.path) != absolute(path):
        model = None
    array = model or TileDBArray(path)
    ctx = Context(key=key, format=TileDBContext(array=array))
    scratch = Document(path, ctx)   # (the model path asks its document for the array)
    snap.scratch = scratch
    try:
        _schemas(snap, scratch, ctx, model)
        if model is None:
            array.schemas = dict(snap.schemas)
            array.latest_schema = snap.latest_schema
        _fragments(snap, scratch, ctx, model, read_metadata)
        _commits(snap, scratch, ctx)
    except BaseException:
        scratch.close()
        raise
    return snap


def take_bookkeeping(document, path: str, schemas: Dict[str, ArraySchema]) -> Snapshot:
    """What visibility needs without the fragment metadata: the listing and the commit
    files (`verify` has the schemas and checks each fragment's metadata itself; reading
    every footer again would double its cost on 10 000 fragments). Closed like `take`."""
    key = getattr(document.ctx, "key", None)
    snap = Snapshot(path, listing.list_array(path, getattr(document, "fs", None)), key=key)
    snap.schemas = dict(schemas)
    snap.scratch = _scratch(path, key)
    array = TileDBArray(path)
    array.schemas, array.latest_schema = dict(schemas), snap.latest_schema
    try:
        _commits(snap, snap.scratch, Context(key=key, format=TileDBContext(array=array)))
    except BaseException:
        snap.close()
        raise
    return snap


def _schemas(snap: Snapshot, scratch: Document, ctx: Context, model) -> None:
    for rel in snap.listing.schemas:
        full = os.path.join(snap.path, rel)
        # The generic tile's first u32 is the format version that wrote it (generic_tile.md)
        snap.schema_versions[rel] = first_u32(full)
        if model is not None and os.path.basename(rel) in model.schemas:
            snap.schemas[os.path.basename(rel)] = model.schemas[os.path.basename(rel)]
            continue
        try:
            node = schema_mod.parse_schema_file(scratch, scratch.open_source(full), ctx.derive())
        except Exception:  # a broken schema is a finding elsewhere; here it is just absent
            continue
        if isinstance(node.data, ArraySchema):
            snap.schemas[node.data.name] = node.data


def _fragments(snap: Snapshot, scratch: Document, ctx: Context, model,
               read_metadata: MetadataReader) -> None:
    by_path = {}
    if model is not None:
        by_path = {absolute(f.path): f.metadata for f in model.fragments}
    for name, fd in snap.listing.fragments.items():
        if absolute(fd.path) in by_path and by_path[absolute(fd.path)] is not None:
            snap.metadata[name] = by_path[absolute(fd.path)]
            continue
        fm_path = os.path.join(fd.path, layout.FRAGMENT_METADATA_FILE)
        if not fs_of(None, fm_path).stat(fm_path).is_file:
            snap.metadata[name] = None
            continue
        try:
            fm = read_metadata(scratch, scratch.open_source(fm_path),
                               with_schema(ctx, snap.latest_schema))
        except Exception:
            fm = None
        snap.metadata[name] = fm


def _commits(snap: Snapshot, scratch: Document, ctx: Context) -> None:
    wanted = (".vac", ".ign", ".con", ".del", ".upd")
    rels = [r for r in snap.listing.commits if r.endswith(wanted)]
    rels += [r for r in snap.listing.meta if r.endswith(".vac")]
    for rel in rels:
        ext = os.path.splitext(rel)[1]
        cf = CommitFile(rel, snap.listing.commits.get(rel, snap.listing.meta.get(rel, 0)), ext)
        snap.commit_files[rel] = cf
        full = os.path.join(snap.path, rel)
        try:
            src = scratch.open_source(full)
            node = commits_mod.parse_commit_file(scratch, src, with_schema(ctx, snap.latest_schema))
        except Exception as e:  # the parsers never raise; an OS error still might
            cf.error = f"{type(e).__name__}: {e}"
            continue
        if ext in (".vac", ".ign"):
            cf.uris = list(node.data or [])
        elif ext == ".con":
            if node.data is None:
                cf.error = "the consolidated commits file is cut short"
            cf.entries = list(node.data or [])
        else:
            cf.condition = node.data
            if node.data is None:
                cf.error = "the condition cannot be read"

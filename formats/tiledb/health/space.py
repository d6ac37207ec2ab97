"""`PLUGIN.space(document)`: where an array's bytes go — per fragment, field and filter stage.

For each data file: the stored bytes (the file), the bytes after reversing each filter of its
pipeline (summed over its chunks, by reversing them: `formats.filters.reverse_chunk`), the
decoded cell bytes (the chunks' "original length", exact from the chunk headers), the bytes
of tile and chunk headers and filter metadata, and for dense fragments the padding: cells of
whole tiles outside the non-empty domain, stored as zeros (FORMAT_NOTES "Dense partial
tiles"). Reversing is bounded: past `DECODE_BUDGET` stored bytes per file an even sample of
its tiles is reversed and the stage sizes are scaled (the field says `exact=False`)."""
from __future__ import annotations

import os
from typing import List, Optional

import numpy as np

from ...core.filesystems import fs_of
from ...core.health import FieldSpace, FragmentSpace, SpaceReport, StageBytes
from ...filters import RunContext, reverse_chunk
from ..model import layout
from ..model.array_model import ArraySchema, Dimension, FragmentMetadata
from ..parse import data_files
from ..parse.rawtile import TileError, chunk_table
from . import verified_metadata
from .snapshot import Snapshot, take

DECODE_BUDGET = 32 << 20   # stored bytes reversed per file before sampling


def array_space(document) -> SpaceReport:
    with take(document, verified_metadata.reader()) as snap:
        return _space(snap, document.path)


def _space(snap: Snapshot, path: str) -> SpaceReport:
    out = SpaceReport(path)
    lst = snap.listing
    out.other = {"schemas": sum(lst.schemas.values()), "commits": sum(lst.commits.values()),
                 "consolidated fragment metadata": sum(lst.fragment_meta.values()),
                 "array metadata": sum(lst.meta.values()), "other files": sum(lst.other.values())}
    enums = _enumeration_bytes(snap.path)
    if enums:   # the listing keeps `__schema`'s own files only; enumerations are a folder in it
        out.other["enumerations"] = enums
    for name, fd in sorted(lst.fragments.items(), key=lambda kv: (kv[1].t1 or 0, kv[0])):
        fm = snap.metadata.get(name)
        fs = FragmentSpace(name, fd.files.get(layout.FRAGMENT_METADATA_FILE, 0), 0, 0)
        fs.data_stored = sum(s for f, s in fd.files.items() if f != layout.FRAGMENT_METADATA_FILE)
        if fm is not None:
            fs.fields = fragment_fields(snap, name, fm)
            fs.data_decoded = sum(f.decoded for f in fs.fields)
        else:
            out.notes.append(f"{name}: no readable fragment metadata; its files are counted, "
                             f"not decoded")
        out.fragments.append(fs)
    return out


def _enumeration_bytes(path: str) -> int:
    """Bytes of the files of `__schema/__enumerations` (format 20+: one file per
    enumeration, written with the schema that adds it)."""
    from ..model.listing import _walk_sizes

    d = os.path.join(path, layout.SCHEMA_DIR, layout.ENUMERATIONS_DIR)
    return sum(_walk_sizes(fs_of(None, d), d, "").values())


def _padding(schema: ArraySchema, fm: FragmentMetadata) -> int:
    """Cells of the fragment's whole tiles outside its non-empty domain (dense only)."""
    if not fm.dense or not fm.non_empty_domain:
        return 0
    total = fm.cell_num
    if not total:
        return 0
    try:
        written = 1
        for lo, hi in fm.non_empty_domain:
            written *= int(hi) - int(lo) + 1
    except (TypeError, ValueError):
        return 0
    return max(0, int(total) - written)


def fragment_fields(snap: Snapshot, name: str, fm: FragmentMetadata) -> List[FieldSpace]:
    fd = snap.listing.fragments[name]
    schema: Optional[ArraySchema] = fm.schema or snap.schema_for(fm.schema_name)
    out: List[FieldSpace] = []
    if schema is None:
        return out
    pad = _padding(schema, fm)
    for fn in sorted(fd.files):
        if fn == layout.FRAGMENT_METADATA_FILE:
            continue
        role = data_files.file_role(schema, fm, fn)
        if role is None:
            continue
        part = {"fixed": "offsets" if role.role == "offsets" else "fixed"}.get(role.part, role.part)
        fsp = FieldSpace(name, role.slot_name, part, fn, [s.name for s in role.specs], 0,
                         fd.files[fn], 0)
        if pad:
            fsp.padding_cells = pad
            fsp.padding_bytes = pad * _cell_bytes(role)
        _measure(fsp, os.path.join(fd.path, fn), fm, role, snap.key)
        if role.role == "offsets" and fsp.error is None and fm.cell_num and \
                offsets_in_var_tile(schema, role.obj):
            # stored as 0-chunk tiles; the reader rebuilds them from the var tile: the
            # decoded offsets are those it rebuilds, one u64 per cell
            fsp.decoded = 8 * int(fm.cell_num)
        out.append(fsp)
    return out


def offsets_in_var_tile(schema: ArraySchema, obj) -> bool:
    """Whether libtiledb keeps a var-sized string field's offsets in its var tile (RLE or
    DICTIONARY anywhere in the field's pipeline; ASCII from format 12 for RLE and 13 for
    DICTIONARY, UTF-8 from 17): the offsets file then holds 0-chunk tiles
    (`FilterPipeline::skip_offsets_filtering`)."""
    from ...filters.enums import Datatype, FilterType

    filters = obj.filters or (schema.coords_filters if isinstance(obj, Dimension) else [])
    types = {f.type for f in filters}
    v, t = schema.version, obj.datatype
    rle = FilterType.RLE in types and ((t == Datatype.STRING_ASCII and v >= 12) or
                                       (t == Datatype.STRING_UTF8 and v >= 17))
    dic = FilterType.DICTIONARY in types and ((t == Datatype.STRING_ASCII and v >= 13) or
                                              (t == Datatype.STRING_UTF8 and v >= 17))
    return bool(getattr(obj, "var", False)) and (rle or dic)


def _cell_bytes(role) -> int:
    """Stored bytes of one padding cell in this file (var cells: one NUL byte; offsets: u64)."""
    if role.part == "validity":
        return 1
    if role.role == "offsets":
        return 8
    if role.part == "var":
        return 1
    return int(getattr(role.obj, "cell_size", 0) or 0)


def _measure(fsp: FieldSpace, path: str, fm: FragmentMetadata, role, key) -> None:
    offsets, why = data_files.tile_offsets_for(fm, role)
    if offsets is None:
        fsp.error = f"tiles cannot be located: {why}"
        return
    try:
        # a regular file of the fragment only (never a FIFO, never through a link out)
        src = fs_of(None, path).open_source(path, os.path.basename(path))
    except OSError as e:
        fsp.error = f"cannot open: {e.strerror or e}"
        return
    try:
        ends = data_files.tile_bounds(offsets, src.size)
        offs = np.asarray(offsets, dtype=np.uint64).astype(np.int64)
        fsp.tiles = len(offs)
        n_stages = len(role.specs)
        stage_sums = [0] * n_stages
        sampled_stored = 0
        stored_total = 0
        every = _sample_step(offs, ends, src.size)
        for i in range(len(offs)):
            a, b = int(offs[i]), int(ends[i])
            if a > src.size or b < a:
                fsp.error = f"tile {i + 1}: offset {a} outside the file ({src.size} bytes)"
                break
            table = chunk_table(src, a, b)
            fsp.overhead += 8 + sum(12 + c[3] for c in table)
            fsp.decoded += sum(c[0] for c in table)
            tile_stored = sum(c[1] + c[3] for c in table)
            stored_total += tile_stored
            if i % every:
                continue
            sampled_stored += tile_stored
            for c in table:
                orig, filt, md, mdl, data = c
                if not role.specs:
                    continue
                run = reverse_chunk(role.specs, src.read(md, mdl) if mdl else b"",
                                    src.read(data, filt), role.info, RunContext(key, orig))
                if run.error is not None:
                    fsp.error = f"tile {i + 1}: {run.error}"
                    break
                for k in range(n_stages):
                    st = run.stages[k]
                    stage_sums[k] += st.nbytes if st is not None else 0
            if fsp.error:
                break
        if fsp.error is None and n_stages:
            scale = stored_total / sampled_stored if sampled_stored else 1.0
            fsp.exact = every == 1
            # stages[k] holds the bytes after reversing filters k..n-1: list them from the
            # last filter (reversed first) down to the first
            for k in range(n_stages - 1, -1, -1):
                nbytes = stage_sums[k] if fsp.exact else int(round(stage_sums[k] * scale))
                fsp.stages.append(StageBytes(f"after reversing {role.specs[k].name}", nbytes))
    except TileError as e:
        fsp.error = str(e)
    finally:
        src.close()


def _sample_step(offs, ends, size: int) -> int:
    """Reverse every tile, or every k-th when the file is over the budget."""
    if size <= DECODE_BUDGET or len(offs) < 2:
        return 1
    return max(1, int(np.ceil(size / DECODE_BUDGET)))

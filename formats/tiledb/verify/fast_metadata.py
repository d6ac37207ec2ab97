"""A fragment's `__fragment_metadata.tdb` checked from the model and the raw tile bytes, with
no annotated node tree — for the common case, where the check finds nothing.

The streamed verify (`array_verify`) builds a fragment folder's tree to take its diagnostics
and check its chunks; for the metadata file that tree (a footer, then some thirty generic
tiles, each a header, a pipeline, a chunk table and a parsed payload) costs most of the
time of a small fragment. `clean_metadata` runs the checks that give findings there — the
annotated footer, the layout of the sections, every section's generic tile header, its
chunk checks (`chunk_checks.check_one`: checksums, codecs, forward reproduction) and its
payload parse — on the bytes, and answers only when nothing was found: the model, and the
tiles and bytes to tally. Anything else (a finding, a layout the tree would show
differently, an old format, a header not yet seen parsing clean) answers None and the
caller builds the file's tree, which then says where the problem is: annotated nodes are
built only where a finding lands. The equality with the tree's checks is tested on every
committed array and damaged copies (tests/tiledb/test_verify_paths_differential.py)."""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ...core.engine import run_parser
from ...core.node import OK, Node
from ...core.source import BytesSource
from ..model.array_model import FragmentMetadata, with_schema
from ..model.footer_reader import footer_of, marks_nothing
from ..parse import fragment_metadata as fmeta
from ..parse import tile_templates
from ..parse.decode import Route, choose_chunk
from ..parse.rawtile import GT_HEAD_SIZE, generic_head, read_generic_head
from ..parse.tile import ChunkInfo
from .chunk_checks import Checked, check_one, silent_from
from .chunk_walk import generic_chunks

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


@dataclass
class CleanMetadata:
    """A metadata file checked clean: its model, and the chunks to tally (name, bytes)."""

    metadata: FragmentMetadata
    tallied: List[Tuple[str, int]]


class Seen:
    """Sections already checked clean in this run, by their bytes and how they are read:
    the checks are functions of those alone, so a section whose bytes another fragment's
    had (most of them: 27 000 sections of 1 000 small fragments hold 4 004 distinct byte
    strings) gives their result without decoding again. Bounded: past `MAX` sections or
    `MAX_BYTES` held, new ones are checked and not kept."""

    MAX = 16384
    MAX_BYTES = 64 << 20

    def __init__(self) -> None:
        # key -> (the chunks' tallied bytes, what the payload parse gave the model)
        self.clean: Dict[tuple, Tuple[Tuple[int, ...], Tuple[Stored, ...]]] = {}
        self.held = 0
        # a pipeline's bytes -> whether the forward checks of its last filters (those that
        # can only fail on their options: `chunk_checks.silent_from`) passed on the first
        # chunk checked with it in full; then left out (`verify_chunks` does so per file)
        self.lasts: Dict[bytes, bool] = {}

    def skip_from(self, pipeline: bytes, specs) -> Optional[int]:
        """Where `check_one` may stop the forward checks of a chunk of this pipeline (its
        route, `decode.choose_chunk`: `LAST_SKIPPED`), else None."""
        last = silent_from(specs)
        route = choose_chunk(True, False, 0, None, last < len(specs), self.lasts.get(pipeline))
        return last if route is Route.LAST_SKIPPED else None

    def probed(self, pipeline: bytes, last_ok: Optional[bool]) -> None:
        if last_ok is not None and pipeline not in self.lasts:
            self.lasts[pipeline] = last_ok

    def keep(self, k: tuple, tallied: Tuple[int, ...], stored: Tuple["Stored", ...]) -> None:
        size = len(k[0]) + sum(memoryview(v).nbytes for _k, _s, v in stored)
        if len(self.clean) < self.MAX and self.held + size <= self.MAX_BYTES:
            self.clean[k] = (tallied, stored)
            self.held += size


Stored = Tuple[str, int, Any]   # a decoded u64 list the payload parse hands the model


class _Recorder:
    """The model's section loader as a payload parser sees it (`store`), keeping what it
    was given, to give the next fragment with the same section bytes."""

    def __init__(self, loader) -> None:
        self.loader = loader
        self.stored: List[Stored] = []

    def store(self, kind: str, slot: int, arr) -> None:
        self.stored.append((kind, slot, arr))
        self.loader.store(kind, slot, arr)


def clean_metadata(document, source, array, seen: Optional[Seen] = None
                   ) -> Optional[CleanMetadata]:
    """The checks the tree of `__fragment_metadata.tdb` (`source`) would run, on its bytes;
    None unless they all pass (then the caller builds the tree). `seen`: sections checked
    clean before in this run (of this document). Never raises."""
    try:
        return _check(document, source, array, seen if seen is not None else Seen())
    except Exception:  # noqa: BLE001 - the tree then says what it is
        return None


def _check(document, src, array, seen: Seen) -> Optional[CleanMetadata]:
    ctx = with_schema(document.ctx, array.latest_schema)
    info = fmeta._fragment_name(src)
    if info.get("kind") != "timestamped" or (info.get("version") or 0) < 10:
        return None   # formats 1-9 (fixed footers, one generic tile): the tree reads them
    fb = fmeta.footer_bytes(src)
    if fb is None or fb.version < 10 or fb.schema_name is None:
        return None
    if fmeta._schema_gone(document, ctx, fb.schema_name) is not None:
        return None
    schema = fmeta._schema_for(ctx, fb.schema_name)
    # the footer read without nodes (what the model reads), where its annotated parse would
    # mark nothing: the same `Footer` from the same declaration (`footer_layout.FOOTER`)
    if schema is None:
        return None   # (the tree infers the slots, says so)
    footer = footer_of(fb.data, fb.start, schema)
    if footer is None or not marks_nothing(fb.data, footer, schema):
        return None
    fstart = fb.start
    fm = FragmentMetadata(version=0)
    fmeta.fill_model(fm, footer, schema, src, ctx.key)
    fmeta._find_unreferenced_processed(src, footer, fstart)
    tallied: List[Tuple[str, int]] = []
    secs = fmeta.section_list(footer)
    ends = [o for o, *_ in secs] + [fstart]
    if not secs or secs[0][0] != 0 or len(set(ends)) != len(ends) or \
            any(b <= a for a, b in zip(ends, ends[1:])):
        return None   # a gap, an overlap, a shared or misplaced offset: the tree shows it
    # the sections' bytes read at once (a small file: sliced, not a read per field)
    body = src.read(0, fstart) if fstart <= WHOLE_READ else None
    file = _File(src, src.name if hasattr(src, "name") else str(src), body, footer,
                 tuple(footer.slots), schema, ctx, seen)
    for (off, _name, kind, slot), nxt in zip(secs, ends[1:]):
        got = _section(file, off, nxt, kind, slot, fm)
        if got is None:
            return None
        tallied.extend(got)
    fm.encrypted = fmeta._encrypted_of(None, fm.loader)
    return CleanMetadata(fm, tallied)


WHOLE_READ = 1 << 20   # a metadata file whose sections hold at most this is read at once


@dataclass
class _File:
    """What the sections of one metadata file are checked with."""

    src: Any
    name: str
    body: Optional[bytes]   # its bytes before the footer (None: a big file, read by parts)
    footer: Any
    slots: Tuple[str, ...]
    schema: Any
    ctx: Any
    seen: Seen


def _section(file: _File, start: int, end: int, kind: str, slot: int, fm: FragmentMetadata
             ) -> Optional[List[Tuple[str, int]]]:
    """One section's generic tile checked as the tree checks it: the chunks' tallies, or
    None where the tree would have something to say (or reads it differently)."""
    src, footer = file.src, file.footer
    region = end - start
    raw = file.body[start:end] if file.body is not None else None
    if raw is not None:   # (first: bytes checked before come with their header checked)
        got = _given(file, raw, kind, slot, fm)
        if got is not None:
            return got
        head = generic_head(raw, 0) if region >= GT_HEAD_SIZE else None
    else:
        head = read_generic_head(src, start)
    if head is None or head.total != region:
        return None
    if head.version != footer.version:
        return None   # a generic tile of another version than its footer: the tree says so
    if max(region, head.tile_size) > fmeta.LAZY_BYTES:
        # the tree shows it lazily: verify checks its chunks one at a time, its payload
        # not parsed (memory: a chunk, not the section; chunk_walk.span_chunks); the same here
        return _big_section(src, start, region, head.pipeline_size, file.ctx.key, file.seen)
    if raw is None:
        raw = src.read(start, region)
        got = _given(file, raw, kind, slot, fm)
        if got is not None:
            return got
    recorder = _Recorder(fm.loader)
    got = _section_checks(src, start, end, head.pipeline_size, kind, slot, footer, file.schema,
                          recorder, file.ctx, file.seen)
    if got is not None:
        file.seen.keep(_key(file, raw, kind, slot), tuple(n for _name, n in got),
                       tuple(recorder.stored))
    return got


def _key(file: _File, raw: bytes, kind: str, slot: int) -> tuple:
    """What a section's checks are a function of: its bytes and how they are read."""
    return (raw, kind, slot, file.footer.version, file.slots, id(file.schema))


def _given(file: _File, raw: bytes, kind: str, slot: int, fm: FragmentMetadata
           ) -> Optional[List[Tuple[str, int]]]:
    """The tallies of a section whose bytes were checked clean before in this run (what
    its payload gave the model handed to `fm` again); None when they were not."""
    known = file.seen.clean.get(_key(file, raw, kind, slot))
    if known is None:
        return None
    tallied, stored = known
    for what in stored:
        fm.loader.store(*what)
    return [(file.name, n) for n in tallied]


def _section_checks(src, start: int, end: int, psize: int, kind: str, slot: int, footer,
                    schema, loader: _Recorder, ctx, seen: Seen
                    ) -> Optional[List[Tuple[str, int]]]:
    if not tile_templates.header_parses_clean(src, start, end):
        return None   # a header not seen parsing clean yet: the tree parses (and learns) it
    chunks = generic_chunks(src, start, end - start)
    if chunks is None:
        return None
    tallied: List[Tuple[str, int]] = []
    cells: List[bytes] = []
    for _ci, r in _checked(src, start, psize, chunks, ctx.key, seen):
        if r is None:
            return None
        if r.tallied is not None:
            tallied.append(r.tallied)
        assert r.decoded is not None   # (`_checked`: decoded, else None)
        cells.append(bytes(r.decoded[0]))
    data = b"".join(cells)
    quick = fmeta.payload_stores(kind, slot, footer, schema, data)
    if quick is not None:   # read without nodes: it would mark nothing
        for what in quick:
            loader.store(*what)
        return tallied
    parse_fn = fmeta.section_parser(kind, slot, footer, schema, loader)
    if parse_fn is None:
        return None
    name = getattr(src, "name", str(src))
    payload = BytesSource(data, f"{name} @{start} payload", parent=src)
    root = run_parser("Payload", "struct", payload, parse_fn, ctx)
    return None if _found(root) else tallied


def _big_section(src, start: int, size: int, psize: int, key, seen: Seen
                 ) -> Optional[List[Tuple[str, int]]]:
    """A section over LAZY_BYTES: its chunks checked one at a time, none kept."""
    chunks = generic_chunks(src, start, size)
    if chunks is None:
        return None
    tallied: List[Tuple[str, int]] = []
    for _ci, r in _checked(src, start, psize, chunks, key, seen):
        if r is None:
            return None
        if r.tallied is not None:
            tallied.append(r.tallied)
    return tallied


def _checked(src, start: int, psize: int, chunks: List[ChunkInfo], key, seen: Seen
             ) -> Iterator[Tuple[ChunkInfo, Optional[Checked]]]:
    """Each chunk with its `check_one` result, None where it found something (or did not
    decode): the caller stops there. The last codec's forward check left out once this
    run's first chunk of the pipeline passed it (`Seen.lasts`)."""
    pipeline = bytes(src.read(start + GT_HEAD_SIZE, psize))
    for ci in chunks:
        r = check_one(ci, key, None, seen.skip_from(pipeline, ci.specs))
        if r.findings or r.decoded is None:
            yield ci, None
            return
        seen.probed(pipeline, r.last_ok)
        yield ci, r


def _found(root: Node) -> bool:
    """Whether a node under `root` (as the tree's diagnostics walk enters it) is not OK."""
    return any(n.status != OK for n in root.walk())

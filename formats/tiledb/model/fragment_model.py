"""The `FragmentMetadata` model of a fragment-metadata file: footer facts, and per-slot arrays
decoded from their sections on first use (so a fragment with 100 000 tiles opens at once)."""
from __future__ import annotations

import struct
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from ...filters import DataInfo
from ..parse.decode import decode_generic_tile
from ..parse.rawtile import TileError
from .array_model import ArraySchema, FragmentMetadata
from .footer_layout import Footer


class SectionLoader:
    """Decodes a section's payload on first use (no nodes) and caches per-slot arrays."""

    def __init__(self, source, footer: Footer, key: Optional[bytes], schema):
        self.source = source
        self.footer = footer
        self.key = key
        self.schema = schema
        self.cache: Dict[Tuple[str, int], Any] = {}
        self.errors: Dict[Tuple[str, int], str] = {}
        self.payloads: Dict[Tuple[str, int], bytes] = {}   # (`store`)
        self.encrypted: Optional[bool] = None

    def offset_of(self, kind: str, slot: int) -> Optional[int]:
        offs = self.footer.sections.get(kind)
        if offs is None or slot >= len(offs):
            return None
        return offs[slot]

    def payload(self, offset: int) -> bytes:
        data, enc = decode_generic_tile(self.source, offset, self.key)
        self.encrypted = enc
        return data

    def u64s(self, kind: str, slot: int) -> Optional[np.ndarray]:
        k = (kind, slot)
        if k in self.cache:
            return self.cache[k]
        if k in self.errors:
            return None
        off = self.offset_of(kind, slot)
        if off is None:
            return None
        try:
            p = self.payload(off)
            if len(p) < 8:
                raise TileError("payload shorter than its count")
            n = struct.unpack_from("<Q", p, 0)[0]
            if 8 + 8 * n > len(p):
                raise TileError(f"{n} values do not fit in {len(p)} payload bytes")
            arr = np.frombuffer(p, "<u8", count=n, offset=8)
        except TileError as e:
            self.errors[k] = str(e)
            return None
        except Exception as e:  # corrupt bytes must never escape the model
            self.errors[k] = f"{type(e).__name__}: {e}"
            return None
        self.cache[k] = arr
        return arr

    def store(self, kind: str, slot: int, arr) -> None:
        """What a section's payload parse hands the model: a u64 list's array (`u64s`
        answers it), or the whole decoded payload of a tile mins/maxs section (kept for
        verify's statistics check, `payload_of`: not decoded again)."""
        if arr is None:
            return
        if kind in KEPT_PAYLOADS:
            self.payloads[(kind, slot)] = bytes(arr)
        else:
            self.cache[(kind, slot)] = np.asarray(arr)

    def payload_of(self, kind: str, slot: int) -> Optional[bytes]:
        """The decoded payload of section `kind` of `slot` when a parse kept it; else None."""
        return self.payloads.get((kind, slot))


KEPT_PAYLOADS = ("tile_mins", "tile_maxs")


GENERIC_INFO = DataInfo(4, 1, "generic")   # what a generic tile's filters see (rawtile)


def prefetch_u64s(wanted: Sequence[Tuple[SectionLoader, str, int]]) -> None:
    """Decode the u64-list sections `wanted` ((loader, kind, slot) each, of many fragments)
    together: one `reverse_into` pass per pipeline into one buffer, instead of a
    `reverse_chunk` per section (the tile offsets of a thousand one-tile fragments). A
    section this does not decode (encrypted, damaged, an unusual pipeline) is left to
    `SectionLoader.u64s`, which decodes it alone and says what is wrong."""
    from ...filters.batch import plan, reverse_into
    from ..parse.rawtile import GT_HEAD_SIZE, MAX_GENERIC_DECODE, chunk_table, generic_specs, peek_generic_tile

    groups: Dict[int, Tuple[list, list]] = {}   # id(specs) -> (specs, sections)
    for loader, kind, slot in wanted:
        k = (kind, slot)
        off = loader.offset_of(kind, slot)
        if off is None or k in loader.cache or k in loader.errors:
            continue
        src = loader.source
        head = peek_generic_tile(src, off)
        if head is None or head[3] or off + head[0] > src.size:
            continue
        start = off + GT_HEAD_SIZE + head[1]
        try:
            specs = generic_specs(src, off, head[1])
            table = chunk_table(src, start, start + head[2])
        except TileError:
            continue
        if not 8 <= sum(c[0] for c in table) <= MAX_GENERIC_DECODE:
            continue
        groups.setdefault(id(specs), (specs, []))[1].append((loader, k, table))
    for specs, sections in groups.values():
        p = plan(specs, GENERIC_INFO) if specs else None
        if p is None:
            continue
        chunks, spans, pos = [], [], 0
        for loader, _k, table in sections:
            a = pos
            whole = loader.source.view(0, loader.source.size)   # (the table checked ranges)
            for orig, filt, md, mdl, data in table:
                chunks.append((whole[md:md + mdl], whole[data:data + filt], orig, pos))
                pos += orig
            spans.append((a, pos, len(chunks)))
        buf = np.empty(pos, np.uint8)
        left = set(reverse_into(specs, GENERIC_INFO, chunks, buf, p))
        mv = buf.data
        first = 0
        for (loader, k, _t), (a, b, last) in zip(sections, spans):
            whole_ok = not left or not any(i in left for i in range(first, last))
            first = last
            if not whole_ok:
                continue
            n = _U64.unpack_from(mv, a)[0]
            if 8 + 8 * n > b - a:
                continue   # u64s says so
            loader.cache[k] = buf[a + 8:a + 8 + 8 * n].view("<u8")
            loader.encrypted = False


_U64 = struct.Struct("<Q")


class SlotArrays(Sequence):
    """`tile_offsets[slot]` etc. of FragmentMetadata, decoded on first access (None when the
    section cannot be read, e.g. encrypted with no key)."""

    def __init__(self, loader: SectionLoader, kind: str, n: int):
        self.loader, self.kind, self.n = loader, kind, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.loader.u64s(self.kind, i)

    def error(self, i: int) -> Optional[str]:
        return self.loader.errors.get((self.kind, i))


def fragment_layout(schema: Optional[ArraySchema], footer: Footer) -> Dict[str, Any]:
    """Tile count and cells per tile implied by the footer (dense: from the non-empty domain
    expanded to tiles)."""
    out: Dict[str, Any] = {"tile_num": None, "cells_per_tile": None, "cell_num": None}
    if schema is None:
        return out
    if footer.dense:
        try:
            tiles, cpt = 1, 1
            for d, (lo, hi) in zip(schema.dimensions, footer.non_empty_domain or []):
                if d.domain is None or d.tile_extent is None:
                    raise TypeError("dimension without a domain or tile extent")
                dlo = d.domain[0]
                ext = int(d.tile_extent)
                tiles *= (int(hi) - dlo) // ext - (int(lo) - dlo) // ext + 1
                cpt *= ext
            if footer.non_empty_domain:
                out.update(tile_num=tiles, cells_per_tile=cpt, cell_num=tiles * cpt)
        except (TypeError, ValueError, ZeroDivisionError):
            pass
    else:
        n = footer.sparse_tile_num
        out["tile_num"] = n
        out["cells_per_tile"] = schema.capacity
        out["cell_num"] = (n - 1) * schema.capacity + footer.last_tile_cell_num if n else 0
    return out



def fill_model(fm: FragmentMetadata, footer: Footer, schema, src, key) -> None:
    """Copy the footer's facts into `fm` and give it per-slot arrays read from `src` on demand
    (`key` decrypts the sections)."""
    fm.version = footer.version
    fm.schema_name = footer.schema_name
    fm.dense = footer.dense
    fm.non_empty_domain = footer.non_empty_domain
    fm.sparse_tile_num = footer.sparse_tile_num
    fm.last_tile_cell_num = footer.last_tile_cell_num
    fm.has_timestamps = footer.has_timestamps
    fm.has_delete_meta = footer.has_delete_meta
    fm.file_sizes = list(footer.file_sizes)
    fm.file_var_sizes = list(footer.file_var_sizes)
    fm.file_validity_sizes = list(footer.file_validity_sizes)
    loader = SectionLoader(src, footer, key, schema)
    n = len(footer.slots)
    fm.tile_offsets = SlotArrays(loader, "tile_offsets", n)
    fm.tile_var_offsets = SlotArrays(loader, "tile_var_offsets", n)
    fm.tile_var_sizes = SlotArrays(loader, "tile_var_sizes", n)
    fm.tile_validity_offsets = SlotArrays(loader, "tile_validity_offsets", n)
    layout = fragment_layout(schema, footer)
    fm.tile_num = layout["tile_num"] or 0
    fm.loader, fm.footer, fm.slots, fm.schema = loader, footer, list(footer.slots), schema
    fm.cells_per_tile, fm.cell_num = layout["cells_per_tile"], layout["cell_num"]
    fm.tile_sums = SlotArrays(loader, "tile_sums", n)
    fm.tile_null_counts = SlotArrays(loader, "tile_null_counts", n)

"""`__fragment_metadata.tdb` (format_spec/fragment.md, checked on bytes written by 2.30).

The file is a run of generic tiles (the sections), then a plain footer, then `u64 footer
length`. The footer is read first, from the end: it gives the non-empty domain, the file sizes
and the offset of every section. Each section is then parsed as a generic tile at its offset.

Slots: attributes, then the legacy `__coords` slot, then dimensions (format ≥ 5), then
`__timestamps` (when the footer says so) and the two delete-metadata slots.

Big sections (more than `LAZY_BYTES`) are shown as nodes whose children are built when first
asked for, and the model (`FragmentMetadata`) decodes the per-slot arrays on first use, so a
fragment with 100 000 tiles opens at once.

Version differences handled (from upstream `fragment_metadata.cc` / `rtree.cc`):
schema name from v10; timestamps flag from v14; delete-metadata flag from v15; validity file
sizes and validity offsets sections from v7; dimension slots from v5; tile mins/maxs/sums/null
counts from v11; fragment min/max/sum/null count from v12; processed conditions from v16;
R-tree v1–v4 has extra ignored fields and fixed-size ranges only. Formats 3–9 whose
dimensions are all fixed-sized write no footer length: the footer's size is computed from
the schema (`fragment_footer.fixed_footer_size`). Formats 1–2 (`__uuid_t` names) keep
everything in one generic tile (`fragment_v1`).

This module reads the file and places its sections; the parts live beside it:
`fragment_footer` (the footer), `fragment_sections` (section payloads), `fragment_rtree`,
`fragment_values` (typed values and ranges), `fragment_slots` (slot names and datatypes) and
`fragment_model` (the `FragmentMetadata` model and its lazily decoded arrays).
"""
from __future__ import annotations

import os
import struct
from typing import Dict, List, NamedTuple, Optional, Tuple

from ...core.cursor import Cursor, ParseStop
from ...core.dataset_fs import MISSING
from ...core.engine import run_parser
from ...core.fielddoc import doc
from ...core.findings import GENERIC_TILE_VERSION, NO_SCHEMA
from ...core.node import ERROR, WARNING, LazyChildren, Node, hex_preview

# The parts, re-exported: other modules and the tests import these names from here.
from ..model import layout, names
from ..model.array_model import ArraySchema, FragmentMetadata, tiledb_context
from ..model.footer_reader import footer_of, read_footer
from ..model.fragment_model import SectionLoader, SlotArrays, fill_model, fragment_layout  # noqa: F401
from ..model.fragment_slots import SPECIAL_SLOTS, slot_field  # noqa: F401
from .fragment_footer import (  # noqa: F401
    FOOTER_GROUP_TITLES,
    Footer,
    fixed_footer_size,
    footer_tail_size,
    parse_footer,
    section_kinds,
)
from .fragment_sections import (  # noqa: F401
    PER_SLOT_KINDS,
    SECTION_TITLES,
    U64_LIST_SECTIONS,
    payload_stores,
    prim_kind,
    section_parser,
    sum_kind,
)
from .fragment_v1 import parse_v1_v2
from .rawtile import GenericTileSpan, peek_generic_tile
from .tile import parse_generic_tile

SPEC = "fragment.md"
LAZY_BYTES = 64 * 1024  # sections bigger than this are parsed when first expanded
D_FOOTER_LEN = doc("Footer length: bytes of the footer before it. Written by format ≥ 10 (and "
                   "older formats with a var-sized dimension)", spec=SPEC + " Footer",
                   note="The spec says only with var-sized dimensions; since v10 it is always "
                        "written")
D_SECTION = doc("A fragment-metadata section: a generic tile (GZIP) whose payload is described "
                "by its children", spec=SPEC)

D_UNREFERENCED_PC = doc("Processed conditions: the delete/update conditions already applied. "
                       "libtiledb 2.11 writes this tile in format 15, but the v15 footer "
                       "has no offset for it and readers skip it", spec=SPEC,
                       note="not in the v15 footer: found after the fragment min/max/sum/"
                            "null-count tile (bytes of libtiledb 2.11.3)")



def _schema_for(ctx, name: Optional[str]) -> Optional[ArraySchema]:
    if ctx is None:
        return None
    tdb = tiledb_context(ctx)
    if tdb.array is not None:
        s = tdb.array.schema_for(name)
        if s is not None:
            return s
    return tdb.schema


def parse_fragment_metadata_file(document, source, ctx) -> Tuple[Node, Optional[FragmentMetadata]]:
    """Parse `__fragment_metadata.tdb` into (its node, the `FragmentMetadata` model).

    The footer is read from the end (u64 footer length, then the footer before it); every
    section is then parsed as a generic tile at the offset the footer gives. The schema is
    the TileDB context's `array.schema_for(<footer schema name>)` when it carries the array
    model, else its `schema`; without one, the slot count is inferred and typed fields
    (non-empty domain, MBRs, mins/maxs) are shown raw with a warning. `ctx.key` decrypts the
    sections of encrypted arrays (the footer is plaintext). Never raises."""
    fm = FragmentMetadata(version=0)
    name = os.path.basename(getattr(source, "name", "__fragment_metadata.tdb")) or \
        "__fragment_metadata.tdb"
    key = getattr(ctx, "key", None)

    def parse(cur: Cursor):
        _parse_file(cur, document, ctx, key, fm)

    root = run_parser(name, "file", source, parse, ctx)
    if any(c.code == NO_SCHEMA for c in root.children):
        return root, None   # nothing of it can be read: the schema it names is gone
    root.data = fm
    root.order_children()
    return root, fm


def _schema_gone(document, ctx, name: Optional[str]) -> Optional[str]:
    """The path of the schema file `name` when the array is known and no longer holds it
    (deleted from `__schema/`); None when it does, or when there is no array to ask."""
    tdb = tiledb_context(ctx) if ctx is not None else None
    array = tdb.array if tdb is not None else None
    if not name or array is None or not array.schemas or name in array.schemas:
        return None
    from ...core.filesystems import fs_of

    path = os.path.join(array.path, name) if name == layout.LEGACY_SCHEMA_FILE else \
        os.path.join(array.path, layout.SCHEMA_DIR, name)
    try:
        present = fs_of(document, path).stat(path).kind != MISSING
    except OSError:
        present = True
    return None if present else path


def load_fragment_metadata(source, ctx) -> FragmentMetadata:
    """The `FragmentMetadata` model alone: the footer, and the sections decoded on first use,
    with no section node (what `values` needs: a thousand fragments open in milliseconds).
    A footer that cannot be read leaves `fm.footer` missing or incomplete."""
    fm = FragmentMetadata(version=0)
    info = _fragment_name(source)
    if _load_model(source, ctx, fm, info):
        return fm
    scratch = Node("__fragment_metadata.tdb", "file", source, 0, source.size)
    try:
        _parse_file(Cursor(source, 0, source.size, scratch, ctx=ctx), None, ctx,
                    getattr(ctx, "key", None), fm, sections=False, info=info)
    except ParseStop:
        pass
    return fm


def _load_model(src, ctx, fm: FragmentMetadata, info: dict) -> bool:
    """`_parse_file` of the model only, for the common case — a footer that carries its
    length and that `footer_of` reads — with one read of the footer and no node; False
    (`fm` untouched) for anything else, which `_parse_file` then reads and explains."""
    if info.get("kind") == "legacy":
        return False
    if info.get("kind") == "timestamped" and (info.get("version") or 4) < 10:
        schema = _schema_for(ctx, None)
        if schema is not None and fixed_footer_size(info.get("version") or 4, schema):
            return False
    fb = footer_bytes(src)
    if fb is None:
        return False
    schema = _schema_for(ctx, fb.schema_name)
    footer = footer_of(fb.data, fb.start, schema) if schema is not None else None
    if footer is None:
        return False
    fill_model(fm, footer, schema, src, getattr(ctx, "key", None))
    _find_unreferenced_processed(src, footer, fb.start)
    fm.encrypted = _encrypted_of(None, fm.loader)
    return True


class FooterBytes(NamedTuple):
    """A footer that carries its length, as read from the end of its file."""

    start: int
    data: bytes
    version: int
    schema_name: Optional[str]   # format 10 on, when the name fits in the footer


def footer_bytes(src) -> Optional[FooterBytes]:
    """The footer of `src` by the u64 length that ends the file (format 10 on; older ones
    with a var-sized dimension): read once, for the node-free readers (`_load_model`, and
    verify's `fast_metadata`); None when the length does not fit before it."""
    size = src.size
    if size < 20:
        return None
    flen = _U64.unpack(src.read(size - 8, 8))[0]
    if flen > size - 8 or flen < 4:
        return None
    fstart = size - 8 - flen
    buf = src.read(fstart, flen)
    if len(buf) != flen:
        return None
    version = _U32.unpack_from(buf, 0)[0]
    schema_name = None
    if version >= 10 and flen >= 12:
        k = _U64.unpack_from(buf, 4)[0]
        if k <= flen - 12:
            schema_name = bytes(buf[12:12 + k]).decode("utf-8", "replace")
    return FooterBytes(fstart, buf, version, schema_name)


_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


def _fragment_name(src) -> dict:
    """The decoded name of the fragment folder holding `src` ({} when it is not one)."""
    path = getattr(src, "path", None) or getattr(src, "name", "") or ""
    if os.sep == "/" and path.startswith("/") and "//" not in path and "/." not in path \
            and not path.endswith("/"):
        # already normal (no `//`, `.`, `..` parts): the folder's name without normpath
        # (a thousand fragments' metadata files)
        parts = path.rsplit("/", 2)
        if len(parts) == 3 and parts[1]:
            return names.parse_name(parts[1]) or {}
    folder = os.path.dirname(os.path.normpath(path))
    if os.path.basename(folder) in ("", ".", ".."):   # a bare or relative name: from the cwd
        folder = os.path.dirname(os.path.abspath(path))
    return names.parse_name(os.path.basename(folder)) or {}


def _parse_file(cur: Cursor, document, ctx, key, fm: FragmentMetadata,
                sections: bool = True, info: Optional[dict] = None) -> None:
    src = cur.source
    size = src.size
    schema = _schema_for(ctx, None)
    if info is None:
        info = _fragment_name(src)
    if info.get("kind") == "legacy":  # `__uuid_t1[_t2]`: format 1–2, one generic tile
        parse_v1_v2(cur, document, ctx, key, fm, schema)
        return
    fixed = None
    if info.get("kind") == "timestamped" and schema is not None:
        # libtiledb takes the version from the name (none: format 3–4)
        fixed = fixed_footer_size(info.get("version") or 4, schema)
    if fixed is not None and fixed <= size:
        # formats 3–9 with fixed-sized dimensions: no footer length, the size is computed
        fstart = size - fixed
        footer = read_footer(src, fstart, fixed, schema) if not sections else None
        if footer is None:
            footer = parse_footer(Cursor(src, fstart, size, cur.node, ctx=ctx), schema,
                                  "Footer", size=fixed)
        want = info.get("version")
        fnode = cur.node.find("Footer")
        if fnode is not None and (want is None and footer.version not in (3, 4) or
                                  want not in (None, footer.version)):
            fnode.mark(WARNING, f"the footer says format {footer.version}, the fragment's name "
                                f"{want if want is not None else '3 or 4'}; its size was "
                                f"computed for the name's")
        _finish(cur, document, ctx, key, fm, footer, schema, fstart, sections)
        return
    flen = -1
    if not sections and size >= 8:   # the model only: no node for the length when it fits
        flen = struct.unpack("<Q", src.read(size - 8, 8))[0]
        if flen > size - 8 or flen < 4:
            flen = -1                # the annotated read below says what is wrong
    if flen < 0:
        if size < 8:
            cur.fail("Footer length", f"a fragment metadata file ends with a u64 footer "
                                      f"length; this one has {size} bytes")
        tail = Cursor(src, size - 8, size, cur.node, ctx=ctx)
        flen_node = tail.u64("Footer length", D_FOOTER_LEN)
        flen = flen_node.value
        if flen > size - 8 or flen < 4:
            flen_node.mark(ERROR, f"Footer length {flen} does not fit before it "
                                  f"({size - 8} bytes)")
            raise ParseStop(flen_node)
    fstart = size - 8 - flen
    version = struct.unpack("<I", src.read(fstart, 4))[0]
    schema_name = None
    if version >= 10 and flen >= 12:
        k = struct.unpack("<Q", src.read(fstart + 4, 8))[0]
        if k <= flen - 12:
            schema_name = src.read(fstart + 12, k).decode("utf-8", "replace")
    gone = _schema_gone(document, ctx, schema_name) if sections else None
    if gone is not None:
        # libtiledb: "FragmentMetadata: Could not find schema <name> in map of schemas
        # loaded": the array does not open. Said once, here: parsed with another schema,
        # every section would be a knock-on error
        cur.node.add(Node("unparsed", "unparsed", src, 0, size, status=ERROR, code=NO_SCHEMA,
                          display=hex_preview(src.read(0, 16)),
                          message=f"written with schema {schema_name}, which "
                                  f"{layout.SCHEMA_DIR}/ no longer holds (deleted?): libtiledb "
                                  f"cannot open the array (\"FragmentMetadata: Could not find "
                                  f"schema {schema_name} in map of schemas loaded\")"))
        cur.pos = size
        return
    schema = _schema_for(ctx, schema_name)
    footer = read_footer(src, fstart, flen, schema) if not sections else None
    if footer is None:  # the annotated parse (or the fast reader could not: it says why)
        footer = parse_footer(Cursor(src, fstart, size - 8, cur.node, ctx=ctx), schema,
                              "Footer", size=flen)
    _finish(cur, document, ctx, key, fm, footer, schema, fstart, sections)


def _finish(cur: Cursor, document, ctx, key, fm: FragmentMetadata, footer: Footer, schema,
            fstart: int, sections: bool) -> None:
    src = cur.source
    fill_model(fm, footer, schema, src, key)
    if not footer.complete:
        return
    loader: SectionLoader = fm.loader
    _find_unreferenced_processed(src, footer, fstart)
    if sections:
        add_sections(cur.node, document, src, footer, schema, ctx, key, 0, fstart, loader)
    if footer.version == 15 and footer.processed_conditions is not None:
        n = cur.node.find("Processed conditions")
        if n is not None:
            n.doc = D_UNREFERENCED_PC
    fm.encrypted = _encrypted_of(cur.node, loader)


def _find_unreferenced_processed(src, footer: Footer, fstart: int) -> None:
    """libtiledb 2.11 (format 15) writes the processed-conditions tile after the fragment
    min/max/sum/null-count tile, but a v15 footer has no offset for it: it is found where
    that tile ends, when a generic tile there ends exactly at the footer."""
    if footer.version != 15 or footer.fmmsn is None or footer.processed_conditions is not None:
        return
    head = peek_generic_tile(src, footer.fmmsn)
    if head is None:
        return
    at = footer.fmmsn + head[0]
    nxt = peek_generic_tile(src, at) if at < fstart else None
    if nxt is not None and at + nxt[0] == fstart:
        footer.processed_conditions = at


def _encrypted_of(node: Optional[Node], loader: SectionLoader) -> bool:
    src = loader.source
    off = loader.footer.rtree if loader.footer.rtree is not None else 0
    head = peek_generic_tile(src, off)
    return bool(head and head[3])



def section_list(footer: Footer) -> List[Tuple[int, str, str, int]]:
    """[(offset, node name, kind, slot)] of every section, in file order."""
    out = []
    if footer.rtree is not None:
        out.append((footer.rtree, "R-Tree", "rtree", -1))
    for kind, offs in footer.sections.items():
        for i, off in enumerate(offs):
            slot = footer.slots[i] if i < len(footer.slots) else f"slot {i + 1}"
            out.append((off, f"{SECTION_TITLES[kind]}: {slot}", kind, i))
    if footer.fmmsn is not None:
        out.append((footer.fmmsn, "Fragment min max sum null count", "fmmsn", -1))
    if footer.processed_conditions is not None:
        out.append((footer.processed_conditions, "Processed conditions", "processed", -1))
    out.sort(key=lambda t: t[0])
    return out



def add_sections(parent: Node, document, src, footer: Footer, schema, ctx, key, base: int,
                 limit: int, loader: SectionLoader) -> None:
    """Add a node per section under `parent` (offsets relative to `base`, sections must end
    by `limit`)."""
    secs = section_list(footer)
    seen: Dict[int, str] = {}
    ends = [o for o, *_ in secs] + [limit - base]
    for idx, (off, name, kind, slot) in enumerate(secs):
        start = base + off
        nxt = min([base + e for e in ends if e > off] or [limit])
        if off in seen:
            parent.add(Node(name, "error", src, start, 0, status=ERROR,
                            message=f"{name}: offset {off} is also the offset of {seen[off]}"))
            continue
        seen[off] = name
        if start >= limit:
            parent.add(Node(name, "error", src, min(start, src.size), 0, status=ERROR,
                            message=f"{name}: offset {off} is beyond the sections (they end at "
                                    f"{limit - base})"))
            continue
        parse_fn = section_parser(kind, slot, footer, schema, loader)
        pname = f"{getattr(src, 'name', 'fragment metadata')} {name}"
        head = peek_generic_tile(src, start)
        region = nxt - start
        if head is not None and head[0] == region and max(region, head[4]) > LAZY_BYTES:
            section = _lazy_section(document, src, start, region, name, parse_fn, pname, ctx,
                                    head)
            parent.add(section)
            _check_tile_version(section, src, start, footer)
            continue
        sub = Cursor(src, start, nxt, parent, ctx=ctx)
        try:
            gt = parse_generic_tile(sub, document, name, parse_fn, pname, ctx)
            gt.node.doc = D_SECTION
            _section_display(gt.node, kind)
            header = gt.node.find("Generic tile header")
            _check_tile_version((header.find("Version number") if header else None) or gt.node,
                                src, start, footer)
        except ParseStop:
            pass


def _check_tile_version(node: Node, src, start: int, footer: Footer) -> None:
    """A section's generic tile carries the format version of the libtiledb that wrote the
    fragment, as its footer does (one writer writes the whole file): another is damage,
    which libtiledb does not notice (it reads the tile whatever the number)."""
    if start + 4 > src.size:
        return
    version = struct.unpack("<I", src.read(start, 4))[0]
    if footer.version and version != footer.version:
        node.mark(ERROR, f"generic tile version {version}, the fragment's footer says format "
                         f"{footer.version} (one writer writes both)")
        node.code = GENERIC_TILE_VERSION


def _lazy_section(document, src, start, region, name, parse_fn, pname, ctx, head) -> Node:
    node = Node(name, "struct", src, start, region, doc=D_SECTION,
                display=f"generic tile, {head[4]} B → {head[2]} B (expand to decode)",
                data=GenericTileSpan(src, start, region))
    built: Dict[str, List[Node]] = {}

    def kids() -> List[Node]:
        if "k" not in built:
            scratch = Node(name, "struct", src, start, region)
            sub = Cursor(src, start, start + region, scratch, ctx=ctx)
            try:
                parse_generic_tile(sub, document, name, parse_fn, pname, ctx)
            except ParseStop:
                pass
            inner = scratch.children[0] if scratch.children else scratch
            ks = list(inner.children)
            for k in ks:
                k.parent = None
            built["k"] = ks
        return built["k"]

    node.set_lazy(LazyChildren(2, lambda i: kids()[i] if i < len(kids()) else
                               Node("missing", "error", src, start, 0, status=ERROR,
                                    message="section could not be parsed")))
    return node


def _section_display(node: Node, kind: str) -> None:
    tile = node.find("Tile")
    payload = tile.find("Payload") if tile is not None else None
    if payload is None:
        return
    if kind in U64_LIST_SECTIONS:
        arr = next((c for c in payload.iter_children() if c.kind == "array"), None)
        if arr is not None:
            node.display = arr.display
    elif kind == "rtree":
        lv = payload.find("Num levels")
        if lv is not None:
            node.display = f"{lv.value} level(s)"

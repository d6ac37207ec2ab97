"""Fragment metadata of formats 1–2 (TileDB 1.4–1.5): the whole `__fragment_metadata.tdb`
is one generic tile, with no footer. Its payload, in the order libtiledb reads it
(`FragmentMetadata::load_v1_v2`, `V1V2PreloadedFragmentMetadata`):

    u32 version | u64 non-empty domain size | domain | u64 MBR num | MBRs |
    u64 bounding coords num | bounding coords | tile offsets (attributes + coords) |
    tile var offsets (attributes) | tile var sizes (attributes) | u64 last tile cell num |
    file sizes (attributes + coords) | file var sizes (attributes)

Each list of tile offsets is `u64 count` then the values. Every dimension shares one
datatype. These fragments have no "dense" flag: libtiledb takes a fragment with a
`__coords.tdb` for sparse, any other for dense."""
from __future__ import annotations

import os
from typing import List, Optional

import numpy as np

from ...core.cursor import Cursor
from ...core.fielddoc import doc
from ...core.node import WARNING
from ..model.array_model import ArraySchema, FragmentMetadata
from ..model.fragment_model import fill_model
from .fragment_footer import Footer
from .fragment_values import parse_range, short_text
from .tile import parse_generic_tile

SPEC = "fragment.md (format 1–2: FragmentMetadata::load_v1_v2)"
D_FILE = doc("Fragment metadata of format 1–2: one generic tile holding everything (no "
             "footer, no sections)", spec=SPEC,
             note="the format_spec of today describes only the footer layout of format ≥ 3; "
                  "this layout follows libtiledb's reader of formats 1–2")
D_VERSION = doc("Version number: format version of the fragment (1 or 2)", spec=SPEC)
D_NED_SIZE = doc("Non-empty domain size: bytes of the non-empty domain that follows (0: the "
                 "fragment is empty)", spec=SPEC)
D_NED = doc("Non-empty domain: per dimension the smallest and largest coordinate written",
            spec=SPEC)
D_MBR_NUM = doc("MBR num: number of minimum bounding rectangles (one per sparse data tile)",
                spec=SPEC)
D_MBRS = doc("MBRs: per sparse data tile, per dimension its [min, max] coordinates",
             spec=SPEC)
D_MBR = doc("MBR: the bounding rectangle of one data tile", spec=SPEC)
D_BOUNDING_NUM = doc("Bounding coords num: number of bounding coordinate pairs", spec=SPEC)
D_BOUNDING = doc("Bounding coords: per data tile its first and last coordinates; libtiledb "
                 "skips them when reading", spec=SPEC)
D_TILE_OFFSETS = doc("Tile offsets: per attribute (then the coordinates) the offset of each "
                     "tile in its data file", spec=SPEC)
D_TILE_VAR_OFFSETS = doc("Tile var offsets: per attribute the offset of each tile in its _var "
                         "file (empty for fixed-sized attributes)", spec=SPEC)
D_TILE_VAR_SIZES = doc("Tile var sizes: per attribute the unfiltered size of each var tile",
                       spec=SPEC)
D_COUNT = doc("Number of values that follow", spec=SPEC)
D_LAST = doc("Last tile cell num: cells in the last tile", spec=SPEC)
D_FILE_SIZES = doc("File sizes: bytes of each attribute's data file, then of __coords.tdb",
                   spec=SPEC)
D_FILE_VAR_SIZES = doc("File var sizes: bytes of each attribute's _var file", spec=SPEC)
D_ITEM = doc("One value per slot (attributes, then the coordinates)", spec=SPEC)


def parse_v1_v2(cur: Cursor, document, ctx, key, fm: FragmentMetadata,
                schema: Optional[ArraySchema]) -> None:
    """Parse the file at `cur` (its node is `cur.node`) and fill `fm`."""
    src = cur.source
    if schema is None:
        cur.fail("Fragment metadata (format 1–2)", "no array schema: the layout of a format "
                                                   "1–2 fragment metadata depends on it")
        return
    cur.node.doc = D_FILE
    ft = Footer(version=0, slots=[a.name for a in schema.attributes] + ["__coords"])
    frag_dir = os.path.dirname(os.path.abspath(getattr(src, "path", "") or ""))
    ft.dense = not os.path.isfile(os.path.join(frag_dir, "__coords.tdb"))
    lists: dict = {}
    name = getattr(src, "name", "fragment metadata")

    def payload(c: Cursor):
        _payload(c, schema, ft, lists)

    parse_generic_tile(cur, document, "Generic tile", payload, f"{name} (payload)", ctx,
                       "Fragment metadata")
    if not ft.complete:
        return
    fill_model(fm, ft, schema, src, key)
    loader = fm.loader
    for kind, per_slot in lists.items():
        for i, arr in enumerate(per_slot):
            loader.store(kind, i, arr)
    fm.encrypted = False


def _payload(c: Cursor, schema: ArraySchema, ft: Footer, lists: dict) -> None:
    dims = schema.dimensions
    cs = dims[0].cell_size if dims else 0
    nattr = len(schema.attributes)
    ft.version = c.u32("Version number", D_VERSION).value
    size = c.length("u64", "Non-empty domain size", 1, D_NED_SIZE, "bytes").value
    if size == 0:
        ft.null_ned = True
    else:
        if size != 2 * len(dims) * cs:
            c.fail("Non-empty domain", f"{size} bytes, but {len(dims)} dimension(s) of "
                                       f"{cs} B need {2 * len(dims) * cs}", size)
        ned: list = []

        def body(nc: Cursor):
            for d in dims:
                lo, hi, _raw = parse_range(nc, d, d.name)
                ned.append((lo, hi))
        g = c.group("Non-empty domain", body, doc=D_NED)
        ft.non_empty_domain = ned
        g.display = ", ".join(f"{d.name}: [{short_text(lo)}, {short_text(hi)}]"
                              for d, (lo, hi) in zip(dims, ned))
    mbr_size = 2 * len(dims) * cs
    n = c.length("u64", "MBR num", mbr_size, D_MBR_NUM, "MBRs").value
    ft.sparse_tile_num = n

    def mbrs(mc: Cursor):
        for i in range(n):
            def one(oc: Cursor):
                for d in dims:
                    parse_range(oc, d, d.name)
            mc.group(f"MBR {i + 1}", one, doc=D_MBR)
    if n <= 1000:
        c.group("MBRs", mbrs, doc=D_MBRS, display=f"{n} MBR(s)")
    else:
        c.raw("MBRs", n * mbr_size, D_MBRS)
    nb = c.length("u64", "Bounding coords num", mbr_size, D_BOUNDING_NUM, "pairs").value
    if nb:
        c.raw("Bounding coords", nb * mbr_size, D_BOUNDING)
    slots = ft.slots
    lists["tile_offsets"] = _u64_lists(c, "Tile offsets", slots, D_TILE_OFFSETS)
    lists["tile_var_offsets"] = _u64_lists(c, "Tile var offsets", slots[:nattr],
                                           D_TILE_VAR_OFFSETS)
    lists["tile_var_sizes"] = _u64_lists(c, "Tile var sizes", slots[:nattr], D_TILE_VAR_SIZES)
    ft.last_tile_cell_num = c.u64("Last tile cell num", D_LAST).value
    ft.file_sizes = _u64s(c, "File sizes", slots, D_FILE_SIZES)
    ft.file_var_sizes = _u64s(c, "File var sizes", slots[:nattr], D_FILE_VAR_SIZES)
    ft.file_validity_sizes = [0] * len(slots)
    ft.complete = True
    if not c.at_end():
        c.node.mark(WARNING, f"{c.remaining} bytes follow the last field libtiledb reads")


def _u64_lists(c: Cursor, title: str, slots: List[str], fdoc) -> List[np.ndarray]:
    out: List[np.ndarray] = []

    def body(gc: Cursor):
        for s in slots:
            def one(sc: Cursor, s=s):
                k = sc.length("u64", "Count", 8, D_COUNT, "values").value
                node = sc.array("Values", "u64", k)
                out.append(np.asarray(node.data))
                sc.node.display = node.display
            gc.group(s, one)
    c.group(title, body, doc=fdoc)
    return out


def _u64s(c: Cursor, title: str, slots: List[str], fdoc) -> List[int]:
    vals: List[int] = []

    def body(gc: Cursor):
        for s in slots:
            vals.append(gc.u64(s, D_ITEM).value)
    g = c.group(title, body, doc=fdoc)
    g.display = "[" + ", ".join(str(x) for x in vals) + "]"
    return vals


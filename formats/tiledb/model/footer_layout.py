"""The footer of `__fragment_metadata.tdb` declared once (format_spec/fragment.md "Footer"),
as `core/record.py` declares a record: the fields in order, the format version each starts
in, and what each holds. Every reader takes its layout from `FOOTER`: the annotated parse
(`parse/fragment_footer.py`), the node-free reader and its per-schema struct plan
(`footer_reader.py`), the positions the compiled locate reads (`footer_reader.footer_shape`)
and the sizes (`footer_tail_size`, `fixed_footer_size`)."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ...core.fielddoc import FieldDoc, doc
from .array_model import ArraySchema

SPEC = "fragment.md"


@dataclass(frozen=True)
class FooterField:
    """One footer field. `kind`: "u32", "u64", "bool", "name" (a u64 length and the bytes),
    "ned" (the non-empty domain, sized by the schema), "slots" (one u64 per slot: a Footer
    list) or "section" (one u64 per slot: `Footer.sections[name]`). `coords_since`: formats
    before it write no entry for the `__coords` slot (the last slot in formats 3–4)."""

    name: str
    label: str
    kind: str
    doc: FieldDoc
    since: int = 0
    coords_since: int = 0

    def count(self, version: int, slots: int) -> int:
        """u64s of a "slots"/"section" field with `slots` slots."""
        return slots - 1 if version < self.coords_since else slots


def _section(name: str, label: str, what: str, since: int = 0, coords_since: int = 5) -> FooterField:
    return FooterField(name, label, "section", doc(f"Offsets of the generic tiles holding each "
                                                   f"slot's {what}", spec=SPEC + " Footer",
                                                   added_in=since or None),
                       since=since, coords_since=coords_since)


FOOTER: Tuple[FooterField, ...] = (
    FooterField("version", "Version number", "u32",
                doc("Version number: format version of the fragment", spec=SPEC + " Footer")),
    FooterField("schema_name", "Array schema name", "name",
                doc("Array schema name: the file under __schema/ this fragment was written "
                    "with", added_in=10, spec=SPEC + " Footer",
                    note="The spec lists the name twice (also at the end of the footer); "
                         "2.30 writes it once, here (FORMAT_NOTES 6)"), since=10),
    FooterField("dense", "Dense", "bool",
                doc("Dense: 1 when the fragment is dense (no coordinates stored)",
                    spec=SPEC + " Footer")),
    FooterField("null_ned", "Null non-empty domain", "bool",
                doc("Null non-empty domain: 1 when the fragment has no non-empty domain (then "
                    "dummy zero bytes follow)", spec=SPEC + " Footer")),
    FooterField("non_empty_domain", "Non-empty domain", "ned",
                doc("Non-empty domain: per dimension the smallest and largest coordinate "
                    "written (an MBR)", spec=SPEC + " MBR")),
    FooterField("sparse_tile_num", "Number of sparse tiles", "u64",
                doc("Number of sparse tiles (0 for dense fragments)", spec=SPEC + " Footer")),
    FooterField("last_tile_cell_num", "Last tile cell num", "u64",
                doc("Last tile cell num: cells in the last tile (sparse); for dense fragments "
                    "the cells per tile", spec=SPEC + " Footer")),
    FooterField("has_timestamps", "Includes timestamps", "bool",
                doc("Includes timestamps: the fragment stores a per-cell timestamp slot "
                    "(t.tdb)", added_in=14, spec=SPEC + " Footer"), since=14),
    FooterField("has_delete_meta", "Includes delete metadata", "bool",
                doc("Includes delete metadata: the fragment stores delete timestamp and "
                    "delete condition slots", added_in=15, spec=SPEC + " Footer"), since=15),
    FooterField("file_sizes", "File sizes", "slots",
                doc("File sizes: bytes of each slot's data file (the offsets file for "
                    "var-sized slots)", spec=SPEC + " Footer")),
    FooterField("file_var_sizes", "File var sizes", "slots",
                doc("File var sizes: bytes of each slot's _var file", spec=SPEC + " Footer"),
                coords_since=5),
    FooterField("file_validity_sizes", "File validity sizes", "slots",
                doc("File validity sizes: bytes of each slot's _validity file", added_in=7,
                    spec=SPEC + " Footer"), since=7),
    FooterField("rtree", "R-Tree offset", "u64",
                doc("R-Tree offset: where the R-tree generic tile starts in this file",
                    spec=SPEC + " Footer")),
    _section("tile_offsets", "Tile offsets offsets", "tile offsets", coords_since=0),
    _section("tile_var_offsets", "Tile var offsets offsets", "var tile offsets"),
    _section("tile_var_sizes", "Tile var sizes offsets", "var tile sizes"),
    _section("tile_validity_offsets", "Tile validity offsets offsets", "validity tile offsets",
             since=7),
    _section("tile_mins", "Tile mins offsets", "tile minimums", since=11),
    _section("tile_maxs", "Tile maxs offsets", "tile maximums", since=11),
    _section("tile_sums", "Tile sums offsets", "tile sums", since=11),
    _section("tile_null_counts", "Tile null counts offsets", "tile null counts", since=11),
    FooterField("fmmsn", "Fragment min max sum null count offset", "u64",
                doc("Fragment min max sum null count offset: where that generic tile starts",
                    added_in=12, spec=SPEC + " Footer"), since=12),
    FooterField("processed_conditions", "Processed conditions offset", "u64",
                doc("Processed conditions offset: where that generic tile starts",
                    added_in=16, spec=SPEC + " Footer"), since=16),
)
_NED_AT = next(i for i, f in enumerate(FOOTER) if f.kind == "ned")
_SIZES = {"u32": 4, "u64": 8, "bool": 1}


@dataclass
class Footer:
    """What a footer says (its fields by `FooterField.name`), with the layout facts needed
    to find the sections."""

    version: int = 0
    schema_name: str = ""
    dense: bool = True
    null_ned: bool = False
    non_empty_domain: Optional[list] = None   # per dimension (min, max)
    ned_raw: List[bytes] = field(default_factory=list)
    sparse_tile_num: int = 0
    last_tile_cell_num: int = 0
    has_timestamps: bool = False
    has_delete_meta: bool = False
    slots: List[str] = field(default_factory=list)
    file_sizes: List[int] = field(default_factory=list)
    file_var_sizes: List[int] = field(default_factory=list)
    file_validity_sizes: List[int] = field(default_factory=list)
    rtree: Optional[int] = None
    sections: Dict[str, List[int]] = field(default_factory=dict)   # kind -> per-slot offsets
    fmmsn: Optional[int] = None
    processed_conditions: Optional[int] = None
    offset: int = 0
    size: int = 0
    complete: bool = False
    schema_used: bool = False

    def set(self, f: FooterField, value) -> None:
        """Field `f`'s value read (a bool field as bool, a section into `sections`)."""
        if f.kind == "section":
            self.sections[f.name] = value
        else:
            setattr(self, f.name, bool(value) if f.kind == "bool" else value)


def head_fields(version: int) -> Tuple[FooterField, ...]:
    """The fields before the non-empty domain (version, schema name, flags)."""
    return tuple(f for f in FOOTER[:_NED_AT] if version >= f.since)


def tail_fields(version: int) -> Tuple[FooterField, ...]:
    """The fields after the non-empty domain."""
    return tuple(f for f in FOOTER[_NED_AT + 1:] if version >= f.since)


def section_kinds(version: int) -> List[str]:
    """The per-slot sections a footer of format `version` gives the offsets of."""
    return [f.name for f in tail_fields(version) if f.kind == "section"]


@functools.lru_cache(maxsize=256)
def tail_layout(version: int, slots: int) -> Dict[str, Tuple[int, int]]:
    """Field name -> (offset after the non-empty domain, u64 count or 0 for a scalar) with
    `slots` slots; "" -> (the tail's size, 0)."""
    out: Dict[str, Tuple[int, int]] = {}
    at = 0
    for f in tail_fields(version):
        if f.kind in ("slots", "section"):
            n = f.count(version, slots)
            out[f.name] = (at, n)
            at += 8 * n
        else:
            out[f.name] = (at, 0)
            at += _SIZES[f.kind]
    out[""] = (at, 0)
    return out


def footer_tail_size(version: int, n: int) -> int:
    """Bytes of a footer after the non-empty domain, for `n` slots."""
    return tail_layout(version, n)[""][0]


def null_ned_size(schema: ArraySchema) -> int:
    """Bytes of zeros after a null non-empty domain flag: libtiledb's `write_non_empty_domain`
    writes 2 × dimensions × the first dimension's coordinate size (it assumes a homogeneous
    domain), and nothing when a dimension is var-sized."""
    dims = schema.dimensions
    if not dims or any(d.var for d in dims):
        return 0
    return 2 * len(dims) * dims[0].cell_size


def fixed_footer_size(version: int, schema: ArraySchema) -> Optional[int]:
    """Bytes of the footer of a format 3–9 fragment whose dimensions are all fixed-sized:
    those versions write no footer length, libtiledb computes the size from the schema
    (`footer_size_v3_v4`, `_v5_v6`, `_v7_v9`). None when the footer carries its length."""
    dims = schema.dimensions
    if not dims or version >= 10 or any(d.var for d in dims):
        return None
    slots = len(schema.attributes) + 1    # the attributes and __coords
    if version < 5:  # one shared domain type; no slot per dimension
        ned = 2 * len(dims) * dims[0].cell_size
    else:
        ned = sum(2 * d.cell_size for d in dims)
        slots += len(dims)
    head = sum(_SIZES[f.kind] for f in head_fields(version))
    return head + ned + footer_tail_size(version, slots)

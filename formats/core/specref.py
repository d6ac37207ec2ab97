"""A field's spec reference (`FieldDoc.spec`: "tile.md: Checksum Filters", "SCDL schema v0.0.9,
Archive Header Spec: Core Header", "FORMAT_NOTES §3") resolved to a bundled format document
(`resources/spec/`) and the heading to open it at. The window renders the document; this
module only knows which file and heading a citation names (no Qt).

A citation may name several documents ("fragment.md, array_schema.md (...)"): each one that
is bundled gives a link, in order. Citations of documents not bundled (RFCs, numcodecs
sources, TileDB pages not copied) give none: the text stays plain."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

SPEC_DIR_NAME = "spec"


@dataclass(frozen=True)
class SpecLink:
    file: str                     # a file name under resources/spec/
    heading: Tuple[str, ...]      # headings to find in turn ("" parts skipped); () = the top
    label: str                    # the citation text this link stands for


def spec_dir() -> str:
    """The folder of the bundled documents (inside the installed `arrayscope.resources`)."""
    from ... import resources

    return os.path.join(os.path.dirname(os.path.abspath(resources.__file__)), SPEC_DIR_NAME)


def spec_path(link: SpecLink) -> str:
    return os.path.join(spec_dir(), link.file)


# TileDB format_spec page -> (bundled file, heading when the citation names none)
_TILEDB_PAGES = {
    "tile.md": ("tiledb_tile_and_filters.md", "Tile"),
    "filter_pipeline.md": ("tiledb_filter_pipeline.md", "Main Structure"),
    "generic_tile.md": ("tiledb_generic_tile.md", ""),
    "array_schema.md": ("tiledb_array_schema.md", "Array Schema File"),
    "current_domain.md": ("tiledb_array_schema.md", "Current Domain"),
    "enumeration.md": ("tiledb_enums.md", ""),
    "fragment.md": ("tiledb_fragment.md", "Main Structure"),
    "array_file_hierarchy.md": ("tiledb_fragment.md", "Main Structure"),
}
# "page.md", "page.md#anchor", "page.md: Heading", "page.md Heading"
_PAGE = re.compile(r"((?:filters/)?[A-Za-z_]+\.md)(?:#([\w-]+))?(?::?\s+([A-Z][^,;()]*))?")
_NOTES = re.compile(r"FORMAT_NOTES\s*§\s*(\d+)")
_PART = {"zarr": "Zarr struct dtypes", "scdl": "SCDL", "tiledb": "TileDB"}


def resolve(spec: Optional[str], fmt: Optional[str] = None) -> List[SpecLink]:
    """The bundled documents `spec` cites (`fmt`: the document's format, for FORMAT_NOTES'
    numbered sections, which restart in each format's part)."""
    if not spec:
        return []
    out: List[SpecLink] = []
    for m in _PAGE.finditer(spec):
        page = m.group(1)
        heading = (m.group(3) or (m.group(2) or "").replace("-", " ")).strip()
        hit = _TILEDB_PAGES.get(page)
        if hit is None and page.startswith("filters/"):
            hit = ("tiledb_tile_and_filters.md", "Compression Filters")
        if hit is not None:
            out.append(SpecLink(hit[0], (heading or hit[1],) if heading or hit[1] else (),
                                m.group(0).strip()))
    if spec.startswith("filters: compression"):
        out.append(SpecLink("tiledb_tile_and_filters.md", ("Compression Filters",), spec))
    for m in _NOTES.finditer(spec):
        part = _PART.get(fmt or "", "Zarr struct dtypes" if "zarr" in spec.lower() or
                         fmt is None else "")
        out.append(SpecLink("FORMAT_NOTES.md", (part, f"{m.group(1)}."), m.group(0)))
    if spec.startswith("SCDL schema"):
        rest = [p.strip() for p in spec.split(",")[1:]]
        heads = tuple(h for p in rest for h in p.split(": ") if h)
        out.append(SpecLink("scdl_schema.md", heads or ("SCDL Archive Structure",), spec))
    low = spec.lower()
    if not out and low.startswith("zarr") and "struct dtype" in low:
        out.append(SpecLink("zarr_struct_dtypes.md", (), spec))
    elif not out and low.startswith("zarr"):
        out.append(SpecLink("FORMAT_NOTES.md", ("Zarr struct dtypes",), spec))
    if not out and ("datatype" in low or "filtertype" in low or "enum" in low):
        out.append(SpecLink("tiledb_enums.md", (), spec))
    seen = set()
    uniq = []
    for link in out:
        if (link.file, link.heading) not in seen:
            seen.add((link.file, link.heading))
            uniq.append(link)
    return uniq


def find_heading(markdown: str, heading: Tuple[str, ...]) -> Optional[int]:
    """The line index of the heading `heading` names in `markdown`: each part is looked for
    after the previous one (a heading, or a bold line, that starts with it, else contains
    it, case-insensitively; "A / B" tries each); a part not found keeps the place reached.
    None when no part is found (the document opens at its top)."""
    lines = markdown.splitlines()
    heads = [(i, line.lstrip("#*").strip().lower()) for i, line in enumerate(lines)
             if line.startswith(("#", "**"))]
    pos: Optional[int] = None
    for part in heading:
        for alt in (a.strip().lower() for a in part.split(" / ")):
            if not alt:
                continue
            after = [(i, t) for i, t in heads if pos is None or i > pos]
            hit = next((i for i, t in after if t.startswith(alt)), None)
            if hit is None:
                hit = next((i for i, t in after if alt in t), None)
            if hit is not None:
                pos = hit
                break
    return pos

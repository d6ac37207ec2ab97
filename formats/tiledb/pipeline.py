"""The serialized filter pipeline (format_spec/filter_pipeline.md) and its filter options."""
from __future__ import annotations

from typing import List

from ..cursor import Cursor
from ..fielddoc import doc
from ..filters import FilterSpec
from ..node import WARNING
from .enums import (
    COMPRESSOR_OF_FILTER,
    COMPRESSORS,
    DATATYPE_NAMES,
    FILTER_TYPES,
    WEBP_FORMATS,
    Datatype,
    FilterType,
)

D_MAX_CHUNK = doc("Max chunk size: maximum bytes of a chunk within a tile. Persisted, but the "
                  "libtiledb 2.30 writer ignores it and always uses 65536 (tiledb-py's "
                  "FilterList(chunksize=...) only changes this number).",
                  spec="filter_pipeline.md", note="unused by the 2.30 writer (FORMAT_NOTES 9)")
D_NUM = doc("Num filters: number of filters in the pipeline", spec="filter_pipeline.md")
D_TYPE = doc("Filter type (e.g. TILEDB_FILTER_ZSTD). Filter 11, the internal AES-256-GCM "
             "filter, appears only in the headers of encrypted generic tiles — the document "
             "says it never reaches disk, the bytes show it does.", spec="filter_pipeline.md")
D_OPTS_SIZE = doc("Filter metadata size: number of option bytes that follow (may be 0)",
                  spec="filter_pipeline.md")
D_COMPRESSOR = doc("Compressor type: the compressor id, a separate enum from filter types "
                   "(Dictionary is compressor 7, Delta compressor 8)", spec="filter_pipeline.md")
D_LEVEL = doc("Compression level; -1 means the compressor's default", spec="filter_pipeline.md")
D_REINTERPRET = doc("Reinterpret datatype: the type the values are read as before (double) "
                    "delta encoding; 17 (ANY) means none", spec="filter_pipeline.md")
D_WINDOW = doc("Max window size in bytes", spec="filter_pipeline.md")
D_SCALE = doc("Scale: stored integer = round((value - offset) / scale)", spec="filters/float_scale.md")
D_OFFSET = doc("Offset subtracted before scaling", spec="filters/float_scale.md")
D_BYTE_WIDTH = doc("Byte width of the stored integers (1, 2, 4 or 8)", spec="filters/float_scale.md")
D_QUALITY = doc("WebP quality (0–100)", spec="filters/webp.md")
D_WEBP_FMT = doc("WebP input format (colour channel layout of the cells)", spec="filters/webp.md")
D_LOSSLESS = doc("1 for lossless WebP", spec="filters/webp.md")
D_EXTENT = doc("Tile extent of the image in this dimension", spec="filters/webp.md")
D_PAD = doc("Struct padding written verbatim from the C struct of WebP options")

FILTER_ENUM = dict(FILTER_TYPES)


def _options(cur: Cursor, ftype: int, size: int, opts: dict) -> None:
    if ftype in COMPRESSOR_OF_FILTER and size >= 5:
        n = cur.u8("Compressor type", D_COMPRESSOR, enum=COMPRESSORS)
        expected = COMPRESSOR_OF_FILTER[ftype]
        if n.value != expected:
            n.mark(WARNING, f"Compressor type: expected {expected} ({COMPRESSORS[expected]}) for "
                            f"filter {FILTER_TYPES[ftype]}, found {n.value}")
        opts["compressor"] = n.value
        opts["level"] = cur.i32("Compression level", D_LEVEL).value
        if size >= 6 and ftype in (FilterType.DOUBLE_DELTA, FilterType.DELTA):
            opts["reinterpret"] = cur.u8("Reinterpret datatype", D_REINTERPRET,
                                         enum=DATATYPE_NAMES).value
    elif ftype in (FilterType.BIT_WIDTH_REDUCTION, FilterType.POSITIVE_DELTA) and size >= 4:
        opts["max_window"] = cur.u32("Max window size", D_WINDOW).value
    elif ftype == FilterType.SCALE_FLOAT and size >= 24:
        opts["scale"] = cur.f64("Scale", D_SCALE).value
        opts["offset"] = cur.f64("Offset", D_OFFSET).value
        opts["byte_width"] = cur.u64("Byte width", D_BYTE_WIDTH).value
    elif ftype == FilterType.WEBP and size >= 10:
        opts["quality"] = cur.f32("Quality", D_QUALITY).value
        opts["format"] = cur.u8("Input format", D_WEBP_FMT, enum=WEBP_FORMATS).value
        opts["lossless"] = cur.boolean("Lossless", D_LOSSLESS).value
        opts["y_extent"] = cur.u16("Y extent", D_EXTENT).value
        opts["x_extent"] = cur.u16("X extent", D_EXTENT).value
        if cur.remaining:
            cur.raw("Padding", cur.remaining, D_PAD, kind="padding")


def parse_pipeline(cur: Cursor, name: str = "Filters", fdoc=None) -> List[FilterSpec]:
    """Read a serialized pipeline as a group node named `name`; return its FilterSpecs
    (the specs read so far even when the pipeline is cut short)."""
    specs: List[FilterSpec] = []

    def body(c: Cursor):
        c.u32("Max chunk size", D_MAX_CHUNK)
        n = c.length("u32", "Num filters", 5, D_NUM, "filters").value
        for i in range(n):
            def one(fc: Cursor):
                t = fc.u8("Filter type", D_TYPE, enum=FILTER_ENUM).value
                size = fc.length("u32", "Filter metadata size", 1, D_OPTS_SIZE, "bytes").value
                spec = FilterSpec(t, {})
                specs.append(spec)
                if size:
                    fc.group("Filter options", lambda oc: _options(oc, t, size, spec.options),
                             size=size)
            g = c.group(f"Filter {i + 1}", one, kind="filter")
            if specs and len(specs) == i + 1:
                g.display = _describe(specs[-1])
                g.value = specs[-1].name
    g = cur.group(name, body, doc=fdoc)
    g.display = "[" + ", ".join(_describe(s) for s in specs) + "]"
    g.value = [s.name for s in specs]
    g.data = specs
    return specs


def _describe(spec: FilterSpec) -> str:
    o = spec.options
    if "level" in o:
        extra = f"({o['level']}"
        if "reinterpret" in o and o["reinterpret"] != Datatype.ANY:
            extra += f", reinterpret={DATATYPE_NAMES.get(o['reinterpret'], o['reinterpret'])}"
        return spec.name + extra + ")"
    if "max_window" in o:
        return f"{spec.name}(window={o['max_window']})"
    if "scale" in o:
        return f"{spec.name}(scale={o['scale']}, offset={o['offset']}, width={o['byte_width']})"
    return spec.name

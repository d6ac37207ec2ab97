"""The serialized filter pipeline (format_spec/filter_pipeline.md) and its filter options."""
from __future__ import annotations

from typing import List

from ...core.cursor import Cursor
from ...core.fielddoc import doc
from ...filters import FilterSpec, get
from ...filters.enums import FILTER_TYPES

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
FILTER_ENUM = dict(FILTER_TYPES)


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
                    fc.group("Filter options", lambda oc: get(t).parse_options(oc, size, spec),
                             size=size)
            g = c.group(f"Filter {i + 1}", one, kind="filter")
            if specs and len(specs) == i + 1:
                g.display = get(specs[-1].type).describe(specs[-1])
                g.value = specs[-1].name
    g = cur.group(name, body, doc=fdoc)
    g.display = "[" + ", ".join(get(s.type).describe(s) for s in specs) + "]"
    g.value = [s.name for s in specs]
    g.data = specs
    return specs

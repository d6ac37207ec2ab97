"""The TileDB array as parsed (not nodes): what later files need to be read in context.

The schema parser (schema.py) fills `ArraySchema`; the fragment-metadata parser
(fragment_metadata.py) fills `FragmentMetadata`; data files and `values` use both."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from ...core.context import Context, FormatContext
from ...filters import DataInfo, FilterSpec
from ...filters.enums import VAR_NUM, datatype_size


@dataclass
class _SchemaField:
    """Shared by dimensions and attributes: name, datatype, values per cell, filters."""

    name: str
    datatype: int
    cell_val_num: int = 1
    filters: List[FilterSpec] = field(default_factory=list)

    @property
    def var(self) -> bool:
        return self.cell_val_num == VAR_NUM

    @property
    def cell_size(self) -> int:
        """Bytes of one fixed-size cell (one value's size for var-sized cells)."""
        return datatype_size(self.datatype) * (1 if self.var else self.cell_val_num)


@dataclass
class Dimension(_SchemaField):
    domain: Optional[tuple] = None       # (min, max) python values; None for var/string dims
    tile_extent: Any = None              # python value or None (null tile extent)


@dataclass
class Attribute(_SchemaField):
    fill_value: Any = None
    fill_raw: bytes = b""
    nullable: bool = False
    fill_validity: int = 0
    order: int = 0
    enumeration: Optional[str] = None


@dataclass
class DimensionLabel:
    dim_id: int
    name: str
    uri: str
    relative: bool
    attr_name: str
    order: int
    datatype: int
    cell_val_num: int
    is_external: bool


@dataclass
class ArraySchema:
    version: int
    array_type: int = 0                  # 0 dense, 1 sparse
    allows_dups: bool = False
    tile_order: int = 0
    cell_order: int = 0
    capacity: int = 10000
    coords_filters: List[FilterSpec] = field(default_factory=list)
    offsets_filters: List[FilterSpec] = field(default_factory=list)
    validity_filters: List[FilterSpec] = field(default_factory=list)
    dimensions: List[Dimension] = field(default_factory=list)
    attributes: List[Attribute] = field(default_factory=list)
    labels: List[DimensionLabel] = field(default_factory=list)
    enumerations: Dict[str, str] = field(default_factory=dict)   # name -> file name
    current_domain: Optional[list] = None  # per-dimension (min, max) or None when empty
    name: str = ""                          # file name under __schema/

    @property
    def dense(self) -> bool:
        return self.array_type == 0

    # Fragment slots: attributes, then the legacy __coords slot, then dimensions,
    # then (optional) timestamps and delete metadata. Data files are numbered by slot
    # within their kind: aN for attribute N, dN for dimension N.
    def slot_names(self, has_timestamps: bool = False, has_delete_meta: bool = False) -> List[str]:
        names = [a.name for a in self.attributes] + ["__coords"] + [d.name for d in self.dimensions]
        if has_timestamps:
            names.append("__timestamps")
        if has_delete_meta:
            names += ["__delete_timestamps", "__delete_condition_index"]
        return names

    def field(self, name: str):
        for a in self.attributes:
            if a.name == name:
                return a
        for d in self.dimensions:
            if d.name == name:
                return d
        return None

    def data_info(self, obj, role: str) -> DataInfo:
        """What the filters of `obj`'s data tiles see (role: attribute/dimension/offsets/validity)."""
        if role == "offsets":
            return DataInfo(10, 1, "offsets")
        if role == "validity":
            return DataInfo(6, 1, "validity")
        return DataInfo(obj.datatype, obj.cell_val_num, role, obj.var)

    def pipeline_for(self, obj, role: str) -> List[FilterSpec]:
        if role == "offsets":
            return self.offsets_filters
        if role == "validity":
            return self.validity_filters
        if isinstance(obj, Dimension):
            return obj.filters if obj.filters else self.coords_filters
        return obj.filters


@dataclass
class FragmentMetadata:
    """What the footer and sections of `__fragment_metadata.tdb` say."""

    version: int
    schema_name: str = ""
    dense: bool = True
    non_empty_domain: Optional[list] = None     # per dimension (min, max)
    sparse_tile_num: int = 0
    last_tile_cell_num: int = 0
    has_timestamps: bool = False
    has_delete_meta: bool = False
    file_sizes: List[int] = field(default_factory=list)
    file_var_sizes: List[int] = field(default_factory=list)
    file_validity_sizes: List[int] = field(default_factory=list)
    # per slot: numpy arrays (or None when absent); a list, or `fragment_model.SlotArrays`
    # that decodes each on first access
    tile_offsets: Sequence[Any] = field(default_factory=list)
    tile_var_offsets: Sequence[Any] = field(default_factory=list)
    tile_var_sizes: Sequence[Any] = field(default_factory=list)
    tile_validity_offsets: Sequence[Any] = field(default_factory=list)
    tile_num: int = 0
    # how the model was read (set by `fragment_model` / `fragment_metadata`): the section
    # loader, the footer, the slot names, the schema it was read with, and what the footer
    # implies; None until read
    loader: Any = None
    footer: Any = None
    slots: Optional[List[Any]] = None
    schema: Any = None
    encrypted: Optional[bool] = None
    cells_per_tile: Optional[int] = None
    cell_num: Optional[int] = None
    tile_sums: Optional[Sequence[Any]] = None
    tile_null_counts: Optional[Sequence[Any]] = None


@dataclass
class Fragment:
    name: str                 # directory name
    path: str
    t1: Optional[int] = None
    t2: Optional[int] = None
    uuid: Optional[str] = None
    version: Optional[int] = None
    metadata: Optional[FragmentMetadata] = None
    # the dataset_fs.Entry its folder was listed as (a real folder inside the dataset), or
    # None: its files then open without resolving their paths again (values.py)
    entry: Any = field(default=None, repr=False, compare=False)

    def order_key(self) -> tuple:
        """Readers order fragments by timestamp range (a name whose timestamps cannot be
        read goes last), then by name: `__100_100_…` comes after `__10_10_…`."""
        known = self.t1 is not None and self.t2 is not None
        return (0 if known else 1, self.t1 or 0, self.t2 or 0, self.name)


@dataclass
class TileDBArray:
    """The whole array directory: what every file is parsed against."""

    path: str
    schemas: Dict[str, ArraySchema] = field(default_factory=dict)   # by file name
    latest_schema: Optional[ArraySchema] = None
    fragments: List[Fragment] = field(default_factory=list)
    enumerations: Dict[str, Any] = field(default_factory=dict)
    _by_dir: Dict[str, Fragment] = field(default_factory=dict, repr=False, compare=False)

    def fragment_in(self, directory: str) -> Optional[Fragment]:
        """The fragment whose directory is `directory` (an absolute path), or None: one dict
        look-up, not a scan of every fragment (opening 1 000 fragments stays linear)."""
        if len(self._by_dir) != len(self.fragments):
            self._by_dir = {os.path.abspath(f.path): f for f in self.fragments}
        return self._by_dir.get(directory)

    def schema_for(self, name: Optional[str]) -> Optional[ArraySchema]:
        if name and name in self.schemas:
            return self.schemas[name]
        return self.latest_schema


@dataclass
class TileDBContext(FormatContext):
    """TileDB's part of a parse `Context`."""

    # what a file is parsed against when its own schema is not known by name (a lone file,
    # or the latest schema for files that name none)
    schema: Optional[ArraySchema] = None
    # the array model: fragments' schemas by the name their metadata gives
    array: Optional[TileDBArray] = None


def tiledb_context(ctx: Context) -> TileDBContext:
    return ctx.of(TileDBContext)


def with_schema(ctx: Context, schema: Optional[ArraySchema]) -> Context:
    """A context derived from `ctx` that parses against `schema`."""
    c = ctx.derive()
    tiledb_context(c).schema = schema
    return c

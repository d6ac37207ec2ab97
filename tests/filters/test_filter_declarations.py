"""A filter is defined in one place: its class registers itself and declares its options
(layout, defaults, summary, editor); the pipeline parser, the summaries and the editor all
read those declarations."""
from __future__ import annotations

import numpy as np
import tiledb
import tiledb.libtiledb as L

from arrayscope.formats import filters as F
from arrayscope.formats.filters.base import _CLASSES, Filter
from arrayscope.formats.filters.enums import Compressor, Datatype, FilterType
from arrayscope.formats.filters.options import required_size
from arrayscope.formats.tiledb.window.lab import available_filters, default_spec


def test_every_libtiledb_filter_type_has_a_class():
    lib = {int(v) for v in L.FilterType.__members__.values()}
    known = {t for t in lib if F.is_known(t)}
    assert known == lib - {FilterType.DEPRECATED}   # 17 is reserved, never written


def test_module_of_names_the_module_declaring_each_filter():
    """`filters.MODULE_OF` (the registry imports a filter's module on first use) agrees with
    the classes the modules register: every module of the package imported, each filter
    type is declared by the module the map names, and every declared type is in the map."""
    import importlib
    import pkgutil

    for m in pkgutil.iter_modules(F.__path__):
        importlib.import_module(f"{F.__name__}.{m.name}")
    declared = {t: cls.__module__.rsplit(".", 1)[-1] for t, cls in _CLASSES.items()
                if t != FilterType.NONE and t < 250}
    assert declared == {int(t): m for t, m in F.MODULE_OF.items()}
    assert len(declared) == 18


def test_a_subclass_registers_itself():
    before = dict(_CLASSES)
    try:
        class Probe(Filter):
            type = 250
        assert _CLASSES[250] is Probe
    finally:
        _CLASSES.clear()
        _CLASSES.update(before)


def test_option_declarations():
    zstd = F.get(FilterType.ZSTD)
    assert zstd.default_options() == {"compressor": Compressor.ZSTD, "level": -1}
    assert required_size(zstd.options) == 5
    dd = F.get(FilterType.DOUBLE_DELTA)
    assert dd.default_options() == {"compressor": Compressor.DOUBLE_DELTA, "level": -1,
                                    "reinterpret": Datatype.ANY}
    assert required_size(dd.options) == 5    # the reinterpret byte came later (format 20)
    spec = F.FilterSpec(FilterType.DOUBLE_DELTA, {"compressor": 6, "level": 3, "reinterpret": 0})
    assert dd.describe(spec) == "DOUBLE_DELTA(3, reinterpret=INT32)"
    assert F.get(FilterType.BIT_WIDTH_REDUCTION).describe(
        default_spec(FilterType.BIT_WIDTH_REDUCTION)) == "BIT_WIDTH_REDUCTION(window=256)"
    assert F.get(FilterType.SCALE_FLOAT).describe(default_spec(FilterType.SCALE_FLOAT)) == \
        "SCALE_FLOAT(scale=1.0, offset=0.0, width=8)"
    assert F.get(FilterType.BYTESHUFFLE).describe(default_spec(FilterType.BYTESHUFFLE)) == "BYTESHUFFLE"


def test_defaults_are_what_tiledb_writes(tmp_path):
    """A pipeline written with every filter's defaults parses to the declared defaults."""
    from arrayscope import formats

    path = str(tmp_path / "a")
    fl = tiledb.FilterList([tiledb.BitWidthReductionFilter(), tiledb.ZstdFilter(),
                            tiledb.DoubleDeltaFilter()])
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=10, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", np.int64, filters=fl)]))
    doc = formats.open(path)
    schema = next(n for n in doc.root["__schema"].iter_children() if n.kind == "file")
    pipe = next(n for n in schema.walk() if n.name == "Filters" and isinstance(n.data, list)
                and len(n.data) == 3)
    specs = pipe.data
    for s in specs:
        assert s.options == F.get(s.type).default_options(), s.name
    assert pipe.display == "[BIT_WIDTH_REDUCTION(window=256), ZSTD(-1), DOUBLE_DELTA(-1)]"


def test_editor_offers_what_can_be_applied():
    offered = {t for t, _n in available_filters()}
    assert FilterType.ZSTD in offered and FilterType.NONE not in offered
    for t in offered:
        assert type(F.get(t)).forward is not Filter.forward

"""The model-only path of `values` (formats.open(tree=False)): the node-free footer reader
gives the Footer the annotated parser gives, and decoding from the model alone gives the
bytes decoding from the whole tree gives, on arrays libtiledb wrote."""
import glob
import os

import pytest

from arrayscope import formats
from arrayscope.formats.core.context import Context
from arrayscope.formats.tiledb import PLUGIN
from arrayscope.formats.tiledb.model.array_model import TileDBContext
from arrayscope.formats.tiledb.parse.fragment_metadata import (
    load_fragment_metadata,
    parse_fragment_metadata_file,
)
from arrayscope.formats.tiledb.values.field_values import field_names
from tests.support import paths
from tests.support.tiledb_arrays import CATALOG, KEY

NAMES = sorted(CATALOG)
VERSIONED = sorted(glob.glob(os.path.join(paths.DATA, "tiledb_versions", "*", "*", "__schema")))


def _key(name):
    return KEY.encode() if "encrypt" in name else None


@pytest.mark.parametrize("name", NAMES)
def test_fast_footer_equals_annotated_footer(tiledb_array, name):
    _same_footers(tiledb_array(name), _key(name))


@pytest.mark.parametrize("schema_dir", VERSIONED, ids=lambda p: "/".join(p.split(os.sep)[-3:-1]))
def test_fast_footer_on_older_writers(schema_dir):
    """Arrays written by libtiledb 2.13 to 2.25 (format versions 16 to 22)."""
    _same_footers(os.path.dirname(schema_dir), None)


def _same_footers(uri, key, planned_seen=None):
    from arrayscope.formats.tiledb.model.footer_reader import _planned
    from arrayscope.formats.tiledb.parse.fragment_metadata import _find_unreferenced_processed

    for label in glob.glob(os.path.join(uri, "__labels", "*")):   # arrays of their own schema
        _same_footers(label, key, planned_seen)
    doc = formats.open(uri, key=key)
    found = [p for p in glob.glob(os.path.join(uri, "**", "__fragment_metadata.tdb"), recursive=True)
             if os.sep + "__labels" + os.sep not in p[len(uri):]]
    assert found or not doc.model.fragments
    for p in found:
        ctx = Context(key=key)
        ctx.format = TileDBContext(array=doc.model)
        src = doc.open_source(p)
        _node, slow = parse_fragment_metadata_file(doc, src, ctx)
        fast = load_fragment_metadata(src, ctx)
        assert fast.footer == slow.footer, p
        assert fast.footer.complete
        assert fast.encrypted == slow.encrypted
        ft = slow.footer
        planned = _planned(src.read(ft.offset, ft.size), ft.offset, slow.schema) \
            if slow.schema is not None else None
        if planned is not None:   # the layout read, not the general reader's
            _find_unreferenced_processed(src, planned, ft.offset)   # (as the loaders do)
            assert planned == slow.footer, p
            if planned_seen is not None:
                planned_seen.append(planned.version)


def test_the_footer_layout_plan_is_taken():
    """The per-schema layout (`footer_reader._planned`) reads the footers older writers
    made, for every format from 16 (libtiledb 2.13) on: the comparisons above are not all
    of the general reader."""
    seen: list = []
    for schema_dir in VERSIONED:
        _same_footers(os.path.dirname(schema_dir), None, seen)
    assert len(seen) >= 20 and set(range(16, 23)) <= set(seen), sorted(set(seen))


@pytest.mark.parametrize("name", NAMES)
def test_values_from_model_equal_values_from_tree(tiledb_array, name):
    uri = tiledb_array(name)
    full = formats.open(uri, key=_key(name))
    light = formats.open(uri, key=_key(name), tree=False)
    assert light.root.child_count() == 0 and light.model is not None
    names = field_names(full.model)
    assert field_names(light.model) == names
    for f in names:
        a = PLUGIN.values(full, f)
        b = PLUGIN.values(light, f)
        assert [(e["name"], bytes(e["raw"]), repr(e["values"]), e.get("error")) for e in a] == \
            [(e["name"], bytes(e["raw"]), repr(e["values"]), e.get("error")) for e in b], f


def test_fragments_in_timestamp_order_not_name_order(tmp_path):
    """Timestamps 1..12: as text `__10_…` sorts before `__2_…`; readers order by time."""
    import numpy as np
    import tiledb

    uri = str(tmp_path / "twelve")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 11), tile=1, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False,
                                                attrs=[tiledb.Attr("a", dtype=np.int64)]))
    for t in range(1, 13):
        with tiledb.open(uri, "w", timestamp=t) as A:
            A[t - 1:t] = np.array([100 + t], dtype=np.int64)
    listed = [os.path.basename(f.uri) for f in tiledb.array_fragments(uri)]
    assert sorted(listed) != listed  # the case this test is about
    entries = PLUGIN.values(formats.open(uri, tree=False), "a")
    assert [e["name"] for e in entries] == listed
    assert [v for e in entries for v in e["values"]] == list(range(101, 113))
    with tiledb.open(uri) as A:
        assert b"".join(bytes(e["raw"]) for e in entries) == A[:]["a"].tobytes()

"""A lazy open (formats.open(lazy=True), what the window does) builds one node per fragment
and parses a file only when it is shown; built, every node is what the eager open makes:
the dump text and JSON, the findings of verify, on every catalogue array libtiledb wrote and
on the committed fixtures of older writers, groups and SOMA included."""
import glob
import io
import json
import os

import pytest

from arrayscope import formats
from arrayscope.explorer.commands.dump import _dump_text
from arrayscope.formats.core.node import to_json
from arrayscope.formats.core.verify import verify
from tests.support import paths
from tests.support.tiledb_arrays import CATALOG, KEY

NAMES = sorted(CATALOG)
# verify's findings compared too (each verify decodes every tile: a few arrays, each shape)
VERIFIED = {"multi_fragment", "sparse_multi_fragment", "consolidated_unvacuumed",
            "consolidated_fragment_meta", "deletes", "var_nullable", "encrypted"}
FIXTURES = sorted(
    [p for p in glob.glob(os.path.join(paths.DATA, "tiledb_versions", "*", "*")) if os.path.isdir(p)]
    + [p for p in glob.glob(os.path.join(paths.DATA, "writer_rules", "*", "*")) if os.path.isdir(p)]
    + [os.path.join(paths.DATA, "tiledb_groups", "v1_2.12.3"), os.path.join(paths.DATA, "soma", "pbmc68k")])


def _key(name):
    return KEY.encode() if "encrypt" in name else None


def _dumps(path, key, lazy, with_verify):
    """The dump text, then (on the same document: what the dump released is rebuilt the
    same) the JSON dump and the verify findings."""
    doc = formats.open(path, key=key, lazy=lazy)
    out = io.StringIO()
    _dump_text(doc.root, out, 0, None)
    js = json.dumps(to_json(doc.root, doc.source_name))
    found = [f.line() for f in verify(doc)] if with_verify else []
    doc.close()
    return out.getvalue(), js, found


def _same(path, key=None, with_verify=False):
    eager = _dumps(path, key, False, with_verify)
    lazy = _dumps(path, key, True, with_verify)
    assert lazy[0].splitlines() == eager[0].splitlines()
    assert lazy[1] == eager[1]
    assert lazy[2] == eager[2]
    return eager


@pytest.mark.parametrize("name", NAMES)
def test_lazy_open_builds_the_eager_tree(tiledb_array, name):
    text, _js, _found = _same(tiledb_array(name), _key(name), name in VERIFIED)
    assert "__fragment_metadata.tdb <file>" in text or "__fragments" not in text


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: "/".join(p.split(os.sep)[-2:]))
def test_lazy_open_of_older_writers_and_groups(path):
    _same(path)


def test_lazy_open_builds_fragments_on_demand(tiledb_array):
    uri = tiledb_array("multi_fragment")
    doc = formats.open(uri, lazy=True)
    frags = doc.root["__fragments"]
    kids = list(frags.iter_children())
    assert len(kids) >= 2 and all(k.pending for k in kids)
    assert all(f.metadata is None for f in doc.model.fragments)   # nothing parsed at open
    data = kids[0]["a0.tdb"]          # a name lookup lists the fragment, not its files
    assert not kids[0].pending and data.pending
    frag = doc.model.fragment_in(os.path.join(uri, "__fragments", kids[0].name))
    assert frag.metadata is None
    assert data.child_count() > 0     # parsing the data file parses its metadata first
    assert frag.metadata is not None and frag.metadata.tile_num == 2   # cells 0..19, tile 10
    assert not kids[0]["__fragment_metadata.tdb"].pending
    assert kids[1].pending
    doc.close()

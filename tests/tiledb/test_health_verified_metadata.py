"""Health reads each fragment's metadata as verify does (issue 28 item 1,
`tiledb/health/verified_metadata.py`): verify's model path where its checks find nothing, the
file's annotated tree where they find something. The health, extents and space it gives are
the ones the tree gave everywhere (every committed TileDB array, the health arrays
tiledb-py writes, and damaged copies: a byte flipped in the metadata's sections and footer,
the file cut short, a data tile flipped), and on many small fragments only the files with a
finding (and the first, whose tile headers the tree learns) get a tree."""
from __future__ import annotations

import dataclasses
import os

import pytest

from arrayscope.formats.core.context import Context
from arrayscope.formats.core.document import Document
from arrayscope.formats.core.status import Status
from arrayscope.formats.tiledb.health import verified_metadata
from arrayscope.formats.tiledb.health.array import array_extents, array_health
from arrayscope.formats.tiledb.health.space import array_space
from arrayscope.formats.tiledb.model import layout
from arrayscope.formats.tiledb.parse import fragment_metadata
from tests.support import health_arrays as HA
from tests.support.tiledb_arrays import one_write_fragments
from tests.tiledb.test_verify_paths_differential import ARRAYS, damaged_copies

AT = 1 << 62   # a fixed reader time: `at` is in the report


def _health(path: str, key=None):
    doc = Document(path, Context(key=key))
    try:
        return (array_health(doc, AT).to_json(), dataclasses.asdict(array_extents(doc)),
                array_space(doc).to_json())
    finally:
        doc.close()


def same_as_the_tree(path: str, monkeypatch, key=None) -> None:
    verified = _health(path, key)
    with monkeypatch.context() as m:
        m.setattr(verified_metadata, "clean_metadata", lambda *a, **k: None)   # tree only
        tree = _health(path, key)
    assert verified == tree, path


def test_committed_arrays_give_the_trees_health(monkeypatch):
    for path in ARRAYS:
        same_as_the_tree(path, monkeypatch)


@pytest.mark.parametrize("name", sorted(HA.CATALOG))
def test_health_arrays_give_the_trees_health(name, tmp_path, monkeypatch):
    same_as_the_tree(HA.build(name, str(tmp_path)), monkeypatch)


def test_damaged_copies_give_the_trees_health(tmp_path, monkeypatch):
    copies = 0
    for i, path in enumerate(ARRAYS[::7]):
        for copy, _what in damaged_copies(path, str(tmp_path / f"a{i}")):
            same_as_the_tree(copy, monkeypatch)
            copies += 1
    assert copies >= 5 * len(ARRAYS[::7])


def _many(dest, n: int) -> str:
    return one_write_fragments(os.path.join(str(dest), "many"), n)


def test_only_a_file_with_a_finding_gets_a_tree(tmp_path, monkeypatch):
    n = 24
    uri = _many(tmp_path, n)
    frags = sorted(os.listdir(os.path.join(uri, layout.FRAGMENTS_DIR)))
    bad = os.path.join(uri, layout.FRAGMENTS_DIR, frags[n // 2], layout.FRAGMENT_METADATA_FILE)
    raw = bytearray(open(bad, "rb").read())
    raw[len(raw) // 3] ^= 0x5A   # inside a section: verify has a finding there
    open(bad, "wb").write(bytes(raw))
    trees = []
    parse = fragment_metadata.parse_fragment_metadata_file

    def counted(document, source, ctx):
        trees.append(source.path)
        return parse(document, source, ctx)
    monkeypatch.setattr(fragment_metadata, "parse_fragment_metadata_file", counted)
    health = _health(uri)[0]
    assert len(health["fragments"]) == n
    assert all(f["state"] == "committed" and f["cell_num"] == 10 for f in health["fragments"])
    # the damaged file's tree for each of health, extents and space; the others' only
    # while the tree learns their tile headers (a few variants of them in the first files)
    assert trees.count(bad) == 3 and len(trees) - 3 <= n // 4, trees
    from arrayscope.formats.core.verify import open_for_verify, verify_report

    doc = open_for_verify(uri, None)
    try:
        errors = {f.source for f in verify_report(doc).findings if f.status == Status.ERROR}
    finally:
        doc.close()
    assert any(frags[n // 2] in s for s in errors)   # verify's finding is in that file

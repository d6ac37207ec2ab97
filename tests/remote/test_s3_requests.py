"""How many requests opening an array on S3 costs (the README states the bound): one
listing per 1 000 objects, one read of the schema, one of each fragment's metadata (small
files are read whole in one block) and none of any data file until a tile is shown. Counted
by the S3 server itself (moto on loopback)."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core.remote import LIST_PAGE


def _array(path: str, fragments: int) -> str:
    """A dense array written by tiledb-py in `fragments` writes (one fragment each)."""
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9_999), tile=10, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int32, filters=[tiledb.ZstdFilter()])]))
    for t in range(1, fragments + 1):
        with tiledb.open(path, "w", timestamp=t) as A:
            start = (t * 10) % 9_990
            A[start:start + 10] = np.arange(10, dtype=np.int32) + t
    return path


def bound(fragments: int, objects: int) -> int:
    """The README's bound for an array with one schema and no array metadata."""
    return math.ceil(objects / LIST_PAGE) + 1 + fragments


def _open_counted(s3_server, tmp_path, fragments: int):
    s3_server.bucket("fragments")
    local = _array(str(tmp_path / f"f{fragments}"), fragments)
    url = s3_server.upload(local, f"s3://fragments/{tmp_path.name}/f{fragments}")
    objects = sum(len(files) for _d, _dirs, files in os.walk(local))
    doc, seen = s3_server.count(lambda: formats.open(url))
    return doc, seen, objects


def _check(doc, seen, fragments: int, objects: int) -> None:
    assert doc.format == "tiledb" and len(doc.model.fragments) == fragments
    assert not [n for n in doc.diagnostics() if n.status == "error"]
    gets = [r for r in seen if r[0] == "GET"]
    assert len(seen) == len(gets) == doc.fs.stats.requests <= bound(fragments, objects)
    ranged = [p for _m, p, _q, rng in gets if rng]
    assert len(ranged) == fragments + 1
    assert [p for p in ranged if "/__schema/" in p] and \
        all("/__schema/" in p or p.endswith("/__fragment_metadata.tdb") for p in ranged)  # no data file
    print(f"\n{fragments} fragment(s), {objects} objects: {len(seen)} requests "
          f"(bound {bound(fragments, objects)}), {doc.fs.stats.bytes} bytes")


@pytest.mark.parametrize("fragments", [1, 100])
def test_open_requests_are_bounded(s3_server, tmp_path, fragments):
    doc, seen, objects = _open_counted(s3_server, tmp_path, fragments)
    _check(doc, seen, fragments, objects)


@pytest.mark.slow
def test_open_requests_1000_fragments(s3_server, tmp_path):
    doc, seen, objects = _open_counted(s3_server, tmp_path, 1000)
    _check(doc, seen, 1000, objects)


def test_a_tile_is_read_when_shown(s3_server, tmp_path):
    doc, _seen, _objects = _open_counted(s3_server, tmp_path, 1)
    [data] = [n for n in doc.root.walk() if n.name == "a0.tdb"]
    assert data.pending                                   # tiles not parsed yet
    tile, seen = s3_server.count(lambda: data.child(0))
    assert tile.kind == "tile"
    assert [p.rsplit("/", 1)[-1] for _m, p, _q, _r in seen] == ["a0.tdb"]

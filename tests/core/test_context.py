"""The parse context: one typed slot per format (`Context.format`), copied by `derive`."""
from __future__ import annotations

from arrayscope.formats.core.context import Context
from arrayscope.formats.core.document import Document
from arrayscope.formats.tiledb.model.array_model import (
    ArraySchema,
    TileDBArray,
    TileDBContext,
    tiledb_context,
    with_schema,
)
from arrayscope.formats.zarr.tree import ZarrContext


def test_format_context_is_made_once_and_typed():
    ctx = Context(key=b"k" * 32)
    tdb = tiledb_context(ctx)
    assert isinstance(tdb, TileDBContext) and tdb.schema is None and tdb.array is None
    assert tiledb_context(ctx) is tdb  # the same object on every use
    tdb.array = TileDBArray("/a")
    assert ctx.of(TileDBContext).array.path == "/a"


def test_derive_copies_the_format_context():
    parent = Context(format=TileDBContext(array=TileDBArray("/a")))
    schema = ArraySchema(version=22)
    child = with_schema(parent, schema)
    assert child.format is not parent.format
    assert tiledb_context(child).schema is schema and tiledb_context(parent).schema is None
    assert tiledb_context(child).array is tiledb_context(parent).array  # the model is shared
    assert parent.derive(format=None).format is None and parent.format is not None


def test_another_format_replaces_it_and_discard_clears_it(tmp_path):
    doc = Document(str(tmp_path), Context(format=TileDBContext()))
    assert doc.ctx.of(ZarrContext).lazy_chunks is False
    assert isinstance(doc.ctx.format, ZarrContext)
    doc.discard()
    assert doc.ctx.format is None

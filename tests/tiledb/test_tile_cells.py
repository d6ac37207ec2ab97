"""formats.tiledb.window.tile_cells (the pipeline panel's paired cells) against tiledb-py: a field's
tiles, each paired with its offsets / var / validity sibling tiles, give the cells tiledb-py
reads, tile after tile, in stored order."""
from __future__ import annotations

import os

import numpy as np
import pytest
import tiledb

from arrayscope import formats  # noqa: E402
from arrayscope.formats.tiledb.parse.data_files import file_role, tile_offsets_for  # noqa: E402
from arrayscope.formats.tiledb.window.tile_cells import locate, tile_cells  # noqa: E402
from tests.support import tiledb_arrays  # noqa: E402
from tests.support.tiledb_oracle import ctx_for, fragment_cells  # noqa: E402

ARRAYS = ["var_nullable", "string_filters", "sparse_var_nullable_pipelines", "datetimes",
          "chunked_large_tile", "dtypes", "encrypted", "sparse_2d", "string_dim"]


def _norm(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _field_cells(doc, frag_dir, stem, part, key):
    """Every tile of the field whose files start with `stem`, located from `part`'s file."""
    src = doc.open_source(os.path.join(frag_dir, f"{stem}{'_var' if part == 'var' else ''}.tdb"))
    where = locate(doc, src, 0)
    assert where is not None
    role = file_role(where.schema, where.fm, os.path.basename(src.path))
    offs, _ = tile_offsets_for(where.fm, role)
    out, nulls, raws = [], [], []
    for i, o in enumerate(np.asarray(offs, dtype=np.int64)):
        w = locate(doc, src, int(o) + 3)
        assert w.tile_index == i and w.tile_count == len(offs)
        tc = tile_cells(doc, w, key)
        assert tc.error is None, tc.error
        assert not [n for n in tc.notes if "validity bytes" in n or "outside" in n], tc.notes
        vals = tc.values()
        raws += [tc.raw(j) for j in range(tc.count)]
        out += vals
        nulls += [len(out) - len(vals) + j for j in range(tc.count) if tc.is_null(j)]
    return out, nulls, raws, where


@pytest.mark.parametrize("name", ARRAYS)
def test_tile_cells_match_tiledb(tiledb_array, name):
    uri = tiledb_array(name)
    key = tiledb_arrays.KEY if name == "encrypted" else None
    kb = key.encode() if key else None
    doc = formats.open(uri, key=kb)
    schema = tiledb.ArraySchema.load(uri, ctx=ctx_for(key))
    checked = 0
    for f in tiledb.array_fragments(uri, ctx=ctx_for(key)):
        fdir = os.path.join(uri, "__fragments", os.path.basename(f.uri))
        fields = [("a", i, schema.attr(i)) for i in range(schema.nattr)]
        if f.sparse:
            fields += [("d", i, schema.domain.dim(i)) for i in range(schema.domain.ndim)]
        for kind, i, fld in fields:
            var = fld.isvar
            vals, nulls, raws, where = _field_cells(doc, fdir, f"{kind}{i}", "var" if var else "fixed", kb)
            assert where.field_name == fld.name
            assert where.var == bool(var)
            expected, covered = fragment_cells(uri, f, fld.name, key)
            assert len(vals) == len(expected), f"{name}/{fld.name}"
            mask = np.ma.getmaskarray(expected) if np.ma.isMaskedArray(expected) \
                else np.zeros(len(expected), bool)
            data = np.ma.getdata(expected)
            cov = np.ones(len(expected), bool) if covered is None else covered
            assert nulls == np.flatnonzero(mask & cov).tolist() or covered is not None
            for j in np.flatnonzero(cov & ~mask):
                got, exp = vals[j], _norm(data[j])
                if isinstance(exp, float) and exp != exp:
                    assert got != got
                elif isinstance(got, str) and isinstance(exp, str):
                    # fixed CHAR cells keep their NUL padding (values are raw)
                    assert got == exp or (not var and got.rstrip("\0") == exp), \
                        f"{name}/{fld.name}[{j}]"
                elif data.dtype.kind in "mM":
                    assert got == int(data[j].astype("int64")), f"{name}/{fld.name}[{j}]"
                elif data.dtype.kind == "S":
                    assert got == data[j].decode("latin-1") or got.rstrip("\0") == data[j].decode("latin-1")
                elif data.dtype.fields is not None or data.dtype.kind in "Vc":
                    assert raws[j] == data[j].tobytes(), f"{name}/{fld.name}[{j}]"
                else:
                    assert got == exp, f"{name}/{fld.name}[{j}]: {got!r} != {exp!r}"
            checked += 1
    assert checked


def test_locate_names_parts_and_tiles(tiledb_array):
    uri = tiledb_array("var_nullable")
    doc = formats.open(uri)
    frag = os.path.join(uri, "__fragments", sorted(os.listdir(os.path.join(uri, "__fragments")))[0])
    for fname, part, text in [("a3.tdb", "fixed", "offsets"), ("a3_var.tdb", "var", "var data"),
                              ("a3_validity.tdb", "validity", "validity"), ("a2.tdb", "fixed", "data")]:
        w = locate(doc, doc.open_source(os.path.join(frag, fname)), 0)
        assert w.part == part and w.part_text() == text
        assert w.tile_index == 0 and w.tile_count == 3
        assert w.describe().startswith("attribute '")
        assert w.paired
    w = locate(doc, doc.open_source(os.path.join(frag, "a3_var.tdb")), 0)
    tc = tile_cells(doc, w)
    assert tc.text(1) == "null" and tc.text(0) == "'x'"
    # not a data file: no location
    assert locate(doc, doc.open_source(os.path.join(frag, "__fragment_metadata.tdb")), 0) is None

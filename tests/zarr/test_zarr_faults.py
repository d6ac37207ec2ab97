"""Faults real Zarr stores have (issue 30), each on bytes zarr-python 3.1 wrote, with zarr's
own read asserted beside arrayscope's finding: consolidated metadata that disagrees with an
array's own, chunk keys spelled with the other separator, an AnnData element that lost its
array metadata, a blosc frame followed by trailing bytes."""
from __future__ import annotations

import json
import os
import shutil
import warnings

import numcodecs
import numpy as np
import pytest
import zarr

from arrayscope import formats
from arrayscope.formats.core.findings import (
    ZARR_CONSOLIDATED,
    ZARR_KEY_SEPARATOR,
    ZARR_LOST_METADATA,
    ZARR_TRAILING,
)
from arrayscope.formats.core.verify import verify_report
from arrayscope.formats.zarr import PLUGIN
from tests.support import paths

try:   # not a test dependency: where it is installed, its own read is asserted too
    import anndata
except ImportError:  # pragma: no cover - depends on the environment
    anndata = None


def report(path):
    doc = formats.open(str(path))
    try:
        return verify_report(doc)
    finally:
        doc.close()


def codes(rep, status):
    return [f for f in rep.findings if f.status == status]


# ---- consolidated metadata against the array's own ------------------------------------------
@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_shape_disagrees_after_resize(tmp_path, fmt):
    path = str(tmp_path / "s.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(path, mode="w", zarr_format=fmt)
        a = g.create_array("a", shape=(4, 4), chunks=(2, 2), dtype="<i4")
        a[...] = np.arange(16).reshape(4, 4)
        zarr.consolidate_metadata(path)
        zarr.open_array(path + "/a", mode="r+").resize((6, 4))   # after consolidation
        # zarr's readers disagree: through the consolidated metadata, and the array itself
        assert zarr.open_consolidated(path, mode="r")["a"].shape == (4, 4)
        assert zarr.open_array(path + "/a", mode="r").shape == (6, 4)
    rep = report(path)
    [w] = [f for f in rep.findings if f.code == ZARR_CONSOLIDATED]
    assert w.status == "warning"
    assert "[4, 4]" in w.message and "[6, 4]" in w.message and "shape" in w.message
    assert w.source.endswith(".zmetadata" if fmt == 2 else "zarr.json")
    assert codes(rep, "error") == []


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_dtype_disagrees_after_rewrite(tmp_path, fmt):
    path = str(tmp_path / "s.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(path, mode="w", zarr_format=fmt)
        g.create_array("b", shape=(5,), chunks=(5,), dtype="<f8")[...] = 1.5
        zarr.consolidate_metadata(path)
        g2 = zarr.open_group(path, mode="r+", use_consolidated=False)
        g2.create_array("b", shape=(5,), chunks=(5,), dtype="<i2", overwrite=True)[...] = 7
        assert zarr.open_consolidated(path, mode="r")["b"].dtype == np.dtype("<f8")
        assert zarr.open_array(path + "/b", mode="r").dtype == np.dtype("<i2")
    rep = report(path)
    [w] = [f for f in rep.findings if f.code == ZARR_CONSOLIDATED]
    assert w.status == "warning"
    want = ("<f8", "<i2") if fmt == 2 else ("float64", "int16")
    assert all(x in w.message for x in want), w.message


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_that_agrees_is_clean(tmp_path, fmt):
    path = str(tmp_path / "s.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(path, mode="w", zarr_format=fmt)
        g.create_group("inner").create_array("c", shape=(3, 2), chunks=(2, 2), dtype="|S3")
        g.create_array("d", shape=(7,), chunks=(3,), dtype=">u2")[...] = 3
        zarr.consolidate_metadata(path)
    rep = report(path)
    assert [f for f in rep.findings if f.status in ("error", "warning")] == []


# ---- chunk keys with the other separator -----------------------------------------------------
@pytest.mark.parametrize("fmt,written,declared", [(2, "/", "."), (2, ".", "/"), (3, "/", "."),
                                                  (3, ".", "/")])
def test_chunk_keys_with_the_other_separator(tmp_path, fmt, written, declared):
    path = str(tmp_path / "a.zarr")
    enc = {"name": "v2" if fmt == 2 else "default", "separator": written}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(path, shape=(4, 6), chunks=(2, 3), dtype="<i4", fill_value=-1,
                              zarr_format=fmt, chunk_key_encoding=enc)
        a[...] = np.arange(24).reshape(4, 6)
    meta_name = ".zarray" if fmt == 2 else "zarr.json"
    with open(os.path.join(path, meta_name)) as fh:
        m = json.load(fh)
    if fmt == 2:
        m["dimension_separator"] = declared
    else:
        m["chunk_key_encoding"]["configuration"]["separator"] = declared
    with open(os.path.join(path, meta_name), "w") as fh:
        json.dump(m, fh)
    # zarr looks for the other keys and finds none: every value is the fill value
    assert (zarr.open_array(path, mode="r")[...] == -1).all()
    rep = report(path)
    errs = [f for f in rep.findings if f.code == ZARR_KEY_SEPARATOR]
    assert len(errs) == 4 and all(f.status == "error" for f in errs)
    assert any("chunk [1, 1]" in f.message and repr(declared) in f.message for f in errs)
    assert rep.exit_code() == 1


def test_nested_keys_declared_nested_are_clean(tmp_path):
    path = str(tmp_path / "a.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(path, shape=(4, 6), chunks=(2, 3), dtype="<i4", zarr_format=2,
                              chunk_key_encoding={"name": "v2", "separator": "/"})
        a[...] = 1
    rep = report(path)
    assert [f for f in rep.findings if f.status in ("error", "warning")] == []


# ---- an AnnData element that lost its array metadata ----------------------------------------
ANNDATA = os.path.join(paths.DATA, "zarr")


@pytest.mark.parametrize("store,meta", [("anndata_0.12.19_zarr3.1.6_v2", ".zarray"),
                                        ("anndata_0.12.19_zarr2.18.7_v2", ".zarray"),
                                        ("anndata_0.12.19_zarr3.1.6_v3", "zarr.json")])
def test_anndata_array_without_metadata(tmp_path, store, meta):
    """obsm/X_pca of a store anndata 0.12.19 wrote loses its array metadata (its chunks and
    .zattrs remain); the v2 store's .zmetadata is gone too, so nothing describes it."""
    path = str(tmp_path / "store")
    shutil.copytree(os.path.join(ANNDATA, store, "store"), path)
    lost = os.path.join(path, "obsm", "X_pca")
    os.remove(os.path.join(lost, meta))
    if meta == ".zarray":
        if os.path.exists(os.path.join(path, ".zmetadata")):
            os.remove(os.path.join(path, ".zmetadata"))
    assert os.listdir(lost)   # the chunks remain
    # zarr reading the group itself does not see the array any more
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert "X_pca" not in zarr.open_group(path + "/obsm", mode="r", use_consolidated=False)
    if anndata is not None and meta == ".zarray":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            back = anndata.read_zarr(path)   # anndata drops the element without a word
        assert "X_pca" not in back.obsm and back.n_obs == 12
    rep = report(path)
    [e] = [f for f in rep.findings if f.code == ZARR_LOST_METADATA]
    assert e.status == "error" and "obsm/X_pca" in e.message, e.message
    assert "anndata" in e.message and "'dict'" in e.message
    assert rep.exit_code() == 1
    if meta == "zarr.json":   # the root's inline consolidated metadata still describes it
        [w] = [f for f in rep.findings if f.code == ZARR_CONSOLIDATED]
        assert w.status == "warning" and "obsm/X_pca" in w.message


def test_lost_array_metadata_in_a_plain_group(tmp_path):
    path = str(tmp_path / "g.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(path, mode="w", zarr_format=2)
        g.create_array("x", shape=(4, 4), chunks=(2, 2), dtype="<u1")[...] = 9
    os.remove(os.path.join(path, "x", ".zarray"))
    assert "x" not in zarr.open_group(path, mode="r")
    rep = report(path)
    [e] = [f for f in rep.findings if f.code == ZARR_LOST_METADATA]
    assert e.status == "error" and "4 chunk file(s)" in e.message
    assert "anndata" not in e.message


# ---- a blosc frame followed by trailing bytes -------------------------------------------------
@pytest.mark.parametrize("shuffle", [0, 1, 2])
def test_blosc_frame_with_trailing_bytes_is_a_warning(tmp_path, shuffle):
    path = str(tmp_path / "a.zarr")
    data = np.arange(40, dtype="<i4").reshape(8, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(path, shape=data.shape, chunks=(4, 5), dtype="<i4", zarr_format=2,
                              compressors=numcodecs.Blosc("lz4", 5, shuffle))
        a[...] = data
    with open(os.path.join(path, "1.0"), "ab") as fh:
        fh.write(b"\x00garbage\xff")
    assert (zarr.open_array(path, mode="r")[...] == data).all()   # zarr reads it correctly
    rep = report(path)
    assert codes(rep, "error") == []
    [w] = codes(rep, "warning")
    assert w.code == ZARR_TRAILING and "9 bytes after the blosc frame" in w.message
    doc = formats.open(path)
    try:
        [entry] = PLUGIN.values(doc, PLUGIN.field_names(doc)[0])
        assert entry["raw"] == data.tobytes()
    finally:
        doc.close()


def test_blosc_frame_shorter_than_cbytes_is_an_error(tmp_path):
    path = str(tmp_path / "a.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(path, shape=(64,), chunks=(64,), dtype="<i8", zarr_format=2,
                              compressors=numcodecs.Blosc("zstd", 5, 1))
        a[...] = np.arange(64)
    p = os.path.join(path, "0")
    raw = open(p, "rb").read()
    with open(p, "wb") as fh:
        fh.write(raw[:-3])
    with pytest.raises(Exception):
        zarr.open_array(path, mode="r")[...]
    rep = report(path)
    assert any("cbytes" in f.message for f in codes(rep, "error"))


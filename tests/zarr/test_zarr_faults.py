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
from tests.support import file_modes, paths

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
        assert_clean(path)
        zarr.open_array(path + "/a", mode="r+").resize((6, 4))   # after consolidation
        # zarr's readers disagree: through the consolidated metadata, and the array itself
        assert zarr.open_consolidated(path, mode="r")["a"].shape == (4, 4)
        assert zarr.open_array(path + "/a", mode="r").shape == (6, 4)
    rep = report(path)
    [w] = [f for f in rep.findings if f.code == ZARR_CONSOLIDATED]
    assert w.status == "warning"
    assert "[4, 4]" in w.message and "[6, 4]" in w.message and "shape" in w.message
    assert w.source.endswith(".zmetadata" if fmt == 2 else "zarr.json")
    assert codes(rep, "error") == [] and rep.exit_code() == 0


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_dtype_disagrees_after_rewrite(tmp_path, fmt):
    path = str(tmp_path / "s.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(path, mode="w", zarr_format=fmt)
        g.create_array("b", shape=(5,), chunks=(5,), dtype="<f8")[...] = 1.5
        zarr.consolidate_metadata(path)
        assert_clean(path)
        g2 = zarr.open_group(path, mode="r+", use_consolidated=False)
        g2.create_array("b", shape=(5,), chunks=(5,), dtype="<i2", overwrite=True)[...] = 7
        assert zarr.open_consolidated(path, mode="r")["b"].dtype == np.dtype("<f8")
        assert zarr.open_array(path + "/b", mode="r").dtype == np.dtype("<i2")
    rep = report(path)
    [w] = [f for f in rep.findings if f.code == ZARR_CONSOLIDATED]
    assert w.status == "warning" and ("dtype" if fmt == 2 else "data_type") in w.message
    want = ("<f8", "<i2") if fmt == 2 else ("float64", "int16")
    assert all(x in w.message for x in want), w.message
    assert codes(rep, "error") == [] and rep.exit_code() == 0


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_chunks_disagree_after_rewrite(tmp_path, fmt):
    """The array rewritten with other chunks after consolidation: a reader through the
    consolidated metadata looks for chunk keys of the old grid (and reads fill values where
    the new grid has none); verify names both chunk shapes."""
    path = str(tmp_path / "s.zarr")
    data = np.arange(12, dtype="<i4")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(path, mode="w", zarr_format=fmt)
        g.create_array("b", shape=(12,), chunks=(4,), dtype="<i4", fill_value=-1)[...] = data
        zarr.consolidate_metadata(path)
        assert_clean(path)
        g2 = zarr.open_group(path, mode="r+", use_consolidated=False)
        g2.create_array("b", shape=(12,), chunks=(6,), dtype="<i4", fill_value=-1,
                        overwrite=True)[...] = data
        assert zarr.open_consolidated(path, mode="r")["b"].chunks == (4,)
        assert zarr.open_array(path + "/b", mode="r").chunks == (6,)
        assert (zarr.open_array(path + "/b", mode="r")[...] == data).all()
    rep = report(path)
    [w] = [f for f in rep.findings if f.code == ZARR_CONSOLIDATED]
    assert w.status == "warning" and "chunk" in w.message
    assert "[4]" in w.message and "[6]" in w.message, w.message
    assert codes(rep, "error") == [] and rep.exit_code() == 0


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
    assert_clean(path)
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


@pytest.mark.parametrize("written,declared", [
    ({"name": "v2", "separator": "."}, {"name": "default", "separator": "/"}),
    ({"name": "v2", "separator": "/"}, {"name": "default", "separator": "/"}),
    ({"name": "default", "separator": "/"}, {"name": "v2", "separator": "."}),
    ({"name": "default", "separator": "."}, {"name": "v2", "separator": "."})],
    ids=["v2.-as-default", "v2/-as-default", "default-as-v2.", "default.-as-v2."])
def test_v3_chunk_keys_of_the_other_encoding(tmp_path, written, declared):
    """A v3 array whose zarr.json declares one chunk_key_encoding and whose chunks were
    written with the other ('0.1' where 'c/0/1' is looked for, or the reverse): zarr finds
    none of them, every value reads as the fill value: an error per chunk file."""
    path = str(tmp_path / "a.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(path, shape=(4, 6), chunks=(2, 3), dtype="<i4", fill_value=-1,
                              zarr_format=3, chunk_key_encoding=written)
        a[...] = np.arange(24).reshape(4, 6)
    assert_clean(path)
    with open(os.path.join(path, "zarr.json")) as fh:
        m = json.load(fh)
    m["chunk_key_encoding"] = {"name": declared["name"],
                               "configuration": {"separator": declared["separator"]}}
    with open(os.path.join(path, "zarr.json"), "w") as fh:
        json.dump(m, fh)
    assert (zarr.open_array(path, mode="r")[...] == -1).all()
    rep = report(path)
    errs = [f for f in rep.findings if f.code == ZARR_KEY_SEPARATOR]
    assert len(errs) == 4 and all(f.status == "error" for f in errs)
    assert [f for f in rep.findings if f.code != ZARR_KEY_SEPARATOR] == []
    [e] = [f for f in errs if "chunk [1, 1]" in f.message]
    looked_for = "c/1/1" if declared["name"] == "default" else "1.1"
    assert f"in the {written['name']!r} chunk key encoding" in e.message
    assert f"zarr looks for {looked_for!r}" in e.message, e.message
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


def _anndata_layout(path: str, fmt: int) -> None:
    """An AnnData store as anndata 0.12 lays it out (`encoding-type`/`encoding-version` on
    every element, obs/var dataframes with an `_index`, X dense, obsm a dict, consolidated
    metadata), written with zarr-python 3.1 itself: anndata is not a test dependency."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_group(path, mode="w", zarr_format=fmt)
        root.attrs.update({"encoding-type": "anndata", "encoding-version": "0.1.0"})
        x = root.create_array("X", shape=(12, 5), chunks=(6, 5), dtype="<f4")
        x[...] = np.arange(60, dtype="<f4").reshape(12, 5)
        x.attrs.update({"encoding-type": "array", "encoding-version": "0.2.0"})
        for name, n in (("obs", 12), ("var", 5)):
            df = root.create_group(name)
            df.attrs.update({"_index": "_index", "column-order": [] if name == "var" else ["n"],
                             "encoding-type": "dataframe", "encoding-version": "0.2.0"})
            idx = df.create_array("_index", shape=(n,), chunks=(n,), dtype=str)
            idx[...] = np.array([f"{name}{i}" for i in range(n)])
            idx.attrs.update({"encoding-type": "string-array", "encoding-version": "0.2.0"})
            if name == "obs":
                col = df.create_array("n", shape=(n,), chunks=(n,), dtype="<i8")
                col[...] = np.arange(n)
                col.attrs.update({"encoding-type": "array", "encoding-version": "0.2.0"})
        for name in ("obsm", "varm", "layers", "uns"):
            root.create_group(name).attrs.update({"encoding-type": "dict",
                                                  "encoding-version": "0.1.0"})
        zarr.consolidate_metadata(path)


@pytest.mark.parametrize("fmt", [2, 3])
def test_anndata_layout_written_by_zarr_loses_x_metadata(tmp_path, fmt):
    """X of an AnnData-like store loses its .zarray / zarr.json (its chunks and attributes
    remain; the v2 .zmetadata is lost too, the v3 root keeps its inline consolidated
    metadata): zarr reading the group does not see X; verify says the element lost its
    array metadata, naming anndata's encoding-type."""
    path = str(tmp_path / "adata.zarr")
    _anndata_layout(path, fmt)
    assert_clean(path)
    meta = ".zarray" if fmt == 2 else "zarr.json"
    os.remove(os.path.join(path, "X", meta))
    if fmt == 2:
        os.remove(os.path.join(path, ".zmetadata"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert "X" not in zarr.open_group(path, mode="r", use_consolidated=False)
        assert "obs" in zarr.open_group(path, mode="r", use_consolidated=False)
    rep = report(path)
    [e] = codes(rep, "error")
    assert e.code == ZARR_LOST_METADATA and e.source == "X", e
    assert "encoding-type is 'anndata'" in e.message and "2 chunk file(s)" in e.message
    assert rep.exit_code() == 1
    warned = [(f.code, f.source) for f in codes(rep, "warning")]
    assert warned == ([] if fmt == 2 else [(ZARR_CONSOLIDATED, "zarr.json")])


def test_lost_array_metadata_in_a_plain_group(tmp_path):
    path = str(tmp_path / "g.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(path, mode="w", zarr_format=2)
        g.create_array("x", shape=(4, 4), chunks=(2, 2), dtype="<u1")[...] = 9
    assert_clean(path)
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
    assert_clean(path)
    with open(os.path.join(path, "1.0"), "ab") as fh:
        fh.write(b"\x00garbage\xff")
    assert (zarr.open_array(path, mode="r")[...] == data).all()   # zarr reads it correctly
    rep = report(path)
    assert codes(rep, "error") == []
    [w] = codes(rep, "warning")
    assert w.code == ZARR_TRAILING and "9 bytes after the blosc frame" in w.message
    assert rep.exit_code() == 0
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



# ---- stand-ins and unreadable entries --------------------------------------------------------
LFS_POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
               b"size 2372\n")
HTML_PAGE = (b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n"
             b"<body><h1>Not Found</h1></body></html>\n")
# Where each fault lies in the store `_group_store` writes: a chunk, the array's metadata,
# the group's consolidated metadata; a folder of chunks, the array's folder.
TARGETS = {2: {"chunk": "a/0.1", "array metadata": "a/.zarray", "consolidated metadata": ".zmetadata",
               "array folder": "a"},
           3: {"chunk": "a/c/0/1", "array metadata": "a/zarr.json", "consolidated metadata": "zarr.json",
               "array folder": "a", "chunk folder": "a/c/0"}}
DATA = np.arange(16, dtype="<i4").reshape(4, 4)


def _group_store(path: str, fmt: int) -> str:
    """A consolidated group holding array `a` (4 chunks, zarr's default compressor: blosc in
    v2, zstd in v3), as zarr-python 3.1 writes it; verified clean."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(path, mode="w", zarr_format=fmt)
        g.create_array("a", shape=(4, 4), chunks=(2, 2), dtype="<i4", fill_value=-1)[...] = DATA
        zarr.consolidate_metadata(path)
    assert_clean(path)
    return path


def assert_clean(path) -> None:
    """The undamaged counterpart: no error, no warning, exit 0 (no false alarm)."""
    rep = report(path)
    assert [f for f in rep.findings if f.status in ("error", "warning")] == [] and rep.exit_code() == 0


def _zarr_read(path: str, target: str):
    """What zarr does: the array opened by its own metadata (the consolidated metadata's
    target: the group opened through it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if target == "consolidated metadata":
            return zarr.open_group(path, mode="r")["a"][...]
        return zarr.open_array(path + "/a", mode="r")[...]


@pytest.mark.parametrize("target", ["chunk", "array metadata", "consolidated metadata"])
@pytest.mark.parametrize("stand_in, named", [(LFS_POINTER, "a git-lfs pointer file"),
                                             (HTML_PAGE, "an HTML page ('404 Not Found')")],
                         ids=["git-lfs", "html"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_stand_in_file_is_named(tmp_path, fmt, target, stand_in, named):
    """A clone without `git lfs pull`, or a 404 page saved under the file's name: zarr fails
    on it (a codec's error, or invalid JSON); verify names it once, as what it is — not a
    codec's framing errors, and no chunk called a stray because its metadata did not parse."""
    path = _group_store(str(tmp_path / "s.zarr"), fmt)
    rel = TARGETS[fmt][target]
    with open(os.path.join(path, rel), "wb") as fh:
        fh.write(stand_in)
    expected = RuntimeError if target == "chunk" else json.JSONDecodeError
    with pytest.raises(expected):
        _zarr_read(path, target)
    rep = report(path)
    errors = codes(rep, "error")
    assert [(f.code, f.source) for f in errors] == [("stand-in-file", rel)], errors
    what = f"chunk file {rel.split('/', 1)[1]!r}" if target == "chunk" else os.path.basename(rel)
    assert errors[0].message.startswith(f"{what} is {named}")
    assert rep.exit_code() == 1
    # the consolidated metadata still describes the array whose own metadata is not JSON
    assert [f.code for f in codes(rep, "warning")] == \
        ([ZARR_CONSOLIDATED] if target == "array metadata" else [])


def test_stand_in_chunk_of_a_lazily_decoded_array(tmp_path):
    """400 chunks: the tree frames each chunk and verify decodes them later, one at a time;
    a gzip frame is not checked until then: the stand-in is named when its decode fails."""
    path = str(tmp_path / "big.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(path, shape=(40, 40), chunks=(2, 2), dtype="<i8", zarr_format=3,
                              compressors=zarr.codecs.GzipCodec())
        a[...] = np.arange(1600).reshape(40, 40)
    assert_clean(path)
    with open(os.path.join(path, "c", "3", "4"), "wb") as fh:
        fh.write(LFS_POINTER)
    with pytest.raises(Exception, match="[Nn]ot a gzipped file|gzip"):
        zarr.open_array(path, mode="r")[...]
    rep = report(path)
    assert [(f.status, f.code, f.source) for f in rep.findings] == [("error", "stand-in-file", "c/3/4")]
    assert rep.findings[0].message.startswith("chunk file 'c/3/4' is a git-lfs pointer file")
    assert rep.exit_code() == 1


@pytest.mark.parametrize("fmt, target", [(fmt, t) for fmt in TARGETS for t in TARGETS[fmt]])
def test_unreadable_entry(tmp_path, fmt, target):
    """A file or a folder of mode 000: zarr's read fails (PermissionError); verify says
    `unreadable-entry` there, once (not an internal error, not a parse error). Both run as a
    user whom file modes stop (tests/support/file_modes.py)."""
    path = _group_store(str(tmp_path / "s.zarr"), fmt)
    rel = TARGETS[fmt][target]
    full = os.path.join(path, rel)
    read = ("zarr.open_group(p, mode='r')['a'][...]" if target == "consolidated metadata"
            else "zarr.open_array(p + '/a', mode='r')[...]")
    with file_modes.unreadable(full):
        done = file_modes.python(f"import sys, zarr\np = sys.argv[1]\n{read}", path)
        assert done.returncode != 0 and "PermissionError" in done.stderr, done.stderr
        exit_code, found = file_modes.verify(path)
    assert exit_code == 1
    errors = [f for f in found if f["status"] == "error"]
    assert [(f["code"], f["source"]) for f in errors] == [("unreadable-entry", rel)], found
    said = "cannot list directory" if os.path.isdir(full) else "cannot be read"
    assert f"{said}: Permission denied" in errors[0]["message"]
    # the consolidated metadata describes an array whose own metadata cannot be read
    hides_metadata = target in ("array metadata", "array folder")
    assert [f["code"] for f in found if f["status"] == "warning"] == \
        (["zarr-consolidated-mismatch"] if hides_metadata else [])

"""The engine reads the opened dataset and nothing else (issue 17, issue 10 item 6).

Every case starts from bytes a real writer produced (tiledb-py, zarr 3.1.6, the committed
bionemo-scdl fixtures) and adds what an attacker or an accident adds: symbolic links out of
the dataset and in loops, FIFOs and devices where files belong, header names that climb out
of the archive. Each must give a located finding with its stable code, never a read outside
the dataset, never a hang (a generous alarm fails loudly only on a hang)."""
from __future__ import annotations

import json
import os
import shutil
import warnings

import numpy as np
import pytest

from arrayscope import formats
from arrayscope.explorer.cli import main
from arrayscope.formats.core import dataset_fs
from arrayscope.formats.core.verify import verify
from tests.support.mutations import time_limit

warnings.filterwarnings("ignore", module="zarr")

HANG = 60  # seconds: only a hang gets near this


def run(capsys, *argv):
    with time_limit(HANG):
        code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _copy(src: str, dst) -> str:
    dst = str(dst)
    shutil.copytree(src, dst, symlinks=True)
    return dst


def _outside(tmp_path) -> str:
    """A folder outside the dataset holding a secret and many files (a symlinked /etc)."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_bytes(b"TOP-SECRET-BYTES")
    for i in range(50):
        (out / f"f{i}.tdb").write_bytes(b"x" * 10)
    return str(out)


def _codes(findings):
    return {f.code for f in findings}


def _sources(doc):
    return [s.name for s in doc.sources]


def _no_outside_source(doc, outside: str):
    for s in doc.sources:
        real = os.path.realpath(getattr(s, "path", ""))
        assert not real.startswith(os.path.realpath(outside)), s.name


def _zarr_array(path: str, data=None, chunks=(4,)):
    import zarr

    data = np.arange(12, dtype="<i4") if data is None else data
    z = zarr.create_array(store=path, shape=data.shape, chunks=chunks, dtype=data.dtype,
                          compressors=None, zarr_format=3)
    z[...] = data
    return path


# ---- the DatasetFS itself ------------------------------------------------------------------
def test_entry_kinds(tmp_path):
    root = tmp_path / "ds"
    (root / "sub").mkdir(parents=True)
    (root / "f").write_bytes(b"abc")
    outside = _outside(tmp_path)
    os.symlink(outside, root / "out_dir")
    os.symlink(os.path.join(outside, "secret.txt"), root / "out_file")
    os.symlink(".", root / "dot")
    os.symlink("..", root / "sub" / "up")
    os.symlink("sub", root / "alias")
    os.symlink("f", root / "link_in")
    os.symlink("nowhere", root / "broken")
    os.mkfifo(root / "fifo")
    os.symlink("/dev/zero", root / "zero")
    fs = dataset_fs.LocalFS(str(root))
    kinds = {e.name: e.kind for e in fs.list(str(root))}
    assert kinds == {"f": "file", "sub": "dir", "out_dir": "symlink-out", "out_file": "symlink-out",
                     "dot": "loop", "alias": "alias", "link_in": "file", "broken": "broken",
                     "fifo": "special", "zero": "symlink-out"}
    assert fs.stat(str(root / "sub" / "up")).kind == "loop"
    assert fs.stat(str(root / "fifo")).detail == "FIFO (named pipe)"
    assert fs.read_bytes(str(root / "link_in"), 2) == (b"ab", True)
    assert fs.read_bytes(str(root / "f"), 3) == (b"abc", False)
    for bad in ("out_file", "fifo", "zero", "dot", "broken"):
        with pytest.raises(OSError):
            with time_limit(HANG):
                fs.open_source(str(root / bad), bad)
    with pytest.raises(dataset_fs.OutsideDatasetError):
        fs.open_source(os.path.join(outside, "secret.txt"), "x")
    with pytest.raises(OSError):
        fs.read_bytes(str(root / "fifo"), 10)


def test_listings_kept_for_one_run(tmp_path):
    """Within `listings_kept` a folder is listed once: `list` and `stat` of its entries
    answer from that listing (every entry kind as listed: a link is judged where it leads),
    what is added after is not seen until the scope ends; outside it every call lists."""
    root = tmp_path / "ds"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f").write_bytes(b"abc")
    os.symlink("f", root / "sub" / "link_in")
    os.symlink(_outside(tmp_path), root / "sub" / "out_dir")
    os.mkfifo(root / "sub" / "fifo")
    fs = dataset_fs.LocalFS(str(root))
    sub = str(root / "sub")
    plain = fs.list(sub)
    with dataset_fs.listings_kept(fs):
        first = fs.list(sub)
        assert first == plain
        fresh = dataset_fs.LocalFS(str(root))
        assert [fs.stat(e.path) for e in first] == first == [fresh.stat(e.path) for e in first]
        (root / "sub" / "g").write_bytes(b"new")
        (root / "sub" / "f").write_bytes(b"abcdef")
        assert fs.list(sub) == first   # listed once
        assert [fs.stat(e.path) for e in first] == first
        assert fs.stat(str(root / "sub" / "f")).size == 3   # as listed
        assert fs.stat(str(root / "sub" / "g")).kind == "file"   # not listed: stat'ed
        with dataset_fs.listings_kept(fs):   # nested: the outer scope's listings
            assert fs.list(sub) == first
        assert fs.list(sub) == first
    assert [e.name for e in fs.list(sub)] == ["f", "fifo", "g", "link_in", "out_dir"]
    assert fs.stat(str(root / "sub" / "f")).size == 6
    assert {e.name: e.kind for e in first} == {"f": "file", "fifo": "special",
                                               "link_in": "file", "out_dir": "symlink-out"}


@pytest.mark.parametrize("name,expected", [
    ("data.npy", "data.npy"), ("sub/./x.npy", "sub/x.npy"), ("/etc/passwd", None),
    ("../../../../etc/passwd", None), ("a/../../b", None), ("", None), ("a\0b", None),
    ("C:/x", None), ("..", None)])
def test_member_path(name, expected):
    assert dataset_fs.member_path(name) == expected


def test_source_refuses_fifo_without_blocking(tmp_path):
    from arrayscope.formats.core.source import FileSource, SpecialFileError

    p = tmp_path / "fifo"
    os.mkfifo(p)
    with time_limit(HANG), pytest.raises(SpecialFileError):
        FileSource(str(p))


# ---- case 2: symlinks out of the dataset and loops ------------------------------------------
def test_tiledb_links_out_and_loops(tiledb_array, tmp_path, capsys):
    arr = _copy(tiledb_array("dense_1d"), tmp_path / "arr")
    outside = _outside(tmp_path)
    os.symlink(outside, os.path.join(arr, "etc"))                     # a folder out
    frag = os.path.join(arr, "__fragments", os.listdir(os.path.join(arr, "__fragments"))[0])
    os.symlink(os.path.join(outside, "secret.txt"), os.path.join(frag, "a9.tdb"))  # a file out
    os.symlink(".", os.path.join(arr, "loop1"))                      # two links to "."
    os.symlink(".", os.path.join(arr, "loop2"))
    os.makedirs(os.path.join(arr, "__labels"), exist_ok=True)
    os.symlink("..", os.path.join(arr, "__labels", "selfloop"))       # back to the array
    real_files = sum(len(f) for _d, _s, f in os.walk(arr))
    with time_limit(HANG):
        doc = formats.open(arr)
        findings = verify(doc)
    _no_outside_source(doc, outside)
    assert len(doc.sources) <= real_files  # every real file once: nothing walked twice
    by_source = {f.source: f for f in findings}
    assert by_source["etc"].code == "outside-dataset"
    assert by_source[os.path.relpath(os.path.join(frag, "a9.tdb"), arr)].code == "outside-dataset"
    assert by_source["loop1"].code == by_source["loop2"].code == "symlink-loop"
    assert by_source["__labels/selfloop"].code == "symlink-loop"
    dumped = json.dumps([n.display for n in doc.root.walk()])
    assert "TOP-SECRET" not in dumped
    code, out, _ = run(capsys, "verify", arr)
    assert code != 0 and "symbolic link" in out
    for cmd in ("fragments", "stats"):   # the health listing walks the same dataset
        code, out, err = run(capsys, cmd, arr, "--json")
        assert code == 0 and "TOP-SECRET" not in out and "Traceback" not in err
        assert "a9.tdb" not in out and "f49.tdb" not in out


def test_plain_walker_loops_are_linear(tmp_path):
    root = tmp_path / "plain"
    d = root
    for i in range(12):   # twelve levels, two links to "." at each: 2^24 paths if followed
        d = d / f"d{i}"
        d.mkdir(parents=True)
        (d / "x.bin").write_bytes(b"\x01\x02")
        os.symlink(".", d / "a")
        os.symlink(".", d / "b")
    with time_limit(HANG):
        doc = formats.open(str(root))
        findings = verify(doc)
    assert len(doc.sources) == 12
    assert sum(f.code == "symlink-loop" for f in findings) == 24


def test_zarr_links_out_and_loops(tmp_path):
    arr = _zarr_array(str(tmp_path / "z.zarr"))
    outside = _outside(tmp_path)
    os.symlink(outside, os.path.join(arr, "c", "9"))
    os.symlink(".", os.path.join(arr, "c", "l1"))
    os.symlink(".", os.path.join(arr, "c", "l2"))
    os.remove(os.path.join(arr, "c", "1"))
    os.symlink(os.path.join(outside, "secret.txt"), os.path.join(arr, "c", "1"))
    with time_limit(HANG):
        doc = formats.open(arr)
        findings = verify(doc)
        entry = formats.core.registry.plugin_named("zarr").values(doc, "value")[0]
    _no_outside_source(doc, outside)
    codes = {f.source: f.code for f in findings}
    assert codes["c/9"] == "outside-dataset" and codes["c/1"] == "outside-dataset"
    assert codes["c/l1"] == codes["c/l2"] == "symlink-loop"
    assert entry["values"][:4] == [0, 1, 2, 3] and entry["values"][8:] == [8, 9, 10, 11]
    assert "outside the opened dataset" in entry["error"]


# ---- case 3: FIFOs and devices ---------------------------------------------------------------
def test_fifo_as_path_exits_2(tmp_path, capsys):
    p = tmp_path / "fifo"
    os.mkfifo(p)
    with time_limit(HANG), pytest.raises(formats.OpenError, match="FIFO"):
        formats.open(str(p))
    for cmd in ("dump", "verify"):
        code, _out, err = run(capsys, cmd, str(p))
        assert code == 2 and "FIFO" in err


def test_dev_zero_as_path_exits_2(capsys):
    code, _out, err = run(capsys, "dump", "/dev/zero")
    assert code == 2 and "character device" in err


@pytest.mark.parametrize("suffix", [".vac", ".con", ".ign"])
def test_fifo_as_commit_file(tiledb_array, tmp_path, capsys, suffix):
    arr = _copy(tiledb_array("dense_1d"), tmp_path / "arr")
    name = "__1_2_" + "0" * 32 + "_22" + suffix
    os.mkfifo(os.path.join(arr, "__commits", name))
    with time_limit(HANG):
        doc = formats.open(arr)
        findings = verify(doc)
    hit = [f for f in findings if f.source == f"__commits/{name}"]
    assert hit and hit[0].code == "special-file" and "FIFO" in hit[0].message
    for cmd in ("fragments", "stats"):
        code, _out, err = run(capsys, cmd, arr, "--json")
        assert code == 0 and "Traceback" not in err


def test_fifo_and_dev_zero_as_zarr_chunks(tmp_path, capsys):
    arr = _zarr_array(str(tmp_path / "z.zarr"))
    os.remove(os.path.join(arr, "c", "1"))
    os.mkfifo(os.path.join(arr, "c", "1"))
    os.remove(os.path.join(arr, "c", "2"))
    os.symlink("/dev/zero", os.path.join(arr, "c", "2"))
    with time_limit(HANG):
        doc = formats.open(arr)
        findings = verify(doc)
    codes = {f.source: f.code for f in findings}
    assert codes["c/1"] == "special-file" and codes["c/2"] == "outside-dataset"
    out = tmp_path / "raw.bin"
    code, _o, err = run(capsys, "values", arr, "--field", "value", "--raw", str(out))
    assert code != 0 and "FIFO" in err


# ---- case 1: SCDL header names that leave the archive ----------------------------------------
def _scdl_with_names(tmp_path, names, fi_files):
    from arrayscope.formats.core.source import FileSource
    from arrayscope.formats.scdl.header import parse_header_source
    from tests.support.scdl_builders import array_desc, fi_desc, fixture, header_bytes

    arc = _copy(fixture("basic"), tmp_path / "arc")
    src = FileSource(os.path.join(arc, "header.sch"))
    _root, header = parse_header_source(src)
    src.close()
    arrays = [array_desc(a.name, a.length, a.dtype, a.shape) for a in header.arrays]
    arrays += [array_desc(n, 4, header.arrays[0].dtype) for n in names]
    fis = [fi_desc(f.name, f.length, f.dtype, f.files, f.shape) for f in header.feature_indices]
    fis.append(fi_desc("obs_features", 1, header.feature_indices[0].dtype, fi_files))
    with open(os.path.join(arc, "header.sch"), "wb") as fh:
        fh.write(header_bytes(arrays, fis, version=header.version))
    return arc


def test_scdl_header_names_never_read_outside(tmp_path, capsys):
    outside = _outside(tmp_path)
    secret = os.path.join(outside, "secret.txt")
    climb = os.path.relpath(secret, str(tmp_path / "arc"))
    assert climb.startswith("..")
    arc = _scdl_with_names(tmp_path, [secret, climb], [climb, secret])
    with time_limit(HANG):
        doc = formats.open(arc)
        findings = verify(doc)
    _no_outside_source(doc, outside)
    outside_findings = [f for f in findings if f.code == "outside-dataset"]
    assert len(outside_findings) == 4 and all(f.source == "header.sch" for f in outside_findings)
    assert all(f.status == "error" for f in outside_findings)
    for name in (secret, climb):
        out = tmp_path / "raw.bin"
        code, _o, err = run(capsys, "values", arc, "--field", name, "--raw", str(out))
        assert code != 0 and "outside the archive" in err
        assert out.read_bytes() == b""  # nothing of the outside file copied
    # the real arrays still decode
    code, _o, _e = run(capsys, "values", arc, "--field", "DATA", "--json")
    assert code == 0


# ---- case 5: one bad value is one error node ---------------------------------------------------
ZARR2 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "zarr",
                     "v2_2.18.7", "big_endian")   # zarr 2.18.7: a >i4, b >f8, c >u2, s >U3


def _craft_zarray(tmp_path, edit) -> str:
    arr = _copy(ZARR2, tmp_path / "z")
    p = os.path.join(arr, ".zarray")
    with open(p) as fh:
        text = fh.read()
    with open(p, "w") as fh:
        fh.write(edit(text))
    return arr


def _tree_survives(arr):
    with time_limit(HANG):
        doc = formats.open(arr)
        findings = verify(doc)
    assert not any("internal" in f.message for f in findings), findings
    return doc, findings


def test_huge_json_integer_is_one_error_node(tmp_path):
    arr = _craft_zarray(tmp_path, lambda t: t.replace('"zarr_format": 2',
                                                      '"zarr_format": 2, "x": ' + "9" * 5000))
    doc, findings = _tree_survives(arr)
    bad = [f for f in findings if f.status == "error"]
    assert len(bad) == 1 and "5000 digits" in bad[0].message and bad[0].source == ".zarray"
    # the rest of the array is intact: the real values of zarr 2.18.7
    entry = formats.core.registry.plugin_named("zarr").values(doc, "c")[0]
    assert "error" not in entry and len(entry["values"]) == 6


@pytest.mark.parametrize("field,typestr", [("c", "|V0"), ("s", "<U0")])
def test_zero_size_struct_field_is_one_node(tmp_path, field, typestr):
    arr = _craft_zarray(tmp_path, lambda t: json.dumps(
        {**json.loads(t), "dtype": [[n, typestr if n == field else ts]
                                    for n, ts in json.loads(t)["dtype"]]}))
    doc, findings = _tree_survives(arr)
    zero = [f for f in findings if "has 0 bytes" in f.message]
    assert zero and all(f.status == "warning" for f in zero)
    rec = doc.root.find("0")
    assert rec is not None  # chunk nodes are still there
    code_ok = formats.core.registry.plugin_named("zarr").values(doc, field)[0]
    assert set(code_ok["values"]) == {""}


def test_invalid_utf32_fill_is_one_error_node(tmp_path):
    import base64

    def edit(text):
        m = json.loads(text)
        fill = bytearray(base64.b64decode(m["fill_value"]))
        fill[14:18] = (0x110000).to_bytes(4, "big")   # first character of field s
        m["fill_value"] = base64.b64encode(bytes(fill)).decode()
        return json.dumps(m)
    doc, findings = _tree_survives(_craft_zarray(tmp_path, edit))
    bad = [f for f in findings if f.status == "error"]
    assert len(bad) == 1 and "UTF-32" in bad[0].message and bad[0].source == "fill record"


# ---- case 6 (and case 5's "²"): chunk keys are ASCII digits ------------------------------------
@pytest.mark.parametrize("fake", ["²", "٠", "２"])
def test_lookalike_chunk_keys_rejected(tmp_path, fake):
    arr = _zarr_array(str(tmp_path / "z.zarr"))
    with open(os.path.join(arr, "c", "0"), "rb") as fh:
        chunk0 = fh.read()
    with open(os.path.join(arr, "c", fake), "wb") as fh:   # a real chunk's bytes, a fake key
        fh.write(chunk0)
    doc, findings = _tree_survives(arr)
    hit = [f for f in findings if f.source == f"c/{fake}"]
    assert hit and "not a chunk key" in hit[0].message
    entry = formats.core.registry.plugin_named("zarr").values(doc, "value")[0]
    assert entry["values"] == list(range(12)) and "error" not in entry


# ---- issue 15 item 4: 0-d arrays of zarr v3 have the chunk key "c" -----------------------------
@pytest.mark.parametrize("dtype,value", [("<f8", 3.5), (str, "hello")])
def test_zero_d_chunk_key_c(tmp_path, dtype, value):
    import zarr

    path = str(tmp_path / "z0")
    z = zarr.create_array(store=path, shape=(), dtype=dtype, zarr_format=3)
    z[()] = value
    assert sorted(os.listdir(path)) == ["c", "zarr.json"]
    doc, findings = _tree_survives(path)
    assert not any("not a chunk key" in f.message for f in findings)
    chunk = doc.root["c"]
    assert chunk.display.startswith("chunk []")
    assert not findings
    assert formats.core.registry.plugin_named("zarr").values(doc, "value")[0]["values"] == [value]


# ---- issue 15 item 3 and issue 10 item 6: metadata documents read whole, with limits ----------
def test_v3_root_with_inline_consolidated_metadata_over_64k(tmp_path):
    import zarr

    path = str(tmp_path / "store")
    root = zarr.open_group(path, mode="w", zarr_format=3)
    for i in range(400):   # anndata-like: many small arrays, consolidated inline
        a = root.create_array(f"col_{i:04d}", shape=(3,), dtype="<i4",
                              attributes={"encoding-type": "array", "encoding-version": "0.2.0"})
        a[:] = [i, i + 1, i + 2]
    zarr.consolidate_metadata(path)
    size = os.path.getsize(os.path.join(path, "zarr.json"))
    assert size > 1 << 16
    doc, findings = _tree_survives(path)
    assert doc.root.display.endswith("group") and not any(f.status == "error" for f in findings)
    assert len(doc.model.arrays) == 400


def test_zarr_json_nested_100000_deep(tmp_path, capsys):
    path = _zarr_array(str(tmp_path / "z.zarr"))
    with open(os.path.join(path, "zarr.json"), "w") as fh:
        fh.write("[" * 100_000 + "]" * 100_000)
    doc, findings = _tree_survives(path)
    assert any("nesting deeper" in f.message for f in findings)
    code, _o, err = run(capsys, "verify", path)
    assert code == 1 and "Traceback" not in err


def test_metadata_document_over_the_limit(tmp_path, monkeypatch):
    from arrayscope.formats.core import jsontree

    path = _zarr_array(str(tmp_path / "z.zarr"))
    monkeypatch.setattr(jsontree, "MAX_DOCUMENT_BYTES", 100)
    doc, findings = _tree_survives(path)
    hit = [f for f in findings if f.code == "size-over-limit"]
    assert hit and hit[0].source == "zarr.json"


# ---- case 9: offsets that go backwards cost linear work ----------------------------------------
def test_next_at_or_after_matches_brute_force():
    import random

    from arrayscope.formats.tiledb.parse.data_files import _next_at_or_after

    rng = random.Random(9)
    for _ in range(300):
        n, fsize = rng.randint(0, 12), rng.randint(0, 60)
        offs = np.array([rng.randint(0, 70) for _ in range(n)], dtype=np.uint64)
        brute = []
        for i in range(n):
            nxt = [int(x) for x in offs[i + 1:] if int(offs[i]) <= int(x) <= fsize]
            brute.append(nxt[0] if nxt else fsize)
        assert _next_at_or_after(offs, fsize) == brute


def _lines_parsing_with_offsets(doc, n: int) -> int:
    """Line events inside data_files.py while a real data file is parsed with `n` tile
    offsets that go back and forth (a sawtooth): a work count, not a time."""
    import sys

    from arrayscope.formats.tiledb.parse import data_files

    arr = doc.model
    frag = arr.fragments[0]
    schema = arr.latest_schema
    path = os.path.join(frag.path, "a0.tdb")
    src = doc.source_by_name(doc.relname(path))
    offs = np.array([(i * 7) % 40 for i in range(n)], dtype=np.uint64)
    real = data_files.tile_offsets_for
    data_files.tile_offsets_for = lambda fm, role: (offs, None)
    count = [0]
    target = data_files.__file__

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != target:
            return None
        if event == "line":
            count[0] += 1
        return tracer
    sys.settrace(tracer)
    try:
        node = data_files.parse_data_file(doc, src, doc.ctx, frag.metadata, schema, "a0.tdb")
    finally:
        sys.settrace(None)
        data_files.tile_offsets_for = real
    assert any(n.status == "error" and "before tile" in (n.message or "") for n in node.walk())
    return count[0]


def test_backward_tile_offsets_linear(tiledb_array):
    doc = formats.open(tiledb_array("dense_1d"))
    small = _lines_parsing_with_offsets(doc, 500)
    big = _lines_parsing_with_offsets(doc, 4000)
    assert big < 10 * small   # 8x the tiles: linear is ~8x, the old quadratic scan was ~50x


# ---- case 10: a key that is not bytes is an error, never "?" --------------------------------------
def test_non_latin1_key_is_a_clear_error(tiledb_array, capsys, monkeypatch):
    from arrayscope.formats.core.context import KeyError_, load_key

    monkeypatch.setenv("ARRAYSCOPE_KEY", "ключ" + "0" * 28)
    with pytest.raises(KeyError_, match="not one byte"):
        load_key()
    code, _o, err = run(capsys, "verify", tiledb_array("encrypted"))
    assert code == 2 and "not one byte" in err and "Traceback" not in err
    monkeypatch.setenv("ARRAYSCOPE_KEY", "0123456789abcdef" * 2)   # 32 Latin-1 characters
    assert load_key() == b"0123456789abcdef" * 2


# ---- case 4: declared sizes bounded by what the format allows ----------------------------------
def _zstd_array(path: str) -> str:
    import tiledb

    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=100, dtype=np.int32))
    schema = tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int32, filters=tiledb.FilterList([tiledb.ZstdFilter()]))])
    tiledb.Array.create(path, schema)
    with tiledb.open(path, "w") as A:
        A[:] = np.arange(100, dtype=np.int32)
    return path


def _incompressible_array(path: str, var: bool) -> str:
    """One tile of 10 000 random cells (zstd): a data file of ~40 KB, room for the bomb
    inside the size its fragment metadata gives it (libtiledb reads no further)."""
    import tiledb

    rng = np.random.default_rng(5)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9999), tile=10000, dtype=np.int32))
    attr = tiledb.Attr("a", dtype=str if var else np.int32, var=var,
                       filters=tiledb.FilterList([tiledb.ZstdFilter()]))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[attr]))
    with tiledb.open(path, "w") as A:
        if var:
            letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype="S1")
            A[:] = np.array([b"".join(rng.choice(letters, 6)).decode() for _ in range(10000)],
                            dtype=object)
        else:
            A[:] = rng.integers(-2 ** 31, 2 ** 31 - 1, 10000, dtype=np.int32)
    return path


@pytest.mark.parametrize("var", [False, True], ids=["fixed", "var"])
def test_tiledb_decompression_bomb_not_decoded(tmp_path, capsys, var):
    """A consistent 1 GiB bomb: one chunk that says 1 GiB and whose zstd frame really inflates
    to 1 GiB, in the ~40 KB the fragment metadata gives the file (zero-padded to it). The
    schema allows 10 000 cells × 4 B per fixed tile; a var tile is bounded by the var tile
    size the fragment metadata records."""
    import resource
    import struct

    import zstandard

    arr = _incompressible_array(str(tmp_path / "arr"), var)
    frags = os.path.join(arr, "__fragments")
    a0 = os.path.join(frags, os.listdir(frags)[0], "a0_var.tdb" if var else "a0.tdb")

    giga = 1 << 30
    frame = zstandard.ZstdCompressor(level=19).compress(bytes(giga // 8)) * 8  # 8 frames, 1 GiB
    md = struct.pack("<II", 0, 1) + struct.pack("<II", giga, len(frame))
    declared = os.path.getsize(a0)
    bomb = struct.pack("<Q", 1) + struct.pack("<III", giga, len(frame), len(md)) + md + frame
    assert len(bomb) < declared < 100_000
    with open(a0, "wb") as fh:
        fh.write(bomb.ljust(declared, b"\0"))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with time_limit(HANG):
        doc = formats.open(arr)
        findings = verify(doc)
    hit = [f for f in findings if f.code == "size-over-limit"]
    expected = "fragment metadata gives var tile 1" if var else "schema allows at most 40000"
    assert hit and hit[0].source == os.path.relpath(a0, arr) and expected in hit[0].message
    code, _o, err = run(capsys, "values", arr, "--field", "a", "--raw", str(tmp_path / "o"))
    assert code != 0 and expected in err
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 256 * 1024   # nothing near 1 GiB was allocated


def test_meta_generic_tile_bomb_capped(tmp_path):
    """A `__meta` generic tile (written by tiledb-py, [GZIP] pipeline) rewritten to hold one
    consistent 1 GiB chunk: nothing bounds it in the format, so it is capped, never decoded."""
    import resource
    import struct
    import zlib

    import tiledb

    arr = str(tmp_path / "arr")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.int32))
    tiledb.Array.create(arr, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32)]))
    with tiledb.open(arr, "w") as A:
        A[:] = np.arange(10, dtype=np.int32)
        A.meta["k"] = "v"
    meta_dir = os.path.join(arr, "__meta")
    meta = os.path.join(meta_dir, os.listdir(meta_dir)[0])
    with open(meta, "rb") as fh:
        real = fh.read()
    psize = struct.unpack_from("<I", real, 30)[0]
    header = bytearray(real[:34 + psize])
    giga = 1 << 30
    z = zlib.compressobj(1)
    block = bytes(64 << 20)
    stream = b"".join(z.compress(block) for _ in range(giga // len(block))) + z.flush()
    del block
    md = struct.pack("<IIII", 0, 1, giga, len(stream))
    tile = struct.pack("<QIII", 1, giga, len(stream), len(md)) + md + stream
    struct.pack_into("<QQ", header, 4, len(tile), giga)
    with open(meta, "wb") as fh:
        fh.write(bytes(header) + tile)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with time_limit(HANG):
        doc = formats.open(arr)
        findings = verify(doc)
    hit = [f for f in findings if f.code == "size-over-limit"]
    assert hit and hit[0].source.startswith("__meta/") and "not decoded" in hit[0].message
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 256 * 1024
    entry = formats.core.registry.plugin_named("tiledb").values(doc, "a")[0]
    assert entry["values"] == list(range(10))   # the array itself is untouched


def test_zarr_declaring_2gib_without_chunks_is_refused(tmp_path, capsys):
    import zarr

    path = str(tmp_path / "big.zarr")
    zarr.create_array(store=path, shape=(1 << 31,), chunks=(1 << 20,), dtype="u1", zarr_format=3)
    assert os.listdir(path) == ["zarr.json"]   # zarr writes no chunk for an untouched array
    out = tmp_path / "raw.bin"
    code, _o, err = run(capsys, "values", path, "--field", "value", "--raw", str(out))
    assert code != 0 and "absent" in err and "fill values made from metadata alone" in err
    assert not out.exists() or out.stat().st_size == 0


def test_zarr_partly_written_array_still_decodes(tmp_path):
    """The fill bound leaves ordinary arrays alone: absent chunks within it give the fill."""
    import zarr

    path = str(tmp_path / "part.zarr")
    z = zarr.create_array(store=path, shape=(40,), chunks=(10,), dtype="<i4", fill_value=-1,
                          zarr_format=3)
    z[:10] = np.arange(10)
    doc = formats.open(path)
    entry = formats.core.registry.plugin_named("zarr").values(doc, "value")[0]
    assert entry["values"] == list(range(10)) + [-1] * 30 and "error" not in entry


# ---- case 8: a file that shrinks while open never kills the process ------------------------------
SHRINK_SCRIPT = r"""
import os, sys
from arrayscope import formats
from arrayscope.formats.core.node import to_json
path = sys.argv[1]
doc = formats.open(path)
src = doc.sources[0]
n = src.size
assert len(src.view(0, n)) == n                 # mapped once, whole
assert src.read(n - 16, 16) == bytes(16)        # small window, read
with open(path, "r+b") as fh:                   # the file shrinks under the open document
    fh.truncate(100)
small = src.read(n // 2, 16)                    # beyond the new end: short, no SIGBUS
large = src.view(1 << 20, 4 << 20)
arr = src.array(n // 2 + 64, 8, "<u8")
print(len(small), len(large), len(arr))
to_json(doc.root, doc.source_name)
"""


def test_file_shrinking_while_open_reads_short(tmp_path):
    import subprocess
    import sys

    p = tmp_path / "big.bin"
    p.write_bytes(bytes(8 << 20))
    r = subprocess.run([sys.executable, "-c", SHRINK_SCRIPT, str(p)], capture_output=True,
                       text=True, timeout=HANG)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])   # -7 would be SIGBUS
    assert r.stdout.split() == ["0", "0", "0"]


# ---- case 7: values --raw says when decoding failed ---------------------------------------------
def test_values_raw_exits_nonzero_on_undecodable_zarr_chunk(tmp_path, capsys):
    arr = _copy(ZARR2, tmp_path / "z")
    chunk = os.path.join(arr, "0")
    with open(chunk, "rb") as fh:
        data = fh.read()
    with open(chunk, "wb") as fh:
        fh.write(data[:len(data) // 2])   # a zstd frame cut in half
    out = tmp_path / "raw.bin"
    code, _o, err = run(capsys, "values", arr, "--field", "a", "--raw", str(out))
    assert code == 1 and "0:" in err
    code_json, _o, _e = run(capsys, "values", arr, "--field", "a", "--json")
    assert code_json == 1   # the same verdict either way


def test_values_raw_exits_nonzero_on_undecodable_tiledb_tile(tmp_path, capsys):
    arr = _zstd_array(str(tmp_path / "arr"))
    frags = os.path.join(arr, "__fragments")
    a0 = os.path.join(frags, os.listdir(frags)[0], "a0.tdb")
    with open(a0, "r+b") as fh:
        data = bytearray(fh.read())
        # u64 chunks, u32 ×3 chunk header, 16 B compression table, then the zstd frame:
        assert data[36:40] == b"\x28\xb5\x2f\xfd"
        data[36:40] = bytes(4)            # its magic number zeroed
        fh.seek(0)
        fh.write(data)
    code, _o, err = run(capsys, "values", arr, "--field", "a", "--raw", str(tmp_path / "o"))
    assert code == 1 and "a0.tdb" in err


def test_zarr_chunk_bomb_not_decoded_at_open_or_verify(tmp_path, monkeypatch):
    """zarr 3.1.6 writes a uint8 array of zero-filled 8 MiB chunks (zstd): a few hundred bytes
    stored that declare (and really inflate to) 8 MiB each. With the decode budget set below
    that (the real one is 256 MiB: the same code path), the tree and verify decode nothing
    and report each chunk; nothing decoded exists afterwards (a work count, not a time)."""
    import zarr

    from arrayscope.formats.zarr import chunk as zchunk

    path = str(tmp_path / "bomb.zarr")
    z = zarr.create_array(store=path, shape=(1 << 24,), chunks=(1 << 23,), dtype="u1",
                          fill_value=7, zarr_format=3)
    z[:] = np.zeros(1 << 24, dtype="u1")   # zeros, not the fill: both chunks are stored
    stored = sum(os.path.getsize(os.path.join(d, f)) for d, _s, fs in os.walk(path) for f in fs)
    assert stored < 1 << 16 and sorted(os.listdir(os.path.join(path, "c"))) == ["0", "1"]
    monkeypatch.setattr(zchunk, "DECODE_BUDGET", 1 << 20)
    with time_limit(HANG):
        doc = formats.open(path)
        findings = verify(doc)
    hit = [f for f in findings if f.code == "size-over-limit"]
    assert {f.source for f in hit} == {"c/0", "c/1"}
    assert [s.name for s in doc.derived] == ["fill record"]   # no chunk decoded, open or verify
    monkeypatch.undo()
    clean = formats.open(path)  # under the real budget the same chunks decode, no finding
    assert not [f for f in verify(clean) if f.status == "error" or f.code == "size-over-limit"]


# ---- folders kept from one open to the next ------------------------------------------------
def test_a_kept_folder_swapped_for_a_link_is_not_followed(tmp_path):
    """Opens start from the folder descriptor kept by the last one (confined.RECENT_FOLDERS):
    a folder swapped for a link to the outside after that is walked afresh, and refused."""
    from arrayscope.formats.core import confined

    root = tmp_path / "ds"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f").write_bytes(b"inside")
    outside = tmp_path / "outside"
    (outside / "b").mkdir(parents=True)
    (outside / "b" / "f").write_bytes(b"SECRET")
    real = os.path.realpath(root)
    path = os.path.join(real, "a", "b", "f")

    def read() -> bytes:
        fd = confined.open_beneath(real, path, os.O_RDONLY)
        try:
            return os.read(fd, 100)
        finally:
            os.close(fd)
    assert read() == b"inside"
    os.rename(root / "a", root / "a.swap")
    os.symlink(outside, root / "a")
    with pytest.raises(OSError):
        read()
    os.unlink(root / "a")
    os.rename(root / "a.swap", root / "a")
    assert read() == b"inside"
    # a folder removed and made again at the same path: the new one is read
    shutil.rmtree(root / "a")
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f").write_bytes(b"rewritten")
    assert read() == b"rewritten"

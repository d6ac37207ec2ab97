"""`values` on arrays of many fragments (the model-only path): fragment folders listed once,
their files opened without resolving paths again, the tile offsets of every fragment decoded
together (`fragment_model.prefetch_u64s`) — and still the bytes tiledb-py reads, the errors the
annotated tree gives, and nothing read through a link that leaves the dataset."""
import gc
import os
import shutil

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core import compiled
from arrayscope.formats.core.dataset_fs import DIR, FILE, LocalFS
from arrayscope.formats.tiledb import PLUGIN
from arrayscope.formats.tiledb.model.fragment_model import SectionLoader, prefetch_u64s
from arrayscope.formats.tiledb.parse.rawtile import GT_HEAD_SIZE, chunk_table, peek_generic_tile
from arrayscope.formats.tiledb.values import field_values as V

N = 40   # more than one locate batch (compiled.TUNING.locate_batch)
M = 300  # cells per fragment


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """N dense fragments of [ByteShuffle, Zstd] int64 cells, written by tiledb-py."""
    uri = str(tmp_path_factory.mktemp("many") / "arr")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, N * M - 1), tile=M, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ByteShuffleFilter(),
                                                  tiledb.ZstdFilter()])]))
    rng = np.random.default_rng(7)
    data = np.cumsum(rng.integers(-5, 6, N * M)).astype(np.int64)
    for i in range(N):
        with tiledb.open(uri, "w", timestamp=i + 1) as A:
            A[i * M:(i + 1) * M] = data[i * M:(i + 1) * M]
    return uri


def _copy(src, tmp_path):
    dst = str(tmp_path / "arr")
    shutil.copytree(src, dst)
    return dst


def _entries(doc, field="a"):
    return [(e["name"], bytes(e["raw"]), repr(e["values"]), e.get("error"))
            for e in PLUGIN.values(doc, field)]


def test_values_equal_tiledb_py_and_the_tree(many):
    light = formats.open(many, tree=False)
    got = PLUGIN.values(light, "a")
    assert len(got) == N and not any(e.get("error") for e in got)
    with tiledb.open(many) as A:
        assert b"".join(bytes(e["raw"]) for e in got) == A[:]["a"].tobytes()
    assert _entries(light) == _entries(formats.open(many))
    # every fragment was listed as a real folder and its tile offsets decoded in a batch
    frags = light.model.fragments
    assert all(f.entry is not None and f.entry.kind == DIR for f in frags)
    assert all(("tile_offsets", 0) in f.metadata.loader.cache for f in frags)


@pytest.mark.parametrize("overlap", [True, False])
def test_batches_decoded_while_the_next_is_read(many, tmp_path, monkeypatch, overlap):
    """Batches of a few files (each decoded on its own thread while the next one's
    fragments are read, or in turn): the bytes tiledb-py reads, and a damaged data file's
    error on its own fragment only, whichever batch it falls in."""
    monkeypatch.setattr(compiled, "TUNING",
                        compiled.tuned(batch_files=5, locate_batch=3, overlap=overlap))
    finished: list = []
    real = V._finish

    def spy(deferred, *a):
        finished.append(len(deferred))
        return real(deferred, *a)
    monkeypatch.setattr(V, "_finish", spy)
    got = PLUGIN.values(formats.open(many, tree=False), "a")
    assert len(finished) >= 7 and sum(finished) == N, finished
    with tiledb.open(many) as A:
        assert b"".join(bytes(e["raw"]) for e in got) == A[:]["a"].tobytes()
    uri = _copy(many, tmp_path)
    doc = formats.open(uri, tree=False)
    frags = sorted(doc.model.fragments, key=lambda f: f.order_key())
    for k in (4, 17, N - 1):   # in the first, a middle and the last batch
        with open(os.path.join(frags[k].path, "a0.tdb"), "r+b") as fh:
            fh.seek(-8, os.SEEK_END)
            fh.write(b"\xff" * 8)
    a = _entries(formats.open(uri, tree=False))
    assert [e[0] for e in a if e[3]] == [frags[k].name for k in (4, 17, N - 1)]
    assert a == _entries(formats.open(uri))


def test_prefetch_equals_decoding_each_section(many):
    doc = formats.open(many, tree=False)
    V.values(doc, "a")
    for f in doc.model.fragments:
        fm = f.metadata
        batched = fm.loader.cache[("tile_offsets", 0)]
        alone = SectionLoader(fm.loader.source, fm.footer, None, fm.schema)
        assert np.array_equal(alone.u64s("tile_offsets", 0), batched)
        assert batched.dtype == alone.u64s("tile_offsets", 0).dtype
        assert list(batched) == [0]   # one tile per fragment, at the start of a0.tdb


def test_prefetch_leaves_a_damaged_section_to_the_single_decoder(many, tmp_path):
    """A tile-offsets section whose compressed bytes are damaged: the batch leaves it, the section
    decoder reports it, and the entry's error is the one the annotated tree gives."""
    uri = _copy(many, tmp_path)
    doc = formats.open(uri, tree=False)
    frag = sorted(doc.model.fragments, key=lambda f: f.order_key())[3]
    path = os.path.join(frag.path, "__fragment_metadata.tdb")
    fm = V._metadata(doc, doc.model, frag)
    off = fm.footer.sections["tile_offsets"][0]
    head = peek_generic_tile(fm.loader.source, off)
    start = off + GT_HEAD_SIZE + head[1]
    (_orig, filt, _md, _mdl, data), = chunk_table(fm.loader.source, start, start + head[2])
    with open(path, "r+b") as fh:   # the section's compressed bytes: garbage
        fh.seek(data)
        fh.write(b"\xff" * filt)
    light = formats.open(uri, tree=False)
    loaders = [(V._metadata(light, light.model, f).loader, "tile_offsets", 0)
               for f in light.model.fragments]
    prefetch_u64s(loaders)
    broken = [ld for ld, _k, _s in loaders if ("tile_offsets", 0) not in ld.cache]
    assert len(broken) == 1 and broken[0].source.size == os.path.getsize(path)
    assert broken[0].u64s("tile_offsets", 0) is None and broken[0].errors
    a, b = _entries(formats.open(uri, tree=False)), _entries(formats.open(uri))
    assert a == b
    errors = [e for e in a if e[3]]
    assert [e[0] for e in errors] == [frag.name] and off >= 0
    assert sum(1 for e in a if not e[3]) == N - 1


def test_a_data_file_linked_out_of_the_dataset_is_not_read(many, tmp_path):
    uri = _copy(many, tmp_path)
    outside = tmp_path / "outside.tdb"
    frag = sorted(formats.open(uri, tree=False).model.fragments, key=lambda f: f.order_key())[5]
    data = os.path.join(frag.path, "a0.tdb")
    shutil.copy(data, outside)
    os.remove(data)
    os.symlink(str(outside), data)
    light = _entries(formats.open(uri, tree=False))
    assert light == _entries(formats.open(uri))
    bad = [e for e in light if e[3]]
    assert [e[0] for e in bad] == [frag.name] and "missing" in bad[0][3]


def test_a_fragment_folder_link_is_not_a_fragment(many, tmp_path):
    uri = _copy(many, tmp_path)
    fdir = os.path.join(uri, "__fragments")
    first = sorted(os.listdir(fdir))[0]
    os.symlink(os.path.join(fdir, first), os.path.join(fdir, "__9_9_" + "0" * 32 + "_22"))
    light = formats.open(uri, tree=False)
    assert len(light.model.fragments) == N
    assert _entries(light) == _entries(formats.open(uri))


def test_local_fs_subdirs_and_read_in(tmp_path):
    root = tmp_path / "ds"
    (root / "d" / "sub").mkdir(parents=True)
    (root / "d" / "f.bin").write_bytes(b"abc")
    (root / "d" / "big.bin").write_bytes(b"x" * 100)
    os.symlink(str(root / "d" / "sub"), str(root / "d" / "alias"))
    os.symlink(str(tmp_path), str(root / "d" / "out"))
    (tmp_path / "secret").write_bytes(b"s")
    os.symlink(str(tmp_path / "secret"), str(root / "d" / "sub" / "link.bin"))
    os.mkfifo(str(root / "d" / "sub" / "fifo"))
    fs = LocalFS(str(root))
    dirs = fs.subdirs(str(root / "d"))
    assert [(e.name, e.rel, e.kind) for e in dirs] == [("sub", "d/sub", DIR)]
    assert [e.name for e in fs.list(str(root / "d")) if e.is_dir] == ["sub"]   # the same
    here = fs.list(str(root))[0]
    entry, data = fs.read_in(here, "f.bin", 10)
    assert (entry.rel, entry.kind, entry.size, data) == ("d/f.bin", FILE, 3, b"abc")
    entry, data = fs.read_in(here, "big.bin", 10)
    assert (entry.size, data) == (100, None)
    sub = dirs[0]
    assert fs.read_in(sub, "link.bin", 10) is None      # a link: never followed here
    assert fs.read_in(sub, "fifo", 10) is None          # never opened for reading
    assert fs.read_in(sub, "missing", 10) is None


def test_values_restores_garbage_collection(many):
    doc = formats.open(many, tree=False)
    assert gc.isenabled()
    V.values(doc, "a")
    assert gc.isenabled()
    gc.disable()
    try:
        V.values(doc, "a")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_footer_domain_values_without_numpy_equal_python_value():
    """The footer reader unpacks a fixed-size numeric non-empty domain with `struct`: the
    same Python values (and types) `python_value` gives, for every datatype it takes."""
    from arrayscope.formats.filters.enums import DATATYPES, numpy_dtype
    from arrayscope.formats.tiledb.model.footer_reader import _scalar
    from arrayscope.formats.tiledb.parse.fragment_values import python_value

    taken = 0
    for dt in sorted(DATATYPES):
        sc = _scalar(dt)
        if sc is None:
            continue
        taken += 1
        n = numpy_dtype(dt).itemsize
        for raw in (bytes(range(1, n + 1)), b"\xff" * n, b"\x00" * n, b"\x80" * n):
            want = python_value(dt, raw)
            got = sc[0].unpack(raw)[0]
            got = bool(got) if sc[1] else got
            assert type(got) is type(want), dt
            assert got == want or (got != got and want != want), (dt, raw)
    assert taken >= 30   # ints, floats, datetimes, times, bool, blob-like bytes


def test_name_dates_formatted_as_strftime_formats_them():
    from arrayscope.formats.tiledb.model.names import _fmt_dt, ms_to_datetime

    for ms in (0, 1, 999, 1541540586869, 1764000000123, 253402300799999, 86399999):
        d = ms_to_datetime(ms)
        assert _fmt_dt(d, ms) == d.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d}Z"
    assert _fmt_dt(None, 10 ** 20) == str(10 ** 20)


def test_fragments_of_two_schemas_one_role_each(tmp_path, monkeypatch):
    """Fragments written before and after a schema evolution: one data-file role made per
    schema (not per fragment), and still the bytes tiledb-py reads and the entries (errors
    included: the old fragments have no `b`) the annotated tree gives."""
    uri = str(tmp_path / "evolved")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 6 * M - 1), tile=M, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    data = np.arange(6 * M, dtype=np.int64) * 3 - 7
    for i in range(3):
        with tiledb.open(uri, "w", timestamp=i + 1) as A:
            A[i * M:(i + 1) * M] = data[i * M:(i + 1) * M]
    evo = tiledb.ArraySchemaEvolution(tiledb.default_ctx())
    evo.add_attribute(tiledb.Attr("b", dtype=np.int32, filters=[tiledb.LZ4Filter()]))
    evo.array_evolve(uri)
    for i in range(3, 6):
        with tiledb.open(uri, "w", timestamp=i + 10) as A:
            A[i * M:(i + 1) * M] = {"a": data[i * M:(i + 1) * M],
                                    "b": (data[i * M:(i + 1) * M] % 1000).astype(np.int32)}
    made = []
    real = V.file_role
    monkeypatch.setattr(V, "file_role", lambda *a: made.append(a[2]) or real(*a))
    light = formats.open(uri, tree=False)
    got = PLUGIN.values(light, "a")
    assert made == ["a0.tdb", "a0.tdb"]   # one per schema
    assert len({id(f.metadata.schema) for f in light.model.fragments}) == 2
    with tiledb.open(uri) as A:
        assert b"".join(bytes(e["raw"]) for e in got) == A[:]["a"].tobytes()
        b_ref = A[3 * M:]["b"].tobytes()
    assert _entries(formats.open(uri, tree=False)) == _entries(formats.open(uri))
    b = _entries(formats.open(uri, tree=False), "b")
    assert b == _entries(formats.open(uri), "b")
    assert [bool(e[3]) for e in b] == [True] * 3 + [False] * 3
    assert b"".join(e[1] for e in b) == b_ref


def test_a_footer_the_layout_cannot_read_gives_the_trees_error(many, tmp_path):
    """A footer whose length points before the sections' end: the layout read declines, the
    general reader and the annotated parse say what is wrong, alike on both paths."""
    uri = _copy(many, tmp_path)
    frag = sorted(formats.open(uri, tree=False).model.fragments, key=lambda f: f.order_key())[7]
    path = os.path.join(frag.path, "__fragment_metadata.tdb")
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:   # footer length one byte short
        fh.seek(size - 8)
        flen = int.from_bytes(fh.read(8), "little")
        fh.seek(size - 8)
        fh.write((flen - 1).to_bytes(8, "little"))
    light = _entries(formats.open(uri, tree=False))
    assert light == _entries(formats.open(uri))
    bad = [e for e in light if e[3]]
    assert [e[0] for e in bad] == [frag.name] and "footer" in bad[0][3]


@pytest.mark.parametrize("path", [
    "/d/__1_2_" + "0" * 32 + "_22/__fragment_metadata.tdb",
    "/__1_2_" + "0" * 32 + "_22/__fragment_metadata.tdb",
    "/__fragment_metadata.tdb", "/d/f/", "/d/./__3_3_" + "1" * 32 + "_5/x",
    "/d/../__3_3_" + "1" * 32 + "_5/x", "//d/__1_2_" + "0" * 32 + "_22/x",
    "rel/__1_2_" + "0" * 32 + "_22/x", "/d/.hidden/__4_4_" + "2" * 32 + "_22/x",
    "/d/__1_1_" + "a" * 32 + "/__fragment_metadata.tdb"])
def test_fragment_name_of_a_normal_path_without_normpath(path):
    """`_fragment_name` reads an already normal absolute path's folder name directly: the
    name normpath and dirname give, on every path shape."""
    from arrayscope.formats.tiledb.parse import fragment_metadata as fmd

    class Src:
        def __init__(self, p):
            self.path = p
    folder = os.path.dirname(os.path.normpath(path))
    if os.path.basename(folder) in ("", ".", ".."):
        folder = os.path.dirname(os.path.abspath(path))
    want = fmd.names.parse_name(os.path.basename(folder)) or {}
    assert fmd._fragment_name(Src(path)) == want

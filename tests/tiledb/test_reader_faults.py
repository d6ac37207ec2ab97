"""Faults that happen to real TileDB arrays, on bytes tiledb-py 0.36.1 (libtiledb 2.30)
wrote and then damaged the way a copy, a sync tool or a person does: what libtiledb does
when it reads each, beside what `verify` says (its stable code, status and exit code)."""
from __future__ import annotations

import glob
import os
import shutil

import numpy as np
import pytest
import tiledb

from arrayscope.explorer.cli import main
from arrayscope.formats.core.verify import open_for_verify, verify_report
from tests.support import file_modes

CONSOLIDATE = {"sm.consolidation.buffer_size": 1 << 20}   # the default 50 MB costs seconds


def _array(uri: str, sparse: bool = False, dups: bool = False) -> str:
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 23), tile=8, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=sparse, allows_duplicates=dups,
        attrs=[tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    for t in (1, 2, 3):
        with tiledb.open(uri, "w", timestamp=t) as A:
            if sparse:
                A[np.arange(t, 20, 3)] = np.arange(t, 20, 3) + t * 1000
            else:
                A[0:24] = np.arange(24) + t * 1000
    return uri


def _consolidate(uri: str, mode: str = "fragments") -> None:
    tiledb.consolidate(uri, config=tiledb.Config({**CONSOLIDATE, "sm.consolidation.mode": mode}))


def _fragments(uri: str):
    return sorted(glob.glob(os.path.join(uri, "__fragments", "*")))


def _read(uri: str):
    """(cells of `a`, None) or (None, libtiledb's error)."""
    try:
        with tiledb.open(uri, ctx=tiledb.Ctx()) as A:
            return A[:]["a"], None
    except tiledb.TileDBError as e:
        return None, str(e)


def _verify(uri: str):
    doc = open_for_verify(uri)
    try:
        report = verify_report(doc)
    finally:
        doc.close()
    return report, [(f.status, f.code) for f in report.findings]


def _assert_clean(uri: str) -> None:
    """The undamaged counterpart: no error, no warning, exit 0 (no false alarm)."""
    report, found = _verify(uri)
    assert found == [] and report.exit_code() == 0, found


@pytest.fixture
def clean(tmp_path):
    return lambda name="a", **kw: _array(str(tmp_path / name), **kw)


def test_data_file_longer_than_footer_reads_fine_and_warns(clean):
    uri = clean()
    _assert_clean(uri)
    data = os.path.join(_fragments(uri)[0], "a0.tdb")
    size = os.path.getsize(data)
    with open(data, "ab") as f:
        f.write(b"\0" * 100)
    cells, err = _read(uri)
    assert err is None and cells.tolist() == (np.arange(24) + 3000).tolist()
    report, found = _verify(uri)
    assert found == [("warning", "fragment-file-size")]
    [f] = report.findings
    assert f.offset == size and f.source.endswith("a0.tdb") and "100 bytes" in f.message
    assert report.exit_code() == 0


def test_data_file_shorter_than_footer_is_an_error(clean):
    uri = clean()
    data = os.path.join(_fragments(uri)[2], "a0.tdb")
    with open(data, "r+b") as f:
        f.truncate(os.path.getsize(data) - 10)
    assert _read(uri)[1] is not None
    report, found = _verify(uri)
    assert ("error", "fragment-file-size") in found and report.exit_code() == 1


@pytest.mark.parametrize("consolidated_metadata", [False, True], ids=["own", "consolidated"])
def test_committed_fragment_without_metadata_file(clean, consolidated_metadata):
    """A partial copy lost a fragment's `__fragment_metadata.tdb`; with the fragment
    metadata consolidated into `__fragment_meta/` libtiledb still needs the file."""
    uri = clean()
    if consolidated_metadata:
        _consolidate(uri, "fragment_meta")
    _assert_clean(uri)
    frag = _fragments(uri)[1]
    os.remove(os.path.join(frag, "__fragment_metadata.tdb"))
    cells, err = _read(uri)
    assert cells is None and "Cannot get file size" in err and os.path.basename(frag) in err
    report, found = _verify(uri)
    assert found == [("error", "fragment-metadata-missing")]   # not a data file "not parsed"
    assert report.findings[0].message.startswith(
        f"__fragments/{os.path.basename(frag)}/__fragment_metadata.tdb is missing")
    assert report.exit_code() == 1


def test_consolidated_commits_name_a_fragment_that_is_gone(clean):
    uri = clean()
    _consolidate(uri, "commits")
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "commits"}))
    assert not glob.glob(os.path.join(uri, "__commits", "*.wrt"))   # only the .con commits
    _assert_clean(uri)
    gone = _fragments(uri)[1]
    shutil.rmtree(gone)
    assert "Cannot get file size" in _read(uri)[1]
    report, found = _verify(uri)
    assert found == [("error", "commit-without-fragment")]
    f = report.findings[0]
    assert f.source.endswith(".con") and os.path.basename(gone) in f.message
    assert report.exit_code() == 1


def test_consolidation_without_vac_in_an_array_with_duplicates(clean):
    """The `.vac` is what hides the fragments a consolidation replaced: without it (a copy
    that skipped it) a reader reads them and the consolidated fragment, every cell twice."""
    uri = clean(sparse=True, dups=True)
    once = np.sort(_read(uri)[0])
    _consolidate(uri)
    assert np.array_equal(np.sort(_read(uri)[0]), once)
    report, found = _verify(uri)
    assert found == [] and report.exit_code() == 0         # the .vac hides them: clean
    for vac in glob.glob(os.path.join(uri, "__commits", "*.vac")):
        os.remove(vac)
    twice = np.sort(_read(uri)[0])
    assert np.array_equal(twice, np.sort(np.concatenate([once, once])))
    report, found = _verify(uri)
    assert found == [("error", "fragment-read-twice")] * 3
    assert report.exit_code() == 1


@pytest.mark.parametrize("vacuum", [False, True], ids=["unvacuumed", "vacuumed"])
def test_back_dated_write_after_consolidation_is_read_once(clean, vacuum):
    """A write at an earlier timestamp after a consolidation lies inside the consolidated
    fragment's time range, but the consolidation did not replace it (its `.vac` does not
    list it; once vacuumed, the fragments that span the range are gone): readers read its
    cells once, verify says nothing."""
    uri = clean(sparse=True, dups=True)
    _consolidate(uri)
    if vacuum:
        tiledb.vacuum(uri)
    before = _read(uri)[0]
    with tiledb.open(uri, "w", timestamp=2) as A:
        A[np.array([0, 21])] = np.array([-1, -2])
    assert np.array_equal(np.sort(_read(uri)[0]), np.sort(np.concatenate([before, [-1, -2]])))
    names = [os.path.basename(f) for f in _fragments(uri)]
    assert sum(n.startswith("__2_2_") for n in names) == (1 if vacuum else 2)
    report, found = _verify(uri)
    assert found == [] and report.exit_code() == 0


def test_consolidation_without_vac_in_a_dense_array_reads_correctly(clean):
    uri = clean()
    expect = _read(uri)[0]
    _consolidate(uri)
    for vac in glob.glob(os.path.join(uri, "__commits", "*.vac")):
        os.remove(vac)
    assert np.array_equal(_read(uri)[0], expect)
    assert _verify(uri)[1] == []


def test_cli_exit_code_for_missing_metadata(clean, capsys):
    uri = clean()
    os.remove(os.path.join(_fragments(uri)[0], "__fragment_metadata.tdb"))
    assert main(["verify", uri]) == 1
    assert "__fragment_metadata.tdb is missing" in capsys.readouterr().out


def test_fragments_and_commits_without_schema(clean, capsys):
    """A copy that lost `__schema/`: libtiledb says the array does not exist; verify says
    it is a TileDB array without its schema, an error (exit 1), first."""
    uri = clean()
    _assert_clean(uri)
    shutil.rmtree(os.path.join(uri, "__schema"))
    assert "Array does not exist" in _read(uri)[1]
    report, found = _verify(uri)
    assert report.verifiable and found == [("error", "schema-missing")]   # no knock-on
    assert "this TileDB array has no schema" in report.findings[0].message
    assert main(["verify", uri]) == 1
    assert "this TileDB array has no schema" in capsys.readouterr().out


def test_fragment_whose_schema_file_was_deleted(clean):
    """Schema evolution added `b`, a write used the new schema, then its schema file was
    deleted: libtiledb cannot open the array; verify names the schema, once (the
    fragment's metadata is not parsed with another schema into knock-on errors)."""
    uri = clean()
    evolution = tiledb.ArraySchemaEvolution()
    evolution.add_attribute(tiledb.Attr("b", dtype=np.int32))
    evolution.array_evolve(uri)
    with tiledb.open(uri, "w", timestamp=10 ** 12) as A:   # after the evolution's timestamp
        A[0:24] = {"a": np.arange(24), "b": np.arange(24, dtype=np.int32)}
    _assert_clean(uri)
    newest = max((f for f in glob.glob(os.path.join(uri, "__schema", "__*"))
                  if os.path.isfile(f)), key=lambda f: int(os.path.basename(f).split("_")[2]))
    os.remove(newest)
    err = _read(uri)[1]
    assert f"Could not find schema {os.path.basename(newest)}" in err
    report, found = _verify(uri)
    assert found == [("error", "schema-missing")]
    f = report.findings[0]
    assert f.source.endswith("__fragment_metadata.tdb") and os.path.basename(newest) in f.message
    assert report.exit_code() == 1


LFS_POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
               b"size 2372\n")
HTML_PAGE = (b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n"
             b"<body><h1>Not Found</h1></body></html>\n")


@pytest.mark.parametrize("file", ["a0.tdb", "__fragment_metadata.tdb", "schema"])
@pytest.mark.parametrize("stand_in, named", [(LFS_POINTER, "a git-lfs pointer file"),
                                             (HTML_PAGE, "an HTML page ('404 Not Found')")],
                         ids=["git-lfs", "html"])
def test_stand_in_file_is_named(clean, file, stand_in, named):
    """A clone without `git lfs pull`, or a web server's 404 page saved under the file's
    name: libtiledb fails on it; verify names it, once, not as a parse of nonsense."""
    uri = clean()
    _assert_clean(uri)
    if file == "schema":
        [target] = [f for f in glob.glob(os.path.join(uri, "__schema", "__*")) if os.path.isfile(f)]
        file = os.path.basename(target)
    else:
        target = os.path.join(_fragments(uri)[-1], file)
    with open(target, "wb") as f:
        f.write(stand_in)
    with pytest.raises(tiledb.TileDBError):
        with tiledb.open(uri, ctx=tiledb.Ctx()) as A:
            A[:]
    report, found = _verify(uri)
    assert found == [("error", "stand-in-file")] and report.exit_code() == 1
    f = report.findings[0]
    assert f.source.endswith(file) and f.message.startswith(f"{file} is {named}")


def _unreadable_targets(uri: str):
    last, middle = _fragments(uri)[-1], _fragments(uri)[1]
    return {"data file": os.path.join(last, "a0.tdb"),
            "fragment metadata": os.path.join(last, "__fragment_metadata.tdb"),
            "commit file": os.path.join(uri, "__commits", os.path.basename(middle) + ".wrt"),
            "fragment folder": middle,
            "__fragments": os.path.join(uri, "__fragments"),
            "__commits": os.path.join(uri, "__commits"),
            "__schema": os.path.join(uri, "__schema")}


@pytest.mark.parametrize("what", ["data file", "fragment metadata", "commit file", "fragment folder",
                                  "__fragments", "__commits", "__schema"])
def test_unreadable_entry(clean, what):
    """A file or a folder of mode 000: libtiledb fails on it ("Permission denied"); verify
    says `unreadable-entry` there, once — a folder it cannot list is not read as empty (no
    fragment called metadata-less or uncommitted, no commit called orphan, no array called
    schema-less). Both run as a user whom file modes stop (tests/support/file_modes.py)."""
    uri = clean()
    _assert_clean(uri)
    target = _unreadable_targets(uri)[what]
    with file_modes.unreadable(target):
        read = file_modes.python("import sys, tiledb\nwith tiledb.open(sys.argv[1]) as A: A[:]", uri)
        assert read.returncode != 0 and "TileDBError" in read.stderr and \
            "Permission denied" in read.stderr, read.stderr
        code, found = file_modes.verify(uri)
    assert code == 1
    assert [(f["status"], f["code"]) for f in found] == [("error", "unreadable-entry")], found
    rel = os.path.relpath(target, uri)
    assert found[0]["source"] == rel
    said = "cannot list directory" if os.path.isdir(target) else "cannot be read"
    assert f"{said}: Permission denied" in found[0]["message"]


def test_split_into_tasks_gives_the_same_findings(clean):
    """`--workers`: the array-level checks run once, as in one process."""
    from arrayscope.formats.core import executors

    uri = clean(sparse=True, dups=True)
    _consolidate(uri)
    for vac in glob.glob(os.path.join(uri, "__commits", "*.vac")):
        os.remove(vac)
    with open(os.path.join(_fragments(uri)[-1], "a0.tdb"), "ab") as f:
        f.write(b"\1" * 7)
    whole = _verify(uri)[0].findings
    assert sorted(f.code for f in whole) == ["fragment-file-size"] + ["fragment-read-twice"] * 3
    doc = open_for_verify(uri)
    try:
        split = verify_report(doc, executor=executors.InProcess()).findings
    finally:
        doc.close()
    assert split == whole


_EMPTY_TILE_CASES = [   # (filters of the var attribute, encrypted, libtiledb 2.30's read error)
    (("BS", "MD5"), False, "no current buffer"),
    (("XOR", "SHA"), False, "no current buffer"),
    (("BitS",), True, "no current buffer"),
    (("BS", "NoOp", "MD5"), False, "no current buffer"),
    (("BS", "NoOp"), False, "no current buffer"),
    (("MD5", "BS"), True, "no current buffer"),
    (("NoOp", "D", "BS", "MD5"), False, "no current buffer"),
    (("D", "MD5"), False, "overflow"),
    (("DD",), False, "overflow"),
    (("BS", "D"), False, "overflow"),
    (("NoOp", "Zstd", "D"), False, "overflow"),
    (("D",), True, "overflow"),
    (("NoOp", "BS", "MD5"), False, None),
    (("BS", "Zstd", "MD5"), False, None),
    (("BS",), False, None),
    (("NoOp", "D"), False, None),
    (("MD5", "Zstd", "D"), False, None),
    (("Zstd", "DD", "MD5"), False, None),
]


@pytest.mark.parametrize("names, encrypted, fails", _EMPTY_TILE_CASES,
                         ids=["-".join(c[0]) + ("-aes" if c[1] else "") for c in _EMPTY_TILE_CASES])
def test_empty_var_tile_libtiledb_cannot_read(tmp_path, names, encrypted, fails):
    """A var tile of '' cells that libtiledb writes and cannot read back (an empty part a
    shuffle declares and a later stage drops; a delta given an empty part): verify warns
    (a writer bug) with libtiledb's own error, and only then. The rule
    (reader_faults.empty_tile_read_error) matched libtiledb on ~240 distinct pipelines
    (414 runs, 99 unreadable)."""
    import numpy as np
    import tiledb

    from arrayscope import formats
    from arrayscope.formats.core.verify import verify_report

    made = {"BS": tiledb.ByteShuffleFilter, "BitS": tiledb.BitShuffleFilter,
            "XOR": tiledb.XORFilter, "MD5": tiledb.ChecksumMD5Filter,
            "SHA": tiledb.ChecksumSHA256Filter, "NoOp": tiledb.NoOpFilter,
            "Zstd": tiledb.ZstdFilter, "D": tiledb.DeltaFilter, "DD": tiledb.DoubleDeltaFilter}
    key = "0123456789abcdeF0123456789abcdeF"
    ctx = tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key}
                     if encrypted else {})
    uri = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype="int32"), ctx=ctx)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=str, var=True, filters=[made[n]() for n in names], ctx=ctx)]),
        ctx=ctx)
    with tiledb.open(uri, "w", ctx=ctx) as A:
        A[np.array([1, 2], dtype="int32")] = {"a": np.array(["", ""], dtype=object)}
    try:
        with tiledb.open(uri, ctx=ctx) as A:
            assert list(A[:]["a"]) == ["", ""]
        error = None
    except tiledb.TileDBError as e:
        error = str(e)
    assert (error is None) == (fails is None), error
    if fails:
        assert fails in error
    report = verify_report(formats.open(uri, key=key.encode() if encrypted else None))
    found = [(f.status, f.code) for f in report.findings]
    assert found == ([] if fails is None else [("warning", "empty-tile-unreadable")])
    if fails:
        assert fails in report.findings[0].line()
    assert report.exit_code() == 0

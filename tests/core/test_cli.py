"""The command-line contract of DESIGN.md: dump / values / verify on real arrays."""
import json

from arrayscope.explorer.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_dump_json_shape(capsys, tiledb_array):
    path = tiledb_array("dense_1d")
    code, out, _ = run(capsys, "dump", path, "--json")
    assert code == 0
    root = json.loads(out)
    assert set(root) == {"name", "kind", "source", "offset", "size", "value", "display",
                         "status", "message", "children"}
    assert root["kind"] == "dir"
    names = [c["name"] for c in root["children"]]
    assert "__schema" in names and "__fragments" in names and "__commits" in names


def test_dump_max_depth(capsys, tiledb_array):
    code, out, _ = run(capsys, "dump", tiledb_array("dense_1d"), "--json", "--max-depth", "1")
    root = json.loads(out)
    assert all(c["children"] == [] for c in root["children"])


def test_dump_text(capsys, tiledb_array):
    code, out, _ = run(capsys, "dump", tiledb_array("dense_1d"), "--max-depth", "2")
    assert code == 0 and "__schema <dir>" in out


def test_missing_path_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "verify", str(tmp_path / "nope"))
    assert code == 2 and "no such file" in err


def test_plain_file_dump(capsys, tmp_path):
    p = tmp_path / "blob.bin"
    p.write_bytes(b"\x00hello")
    code, out, _ = run(capsys, "dump", str(p), "--json")
    root = json.loads(out)
    assert root["size"] == 6 and root["children"][0]["kind"] == "unparsed"


def test_values_raw_equals_tiledb(capsys, tiledb_array, tmp_path):
    import numpy as np
    import tiledb

    path = tiledb_array("chunked_large_tile")
    out = tmp_path / "a.bin"
    code, _, _ = run(capsys, "values", path, "--field", "a", "--raw", str(out))
    assert code == 0
    with tiledb.open(path) as A:
        expected = A[:]["a"]
    assert np.array_equal(np.fromfile(out, dtype="<i8"), expected)


def test_values_unknown_field_lists_fields(capsys, tiledb_array):
    code, _, err = run(capsys, "values", tiledb_array("dense_1d"), "--field", "nope")
    assert code == 2 and "fields: a" in err


def test_values_on_encrypted_array_says_why_without_or_with_wrong_key(capsys, tiledb_array,
                                                                     tmp_path, monkeypatch):
    monkeypatch.delenv("ARRAYSCOPE_KEY", raising=False)
    path = tiledb_array("encrypted")
    code, _, err = run(capsys, "values", path, "--field", "a")
    assert code == 2 and "--key-file" in err and "Traceback" not in err
    wrong = tmp_path / "wrong.key"
    wrong.write_bytes(b"0" * 32)
    code, _, err = run(capsys, "values", path, "--field", "a", "--key-file", str(wrong))
    assert code == 2 and "tag check failed" in err
    short = tmp_path / "short.key"
    short.write_bytes(b"short\n")
    code, _, err = run(capsys, "values", path, "--field", "a", "--key-file", str(short))
    assert code == 2 and "32 bytes" in err


# ---- verify: exit codes, summary, JSON (README "Command line") ---------------------------
def test_verify_clean_array_exits_0_with_a_summary(capsys, tiledb_array):
    code, out, err = run(capsys, "verify", tiledb_array("dense_1d"))
    assert code == 0 and out == ""
    assert "0 errors, 0 warnings, 0 infos" in err and "tiles" in err and "files" in err


def test_verify_json_shape(capsys, tiledb_array):
    code, out, _ = run(capsys, "verify", tiledb_array("dense_1d"), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["errors"] == 0 and doc["warnings"] == 0 and doc["exit"] == 0
    assert {"path", "errors", "warnings", "findings"} <= set(doc)


def test_verify_empty_folder_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "verify", str(tmp_path))
    assert code == 2 and "empty folder" in err


def test_verify_folder_without_arrays_exits_2(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    code, _, err = run(capsys, "verify", str(tmp_path))
    assert code == 2 and "no format" in err


def test_verify_encrypted_without_key_exits_2_once(capsys, tiledb_array, monkeypatch):
    monkeypatch.delenv("ARRAYSCOPE_KEY", raising=False)
    code, out, err = run(capsys, "verify", tiledb_array("encrypted"), "--json")
    doc = json.loads(out)
    assert code == 2 and "--key-file" in err
    assert [f["code"] for f in doc["findings"]] == ["no-key"]
    assert "--key-file" in doc["findings"][0]["hint"]


def test_verify_wrong_key_is_one_finding_per_file(capsys, tiledb_array, tmp_path, monkeypatch):
    monkeypatch.delenv("ARRAYSCOPE_KEY", raising=False)
    key = tmp_path / "key"
    key.write_bytes(b"X" * 32)
    code, out, _ = run(capsys, "verify", tiledb_array("encrypted"), "--json",
                       "--key-file", str(key))
    doc = json.loads(out)
    wrong = [f for f in doc["findings"] if f["code"] == "wrong-key"]
    assert code == 1 and wrong
    assert len({f["source"] for f in wrong}) == len(wrong)   # one per file
    assert not [f for f in doc["findings"] if f["code"] in ("aes-tag-mismatch", "no-key")]


def test_verify_right_key_is_clean(capsys, tiledb_array, tmp_path, monkeypatch):
    from tests.support.tiledb_arrays import KEY

    monkeypatch.delenv("ARRAYSCOPE_KEY", raising=False)
    key = tmp_path / "key"
    key.write_bytes(KEY.encode())
    code, _, err = run(capsys, "verify", tiledb_array("encrypted"), "--key-file", str(key))
    assert code == 0, err


def test_verify_missing_codec_is_unchecked_not_damage(capsys, tiledb_array, monkeypatch):
    """A chunk whose codec this install lacks is 'could not be checked' (exit 3), never
    corruption."""
    from arrayscope.formats.filters import FilterError
    from arrayscope.formats.filters import compression as C

    def missing(self, data, original, info):
        raise FilterError("ZSTD: no zstd library in this install", kind=FilterError.NO_CODEC)

    monkeypatch.setattr(C.Zstd, "decompress", missing)
    code, out, err = run(capsys, "verify", tiledb_array("filters"), "--json")
    doc = json.loads(out)
    assert code == 3, doc["findings"][:3]
    assert doc["errors"] == 0
    assert any(f["code"] == "unchecked" and "zstd" in f["message"] for f in doc["findings"])
    assert "not checked" in err and sum(doc["unchecked"].values()) >= 1


def test_verify_zarr_unknown_codec_is_unchecked(capsys, tmp_path):
    """A Zarr codec arrayscope does not know: its chunks were not checked (exit 3)."""
    import numpy as np
    import zarr

    path = tmp_path / "a.zarr"
    a = zarr.open_array(str(path), mode="w", zarr_format=2, shape=(10,), chunks=(5,),
                        dtype="i4", compressor=None)
    a[:] = np.arange(10, dtype=np.int32)
    meta = json.loads((path / ".zarray").read_text())
    meta["compressor"] = {"id": "not-a-real-codec"}
    (path / ".zarray").write_text(json.dumps(meta))
    code, out, err = run(capsys, "verify", str(path), "--json")
    doc = json.loads(out)
    assert code == 3 and doc["errors"] == 0
    assert "not checked" in err and "not-a-real-codec" in err
    assert sum(doc["unchecked"].values()) == 2   # both chunks

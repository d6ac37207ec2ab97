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

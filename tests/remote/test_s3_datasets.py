"""Datasets written by the real libraries, uploaded to a real S3 API on loopback (moto):
`dump`, `verify` and `values` over `s3://` print exactly what they print for the local copy,
and opening reads only the schema, the commit lists and the fragment metadata (counted by
the server itself)."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from arrayscope import formats
from arrayscope.explorer.cli import main
from arrayscope.formats.core import registry
from tests.support import tiledb_arrays
from tests.support.paths import REPO
from tests.support.zarr_arrays import FLAT, NESTED, make, write_zarr

TILEDB = ("dense_1d", "sparse_var_nullable_pipelines", "multi_fragment", "consolidated",
          "filter_stacks_array", "encrypted", "string_dim")
SCDL = ("basic", "concat_blocks", "v012_basic")


def _prune_empty_dirs(root: str) -> None:
    """An object store holds objects, not folders: an empty folder does not exist there."""
    for d, dirs, files in os.walk(root, topdown=False):
        if d != root and not os.listdir(d):
            os.rmdir(d)


@pytest.fixture(scope="module")
def datasets(s3_server, tmp_path_factory):
    """`datasets[name]` -> (local path, s3 URL, key): a local copy (empty folders removed)
    and the same bytes uploaded to s3://datasets/<name>, made on first use."""
    root = str(tmp_path_factory.mktemp("s3_datasets"))
    built = str(tmp_path_factory.mktemp("built"))
    s3_server.bucket("datasets")

    def source(name):
        if name in TILEDB:
            return tiledb_arrays.build(name, built)
        if name.startswith("scdl_"):
            return os.path.join(REPO, "tests", "data", "scdl", name[len("scdl_"):])
        if name == "zarr_v3_flat":
            return write_zarr(os.path.join(built, name), make(FLAT, (37,)), (8,), 3)
        return write_zarr(os.path.join(built, name), make(NESTED, (5, 6)), (2, 4), 2)

    class Lazy(dict):
        def __missing__(self, name):
            local = os.path.join(root, name)
            shutil.copytree(source(name), local)
            _prune_empty_dirs(local)
            key = tiledb_arrays.KEY.encode() if name == "encrypted" else None
            self[name] = (local, s3_server.upload(local, f"s3://datasets/{name}"), key)
            return self[name]
    return Lazy()


def _cli(capsys, *argv, key=None, tmp_path=None):
    extra = []
    if key is not None:
        kf = os.path.join(tmp_path, "key")
        with open(kf, "wb") as fh:
            fh.write(key)
        extra = ["--key-file", kf]
    code = main(list(argv) + extra)
    out = capsys.readouterr()
    return code, out.out


ALL = TILEDB + tuple(f"scdl_{n}" for n in SCDL) + ("zarr_v3_flat", "zarr_v2_nested")
QUICK = ("dense_1d", "sparse_var_nullable_pipelines", "consolidated", "encrypted", "scdl_basic",
         "zarr_v3_flat", "zarr_v2_nested")   # the default run; `-m slow` adds the rest


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow)
                                  for n in ALL])
def test_dump_verify_values_equal_local(name, datasets, capsys, tmp_path):
    local, url, key = datasets[name]
    code_l, dump_l = _cli(capsys, "dump", local, "--json", key=key, tmp_path=tmp_path)
    code_r, dump_r = _cli(capsys, "dump", url, "--json", key=key, tmp_path=tmp_path)
    assert code_l == code_r == 0
    assert json.loads(dump_r) == json.loads(dump_l)

    code_l, ver_l = _cli(capsys, "verify", local, "--json", key=key, tmp_path=tmp_path)
    code_r, ver_r = _cli(capsys, "verify", url, "--json", key=key, tmp_path=tmp_path)
    ver_l, ver_r = json.loads(ver_l), json.loads(ver_r)
    assert (ver_l.pop("path"), ver_r.pop("path")) == (local, url)
    assert code_r == code_l and ver_r == ver_l

    doc = formats.open(local, key=key)
    fields = registry.plugin_named(doc.format).field_names(doc)
    assert fields, name
    for field in fields[:3]:
        code_l, val_l = _cli(capsys, "values", local, "--field", field, "--json", key=key, tmp_path=tmp_path)
        code_r, val_r = _cli(capsys, "values", url, "--field", field, "--json", key=key, tmp_path=tmp_path)
        assert code_r == code_l and json.loads(val_r) == json.loads(val_l), field
        assert json.loads(val_l)["fragments"], field


@pytest.mark.slow
def test_verify_on_workers_over_s3(datasets, capsys):
    """Every worker opens the URL itself: the same findings as one process."""
    local, url, _ = datasets["filter_stacks_array"]
    code_l, ver_l = _cli(capsys, "verify", url, "--json")
    code_r, ver_r = _cli(capsys, "verify", url, "--json", "--workers", "2")
    assert code_l == code_r and json.loads(ver_r) == json.loads(ver_l)


def test_stats_report_what_the_server_saw(datasets, s3_server, capsys):
    _local, url, _ = datasets["multi_fragment"]
    from arrayscope.formats.core.remote import TOTAL

    before = TOTAL.snapshot()
    (code, _out), seen = s3_server.count(lambda: _cli(capsys, "dump", url, "--max-depth", "1"))
    assert code == 0
    after = TOTAL.snapshot()
    assert after[0] - before[0] == len(seen) > 0
    main(["dump", url, "--max-depth", "0", "--stats"])
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == TOTAL.line()


@pytest.mark.parametrize("command", ["fragments", "stats"])
def test_health_commands_over_s3_equal_local(datasets, capsys, command):
    local, url, _ = datasets["consolidated"]
    code_l, out_l = _cli(capsys, command, local, "--json", "--at", "1000000") if command == "fragments" \
        else _cli(capsys, command, local, "--json")
    code_r, out_r = _cli(capsys, command, url, "--json", "--at", "1000000") if command == "fragments" \
        else _cli(capsys, command, url, "--json")
    assert code_l == code_r == 0
    out_l, out_r = json.loads(out_l), json.loads(out_r)
    for out, where in ((out_l, local), (out_r, url)):
        if isinstance(out, dict) and out.get("path") is not None:
            assert out.pop("path") in (where, local, url)
    assert out_r == out_l
    assert out_l.get("fragments") or out_l

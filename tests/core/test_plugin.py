"""The core plugin contract: declarative detection, a failed plugin reported as an error."""
from __future__ import annotations

import os

import pytest

from arrayscope import formats
from arrayscope.formats.core import findings, registry
from arrayscope.formats.core.plugin import Detection
from tests.support.paths import SAMPLES


@pytest.fixture
def broken_registry(monkeypatch):
    """A registry whose module list holds one that cannot be imported."""
    monkeypatch.setattr(registry, "PLUGIN_MODULES", ("..tiledb", "..no_such_format"))
    monkeypatch.setattr(registry, "_plugins", None)
    monkeypatch.setattr(registry, "_loaded", {})
    monkeypatch.setattr(registry, "_failures", [])
    yield
    registry._plugins = None
    registry._loaded = {}


def test_every_plugin_declares_the_protocol_members():
    names = [p.name for p in registry.plugins()]
    assert names == ["tiledb", "scdl", "zarr"]
    assert registry.load_failures() == []
    for p in registry.plugins():
        assert isinstance(p.detection, Detection) and p.detection.dir_markers
        assert p.pipeline_hint
        for member in ("container_of", "open_dir", "open_file_in", "open_file", "field_names",
                       "values", "verify", "describe_entry", "chunk_view"):
            assert callable(getattr(p, member)), (p.name, member)


@pytest.mark.parametrize("sample,fmt", [("zarr_struct", "zarr"), ("zarr_v2_blosc", "zarr")])
def test_detection_is_declared(sample, fmt):
    path = os.path.join(SAMPLES, sample)
    assert registry.for_dir(path).name == fmt
    assert registry.for_dir(os.path.dirname(path)) is None


def test_detection_markers(tmp_path):
    d = Detection(dir_markers=(("a/",), ("b", "c")))
    assert not d.matches_dir(str(tmp_path))
    (tmp_path / "b").write_bytes(b"")
    assert not d.matches_dir(str(tmp_path))          # every name of an alternative
    (tmp_path / "c").write_bytes(b"")
    assert d.matches_dir(str(tmp_path))
    other = tmp_path / "o"
    other.mkdir()
    (other / "a").write_bytes(b"")                   # "a/" must be a folder
    assert not d.matches_dir(str(other))
    assert not d.matches_dir(str(tmp_path / "b"))    # a file is no container


def test_a_plugin_that_fails_to_load_is_an_error(broken_registry, tmp_path):
    assert [p.name for p in registry.plugins()] == ["tiledb"]
    (f,) = registry.load_failures()
    assert f.status == "error" and f.code == findings.PLUGIN_FAILED
    assert "no_such_format" in f.message and "ModuleNotFoundError" in f.message
    # a path no loaded plugin recognises carries the failure
    (tmp_path / "x.bin").write_bytes(b"\x00" * 8)
    doc = formats.open(str(tmp_path))
    assert doc.format is None
    assert doc.root.status == "error" and "no_such_format" in doc.root.message
    assert doc.root.code == findings.PLUGIN_FAILED


def test_tiledb_entries_are_described_by_the_plugin():
    doc = formats.open(os.path.join(SAMPLES, "tiledb_dense"))
    frags = doc.root["__fragments"]
    frag = frags.child(0)
    what = {n.name: registry.describe_entry(doc, n) for n in (frags, frag, frag["a1.tdb"],
                                                                frag["__fragment_metadata.tdb"])}
    assert what["__fragments"] == "Fragments"
    assert what[frag.name] == "fragment: 2023-11-14 22:13:20 UTC, format v22"
    assert what["a1.tdb"] == "attribute 'temperature' data"
    assert what["__fragment_metadata.tdb"] == "fragment metadata"
    commit = doc.root["__commits"].child(0)
    assert registry.describe_entry(doc, commit).startswith("commit: 2023-11-14 22:13:20 UTC")


def test_zarr_and_scdl_entries_use_their_own_file_names():
    z = formats.open(os.path.join(SAMPLES, "zarr_v2_blosc"))
    assert registry.describe_entry(z, z.root[".zarray"]) == "Zarr v2 array metadata"
    s = formats.open(os.path.join(SAMPLES, "scdl"))
    assert registry.describe_entry(s, s.root["version.json"]) == "SCDL version"


def test_declared_markers_are_the_plugins_own():
    """The registry matches directories before importing a plugin: its declarations name the
    files each plugin's layout module defines."""
    from arrayscope.formats.scdl.enums import ARRAY_FILES, CORE_ARRAYS, HEADER_FILE
    from arrayscope.formats.tiledb.model import layout
    assert registry.declared("tiledb").detection.dir_markers == \
        layout.ARRAY_MARKERS + layout.GROUP_MARKERS + layout.SCHEMALESS_MARKERS
    assert registry.declared("scdl").detection.dir_markers == \
        ((HEADER_FILE,), tuple(ARRAY_FILES[n] for n in CORE_ARRAYS))
    for p in registry.plugins():
        assert p.detection is registry.declared(p.name).detection


def test_a_small_values_imports_neither_numba_nor_the_other_plugins(tmp_path):
    """`values` of a 100-cell TileDB array, in a child process: the Zarr and SCDL plugins
    and numba stay unimported (issue 26: start-up)."""
    import subprocess
    import sys

    import numpy as np
    import tiledb
    uri = str(tmp_path / "tiny")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=100, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    with tiledb.open(uri, "w") as A:
        A[:] = np.arange(100)
    code = ("import sys; from arrayscope.explorer.cli import main; rc = main(['values', "
            "'--field', 'a', sys.argv[1]]); "
            "print(sorted(m for m in sys.modules if m.startswith(('numba', "
            "'arrayscope.formats.zarr', 'arrayscope.formats.scdl'))))")
    out = subprocess.run([sys.executable, "-c", code, uri], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert "99" in out.stdout and lines[-1] == "[]", out.stdout[-2000:]

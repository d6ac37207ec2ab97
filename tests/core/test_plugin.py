"""The core plugin contract: declarative detection, a failed plugin reported as an error."""
from __future__ import annotations

import os

import pytest

from arrayscope import formats
from arrayscope.formats import findings, registry
from arrayscope.formats.plugin import Detection
from tests.support.paths import SAMPLES


@pytest.fixture
def broken_registry(monkeypatch):
    """A registry whose module list holds one that cannot be imported."""
    monkeypatch.setattr(registry, "PLUGIN_MODULES", (".tiledb", ".no_such_format"))
    monkeypatch.setattr(registry, "_plugins", None)
    monkeypatch.setattr(registry, "_failures", [])
    yield
    registry._plugins = None


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

"""Every array of the catalogue, written by tiledb-py: the whole directory parses with no
error and no warning, and every byte of every file is covered by leaf nodes."""
import os

import pytest

from arrayscope import formats
from arrayscope.formats.core.engine import coverage
from arrayscope.formats.core.node import ERROR, WARNING
from tests.support.tiledb_arrays import CATALOG, KEY


def _key(name):
    return KEY.encode() if name == "encrypted" else None


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_array_parses_cleanly_with_full_coverage(tiledb_array, name):
    path = tiledb_array(name)
    doc = formats.open(path, key=_key(name))
    problems = [f"{n.path()} @{n.offset}: {n.status}: {n.message}" for n in doc.diagnostics()]
    assert not problems, "\n".join(problems[:20])
    for src in doc.sources:
        covered, size = coverage(doc.root, src)
        assert covered == size, f"{src.name}: {covered} of {size} bytes covered"
    # every file of the directory is a source of the tree
    files = {os.path.relpath(os.path.join(d, f), path).replace(os.sep, "/")
             for d, _, fs in os.walk(path) for f in fs}
    assert files == {s.name for s in doc.sources}
    doc.close()


def test_encrypted_without_key_warns_with_hint(tiledb_array):
    doc = formats.open(tiledb_array("encrypted"))
    warnings = [n for n in doc.diagnostics() if n.status == WARNING]
    assert warnings and not [n for n in doc.diagnostics() if n.status == ERROR]
    assert any("--key-file" in (n.message or "") and "ARRAYSCOPE_KEY" in n.message for n in warnings)


def test_single_file_in_array_gets_context(tiledb_array):
    path = tiledb_array("filter_stacks_array")
    frag_dir = os.path.join(path, "__fragments")
    frag = os.path.join(frag_dir, sorted(os.listdir(frag_dir))[0])
    doc = formats.open(os.path.join(frag, "a0.tdb"))
    assert doc.format == "tiledb"
    tiles = [n for n in doc.root.walk() if n.kind == "tile"]
    assert tiles, "a data file opened alone is split into tiles using its fragment metadata"
    assert not [n for n in doc.diagnostics() if n.status == ERROR]


def test_stray_files_parse_without_context(tiledb_array, tmp_path):
    """A schema or fragment-metadata file copied out of its array still parses."""
    import glob
    import shutil

    path = tiledb_array("dense_1d")
    schema = sorted(p for p in glob.glob(os.path.join(path, "__schema", "__*")) if os.path.isfile(p))[-1]
    fm = glob.glob(os.path.join(path, "__fragments", "*", "__fragment_metadata.tdb"))[0]
    stray_schema = tmp_path / os.path.basename(schema)
    shutil.copy(schema, stray_schema)
    doc = formats.open(str(stray_schema))
    assert doc.format == "tiledb"
    names = {n.name for n in doc.root.walk()}
    assert {"Array version", "Num attributes", "Attribute name"} <= names
    assert not [n for n in doc.diagnostics() if n.status == ERROR]
    (tmp_path / "alone").mkdir()
    stray_fm = tmp_path / "alone" / "__fragment_metadata.tdb"
    shutil.copy(fm, stray_fm)
    doc = formats.open(str(stray_fm))
    assert doc.format == "tiledb"
    assert coverage(doc.root, doc.sources[0]) == (doc.sources[0].size, doc.sources[0].size)
    assert not [n for n in doc.diagnostics() if n.status == ERROR]

"""Bad input never breaks the tool: mutations of real arrays (bit flips, byte runs,
truncation at structural boundaries, inflated length fields, swapped ranges).

Properties: no exception escapes open/dump/verify/values; every run finishes (a generous
hang guard, not a speed check); damage inside checksummed or encrypted chunks and every
truncation is reported by `verify` at the damaged file. The long campaign is
tests/fuzz/run_fuzz.py (on demand)."""
import os
import random
import shutil
import zlib

import pytest

from arrayscope import formats
from arrayscope.formats.core.verify import verify
from tests.support.mutations import files_of, run_campaign, time_limit
from tests.support.tiledb_arrays import KEY

CAMPAIGNS = [("dense_1d", None, 30), ("filter_stacks_array", None, 40),
             ("sparse_var_nullable_pipelines", None, 40), ("encrypted", KEY.encode(), 25),
             ("string_filters", None, 25), ("deletes", None, 20)]


@pytest.mark.parametrize("name,key,count", CAMPAIGNS, ids=[c[0] for c in CAMPAIGNS])
def test_mutations_never_escape(tiledb_array, tmp_path, name, key, count):
    runs, crashes, hangs, _peak = run_campaign(tiledb_array(name), str(tmp_path), count,
                                               seed=zlib.crc32(name.encode()), key=key, budget=30,
                                               log=lambda *_: None)
    assert not crashes, crashes[:3]
    assert not hangs, hangs[:3]


def _copy(src, tmp_path):
    dst = str(tmp_path / "copy")
    shutil.copytree(src, dst)
    return dst


def _files_with(root, *suffixes):
    return [f for f in files_of(root) if f.endswith(suffixes)]


@pytest.mark.parametrize("name,key", [("filter_stacks_array", None), ("encrypted", KEY.encode())])
def test_flip_in_checked_chunk_is_reported_at_that_file(tiledb_array, tmp_path, name, key):
    """A flipped byte inside a checksummed (SHA-256/MD5) or encrypted chunk's data is found."""
    src = tiledb_array(name)
    doc = formats.open(src, key=key)
    # every chunk's filtered data whose pipeline has a checksum or AES stage
    targets = []
    for n in doc.root.walk(expand_lazy=True):  # chunk nodes are built when asked for
        info = n.data
        if n.kind == "chunk" and info is not None and n.source in doc.sources and \
                any(s.type in (11, 12, 13) for s in info.specs) and info.filtered_length > 0:
            targets.append((n.source.name, info.data_offset + info.filtered_length // 2))
    doc.close()
    assert targets, "the fixture has checked chunks"
    rng = random.Random(1)
    for rel, off in rng.sample(targets, min(6, len(targets))):
        dst = str(tmp_path / "m")
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)
        p = os.path.join(dst, rel)
        data = bytearray(open(p, "rb").read())
        data[off] ^= 0x10
        open(p, "wb").write(bytes(data))
        with time_limit(30):
            findings = verify(formats.open(dst, key=key))
        errors = [f for f in findings if f.status == "error" and f.source == rel]
        assert errors, f"flip at {rel}@{off} not reported: {findings[:5]}"


def test_truncation_is_always_reported(tiledb_array, tmp_path):
    src = tiledb_array("filter_stacks_array")
    doc = formats.open(src)
    rng = random.Random(3)
    cases = []
    for rel in files_of(src):
        s = doc.source_by_name(rel)
        cuts = sorted({n.offset for n in doc.root.walk() if n.source is s and 0 < n.offset < s.size})
        for off in rng.sample(cuts, min(5, len(cuts))):
            cases.append((rel, off))
    doc.close()
    for rel, off in cases:
        dst = str(tmp_path / "t")
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)
        p = os.path.join(dst, rel)
        data = open(p, "rb").read()
        open(p, "wb").write(data[:off])
        with time_limit(30):
            findings = verify(formats.open(dst))
        assert any(f.status == "error" for f in findings), f"truncating {rel} at {off} not reported"

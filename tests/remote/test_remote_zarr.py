"""Zarr arrays at a URL: opening reads the metadata only (each chunk is an object: framed
when shown), and the built tree, `dump` and `verify` equal the local ones — a large array
(chunks decoded on demand) and a small one (decoded when built), with damaged chunks."""
from __future__ import annotations

import os

import fsspec
import numcodecs
import pytest
import zarr
from zarr.codecs import ZstdCodec

from arrayscope import formats
from arrayscope.formats.core.node import to_json
from arrayscope.formats.core.verify import verify
from tests.support.zarr_arrays import FLAT, make


@pytest.mark.parametrize("chunks", [300, 12], ids=["lazy", "eager"])
def test_zarr_url_reads_chunks_only_when_shown(tmp_path, chunks):
    path = str(tmp_path / "z")
    data = make(FLAT, (chunks * 4,), seed=9)
    z = zarr.create_array(path, shape=data.shape, chunks=(4,), dtype=FLAT, zarr_format=3,
                          compressors=[ZstdCodec(level=1, checksum=True)])
    z[...] = data
    raw = bytearray(open(os.path.join(path, "c", "3"), "rb").read())
    raw[-1] ^= 0xFF                                   # a bad checksum
    open(os.path.join(path, "c", "3"), "wb").write(bytes(raw))
    short = numcodecs.Zstd(level=1, checksum=True).encode(data[20:21].tobytes())
    open(os.path.join(path, "c", "5"), "wb").write(short)   # one record short of four
    mem = fsspec.filesystem("memory")
    where = f"/zarr-{tmp_path.name}-{chunks}/z"      # the same name as the local folder
    mem.put(path, where, recursive=True)
    url = f"memory://{where}"
    try:
        doc = formats.open(url)
        assert doc.fs.stats.requests == 2            # the listing and zarr.json
        local = formats.open(path)
        assert to_json(doc.root, doc.source_name) == to_json(local.root, local.source_name)
        found = verify(formats.open(url))
        assert found == verify(formats.open(path))
        assert {f.source for f in found if f.status == "error"} >= {"c/3"}
        assert len([f for f in found if f.status == "error"]) >= 2
    finally:
        mem.rm(where.rsplit("/", 1)[0], recursive=True)

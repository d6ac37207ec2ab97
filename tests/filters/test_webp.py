"""WEBP tiles written by tiledb-py 0.36.1 (libtiledb's libwebp), decoded with Pillow: lossless
images bit-exact with tiledb-py's read, lossy ones equal to tiledb-py's read; forward
reproduces lossless tiles (the same pixels; the same bytes where libwebp agrees); verify is
clean on both."""
from __future__ import annotations

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core.verify import verify_report
from arrayscope.formats.filters import DataInfo, RunContext, get, reverse_chunk
from arrayscope.formats.tiledb.verify.forward_check import check_forward
from tests.support.filter_arrays import fragment_files, walk

RNG = np.random.default_rng(5)


def _image_array(uri, fmt, lossless, h=16, w=24):
    ch = 4 if fmt in (3, 4) else 3
    dom = tiledb.Domain(tiledb.Dim("y", domain=(0, h - 1), tile=h, dtype=np.uint32),
                        tiledb.Dim("x", domain=(0, w * ch - 1), tile=w * ch, dtype=np.uint32))
    flt = tiledb.WebpFilter(input_format=fmt, quality=80.0, lossless=lossless)
    attr = tiledb.Attr("rgb", dtype=np.uint8, filters=tiledb.FilterList([flt]))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[attr]))
    # smooth gradients plus noise: a picture, not pure noise
    yy, xx = np.mgrid[0:h, 0:w * ch]
    img = ((yy * 7 + xx * 3) % 256 + RNG.integers(0, 8, (h, w * ch))).astype(np.uint8)
    if ch == 4:
        img[:, 3::4] = 255   # opaque alpha: libwebp keeps RGB exactly where alpha is 255
    with tiledb.open(uri, "w") as A:
        A[:] = img
    with tiledb.open(uri) as A:
        read = A[:]["rgb"]
    return img, read


def _spec_of(doc):
    return doc.model.latest_schema.attributes[0].filters


@pytest.mark.parametrize("fmt", [1, 2, 3, 4], ids=["RGB", "BGR", "RGBA", "BGRA"])
def test_lossless_reverse_is_bit_exact_and_forward_reproduces(tmp_path, fmt):
    uri = str(tmp_path / "img")
    img, read = _image_array(uri, fmt, lossless=True)
    assert np.array_equal(read, img)
    doc = formats.open(uri)
    specs = _spec_of(doc)
    ((orig, md, data),) = walk(fragment_files(uri)["a0.tdb"])[0]
    r = reverse_chunk(specs, md, data, DataInfo(6), RunContext(None, orig))
    assert r.error is None and r.cells == read.tobytes()
    made = get(18).forward(specs[0], r.stages[0], DataInfo(6), RunContext())
    again = reverse_chunk(specs, made.metadata_bytes, made.data_bytes, DataInfo(6),
                          RunContext(None, orig))
    assert again.cells == r.cells          # forward gives the same pixels back
    (c,) = check_forward(specs, r.stages, DataInfo(6))
    assert c.ok
    report = verify_report(doc)
    assert report.exit_code() == 0, [f.line() for f in report.findings]


@pytest.mark.parametrize("fmt", [1, 3], ids=["RGB", "RGBA"])
def test_lossy_reverse_equals_tiledb_read(tmp_path, fmt):
    uri = str(tmp_path / "img")
    img, read = _image_array(uri, fmt, lossless=False)
    assert not np.array_equal(read, img)   # lossy indeed
    from arrayscope.formats.tiledb.values.field_values import values

    (frag,) = values(formats.open(uri), "rgb")
    assert bytes(frag["raw"]) == read.tobytes()
    report = verify_report(formats.open(uri))
    assert report.exit_code() == 0, [f.line() for f in report.findings]


def test_missing_pillow_is_unchecked_not_damage(tmp_path, monkeypatch):
    import builtins

    uri = str(tmp_path / "img")
    _image_array(uri, 1, lossless=True)
    real = builtins.__import__

    def no_pil(name, *a, **k):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("no PIL")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pil)
    report = verify_report(formats.open(uri))
    assert report.exit_code() == 3, [f.line() for f in report.findings]
    assert not report.problems
    assert any(f.code == "unchecked" for f in report.findings)

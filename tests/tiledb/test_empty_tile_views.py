"""An empty tile through filters that pass their input on (NOOP, a checksum, a window
filter that does not apply): libtiledb's `FilterBuffer::append_view` skips empty views, so
the next filter sees no part at all, and a checksum after NOOP counts 0 data parts where a
checksum first counts one empty part. verify reproduces both (issue 30: found by the
differential generator, tests/tiledb/generated)."""
from __future__ import annotations

import numpy as np
import tiledb

from arrayscope import formats
from arrayscope.formats.core.verify import verify_report

PIPELINES = [
    [tiledb.NoOpFilter(), tiledb.ChecksumMD5Filter()],
    [tiledb.ChecksumSHA256Filter()],
    [tiledb.ChecksumMD5Filter(), tiledb.ChecksumSHA256Filter()],
    [tiledb.NoOpFilter(), tiledb.NoOpFilter(), tiledb.ChecksumMD5Filter()],
    [tiledb.ChecksumMD5Filter(), tiledb.NoOpFilter(), tiledb.ChecksumMD5Filter()],
    [tiledb.ZstdFilter(), tiledb.ChecksumMD5Filter()],
]


def test_empty_var_tiles_through_pass_on_filters_verify_clean(tmp_path):
    uri = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim(name="d0", domain=(0, 1), tile=1, dtype="int8"))
    attrs = [tiledb.Attr(f"b{i}", dtype=bytes, var=True, filters=f) for i, f in
             enumerate(PIPELINES)]
    attrs += [tiledb.Attr(f"s{i}", dtype=str, var=True, filters=f) for i, f in
              enumerate(PIPELINES)]
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=attrs, offsets_filters=[tiledb.NoOpFilter(), tiledb.ChecksumMD5Filter()]))
    data = {a.name: np.array([b"" if a.dtype == np.bytes_ else ""], dtype=object) for a in attrs}
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[0:1] = data
    with tiledb.open(uri) as A:   # libtiledb reads every one of them back
        got = A[0:1]
    assert all(got[a.name][0] in ("", b"") for a in attrs)
    report = verify_report(formats.open(uri))
    assert report.exit_code() == 0, [f.line() for f in report.findings]
    assert not [f for f in report.findings if f.status in ("error", "warning")]

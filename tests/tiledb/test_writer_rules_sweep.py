"""False alarms the zero-false-alarm sweep found (verify over fresh tiledb-py 0.36.1 arrays
exercising every filter with edge sizes and values), each on the bytes the writer made:
verify is silent on the clean array, and the check that misfired still finds the damage."""
from __future__ import annotations

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.findings import COORD_ORDER
from arrayscope.formats.tiledb import cell_checks as C
from arrayscope.formats.verify import verify_report


def _sparse(uri, dtype, domain, xs):
    dom = tiledb.Domain(tiledb.Dim("x", domain=domain, tile=2 ** 20, dtype=dtype),
                        tiledb.Dim("y", domain=(-1000, 1000), tile=100, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=1000,
                                                attrs=[tiledb.Attr("a", dtype=np.float64)]))
    ys = np.arange(len(xs), dtype=np.int32) - 1000
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.asarray(xs, dtype=dtype), ys] = {"a": np.linspace(0, 1, len(xs))}
    with tiledb.open(uri) as A:
        return A.query(order="G")[:]["x"]


@pytest.mark.parametrize("dtype,domain,xs", [
    # x - domain low passes INT64 max for x = 2**62: the tile index overflowed int64
    (np.int64, (-2 ** 62, 2 ** 62), [-2 ** 62, 2 ** 62, 0, -1, 1, 2 ** 62 - 1]),
    # a uint64 coordinate above 2**63 went negative as int64
    (np.uint64, (0, 2 ** 64 - 2 ** 21), [0, 2 ** 63 + 5, 2 ** 63 - 5, 2 ** 64 - 2 ** 21, 7]),
], ids=["int64-near-2**62", "uint64-above-2**63"])
def test_global_order_with_coordinates_far_from_the_domain_low(tmp_path, dtype, domain, xs):
    uri = str(tmp_path / "s")
    stored = _sparse(uri, dtype, domain, xs)
    assert sorted(int(v) for v in stored) == [int(v) for v in stored]   # the writer's order
    report = verify_report(formats.open(uri))
    assert report.exit_code() == 0 and not report.findings, [f.line() for f in report.findings]
    # the order check on the same schema still sees two cells of distinct tiles swapped
    doc = formats.open(uri)
    schema = doc.model.latest_schema
    x = np.asarray(stored, dtype=dtype)
    y = np.full(len(x), -1000, np.int32)
    swapped = x.copy()
    swapped[[0, -1]] = swapped[[-1, 0]]
    for cols, bad in (([x], False), ([swapped], True)):
        out = C._Out()
        C._check_order(out, "d0.tdb", schema, {0: cols, 1: [y]}, [0])
        assert any(f.code == COORD_ORDER for f in out.finish()) == bad

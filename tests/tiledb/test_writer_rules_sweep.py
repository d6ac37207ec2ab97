"""False alarms the zero-false-alarm sweep found (verify over fresh tiledb-py 0.36.1 arrays
exercising every filter with edge sizes and values), each on the bytes the writer made:
verify is silent on the clean array, and the check that misfired still finds the damage."""
from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core.findings import COORD_ORDER
from arrayscope.formats.core.verify import verify_report
from arrayscope.formats.filters import RunContext
from arrayscope.formats.tiledb.verify import cell_checks as C
from arrayscope.formats.tiledb.verify.forward_check import check_forward
from tests.support import paths


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


# ---- deltas that wrap: libtiledb < 2.29 stored them (tests/data/writer_rules/wrapping) --------
WRAPPING = os.path.join(paths.DATA, "writer_rules", "wrapping")


def _expected(lib):
    with open(os.path.join(WRAPPING, lib, "expected.json"), encoding="utf-8") as f:
        return json.load(f)


def _decoded(uri):
    from arrayscope.formats.tiledb.values.field_values import values

    (frag,) = values(formats.open(uri), "a", None)
    assert "error" not in frag, frag["error"]
    return frag["values"]


@pytest.mark.parametrize("lib", ["1.5.0", "2.19.2"])
@pytest.mark.parametrize("name", ["dd_int64_extremes", "dd_uint64_extremes"])
def test_double_delta_wrapping_deltas_before_2_29(lib, name):
    """Deltas outside int64 (INT64_MIN next to INT64_MAX; uint64 0 next to 2**64 - 1): libtiledb
    >= 2.29 refuses the tile, older writers stored the wrapped deltas, which read back. The
    forward check reproduces them by the < 2.29 rule (named, at info level), never an error."""
    from arrayscope.formats.filters.deltas import DD_DELTAS_OF_DELTAS_ONLY
    from arrayscope.formats.tiledb.verify.chunk_walk import iter_chunks_with_tiles
    from arrayscope.formats.tiledb.verify.forward_check import IDENTICAL

    uri = os.path.join(WRAPPING, lib, name)
    assert _decoded(uri) == _expected(lib)["arrays"][name]
    (ci,) = [ci for ci, _t in iter_chunks_with_tiles(formats.open(uri).root)
             if os.path.basename(ci.source.name) in ("a.tdb", "a0.tdb")]
    run = ci.reverse()
    assert run.error is None
    for fv in (ci.info.format_version, 22):   # 22: both rules tried, the old one matches
        info = dataclasses.replace(ci.info, format_version=fv)
        (c,) = check_forward(ci.specs, run.stages, info,
                             RunContext(None, ci.original_length, offsets=run.offsets))
        assert c.status == IDENTICAL and c.rule == DD_DELTAS_OF_DELTAS_ONLY.name, c.message
    report = verify_report(formats.open(uri))
    assert report.exit_code() == 0
    assert [f.status for f in report.findings] == ["info"], [f.line() for f in report.findings]
    assert "libtiledb < 2.29" in report.findings[0].message


@pytest.mark.parametrize("lib", ["1.5.0", "2.19.2"])
def test_bwr_window_of_int64_min_and_max_before_2_29(lib):
    """[INT64_MIN, INT64_MAX] x 20 under BIT_WIDTH_REDUCTION: the wrapped range (-1) gives 8-bit
    windows of offsets 0 and -1, which read back. The bytes cannot tell this from a window
    whose other values were lost (they decode to values that encode the same way): verify
    names the pre-2.29 writer bug as a warning, never an error."""
    uri = os.path.join(WRAPPING, lib, "bwr_int64_extremes")
    assert _decoded(uri) == _expected(lib)["arrays"]["bwr_int64_extremes"] == \
        [-2 ** 63, 2 ** 63 - 1] * 20
    report = verify_report(formats.open(uri))
    assert report.exit_code() == 0
    bugs = [f for f in report.findings if f.status != "info"]
    assert [(f.status, f.code) for f in bugs] == [("warning", "writer-bug")]
    assert "2 window(s)" in bugs[0].message and "libtiledb < 2.29" in bugs[0].message


WRITTEN_LOST = [-2 ** 63, 2 ** 63 - 1, 0, -1, 1, -2 ** 63 + 1, 2 ** 63 - 2]


@pytest.mark.parametrize("lib", ["1.5.0", "2.19.2"])
def test_bwr_windows_that_lost_values_before_2_29(lib):
    """[INT64_MIN, INT64_MAX, 0, -1 | 1, INT64_MIN + 1, INT64_MAX - 1, padding]: both windows
    wrap to 8 bits and lose values, as the writer's own read shows (0 -> INT64_MIN, 1 ->
    INT64_MIN + 1). 2.19 pads with 0, so the second window's offset (its minimum as written,
    INT64_MIN + 1) is above a cell as read: forward from the cells cannot give the stored
    bytes, and the < 2.29 rule for lost windows names that writer bug (a warning, not a
    forward-mismatch error). 1.5 pads with INT64_MIN: the loss cannot be told from a clean
    window there, the general < 2.29 note says so."""
    uri = os.path.join(WRAPPING, lib, "bwr_lost_padded")
    read = _expected(lib)["arrays"]["bwr_lost_padded"]
    assert read != WRITTEN_LOST and read[2] == -2 ** 63 and read[4] == -2 ** 63 + 1
    assert _decoded(uri)[:7] == read
    report = verify_report(formats.open(uri))
    assert report.exit_code() == 0
    assert {f.status for f in report.findings} <= {"info", "warning"}
    bugs = [f.message for f in report.findings if f.code == "writer-bug"]
    assert bugs and all("libtiledb < 2.29" in m for m in bugs)
    assert any("lost values" in m for m in bugs) == (lib == "2.19.2")


@pytest.mark.parametrize("name,offset,flip,lost", [
    ("bwr_lost_padded", -2 ** 63 + 1, False, True),   # the writer's bytes: the lost rule
    ("bwr_lost_padded", -2 ** 63 + 1, True, False),   # that offset changed to INT64_MIN + 3
    ("bwr_int64_extremes", -2 ** 63, True, False),    # a clean window's: to INT64_MIN + 2
])
def test_bwr_lost_rule_does_not_hide_damage(name, offset, flip, lost):
    """The lost-window rule accepts only windows that wrapped (offset near T min, a cell near
    T max) and decode below their offset: a changed window offset stays a forward-mismatch.
    (A changed cell offset inside a reduced window re-encodes to the same bytes: only a
    checksum filter can see that.)"""
    from arrayscope.formats.filters import get, stage_infos
    from arrayscope.formats.filters.windows import BWR_WRAPPING_LOST
    from arrayscope.formats.tiledb.verify.chunk_walk import iter_chunks_with_tiles
    from arrayscope.formats.tiledb.verify.forward_check import DIFFERENT, TOLERATED

    uri = os.path.join(WRAPPING, "2.19.2", name)
    want = offset.to_bytes(8, "little", signed=True)
    ((ci, stored),) = [(ci, st) for ci, st in (
        (ci, ci.reverse().stages[1]) for ci, _t in iter_chunks_with_tiles(formats.open(uri).root)
        if ci.source.name.endswith("/a0.tdb")) if st.metadata_bytes[8:16] == want]
    md = bytearray(stored.metadata_bytes)
    if flip:
        md[8] ^= 0x02   # the low byte of window 1's offset
    bad = dataclasses.replace(stored, metadata=[bytes(md)])
    spec = ci.specs[0]
    cells = get(spec.type).reverse(spec, bad, stage_infos(ci.specs, ci.info)[0], RunContext())
    (c,) = check_forward(ci.specs[:1], [cells, bad], ci.info)
    if lost:
        assert c.status == TOLERATED and c.rule == BWR_WRAPPING_LOST.name
        assert c.notes == (BWR_WRAPPING_LOST.note,)
    else:
        assert c.status == DIFFERENT and not c.notes, c.message

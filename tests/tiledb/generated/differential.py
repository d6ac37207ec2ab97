"""Run one generated tiledb-py script and hold arrayscope's answers against tiledb-py's own
(issue 30): verify is clean, `values` equals tiledb-py's read of every field of every
fragment, the fragments a reader sees at T equal `FragmentInfoList` opened at (0, T), and
`stats` counts as many cells per field as the reads give. Every call is in-process (the
engine's APIs, not the command line): the default suite runs 200 arrays."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from typing import Dict, List, Optional, Tuple

import numpy as np
import tiledb

from arrayscope import formats
from arrayscope.formats.core import health as H
from arrayscope.formats.core.verify import open_for_verify, verify_report
from arrayscope.formats.tiledb.values import field_values as V
from arrayscope.formats.tiledb.verify.reader_faults import NO_BUFFER, OVERFLOW
from tests.support.tiledb_oracle import as_tiledb_py, fragment_cells
from tests.tiledb.test_tiledb_values import _check_entry, _norm

from .strategies import GenScript

# Failure classes another branch is fixing (issue 30; /work/notes/gen_failures.md): owner,
# then a pattern every line of the failure matches. Emptied as the fixes land.
KNOWN: List[Tuple[str, str]] = []


def known_failure(message: str) -> Optional[str]:
    """The owner of a failure whose every finding is of a KNOWN class, else None."""
    lines = [ln for ln in message.splitlines()[1:] if ln.strip()] if \
        message.startswith("verify:") else message.splitlines()[:1]
    owners = []
    for ln in lines:
        owner = next((o for o, pattern in KNOWN if re.search(pattern, ln)), None)
        if owner is None:
            return None
        owners.append(owner)
    return "; ".join(sorted(set(owners))) or None


# A warning that libtiledb's own read confirms (a writer bug, documented with the library
# version) is allowed: `check` asserts the read fails as the warning says.
UNREADABLE_EMPTY_TILE = "empty-tile-unreadable"   # libtiledb 2.30 (reader_faults.py)
ALLOWED_WARNINGS: frozenset = frozenset({UNREADABLE_EMPTY_TILE})


def _ctx(key: Optional[str]) -> tiledb.Ctx:
    cfg = {"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key} if key else {}
    return tiledb.Ctx(cfg)


def write(script: GenScript, uri: str) -> None:
    """Run the script: it creates `uri` and writes its history."""
    exec(compile(script.text, "<generated tiledb-py script>", "exec"), {"uri": uri})


def check(script: GenScript, uri: str, cli_verify: bool = False) -> None:
    """Every check on the array the script wrote. `cli_verify`: verify the way the command
    line does (`open_for_verify`: one fragment at a time) rather than on the one parse of
    the whole array the other checks share (the same findings; half the time)."""
    key = script.key.encode() if script.key else None
    doc = formats.open(uri, key=key)   # one parse of the array for every check
    report = check_verify(open_for_verify(uri, key) if cli_verify else doc)
    warned = [f.line() for f in report.findings if f.code == UNREADABLE_EMPTY_TILE]
    if warned:
        # the writer bug the warning names: libtiledb's own read of the array fails so
        said = [m for m in (NO_BUFFER, OVERFLOW) if any(m in w for w in warned)]
        dropped = [f for f in report.findings if f.code == UNREADABLE_EMPTY_TILE and
                   "the latest schema has no" in f.message]
        # an attribute a later evolution dropped: the read at the latest schema succeeds,
        # the read at the warned fragment's own time (its schema has it) is the one that fails
        times = [None] if len(dropped) < len(warned) else \
            [int(f.source.rsplit("/", 1)[-1][2:].split("_")[1]) for f in dropped]
        for t in times:
            try:
                with tiledb.open(uri, timestamp=t, ctx=_ctx(script.key)) as A:
                    A[:]
            except tiledb.TileDBError as e:
                assert any(m in str(e) for m in said), \
                    f"warned {said}, the read fails otherwise: {e}"
            else:
                raise AssertionError("verify warns libtiledb cannot read an empty tile; it "
                                     f"reads it (at {t or 'the latest time'})")
        check_fragments_at(script, doc, key)
        return
    counts = check_values(script, doc, key)
    check_stats(doc, key, counts)
    check_fragments_at(script, doc, key)


def check_verify(doc):
    report = verify_report(doc)
    bad = [f for f in report.findings if f.status == "error" or
           (f.status == "warning" and f.code not in ALLOWED_WARNINGS)]
    assert not bad and report.exit_code() == 0, \
        "verify: exit %d\n%s" % (report.exit_code(), "\n".join(f.line() for f in report.findings))
    return report


def _fields(schema: tiledb.ArraySchema) -> List[str]:
    return [schema.attr(i).name for i in range(schema.nattr)] + \
        [schema.domain.dim(i).name for i in range(schema.domain.ndim)]


def check_values(script: GenScript, doc, key: Optional[bytes]) -> Dict[str, Dict[str, int]]:
    """Every field of every fragment a reader loads now against tiledb-py's read of that
    fragment alone; gives fragment -> field -> cells stored."""
    ctx = _ctx(script.key)
    uri = doc.path
    frags = list(tiledb.FragmentInfoList(uri, ctx=ctx))
    counts: Dict[str, Dict[str, int]] = {}
    sizes: Dict[str, Optional[int]] = {}
    for f in frags:
        name = os.path.basename(f.uri)
        t1, t2 = f.timestamp_range
        # a delete inside the fragment's own time range is applied by a read of that range,
        # not to the cells stored: such a fragment is checked by verify and stats only
        if any(t1 <= d <= t2 for d in script.delete_times):
            continue
        with tiledb.open(uri, timestamp=f.timestamp_range, ctx=ctx) as A:
            schema = A.schema   # the fragment's own schema (schema evolution)
        for field in _fields(schema):
            is_attr = schema.has_attr(field)
            entries = {e["name"]: e for e in V.values(doc, field, key)}
            assert name in entries, f"values {field!r}: no entry for {name}; {sorted(entries)}"
            e = entries[name]
            label = f"{name}/{field}"
            if e.get("error") and "not in this fragment's schema" in e["error"]:
                continue   # an attribute the evolution added after this fragment
            assert not e.get("error"), f"values {label}: {e['error']}"
            if not f.sparse and not is_attr:
                continue   # dense coordinates are implied (test_tiledb_dense_coords.py)
            expected, covered = fragment_cells(uri, f, field, script.key, script.write_times)
            var = schema.attr(field).isvar if is_attr else schema.domain.dim(field).isvar
            if not is_attr and str(expected.dtype) == "object":
                var = True
            if covered is not None and t1 != t2 and not covered.all():
                # a consolidated dense fragment stores the fill value, not zeros, in the
                # cells of its tiles outside its non-empty domain (libtiledb's consolidator
                # writes what its reader gives there): held against the attribute's fill
                _check_padding(e, covered, schema.attr(field), var, f"values {label}")
                if var:
                    _check_var_cells(e, expected, covered, schema.attr(field),
                                     f"values {label}")
                    counts.setdefault(name, {})[field] = len(expected)
                    sizes[field] = _cell_size(schema, field)
                    continue
                counts.setdefault(name, {})[field] = len(expected)
                e, expected = _only(e, covered), expected[np.flatnonzero(covered)]
                covered = None
            _check_entry(e, expected, covered, var, f"values {label}")
            counts.setdefault(name, {}).setdefault(field, len(expected))
            sizes[field] = _cell_size(schema, field)
    counts["__cell_sizes__"] = sizes   # type: ignore[assignment]
    return counts


def _check_padding(entry, covered: np.ndarray, attr, var: bool, label: str) -> None:
    vals = entry["values"]
    pad = np.flatnonzero(~covered)
    if var:
        return   # the var fill (one byte) is checked by verify's cell counts
    cell = attr.dtype.itemsize
    ours = np.frombuffer(entry["raw"], np.uint8).reshape(len(vals), cell)[pad]
    if attr.isnullable:   # null, whatever its value bytes (tiledb-py gives no fill here)
        assert all(vals[i] is None for i in pad), f"{label}: padding cells are not null"
        return
    fill = np.frombuffer(_stored_fill(attr).tobytes(), np.uint8)
    assert (ours == fill).all(), f"{label}: padding cells are not the fill value {attr.fill!r}"


def _stored_fill(attr) -> np.ndarray:
    """The fill value as the attribute's filters store it, from libtiledb itself: one cell
    written and read back through the same pipeline. A lossy filter keeps only what it can
    (FloatScale casts NaN to an integer: on x86 INT_MIN of its byte width, which reads back
    as scale * INT_MIN + offset), and the consolidator writes the fill through it."""
    d = tempfile.mkdtemp(prefix="asgen-fill-")
    try:
        uri = os.path.join(d, "f")
        dom = tiledb.Domain(tiledb.Dim(name="d", domain=(0, 0), tile=1, dtype="int8"))
        a = tiledb.Attr("v", dtype=attr.dtype, filters=attr.filters)
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[a]))
        with tiledb.open(uri, "w") as A:
            A[0:1] = {"v": np.asarray(attr.fill, dtype=attr.dtype).reshape(1)}
        with tiledb.open(uri) as A:
            return np.asarray(A[0:1]["v"], dtype=attr.dtype)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _only(entry, covered: np.ndarray):
    """A fixed-size entry restricted to the covered cells."""
    idx = np.flatnonzero(covered)
    n = len(entry["values"])
    out = dict(entry)
    out["values"] = [entry["values"][i] for i in idx]
    out["raw"] = np.frombuffer(entry["raw"], np.uint8).reshape(n, -1)[idx].tobytes() \
        if n else b""
    return out


def _check_var_cells(entry, expected, covered: np.ndarray, attr, label: str) -> None:
    vals = entry["values"]
    text = np.dtype(attr.dtype).kind in "US"
    assert len(vals) == len(expected), f"{label}: {len(vals)} values, tiledb-py {len(expected)}"
    mask = np.ma.getmaskarray(expected) if np.ma.isMaskedArray(expected) else \
        np.zeros(len(expected), bool)
    data = np.ma.getdata(expected)
    for i in np.flatnonzero(covered):
        want = None if mask[i] else _norm(data[i])
        got = None if vals[i] is None else _norm(as_tiledb_py(vals[i]) if text else vals[i])
        assert got == want, f"{label}: cell {i}: {vals[i]!r} != {data[i]!r}"


def check_stats(doc, key: Optional[bytes], counts: Dict[str, Dict[str, int]]) -> None:
    """`stats`: the decoded bytes of each data file are the cells the read gave."""
    sizes = counts.pop("__cell_sizes__", {})
    report = H.space(doc)
    by_name = {fs.fragment: fs for fs in report.fragments}
    for frag, fields in counts.items():
        fs = by_name.get(frag)
        assert fs is not None, f"stats: no fragment {frag}"
        for part in fs.fields:
            n = fields.get(part.name)
            assert not part.error, f"stats {frag}/{part.name} ({part.part}): {part.error}"
            if n is None:
                continue
            if part.part == "validity":
                want = n
            elif part.part == "offsets":
                want = 8 * n
            elif part.part == "fixed" and sizes.get(part.name):
                want = n * sizes[part.name]
            else:
                continue   # var bytes: checked by values
            assert part.decoded == want, \
                f"stats {frag}/{part.name} ({part.part}): {part.decoded} B decoded, the read " \
                f"gives {n} cells ({want} B)"


def _cell_size(schema: tiledb.ArraySchema, name: str) -> Optional[int]:
    if schema.has_attr(name):
        a = schema.attr(name)
        return None if a.isvar else a.dtype.itemsize
    d = schema.domain.dim(name)
    return None if d.isvar else np.dtype(d.dtype).itemsize


def times_to_check(script: GenScript) -> List[Optional[int]]:
    """Every write and delete timestamp, the midpoints between them, and now (None)."""
    ts = sorted(set(script.write_times + script.delete_times))
    out: List[Optional[int]] = []
    for i, t in enumerate(ts):
        if i:
            out.append((ts[i - 1] + t) // 2)
        out.append(t)
    if ts:
        out.append(ts[-1] + 1)
    return sorted(set(out)) + [None]


def _range(name: str):
    t1, t2 = name.split("_")[2:4]
    return int(t1), int(t2)


def fragment_info_at(uri: str, key: Optional[str], at: Optional[int]) -> List[str]:
    """The fragments `FragmentInfoList` lists at (0, T). libtiledb 2.30's FragmentInfo
    always loads at (0, now) (`set_default_timestamp_range`: "TODO: get the timestamp range
    from the config"), so its answer at T is built from its answer now the way its
    ArrayDirectory filters at (0, T): a fragment is loaded when its range lies in [0, T]
    (dense: `full_overlap_only`) or starts by T (sparse: its cells carry their own
    timestamps), and hidden when a consolidated fragment loaded at T covers its range and
    libtiledb lists it to vacuum (only a fragment a consolidation superseded is)."""
    fil = tiledb.FragmentInfoList(uri, ctx=_ctx(key))
    now = [os.path.basename(u) for u in fil.uri]
    gone = [os.path.basename(u.rstrip("/")) for u in fil.to_vacuum]
    if at is None:
        return sorted(now)
    dense = not tiledb.ArraySchema.load(uri, ctx=_ctx(key)).sparse
    loaded = [n for n in now + gone if _range(n)[1 if dense else 0] <= at]
    out = []
    for n in loaded:
        a, b = _range(n)
        hidden = n in gone and any(c != n and _range(c)[0] <= a and b <= _range(c)[1]
                                   for c in loaded)
        if not hidden:
            out.append(n)
    return sorted(out)


def check_fragments_at(script: GenScript, doc, key: Optional[bytes]) -> None:
    for at in times_to_check(script):
        want = fragment_info_at(doc.path, script.key, at)
        h = H.health(doc, at)
        got = sorted(f.name for f in h.visible)
        assert got == want, f"fragments --at {at}: arrayscope sees {got}, FragmentInfoList {want}"

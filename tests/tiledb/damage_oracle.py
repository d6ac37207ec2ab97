"""tiledb-py's read of an array, as one digest per read (issue 30, the damage differential):
the whole array (every field, and the array metadata) and each fragment alone (a read at
its timestamp range). Run in its own process (`python -m tests.tiledb.damage_oracle URI
RANGES_JSON [KEY]`, prints a JSON object label -> digest), because libtiledb reading a
damaged array may abort or crash the process that reads it.

A digest is a sha256 of the cells (sparse reads: the rows sorted, so that the order of
duplicates does not count), or "raises <exception type>"."""
from __future__ import annotations

import hashlib
import json
import sys
from typing import Dict, List, Optional, Tuple

import numpy as np
import tiledb


def _ctx(key: Optional[str]) -> tiledb.Ctx:
    cfg = {"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key} if key else {}
    return tiledb.Ctx(cfg)


def _cells(a) -> List[str]:
    """One text per cell (values, nulls and NaN payloads exactly)."""
    mask = np.ma.getmaskarray(a) if np.ma.isMaskedArray(a) else None
    data = np.ma.getdata(a) if mask is not None else np.asarray(a)
    flat = data.reshape(-1)
    if flat.dtype.kind == "O":
        out = [repr(x if not isinstance(x, np.ndarray) else (x.dtype.str, x.tobytes()))
               for x in flat]
    else:
        width = flat.dtype.itemsize
        raw = flat.tobytes()
        out = [raw[i * width:(i + 1) * width].hex() for i in range(len(flat))]
    if mask is not None:
        m = mask.reshape(-1)
        out = ["null" if m[i] else c for i, c in enumerate(out)]
    return out


def _digest(result: Dict[str, np.ndarray], sparse: bool) -> str:
    names = sorted(result)
    cols = [_cells(result[n]) for n in names]
    rows = list(zip(*cols)) if cols else []
    if sparse:
        rows.sort()
    h = hashlib.sha256(repr((names, [np.asarray(result[n]).dtype.str for n in names])).encode())
    for r in rows:
        h.update(repr(r).encode())
    return f"{len(rows)} cells {h.hexdigest()[:16]}"


def _read(uri: str, ctx: tiledb.Ctx, timestamp=None) -> str:
    try:
        with tiledb.open(uri, timestamp=timestamp, ctx=ctx) as A:
            sparse = A.schema.sparse
            if sparse:
                result = A.query(order="U")[:]
            else:
                ned = A.nonempty_domain()
                if ned is None:
                    return "empty"
                result = A.multi_index[tuple(slice(lo, hi) for lo, hi in ned)]   # inclusive
            meta = sorted((k, repr(v)) for k, v in A.meta.items()) if timestamp is None else []
        return _digest(result, sparse) + (f" meta {hashlib.sha256(repr(meta).encode()).hexdigest()[:8]}"
                                         if meta else "")
    except Exception as e:   # noqa: BLE001 - any failure of the read is the answer
        return f"raises {type(e).__name__}"


def digests(uri: str, ranges: List[Tuple[int, int]], key: Optional[str]) -> Dict[str, str]:
    ctx = _ctx(key)
    out = {"whole": _read(uri, ctx)}
    for t1, t2 in ranges:
        out[f"at {t1}-{t2}"] = _read(uri, ctx, (t1, t2))
    return out


def fragment_ranges(uri: str, key: Optional[str]) -> List[Tuple[int, int]]:
    return sorted({tuple(f.timestamp_range) for f in tiledb.FragmentInfoList(uri, ctx=_ctx(key))})


if __name__ == "__main__":
    _uri, _ranges = sys.argv[1], [tuple(r) for r in json.loads(sys.argv[2])]
    _key = sys.argv[3] if len(sys.argv) > 3 else None
    print(json.dumps(digests(_uri, _ranges, _key)))

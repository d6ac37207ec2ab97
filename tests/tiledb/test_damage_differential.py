"""The damage differential (issue 30): random clean arrays from the TileDB generator
(generated/strategies.py), each copy damaged the ways real files get damaged (a flipped
byte, a lost 512/4096-byte block, a cut, a missing file: damage.py), judged by tiledb-py's
read: a damage that changes what tiledb-py reads (or makes it fail) must give an error of
`arrayscope verify` located in the damaged file.

Default run: derandomized, 12 arrays x 5 damages. `test_damage_many` (slow): AS_DAMAGE_EXAMPLES
arrays (default 200) x AS_DAMAGE_PER_ARRAY damages (default 8) from seed AS_GEN_SEED
(printed); AS_DAMAGE_LOG names a file that gets one line per damaged copy."""
from __future__ import annotations

import hashlib
import os
import random
import shutil
import tempfile
from typing import List, Optional

import pytest
import tiledb
from hypothesis import HealthCheck, Phase, given, reject, seed, settings

from . import damage as DM
from .damage_oracle import fragment_ranges
from .generated import differential as G
from .generated.strategies import GenScript, scripts

_SETTINGS = dict(deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def damage_all(script: GenScript, per_array: int, log: Optional[str] = None) -> DM.Tally:
    """Write the array, then damage `per_array` copies of it (derandomized by the script)."""
    tally = DM.Tally()
    d = tempfile.mkdtemp(prefix="asdmg-")
    try:
        clean = os.path.join(d, "a")
        try:
            G.write(script, clean)
        except (tiledb.TileDBError, ValueError):
            reject()
        ranges = fragment_ranges(clean, script.key)
        before = DM.oracle(clean, ranges, script.key)
        rng = random.Random(hashlib.sha256(script.text.encode()).digest())
        for _ in range(per_array):
            dmg = DM.draw_damage(rng, clean)
            if dmg is None:
                continue
            o = DM.judge(clean, os.path.join(d, "b"), dmg, script.key, ranges, before)
            tally.add(o)
            if log:
                with open(log, "a") as fh:
                    tag = "MISS" if o.miss else "RAISED" if o.raised else \
                        "UNNOTICEABLE" if o.unnoticeable else \
                        "BENIGN-ALARM" if o.alarm_on_benign else "ok"
                    fh.write(f"{tag} {o.line()}\n")
                    if o.miss or o.raised:
                        fh.write(f"  script:\n{script}\n")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return tally


def _fail_lines(t: DM.Tally, script: GenScript) -> List[str]:
    return [("MISS " if o.miss else "RAISED ") + o.line() for o in t.misses + t.raised] + \
        [repr(script)]


@settings(max_examples=12, derandomize=True, **_SETTINGS)
@given(scripts())
def test_damage_differential(script):
    t = damage_all(script, per_array=5)
    assert not t.misses and not t.raised, "\n".join(_fail_lines(t, script))


_MANY = int(os.environ.get("AS_DAMAGE_EXAMPLES", "200"))
_PER = int(os.environ.get("AS_DAMAGE_PER_ARRAY", "8"))
_SEED = int(os.environ.get("AS_GEN_SEED") or random.randrange(2**32))


@pytest.mark.slow
@seed(_SEED)
@settings(max_examples=_MANY, **_SETTINGS)
@given(scripts())
def test_damage_many(script):
    t = damage_all(script, _PER, os.environ.get("AS_DAMAGE_LOG"))
    assert not t.misses and not t.raised, f"AS_GEN_SEED={_SEED}\n" + "\n".join(_fail_lines(t, script))

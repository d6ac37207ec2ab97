"""The compiled-kernel gate (formats/core/compiled.py): when a kernel is compiled, when the
numpy path is taken instead, and that a compiled kernel computes what its Python source does."""
from __future__ import annotations

import os

import numpy as np

from arrayscope.formats.core import compiled


@compiled.kernel
def _scaled_sum(a, k):
    total = 0
    for i in range(a.shape[0]):
        total += a[i] * k
    return total


def test_disabled_by_environment_gives_numpy_path(monkeypatch):
    monkeypatch.setenv("ARRAYSCOPE_NO_JIT", "1")
    assert compiled.disabled()
    assert _scaled_sum.get(1 << 30) is None


def test_small_input_does_not_import_numba_on_its_own(monkeypatch):
    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    monkeypatch.setattr(compiled, "_tried", False)
    monkeypatch.setattr(compiled, "_numba", None)
    fresh = compiled.Kernel(_scaled_sum.py)
    assert fresh.get(compiled.MIN_BYTES - 1) is None
    assert not compiled.loaded()


def test_compiled_kernel_equals_python_source(monkeypatch):
    import numba  # noqa: F401  (a runtime dependency: its absence is a failure here)
    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    fn = _scaled_sum.get(compiled.MIN_BYTES)
    assert fn is not None and fn is not _scaled_sum.py
    a = np.arange(1000, dtype=np.int64)
    assert fn(a, 3) == _scaled_sum.py(a, 3) == 3 * 999 * 1000 // 2
    # once numba is loaded, small inputs use the compiled kernel too
    assert _scaled_sum.get(1) is fn


def test_missing_numba_gives_numpy_path(monkeypatch):
    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    monkeypatch.setattr(compiled, "_tried", True)
    monkeypatch.setattr(compiled, "_numba", None)
    assert compiled.Kernel(_scaled_sum.py).get(1 << 30) is None


def test_machine_code_cached_in_the_user_cache_not_the_package(tmp_path):
    """A fresh process of our own (`own_process`, as the `arrayscope` command calls it):
    numba's cache goes under the user's cache folder (XDG_CACHE_HOME here), set through
    numba.config with the environment untouched; compiling a kernel writes nothing beside
    the installed sources; the first-compile note is given once, before the compile."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import arrayscope.formats.filters as filters_pkg
    src = Path(filters_pkg.__file__).parent / "__pycache__"
    before = {p.name for p in src.glob("*.nb*")} if src.exists() else set()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path), ARRAYSCOPE_NO_JIT="")
    code = ("import os, sys\n"
            "from arrayscope.formats.core import compiled\n"
            "env = dict(os.environ)\n"
            "compiled.own_process(notice=lambda m: print('NOTE', m))\n"
            "from arrayscope.formats.accel.kernels import prefix_xor\n"
            "import numpy as np\n"
            "prefix_xor.get(1 << 30)(np.arange(9, dtype=np.uint64), np.empty(9, np.uint64))\n"
            "import numba\n"
            "assert dict(os.environ) == env\n"
            "print(numba.config.CACHE_DIR)\n")
    run = [sys.executable, "-c", code]
    first = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
    assert first.splitlines()[0] == f"NOTE {compiled.COMPILE_NOTE}"
    out = first.splitlines()[1]
    assert out == os.path.join(str(tmp_path), "arrayscope", "numba", compiled.kernel_sources_stamp())
    assert any(Path(out).rglob("*prefix_xor*.nbi")), list(Path(out).rglob("*"))
    after = {p.name for p in src.glob("*.nb*")} if src.exists() else set()
    assert after == before
    again = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
    assert again.splitlines() == [out]   # cached: no note


def test_the_decision_rule_and_its_one_tuning_object(monkeypatch):
    """`kernel_wanted` / `bulk_wanted` read `TUNING`: a job below its thresholds stays on
    numpy while numba is not loaded; at or above, numba loads."""
    import dataclasses

    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    monkeypatch.setattr(compiled, "_tried", False)
    monkeypatch.setattr(compiled, "_numba", None)
    monkeypatch.setattr(compiled, "TUNING", dataclasses.replace(compiled.TUNING,
                                                                min_bytes=100, min_files=3))
    assert not compiled.kernel_wanted(99) and not compiled.bulk_wanted(2)
    assert not compiled.loaded()
    assert compiled.bulk_wanted(3) and compiled.loaded()
    assert compiled.kernel_wanted(1)     # loaded: nothing left to pay
    assert not compiled.bulk_wanted(2)   # the bulk reader's own cost: never below min_files


def test_the_rule_weighs_the_stages(monkeypatch):
    """Rule 4–5 of compiled.py: past `min_bytes`, a job of byte-wise stages stays on numpy
    (numba not loaded) until `prepare` has announced `bytewise_min_bytes` of them; a job
    with a bit-level stage, or stages not said, loads numba at once."""
    import dataclasses

    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    monkeypatch.setattr(compiled, "_tried", False)
    monkeypatch.setattr(compiled, "_numba", None)
    monkeypatch.setattr(compiled, "_bytewise_seen", 0)
    monkeypatch.setattr(compiled, "TUNING", dataclasses.replace(
        compiled.TUNING, min_bytes=100, bytewise_min_bytes=1000))
    bytewise = ("BYTESHUFFLE", "ZSTD")
    assert not compiled.kernel_wanted(10 ** 9, bytewise)
    assert not compiled.kernel_wanted(10 ** 9, ("INTERNAL_FILTER_AES_256_GCM", "GZIP"))
    assert not compiled.kernel_wanted(10 ** 9, ())   # no filters: a copy
    compiled.prepare(600, bytewise)
    compiled.prepare(99, ("DOUBLE_DELTA",))   # below min_bytes: nothing to pay for
    assert not compiled.loaded()
    compiled.prepare(600, bytewise)           # 1 200 byte-wise bytes announced
    assert compiled.loaded() and compiled.kernel_wanted(1, bytewise)
    monkeypatch.setattr(compiled, "_tried", False)
    monkeypatch.setattr(compiled, "_numba", None)
    assert compiled.kernel_wanted(100, ("DOUBLE_DELTA", "ZSTD")) and compiled.loaded()
    monkeypatch.setattr(compiled, "_tried", False)
    monkeypatch.setattr(compiled, "_numba", None)
    assert compiled.kernel_wanted(100) and compiled.loaded()   # stages not said


def test_stage_names_of_a_pipeline():
    from arrayscope.formats.filters import FilterSpec
    from arrayscope.formats.filters.enums import FilterType, stage_names

    specs = [FilterSpec(FilterType.BITSHUFFLE), FilterSpec(FilterType.ZSTD), FilterSpec(99)]
    assert stage_names(specs) == ("BITSHUFFLE", "ZSTD", "99")
    assert not compiled.BYTEWISE & {"BITSHUFFLE", "99", "DOUBLE_DELTA", "DELTA", "XOR",
                                    "SCALE_FLOAT", "BIT_WIDTH_REDUCTION", "POSITIVE_DELTA"}


def test_cache_folder_changes_with_any_kernel_module():
    """numba reuses cached code when the caller's own file is unchanged, even if a module it
    inlines changed: the cache folder follows every kernel module (here `simd.py`, which
    `nativekernels.py` calls)."""
    import os

    from arrayscope.formats.accel import simd
    path = simd.__file__
    st = os.stat(path)
    before = compiled.kernel_sources_stamp()
    try:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert compiled.kernel_sources_stamp() != before
    finally:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert compiled.kernel_sources_stamp() == before


def test_old_kernel_caches_pruned_current_and_recent_kept(tmp_path):
    """Every reinstall makes a cache folder of its own (`kernel_sources_stamp`): another
    version's folder nothing wrote for an hour is removed; the current one, a recent one (a
    second install in use) and anything that is not a stamp folder stay."""
    import time

    from arrayscope.formats.core import compiled
    now = time.time()
    folders = {}
    for name, age in (("aaaaaaaaaaaa", 0), ("bbbbbbbbbbbb", 7200), ("cccccccccccc", 60),
                      ("notastamp", 7200)):
        d = tmp_path / name
        (d / "sub").mkdir(parents=True)
        f = d / "sub" / "k.nbi"
        f.write_bytes(b"x" * 10)
        for p in (f, d / "sub", d):
            os.utime(p, (now - age, now - age))
        folders[name] = d
    current = str(folders["aaaaaaaaaaaa"])
    os.utime(current, (now - 9000, now - 9000))   # the current one, however old: kept
    removed = compiled.prune_caches(current, now)
    assert removed == [str(folders["bbbbbbbbbbbb"])]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aaaaaaaaaaaa", "cccccccccccc",
                                                          "notastamp"]


def test_a_stack_compiles_only_its_own_kernel(tmp_path):
    """The first `values` of a [BYTESHUFFLE, ZSTD] array past the numba threshold, with an
    empty kernel cache, in a fresh process of our own: one kernel is made and compiled, the
    one for ZSTD and the byte un-shuffle of 8-byte elements (the fused kernels are closures
    over the pipeline's constants, their stages inlined); no other compiled function is
    compiled (the generic un-shuffles, the bit un-shuffle, the other stacks' decoders), and
    the compile is announced once, before it runs; the cells are tiledb-py's."""
    import json
    import subprocess
    import sys

    import tiledb

    uri, out = str(tmp_path / "a"), str(tmp_path / "out.bin")
    n = compiled.TUNING.min_bytes // 8 * 2
    dom = tiledb.Domain(tiledb.Dim(name="d", domain=(0, n - 1), tile=n // 4, dtype=np.int64))
    fl = tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()])
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr(name="a", dtype=np.int64, filters=fl)]))
    with tiledb.open(uri, "w") as A:
        A[:] = np.arange(n) * 7
    code = (
        "import json, sys\n"
        "from arrayscope.explorer.cli import main\n"
        "from arrayscope.formats.core import compiled\n"
        # (a byte-wise stack: its kernels are loaded only past `bytewise_min_bytes`)
        "compiled.TUNING = compiled.tuned(bytewise_min_bytes=0)\n"
        f"rc = main(['values', {uri!r}, '--field', 'a', '--raw', {out!r}])\n"
        "from arrayscope.formats.accel import kernels, nativekernels, simd\n"
        "sigs = {}\n"
        "for mod in (kernels, nativekernels, simd):\n"
        "    for name, f in vars(mod).items():\n"
        "        f = getattr(f, '_jit', f)\n"
        "        if hasattr(f, 'signatures'):\n"
        "            sigs[mod.__name__.rsplit('.', 1)[-1] + '.' + name] = len(f.signatures)\n"
        "for key, f in nativekernels._FORMS.items():\n"
        "    sigs['_FORMS' + repr(key)] = len(f.signatures)\n"
        "print('RC', rc)\n"
        "print('SIGS=' + json.dumps(sigs))\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "ARRAYSCOPE_NO_JIT")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")   # compiled.user_cache_dir(): empty
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "RC 0" in r.stdout, r.stderr[-3000:]
    sigs = json.loads(r.stdout.split("SIGS=")[1])
    assert r.stderr.count(compiled.COMPILE_NOTE) == 1, r.stderr
    from arrayscope.formats.accel import native, nativekernels

    made = {k: v for k, v in sigs.items() if k.startswith("_FORMS")}
    form = ("_shuffled_kernel", int(native.Codec.ZSTD), nativekernels.BYTES, 8)
    assert made == {"_FORMS" + repr(form): 1}             # made and compiled, once
    compiled_too = {k: v for k, v in sigs.items() if v and not k.startswith("_FORMS")}
    # besides: the u32 reader (LLVM inlines it), for the file's read-only bytes and the
    # decoded part table; everything else inlined or never needed (simd.unshuffle_into, ...)
    assert compiled_too == {"nativekernels._u32": 2}
    with tiledb.open(uri) as A:
        assert open(out, "rb").read() == A[:]["a"].tobytes()

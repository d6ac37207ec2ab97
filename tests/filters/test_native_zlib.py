"""The kernels' zlib part decoder: zlib-ng's inflate (the `zlib_ng` wheel) where installed, the
system zlib's uncompress2 otherwise — both take exactly the parts a complete zlib stream of
the declared size makes (what follows its end ignored, as libtiledb and Python's zlib do),
and refuse the same others."""
import zlib

import numpy as np
import pytest

from arrayscope.formats.filters import native

nativekernels = pytest.importorskip("arrayscope.formats.filters.nativekernels")

PLAIN = (np.arange(20_000, dtype=np.int64) // 7).tobytes()
STREAM = zlib.compress(PLAIN, 6)


def _variants():
    n = len(PLAIN)
    bad = bytearray(STREAM)
    bad[len(bad) // 2] ^= 0xFF
    return [("whole", STREAM, n), ("trailing garbage", STREAM + b"\x01\x02garbage", n),
            ("trailing zeros", STREAM + bytes(64), n), ("cut", STREAM[:-5], n),
            ("cut in the checksum", STREAM[:-1], n), ("declared one more", STREAM, n + 1),
            ("declared one less", STREAM, n - 1), ("a damaged byte", bytes(bad), n),
            ("empty stream", zlib.compress(b""), 0), ("not zlib", b"\x00" * 40, n),
            ("no bytes", b"", n)]


def _python(src: bytes, n: int):
    """What the Python path (`compression.Gzip`) takes: one complete stream of n bytes."""
    d = zlib.decompressobj()
    try:
        out = d.decompress(src, n + 1)
    except zlib.error:
        return None
    return out if d.eof and len(out) == n else None


def _kernel(fns, ctx, src: bytes, n: int):
    inp = np.frombuffer(src + b"\0", np.uint8)   # (never a zero-length buffer)
    out = np.zeros(max(n, 1), np.uint8)
    ok = nativekernels._part(nativekernels.ZLIB, np.array(fns, np.uint64), ctx,
                             inp.ctypes.data, len(src), out.ctypes.data, n,
                             np.zeros(2, np.uint64))
    return out[:n].tobytes() if ok else None


def _system_fns():
    return native._system("z", "uncompress2") + (0, 0)


@pytest.mark.parametrize("name,src,n", _variants(), ids=[v[0] for v in _variants()])
def test_zlib_ng_and_system_zlib_take_what_python_takes(name, src, n):
    want = _python(src, n)
    fns = native.functions(native.Codec.ZLIB)
    assert fns is not None
    assert _kernel(fns, native.context(native.Codec.ZLIB), src, n) == want
    assert _kernel(_system_fns(), 0, src, n) == want
    if name.startswith("whole") or name.startswith("trailing"):
        assert want == PLAIN


def test_zlib_ng_is_used_when_its_wheel_is_installed():
    pytest.importorskip("zlib_ng")
    fns = native.functions(native.Codec.ZLIB)
    assert fns is not None and fns[0] == 0 and fns[1] and fns[2]
    ctx = native.context(native.Codec.ZLIB)
    assert ctx and ctx == native.context(native.Codec.ZLIB)   # one stream per thread


def test_without_zlib_ng_the_system_zlib(monkeypatch):
    import importlib

    real = importlib.import_module

    def no_zlib_ng(name, *a, **k):
        if name.startswith("zlib_ng"):
            raise ImportError(name)
        return real(name, *a, **k)
    monkeypatch.setattr(native.importlib, "import_module", no_zlib_ng)
    fns = native._zlib()
    assert fns[0] and fns[1:] == (0, 0)
    assert _kernel(fns, 0, STREAM, len(PLAIN)) == PLAIN

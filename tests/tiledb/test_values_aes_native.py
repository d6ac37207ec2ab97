"""AES-256-GCM decrypted without the GIL through OpenSSL's EVP calls
(`nativekernels.decrypt_chunks`, `native.aes_gcm`): per variant of a chunk libtiledb
encrypted, the kernel decrypts it exactly when `encryption.decrypt_chunk` (cryptography)
does, to the same bytes; `values` on encrypted arrays takes this path and matches tiledb-py."""
from __future__ import annotations

import struct
import sys

import numpy as np
import pytest
import tiledb
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from arrayscope import formats
from arrayscope.formats.accel import native
from arrayscope.formats.core import compiled
from arrayscope.formats.filters.encryption import decrypt_chunk
from arrayscope.formats.tiledb.values import field_values as V
from tests.tiledb.test_values_direct import KEY, _theirs, _write_encrypted
from tests.tiledb.test_values_fused import first_chunk_of


def test_libcrypto_found_on_linux():
    """Python's own ssl module needs a libcrypto: on Linux one is always there to find."""
    if sys.platform.startswith("linux"):
        assert native.aes_gcm() is not None


def _aes_chunk(tmp_path):
    """The first chunk of an encrypted [Zstd] array tiledb-py wrote: (AES metadata, data)."""
    uri = str(tmp_path / "enc")
    _write_encrypted(uri, [tiledb.ZstdFilter()], n=40_000)
    _role, md, data, _orig = first_chunk_of(uri, KEY.encode())
    return md, data


def _flip(b: bytes, at: int) -> bytes:
    out = bytearray(b)
    out[at] ^= 0x20
    return bytes(out)


def _variants(md: bytes, data: bytes):
    nmd, ndata = struct.unpack_from("<II", md)
    assert (nmd, ndata) == (1, 1)   # Zstd's part table, then its data
    first = struct.unpack_from("<I", md, 8)[0]
    lengths = struct.pack("<II", first + 1, first)
    return {
        "as written": (md, data),
        "tag changed": (_flip(md, 8 + 20), data),
        "second tag changed": (_flip(md, 8 + 36 + 20), data),
        "iv changed": (_flip(md, 8 + 8), data),
        "ciphertext changed": (md, _flip(data, len(data) - 3)),
        "first part changed": (md, _flip(data, 0)),
        "plaintext length differs": (md[:8] + lengths + md[16:], data),
        "counts past the table": (struct.pack("<II", 1, 2) + md[8:], data),
        "data cut": (md, data[:-1]),
        "data with a byte more": (md, data + b"\0"),
        "metadata with bytes more": (md + b"\0" * 4, data),
        "no parts": (struct.pack("<II", 0, 0), data),
        "metadata too short": (md[:6], data),
    }


def _kernel(key: bytes, md: bytes, data: bytes):
    from arrayscope.formats.accel.nativekernels import decrypt_chunks
    blob = md + data
    cap = len(data)
    plain = np.zeros(cap + 16, np.uint8)
    status, pmd, plen = np.ones(1, np.int8), np.zeros(1, np.int64), np.zeros(1, np.int64)
    i64 = lambda v: np.array([v], np.int64)   # noqa: E731
    decrypt_chunks(np.array(native.aes_gcm(), np.uint64), native.aes_context(),
                   np.frombuffer(key, np.uint8), np.frombuffer(blob, np.uint8), i64(0),
                   i64(len(md)), i64(len(md)), i64(len(data)), plain, i64(8), i64(cap), pmd,
                   plen, status)
    if status[0]:
        return None
    return plain, int(pmd[0]), int(plen[0])


@pytest.mark.parametrize("key", [KEY.encode(), b"k" * 32])
def test_kernel_decrypts_exactly_what_cryptography_does(tmp_path, key):
    assert compiled._load() is not None
    if native.aes_gcm() is None:
        pytest.skip("no libcrypto on this platform: cryptography's path runs")
    md0, data0 = _aes_chunk(tmp_path)
    taken = []
    for label, (md, data) in _variants(md0, data0).items():
        theirs = decrypt_chunk(AESGCM(key), md, data)
        ours = _kernel(key, md, data)
        assert (ours is None) == (theirs is None), label
        if ours is None:
            continue
        taken.append(label)
        plain, nmd_bytes, total = ours
        mds, datas = theirs
        assert plain[8:8 + nmd_bytes].tobytes() == b"".join(mds), label
        assert plain[8 + nmd_bytes:8 + total].tobytes() == b"".join(datas), label
        assert not plain[:8].any() and not plain[8 + total:].any(), label   # nothing outside
    if key == KEY.encode():
        assert taken == ["as written", "data with a byte more", "metadata with bytes more",
                         "no parts"]
    else:
        assert taken == ["no parts"]   # the wrong key: every tag fails


def test_values_takes_the_native_path(tmp_path, monkeypatch):
    """`values` on an encrypted [ByteShuffle, LZ4] array: every chunk decrypted by the
    kernel (none left to cryptography), bit for bit with tiledb-py, on two threads."""
    if native.aes_gcm() is None:
        pytest.skip("no libcrypto on this platform: cryptography's path runs")
    from arrayscope.formats.accel import nativekernels
    calls: list = []
    real = nativekernels.decrypt_chunks

    def spy(*a):
        real(*a)
        calls.append(int(a[-1].sum()))   # chunks left by the kernel
    monkeypatch.setattr(nativekernels, "decrypt_chunks", spy)
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(workers=2))
    uri = str(tmp_path / "enc")
    data = _write_encrypted(uri, [tiledb.ByteShuffleFilter(), tiledb.LZ4Filter()], n=600_000)
    e = V.values(formats.open(uri, key=KEY.encode()), "a", KEY.encode(), with_values=False)[0]
    assert not e.get("error"), e.get("error")
    assert bytes(e["raw"]) == data.tobytes() == _theirs(uri, KEY)["a"].tobytes()
    assert calls and all(left == 0 for left in calls), calls

"""A zstd chunk read the way numcodecs reads it (zarr v2's compressor and zarr v3's `zstd`
codec both call numcodecs.Zstd().decode): several frames, skippable frames, bytes after the
last frame, frames without a content size, wrong content sizes. numcodecs 0.16.6 is the
oracle: arrayscope gives its bytes or refuses where it refuses; the tree flags exactly the
chunks it refuses; and a real array whose chunk is rewritten as two frames reads alike in
zarr, `values` and `verify`."""
from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
import warnings
from typing import Callable, Dict

import numcodecs
import numpy as np
import pytest
import zarr
import zstandard
from zarr.codecs import ZstdCodec

from arrayscope import formats  # noqa: E402
from arrayscope.formats.core.node import ERROR, Node  # noqa: E402
from arrayscope.formats.core.source import BytesSource  # noqa: E402
from arrayscope.formats.core.verify import verify  # noqa: E402
from arrayscope.formats.zarr import PLUGIN  # noqa: E402
from arrayscope.formats.zarr.chunk import run_stage  # noqa: E402
from arrayscope.formats.zarr.codecs import CodecError, CodecSpec, get  # noqa: E402
from tests.support.zarr_arrays import FLAT, check_document, check_values, make  # noqa: E402

warnings.filterwarnings("ignore", module="zarr")
warnings.filterwarnings("ignore", category=UserWarning)

DATA = np.arange(1000, dtype="<i4").tobytes()
HALF = len(DATA) // 2 + 3        # frames that do not split on a record boundary
LIMIT = 1 << 16


def comp(b: bytes, size: bool = True, checksum: bool = False) -> bytes:
    return zstandard.ZstdCompressor(level=3, write_content_size=size,
                                    write_checksum=checksum).compress(b)


def skippable(payload: bytes = b"meta") -> bytes:
    return (0x184D2A50).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload


def fcs_plus(frame: bytes, delta: int) -> bytes:
    """`frame` with its Frame_Content_Size field changed by `delta`."""
    fhd = frame[4]
    single, dflag, fcs_flag = (fhd >> 5) & 1, fhd & 3, fhd >> 6
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[dflag]
    n = (1 if single else 0, 2, 4, 8)[fcs_flag]
    v = int.from_bytes(frame[at:at + n], "little") + delta
    return frame[:at] + v.to_bytes(n, "little") + frame[at + n:]


def flip_last(b: bytes) -> bytes:
    return b[:-1] + bytes([b[-1] ^ 1])


A, B = DATA[:HALF], DATA[HALF:]
ONE, NOSIZE = comp(DATA), comp(DATA, size=False)
VARIANTS: Dict[str, bytes] = {
    "one frame": ONE,
    "one frame, checksum": comp(DATA, checksum=True),
    # (a) concatenated frames
    "two frames": comp(A) + comp(B),
    "two frames, checksums": comp(A, checksum=True) + comp(B, checksum=True),
    "two frames, no content sizes": comp(A, False) + comp(B, False),
    "sized then unsized": comp(A) + comp(B, False),
    "unsized then sized": comp(A, False) + comp(B),
    # (b) skippable frames
    "frame + skippable": ONE + skippable(),
    "skippable + frame": skippable() + ONE,
    "frame + empty skippable": ONE + skippable(b""),
    "unsized + skippable": NOSIZE + skippable(),
    "skippable only": skippable(),
    "frame + cut skippable": ONE + skippable()[:-2],
    # (c) bytes after the last frame
    "frame + garbage": ONE + b"xyz!",
    "frame + one zero": ONE + b"\0",
    "frame + 16 zeros": ONE + bytes(16),
    "frame + half a magic": ONE + b"\x28\xb5",
    "frame + a magic alone": ONE + b"\x28\xb5\x2f\xfd",
    "frame + cut frame": ONE + comp(B)[:-3],
    "unsized + garbage": NOSIZE + b"xyz!",
    "unsized + zeros": NOSIZE + bytes(4),
    "unsized + cut frame": NOSIZE + comp(B)[:-3],
    "unsized + cut skippable": NOSIZE + skippable()[:-2],
    # (d) frames without a content size
    "unsized": NOSIZE,
    "unsized, empty": comp(b"", size=False),
    "unsized, cut": NOSIZE[:-3],
    "unsized, bad checksum": flip_last(comp(DATA, size=False, checksum=True)),
    # (e) wrong content sizes
    "size one more": fcs_plus(ONE, 1),
    "size one less": fcs_plus(ONE, -1),
    "sizes wrong, sum right": fcs_plus(comp(A), 5) + fcs_plus(comp(B), -5),
    "unsized + wrong size": NOSIZE + fcs_plus(comp(B), 1),
    # the rest
    "sized, empty": comp(b""),
    "no bytes": b"",
    "cut": ONE[:-3],
    "bad checksum": flip_last(comp(DATA, checksum=True)),
    "not zstd": b"hello, world",
}
# numcodecs' streaming decode (a frame without a content size comes first) never returns
# when the chunk ends inside the next frame header: refused here (see test_numcodecs_hangs)
HANGS: Dict[str, bytes] = {
    "unsized + half a magic": NOSIZE + b"\x28\xb5",
    "unsized + a magic alone": NOSIZE + b"\x28\xb5\x2f\xfd",
    "unsized + half a header": NOSIZE + comp(B)[:5],
    "unsized + half a skippable header": NOSIZE + skippable()[:6],
}


def numcodecs_reads(data: bytes):
    try:
        return bytes(numcodecs.Zstd().decode(data))
    except RuntimeError as e:
        return e


def arrayscope_reads(data: bytes, limit: int = LIMIT):
    try:
        return get("zstd").decode(CodecSpec("zstd"), data, limit)
    except CodecError as e:
        return e


def test_the_oracle_reads_frames_as_a_stream():
    """What numcodecs 0.16.6 does (if this fails, numcodecs changed and the rule with it)."""
    for name in ("two frames", "sized then unsized", "frame + skippable", "skippable + frame",
                 "unsized", "unsized + skippable"):
        assert numcodecs_reads(VARIANTS[name]) == DATA, name
    assert numcodecs_reads(VARIANTS["unsized, empty"]) == b""
    for name in ("frame + garbage", "frame + one zero", "unsized + garbage", "skippable only",
                 "sized, empty", "size one more", "size one less", "sizes wrong, sum right"):
        assert isinstance(numcodecs_reads(VARIANTS[name]), RuntimeError), name


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_decode_matches_numcodecs(name):
    data = VARIANTS[name]
    want, got = numcodecs_reads(data), arrayscope_reads(data)
    if isinstance(want, bytes):
        assert got == want, got
    else:
        assert isinstance(got, CodecError), (want, got)


@pytest.mark.parametrize("name", sorted(HANGS))
def test_refused_where_numcodecs_never_returns(name):
    got = arrayscope_reads(HANGS[name])
    assert isinstance(got, CodecError) and "never returns" in str(got), got


def test_numcodecs_hangs():
    """The truth behind HANGS, in a child process given two seconds."""
    code = "import sys, numcodecs; numcodecs.Zstd().decode(sys.stdin.buffer.read())"
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", code], input=HANGS["unsized + half a magic"],
                       capture_output=True, timeout=2)


def _stage(data: bytes, limit: int = LIMIT):
    """The zstd stage of a chunk as the tree builds it: (decoded or None, error nodes)."""
    node = Node("Codec 1: zstd", "filter", BytesSource(data, "c/0"), 0, len(data))
    out = run_stage(CodecSpec("zstd"), node.source, node, limit)
    return out, [n for n in node.walk() if n.status == ERROR], node


@pytest.mark.parametrize("name", sorted(VARIANTS) + sorted(HANGS))
def test_tree_flags_exactly_what_numcodecs_refuses(name):
    data = VARIANTS.get(name, HANGS.get(name))
    want = numcodecs_reads(data) if name in VARIANTS else RuntimeError("never returns")
    out, errors, _ = _stage(data)
    if isinstance(want, bytes):
        assert out == want and not errors, [(n.name, n.message) for n in errors]
    else:
        assert out is None and errors


def test_tree_names_frames_and_the_bytes_after_them():
    _, errors, node = _stage(VARIANTS["two frames"])
    assert [c.name for c in node.iter_children()] == ["Frame 1", "Frame 2"]
    _, _, node = _stage(VARIANTS["frame + skippable"])
    assert node["Frame 2"].display_text() == "skippable frame (no content)"
    _, errors, node = _stage(VARIANTS["frame + 16 zeros"])
    [err] = errors
    assert err.name == "bytes after the last frame" and err.offset == len(ONE)
    assert err.size == 16 and "numcodecs does not decode" in err.message
    _, [err], node = _stage(VARIANTS["sizes wrong, sum right"])   # located at its frame
    assert err.offset == 0 and "Frame 1" in err.message


def test_bad_checksum_marked_on_its_own_frame():
    data = comp(A, checksum=True) + flip_last(comp(B, checksum=True)) + skippable()
    out, [err], node = _stage(data)
    assert out is None
    assert err is node["Frame 2"]["Content_Checksum"] and "does not match" in err.message


def test_output_bounded_by_the_limit():
    big = bytes(range(256)) * 8192   # 2 MiB
    for data in (comp(big, size=False), fcs_plus(comp(big), 1 << 31)):
        tracemalloc.start()
        got = arrayscope_reads(data, limit=4096)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert isinstance(got, CodecError) and "4096" in str(got), got
        assert peak < 256 << 10, peak


def test_blosc_inner_zstd_stream_of_two_frames():
    """c-blosc reads an inner zstd stream in one ZSTD_decompress call: every frame."""
    a = np.arange(2000, dtype="<i4")
    enc = bytearray(numcodecs.Blosc("zstd", 5, numcodecs.Blosc.NOSHUFFLE).encode(a))
    assert enc[2] == 0x90 and int.from_bytes(enc[16:20], "little") == 20   # one block, one stream
    raw = a.tobytes()
    stream = comp(raw[:3001]) + skippable() + comp(raw[3001:])
    chunk = bytes(enc[:20]) + len(stream).to_bytes(4, "little") + stream
    chunk = chunk[:12] + len(chunk).to_bytes(4, "little") + chunk[16:]
    assert bytes(numcodecs.Blosc().decode(chunk)) == raw
    assert get("blosc").decode(CodecSpec("blosc"), chunk, 1 << 20) == raw


# ---- end to end: a chunk of a real array rewritten --------------------------------------------
def two_frames(raw: bytes) -> bytes:
    h = len(raw) // 2 + 5
    return comp(raw[:h], checksum=True) + comp(raw[h:], checksum=True)


REWRITES: Dict[str, Callable[[bytes], bytes]] = {
    "two frames": two_frames,
    "two frames without content sizes": lambda raw: comp(raw[:50], False) + comp(raw[50:], False),
    "a frame and a skippable frame": lambda raw: skippable(b"x") + comp(raw) + skippable(),
}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("rewrite", sorted(REWRITES))
def test_chunk_rewritten_reads_alike(tmp_path, fmt, rewrite):
    data = make(FLAT, (12,))
    comp_ = numcodecs.Zstd(level=1) if fmt == 2 else [ZstdCodec(level=1, checksum=True)]
    z = zarr.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(5,), dtype=FLAT,
                          zarr_format=fmt, compressors=comp_)
    z[...] = data
    key = os.path.join(str(tmp_path / "a"), "1" if fmt == 2 else os.path.join("c", "1"))
    raw = zstandard.ZstdDecompressor().decompress(open(key, "rb").read())
    open(key, "wb").write(REWRITES[rewrite](raw))
    assert zarr.open_array(str(tmp_path / "a"), mode="r")[...].tobytes() == data.tobytes()
    doc = check_document(str(tmp_path / "a"))   # no error node, every byte covered
    check_values(doc, data)
    assert not [f for f in verify(doc) if f.status == "error"]


def test_chunk_with_bytes_after_its_frame_refused_alike(tmp_path):
    data = make(FLAT, (12,))
    path = str(tmp_path / "a")
    z = zarr.create_array(path, shape=data.shape, chunks=(5,), dtype=FLAT, zarr_format=3,
                          compressors=[ZstdCodec(level=1)])
    z[...] = data
    key = os.path.join(path, "c", "1")
    open(key, "ab").write(b"\0\0")
    with pytest.raises(RuntimeError, match="invalid input data"):
        zarr.open_array(path, mode="r")[...]
    doc = formats.open(path)
    [entry] = PLUGIN.values(doc, "age")
    assert "c/1" in entry["error"] or "1:" in entry["error"], entry.get("error")
    found = [f for f in verify(doc) if f.status == "error"]
    assert [f.node.rsplit("/", 1)[-1] for f in found] == ["bytes after the last frame"], found

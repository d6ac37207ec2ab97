"""libzstd's reading rules through python-zstandard's public API only.

Why: python-zstandard's one-call `decompress` reads the first frame and ignores what follows,
while libtiledb (`ZStd::decompress`: `ZSTD_decompressDCtx`) and numcodecs read every frame in
turn, skip skippable frames and refuse anything else after them. Instead of reaching libzstd's
own functions inside the wheel (a private module whose layout changes with releases), the
frames are found by their structure — the zstd frame format, RFC 8878: magic, header, block
headers, checksum — and each is decoded by the public API into a bounded output. Errors carry
libzstd's own names ("Src size is incorrect", "Destination buffer is too small"), which is
what libtiledb prints.
"""
from __future__ import annotations

import io
import threading
from typing import List, NamedTuple, Optional, Tuple, Union

import zstandard

ZSTD_MAGIC = 0xFD2FB528
SKIPPABLE_MAGIC = 0x184D2A50    # the low 4 bits are free
MIN_FRAME = 9                   # ZSTD_FRAMEHEADERSIZE_MIN + a block header: less is srcSize_wrong
SRC_SIZE = "Src size is incorrect"
DST_SMALL = "Destination buffer is too small"
UNKNOWN_FRAME = "Unknown frame descriptor"


class Frame(NamedTuple):
    """One whole frame at `start`: its `size` in bytes, the content size its header declares
    (-1: none; 0 for a skippable frame), and whether it is a skippable frame."""

    start: int
    size: int
    content: int
    skippable: bool


class Walk(NamedTuple):
    """The whole frames from the start of the data, where the bytes that are not one begin
    (the data's length when all are), and why they are not (libzstd's error name, or
    "header" when the data ends inside a frame header)."""

    frames: List[Frame]
    end: int
    why: str


def _u32(data: memoryview, at: int) -> int:
    return int.from_bytes(data[at:at + 4], "little")


def _frame_at(data: memoryview, at: int) -> Tuple[Optional[Frame], str]:
    """The frame starting at `at`, or (None, why not)."""
    left = len(data) - at
    if left < 4:
        return None, "header"
    magic = _u32(data, at)
    if magic & 0xFFFFFFF0 == SKIPPABLE_MAGIC:
        if left < 8:
            return None, "header"
        size = 8 + _u32(data, at + 4)
        return (Frame(at, size, 0, True), "") if size <= left else (None, SRC_SIZE)
    if magic != ZSTD_MAGIC:
        return None, UNKNOWN_FRAME
    rest = data[at:]
    try:
        head = zstandard.frame_header_size(rest)
    except zstandard.ZstdError:
        return None, "header"
    if head > left:
        return None, "header"
    try:
        content = zstandard.frame_content_size(rest)
    except zstandard.ZstdError:
        return None, "Corrupted block detected"
    pos = at + head
    while True:   # the block headers: 3 bytes, little-endian (last, type, size)
        if pos + 3 > len(data):
            return None, SRC_SIZE
        bh = int.from_bytes(data[pos:pos + 3], "little")
        kind, size = (bh >> 1) & 3, bh >> 3
        if kind == 3:
            return None, "Corrupted block detected"
        pos += 3 + (1 if kind == 1 else size)
        if pos > len(data):
            return None, SRC_SIZE
        if bh & 1:
            break
    if data[at + 4] & 0x04:   # Content_Checksum_Flag: 4 bytes after the last block
        pos += 4
        if pos > len(data):
            return None, SRC_SIZE
    return Frame(at, pos - at, content, False), ""


def walk(data: object) -> Walk:
    """The frames of `data` in turn, by their structure alone (nothing is decompressed)."""
    view = memoryview(data).cast("B")   # type: ignore[arg-type]
    frames: List[Frame] = []
    at = 0
    while at < len(view):
        frame, why = _frame_at(view, at)
        if frame is None:
            return Walk(frames, at, why)
        frames.append(frame)
        at += frame.size
    return Walk(frames, at, "")


_local = threading.local()


def _dctx() -> zstandard.ZstdDecompressor:
    """One decompressor per thread (they are not thread-safe)."""
    d = getattr(_local, "dctx", None)
    if d is None:
        d = _local.dctx = zstandard.ZstdDecompressor()
    return d


def _zstd_reason(e: Exception) -> str:
    return str(e).rsplit(": ", 1)[-1]


def frame_into(frame: memoryview, room: int, out: bytearray) -> str:
    """Decode the one whole frame `frame` onto `out`, at most `room` bytes; "" or libzstd's
    error name."""
    try:
        with _dctx().stream_reader(io.BytesIO(frame), read_across_frames=False) as r:
            start = len(out)
            while True:
                piece = r.read(room + 1 - (len(out) - start))
                if not piece:
                    return ""
                out += piece
                if len(out) - start > room:
                    del out[start + room:]
                    return DST_SMALL
    except zstandard.ZstdError as e:
        return _zstd_reason(e)


def decompress_all(data: object, capacity: int) -> Tuple[Optional[Union[bytes, bytearray]], str]:
    """`ZSTD_decompressDCtx(dst, capacity, src, size)`'s result: every frame in turn,
    skippable frames skipped, anything else after them an error ("Src size is incorrect"
    once a frame was read), frames holding more than `capacity` an error. (the bytes, "")
    or (None, libzstd's error name). The output never exceeds `capacity`."""
    view = memoryview(data).cast("B")   # type: ignore[arg-type]
    w = walk(view)
    frames = w.frames
    # the usual part: one frame that declares a size that fits, and nothing else
    if len(frames) == 1 and w.end == len(view) and 0 < frames[0].content <= capacity \
            and not frames[0].skippable:
        try:
            return _dctx().decompress(view), ""   # bytes: no copy
        except zstandard.ZstdError as e:
            return None, _zstd_reason(e)
    out = bytearray()
    for f in frames:
        if f.skippable:
            continue
        if f.content > capacity - len(out):
            return None, DST_SMALL
        err = frame_into(view[f.start:f.start + f.size], capacity - len(out), out)
        if err:
            return None, err
    left = len(view) - w.end
    if left == 0:
        return out, ""
    # less than a frame header and a block header left, or garbage once a (not skippable)
    # frame was read: libzstd's srcSize_wrong
    if left < MIN_FRAME or w.why == "header" or (
            w.why == UNKNOWN_FRAME and any(not f.skippable for f in frames)):
        return None, SRC_SIZE
    return None, w.why

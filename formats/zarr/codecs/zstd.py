"""Zstandard frames (RFC 8878): magic, frame header, 3-byte block headers, checksum.

Decoding is libzstd's (python-zstandard's public API), by numcodecs' rules:
zarr v2's `zstd` compressor and zarr v3's `zstd` codec both decode with numcodecs' `Zstd`,
so a chunk reads as `numcodecs_decode` reads it. The annotation walks the frames itself so
every byte is named. numcodecs `Zstd` and zarr v3 `zstd` write one frame (single segment,
content size present; `checksum: true` adds FHD bit 2 and a 4-byte XXH64-low32 trailer).
"""
from __future__ import annotations

from typing import List, Optional, Tuple, cast

from ...core.cursor import Cursor
from ...core.fielddoc import doc
from ...core.node import ERROR, Node
from ...filters import zstdframes
from .base import Codec, CodecError, CodecSpec, register

MAGIC = 0xFD2FB528
SPEC = "RFC 8878 §3.1"
D_FRAME = doc("Frame: Magic_Number, Frame_Header, Data_Block(s), optional Content_Checksum; "
              "a chunk may hold several frames, their contents concatenated, and skippable "
              "frames", spec=SPEC,
              note="numcodecs (zarr v2 and v3): every frame declaring its size → one call "
                   "into their total, which must be above 0; otherwise a streaming decode. "
                   "Bytes after the last frame are refused; after a frame without a content "
                   "size, a chunk ending inside the next frame header never returns")
D_MAGIC = doc("Magic_Number: 0xFD2FB528, little-endian (28 B5 2F FD)", spec=SPEC)
D_SKIP_MAGIC = doc("Skippable frame magic: 0x184D2A50..0x184D2A5F", spec=SPEC + ".2")
D_SKIP_SIZE = doc("Frame_Size: bytes of user data in the skippable frame", spec=SPEC + ".2",
                  note="numcodecs skips skippable frames anywhere, but refuses a chunk whose "
                       "frames declare no content at all (skippable frames only)")
D_FHD = doc("Frame_Header_Descriptor: bits 7-6 Frame_Content_Size_flag, bit 5 "
            "Single_Segment_flag, bit 4 unused, bit 3 reserved, bit 2 Content_Checksum_flag, "
            "bits 1-0 Dictionary_ID_flag", spec=SPEC + ".1.1")
D_FCS_FLAG = doc("Frame_Content_Size_flag: size of the content-size field: 0 → 0 bytes (1 if "
                 "single segment), 1 → 2, 2 → 4, 3 → 8", spec=SPEC + ".1.1.1")
D_SS = doc("Single_Segment_flag: no Window_Descriptor; the window is the content size",
           spec=SPEC + ".1.1.1")
D_UNUSED = doc("Unused bit (must be ignored)", spec=SPEC + ".1.1.1")
D_RESERVED = doc("Reserved bit: must be 0", spec=SPEC + ".1.1.1")
D_CK_FLAG = doc("Content_Checksum_flag: a 4-byte XXH64 checksum ends the frame",
                spec=SPEC + ".1.1.1")
D_DICT_FLAG = doc("Dictionary_ID_flag: size of the Dictionary_ID field: 0, 1, 2 or 4 bytes",
                  spec=SPEC + ".1.1.1")
D_WD = doc("Window_Descriptor: window size = 2^(10+Exponent) + Mantissa × 2^(7+Exponent)",
           spec=SPEC + ".1.1.2")
D_DICT = doc("Dictionary_ID: the dictionary the frame needs", spec=SPEC + ".1.1.3")
D_FCS = doc("Frame_Content_Size: decompressed bytes of the frame (the 2-byte form adds 256)",
            spec=SPEC + ".1.1.4",
            note="numcodecs allocates the sum over the frames; a frame that decodes to another "
                 "size is refused (libzstd checks it); a frame without it: streaming decode")
D_BH = doc("Block_Header: 3 bytes little-endian: bit 0 Last_Block, bits 1-2 Block_Type "
           "(0 Raw, 1 RLE, 2 Compressed, 3 Reserved), bits 3-23 Block_Size", spec=SPEC + ".1.2")
D_LAST = doc("Last_Block: this block ends the frame", spec=SPEC + ".1.2")
D_BTYPE = doc("Block_Type: 0 Raw_Block, 1 RLE_Block (one byte repeated Block_Size times), "
              "2 Compressed_Block, 3 Reserved", spec=SPEC + ".1.2")
D_BSIZE = doc("Block_Size: bytes of block content (for RLE: the regenerated size)",
              spec=SPEC + ".1.2")
D_BCONTENT = doc("Block_Content: raw bytes, one RLE byte, or literals + sequences",
                 spec=SPEC + ".1.2")
D_CHECKSUM = doc("Content_Checksum: low 4 bytes of XXH64(content, seed 0), little-endian",
                 spec=SPEC + ".1")
BLOCK_TYPES = {0: "Raw_Block", 1: "RLE_Block", 2: "Compressed_Block", 3: "Reserved"}


def _bits(parent: Node, byte: int, items) -> None:
    """Children of a one-byte node, one per bit field (all covering the same byte)."""
    for name, lo, width, d, names in items:
        v = (byte >> lo) & ((1 << width) - 1)
        text = f"{v} ({names[v]})" if names and v in names else str(v)
        parent.add(Node(name, "flag", parent.source, parent.offset, 1, value=v,
                        display=text, doc=d))


def parse_frame(cur: Cursor) -> dict:
    """Annotate one frame at cur; returns {content_size, checksum}."""
    info = {"content_size": None, "checksum": False}
    magic = cur.peek_prim("u32")
    if magic is not None and 0x184D2A50 <= magic <= 0x184D2A5F:
        cur.u32("Magic_Number", D_SKIP_MAGIC, display=f"0x{magic:08X} (skippable)")
        size = cur.length("u32", "Frame_Size", 1, D_SKIP_SIZE, "bytes").value
        cur.raw("User_Data", size)
        info["skippable"] = True
        return info
    m = cur.u32("Magic_Number", D_MAGIC, display=f"0x{magic or 0:08X}")
    if m.value != MAGIC:
        m.mark(ERROR, f"Magic_Number: expected 0xFD2FB528 (28 B5 2F FD), found 0x{m.value:08X}")
        cur.fail("not a zstd frame", "the bytes after a bad magic number are not parsed")
    fhd = cur.u8("Frame_Header_Descriptor", D_FHD)
    b = fhd.value
    fcs_flag, single, ck, dflag = b >> 6, (b >> 5) & 1, (b >> 2) & 1, b & 3
    _bits(fhd, b, [("Frame_Content_Size_flag", 6, 2, D_FCS_FLAG, None),
                   ("Single_Segment_flag", 5, 1, D_SS, None),
                   ("Unused bit", 4, 1, D_UNUSED, None),
                   ("Reserved bit", 3, 1, D_RESERVED, None),
                   ("Content_Checksum_flag", 2, 1, D_CK_FLAG, None),
                   ("Dictionary_ID_flag", 0, 2, D_DICT_FLAG, None)])
    fhd.display = f"0x{b:02X}"
    if (b >> 3) & 1:
        fhd.mark(ERROR, "Frame_Header_Descriptor: the reserved bit 3 is set")
    info["checksum"] = bool(ck)
    window = None
    if not single:
        wd = cur.u8("Window_Descriptor", D_WD)
        exp, mant = wd.value >> 3, wd.value & 7
        base = 1 << (10 + exp)
        window = base + (base // 8) * mant
        wd.display = f"0x{wd.value:02X} (Exponent {exp}, Mantissa {mant}: {window} bytes)"
    if dflag:
        kind = {1: "u8", 2: "u16", 3: "u32"}[dflag]
        cur.prim(kind, "Dictionary_ID", D_DICT)
    fcs_size = {0: 1 if single else 0, 1: 2, 2: 4, 3: 8}[fcs_flag]
    if fcs_size:
        kind = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}[fcs_size]
        n = cur.prim(kind, "Frame_Content_Size", D_FCS)
        info["content_size"] = n.value + (256 if fcs_size == 2 else 0)
        if fcs_size == 2:
            n.display = f"{n.value} + 256 = {n.value + 256}"
    if window is None:
        window = info["content_size"] or 0
    max_block = min(window, 128 * 1024) if window else 128 * 1024
    k = 0
    while True:
        k += 1
        cur.need(f"Block {k} header", 3, "a 3-byte Block_Header")
        raw = cur.peek(3)
        h = raw[0] | raw[1] << 8 | raw[2] << 16
        last, btype, bsize = h & 1, (h >> 1) & 3, h >> 3
        csize = 1 if btype == 1 else (0 if btype == 3 else bsize)

        def block(c: Cursor, h=h, last=last, btype=btype, bsize=bsize, csize=csize):
            hn = c.field("Block_Header", 3, value=h, display=f"0x{h:06X}", doc=D_BH)
            for name, v, d, text in (("Last_Block", last, D_LAST, str(last)),
                                     ("Block_Type", btype, D_BTYPE,
                                      f"{btype} ({BLOCK_TYPES[btype]})"),
                                     ("Block_Size", bsize, D_BSIZE, str(bsize))):
                hn.add(Node(name, "enum" if name == "Block_Type" else "field", c.source,
                            hn.offset, 3, value=v, display=text, doc=d))
            if btype == 3:
                hn.mark(ERROR, "Block_Type 3 is reserved: the frame is corrupt")
                c.fail("corrupt block", "bytes after a reserved block type")
            if bsize > max_block:
                hn.mark(ERROR, f"Block_Size {bsize} exceeds Block_Maximum_Size {max_block}")
            if csize:
                c.need("Block_Content", csize, f"{csize} bytes of block content")
                c.raw("Block_Content", csize, D_BCONTENT).kind = "payload"
        g = cur.group(f"Block {k}", block, kind="chunk")
        g.display = f"{BLOCK_TYPES[btype]}, {bsize} B{' (last)' if last else ''}"
        if last:
            break
        if k > 1_000_000:
            cur.fail("too many blocks", "more than a million blocks in one frame")
    if ck:
        cur.need("Content_Checksum", 4, "the 4-byte content checksum")
        cur.u32("Content_Checksum", D_CHECKSUM, display=f"0x{cur.peek_prim('u32'):08X}")
    return info


# ---- decoding: libzstd's rules, made as numcodecs and c-blosc make them ---------------------
# Through python-zstandard's public API only (`filters/zstdframes.py`): the frames are found
# by their structure, each decoded into a bounded output.

# the first bytes of a zstd frame and of a skippable frame (its first byte is 0x50..0x5F)
_ZSTD_PREFIX = zstdframes.ZSTD_MAGIC.to_bytes(4, "little")
_SKIP_PREFIX = zstdframes.SKIPPABLE_MAGIC.to_bytes(4, "little")


def decode_all(data: bytes, capacity: int) -> bytes:
    """libzstd's one-call rule, ZSTD_decompress(dst, capacity, src, size): every frame in
    turn, skippable frames skipped, anything else after them an error, more than `capacity`
    bytes an error. c-blosc reads an inner zstd stream so (zstd_wrap_decompress, capacity the
    stream's size); numcodecs so when every frame declares its size (capacity their sum)."""
    buf, error = zstdframes.decompress_all(data, capacity)
    if buf is None:
        raise CodecError(f"zstd: {error}")
    # a bytearray (no copy into bytes, which made large chunks half as slow again): the
    # stages after and `values` only read buffers
    return cast(bytes, buf)


def _total_content(data: bytes) -> Optional[int]:
    """numcodecs' findTotalContentSize: the content sizes of the frames summed (skippable
    frames count 0), None at the first frame that does not declare one (the frames after it
    are not looked at); bytes that are not a whole frame are refused."""
    w = zstdframes.walk(data)
    total = 0
    for f in w.frames:
        if f.content < 0:
            return None
        total += f.content
    if w.end < len(data):
        k = len(w.frames)
        what = f"the {len(data) - w.end} bytes after frame {k} are" if k else "the chunk is"
        why = "the data ends inside it" if w.why == "header" else w.why
        raise CodecError(f"zstd: {what} not a whole zstd frame ({why}): numcodecs refuses it",
                         w.end)
    return total


def _waits_for_more(tail: bytes) -> bool:
    """libzstd's streaming decoder waits for more input (numcodecs' loop then never ends)
    on these last bytes: the start of a magic number, or of a frame header."""
    if len(tail) < 4:
        return _ZSTD_PREFIX.startswith(tail) or (
            tail[:1] >= b"\x50" and tail[:1] <= b"\x5f" and _SKIP_PREFIX[1:].startswith(tail[1:]))
    return True   # a whole magic: what follows is a frame header cut short


def _stream(data: bytes, limit: int) -> bytes:
    """numcodecs' stream_decompress loop (ZSTD_decompressStream until it returns 0 with the
    input used up), into at most `limit` + 1 bytes instead of a buffer that grows."""
    w = zstdframes.walk(data)
    view = memoryview(data)
    out = bytearray()
    for f in w.frames:
        if f.skippable:
            continue
        err = zstdframes.frame_into(view[f.start:f.start + f.size], limit - len(out), out)
        if err == zstdframes.DST_SMALL:
            raise CodecError(f"zstd: decompresses to more than the {limit} bytes a chunk "
                             f"can hold")
        if err:
            raise CodecError(f"zstd: {err} (streaming decode)", f.start)
    if w.end < len(data):
        if w.why == "header" and _waits_for_more(bytes(view[w.end:w.end + 4])):
            raise CodecError("zstd: the chunk ends inside a frame header after a frame "
                             "that does not declare its content size: numcodecs' "
                             "streaming decode never returns on it", w.end)
        why = zstdframes.UNKNOWN_FRAME if w.why == "header" else w.why
        raise CodecError(f"zstd: {why} (streaming decode)", w.end)
    return cast(bytes, out)


def numcodecs_decode(data: bytes, limit: int) -> bytes:
    """What numcodecs.Zstd().decode(data) returns (numcodecs/zstd.pyx `decompress`; zarr v2
    and zarr v3's `zstd` codec both call it), or CodecError where it raises — or never
    returns. The frames are walked first (`_total_content`): when every frame declares its
    content size, all of them are decoded in one call into their total (0 is refused);
    otherwise the whole chunk is decoded as a stream. Never more than `limit` + 1 bytes are
    allocated for the output, whatever the frames declare."""
    total = _total_content(data)
    if total is None:
        return _stream(data, limit)
    if total == 0:
        raise CodecError("zstd: the frames declare no content (a total content size of 0): "
                         "numcodecs refuses it (invalid input data)")
    if total > limit:
        raise CodecError(f"zstd: the frames declare {total} bytes, more than the {limit} "
                         f"bytes a chunk can hold")
    out = decode_all(data, total)
    if len(out) != total:   # numcodecs' own check after ZSTD_decompress
        raise CodecError(f"zstd: the frames declare {total} bytes, they decompress to "
                         f"{len(out)}")
    return out


@register
class Zstd(Codec):
    names = ("zstd",)

    def decode(self, spec: CodecSpec, data: bytes, limit: int) -> bytes:
        out = numcodecs_decode(data, limit)
        if len(out) > limit:
            raise CodecError(f"zstd: decompresses to more than the {limit} bytes a chunk can hold")
        return out

    def frame(self, spec: CodecSpec, cur: Cursor, limit: int):
        frames: List[Tuple[Node, dict]] = []
        start = cur.pos
        while not cur.at_end():
            k = len(frames) + 1
            if k > 1:
                _after_frames(cur, k - 1)
                frames[0][0].name = "Frame 1"   # several frames: numbered from the first
            holder: dict = {}
            g = cur.group(f"Frame {k}" if k > 1 else "Zstandard frame",
                          lambda c: holder.update(parse_frame(c)), kind="struct", doc=D_FRAME)
            if holder.get("skippable"):
                g.display = "skippable frame (no content)"
            frames.append((g, holder))
            if k > 4096:
                cur.fail("too many frames", "more than 4096 zstd frames")
        return frames, start, cur.pos

    def finish(self, spec: CodecSpec, data: bytes, state, limit: int) -> bytes:
        frames, start, end = state
        data = data[:end - start] if end - start < len(data) else data
        try:
            return self.decode(spec, data, limit)
        except CodecError as e:
            found = _failing_frame(frames, data, start, limit)
            if found is None:
                raise
            g, why = found
            node = g.find("Content_Checksum") if "checksum" in why.lower() else None
            if node is None:
                where = f"in {g.name}" if f"zstd: {why}" == str(e) else f"{g.name}: {why}"
                raise CodecError(f"{e} ({where})", g.offset - start)
            if node.status != ERROR:   # decoded again after a release: marked once
                node.mark(ERROR, f"Content_Checksum does not match the content: {e}")
            raise CodecError(str(e), node.offset - start, status="marked")


def _after_frames(cur: Cursor, k: int) -> None:
    """Bytes after frame k that do not start a frame (zstd or skippable): an error, as
    numcodecs refuses the chunk for them (the decode walks frames the same way)."""
    magic = cur.peek_prim("u32")
    if magic == MAGIC or (magic is not None and 0x184D2A50 <= magic <= 0x184D2A5F):
        return
    n = cur.remaining
    what = "too few for a frame's 4-byte magic" if magic is None else "no zstd or skippable magic"
    cur.fail("bytes after the last frame", f"{n} byte{'s' * (n != 1)} after frame {k} ({what}): "
             f"numcodecs does not decode the chunk (libzstd reads frames up to the end)")


def _failing_frame(frames: List[Tuple[Node, dict]], data: bytes, start: int,
                   limit: int) -> Optional[Tuple[Node, str]]:
    """The first frame that fails decoded alone, and libzstd's reason: where a chunk that
    does not decode goes wrong (None when each frame decodes: the chunk as a whole fails)."""
    for g, info in frames:
        if info.get("skippable"):
            continue
        try:
            decode_all(data[g.offset - start:g.offset - start + g.size], limit)
        except CodecError as e:
            return g, str(e).removeprefix("zstd: ")
    return None

"""Blosc 1 frames (c-blosc 1.x, numcodecs `Blosc`, zarr v3 `blosc`).

```
u8 version | u8 versionlz | u8 flags | u8 typesize | u32 nbytes | u32 blocksize | u32 cbytes
then (unless memcpyed) nblocks × i32 bstarts, and at each bstart the block's streams:
  i32 csize + csize bytes, one stream per byte of typesize (split) or one (not split / last block)
```
A stream whose csize equals its decoded size is stored raw. After decompression each block
is un-shuffled (flag 0x01, byte shuffle with typesize) or bit-unshuffled (flag 0x04).
Inner codecs: blosclz (our own decoder), lz4 (raw block), zlib (zlib stream), zstd (frame);
snappy is named but not decoded.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import List, Optional, Tuple, Union, cast

import lz4.block
import numpy as np

from ...core.cursor import Cursor
from ...core.fielddoc import doc
from ...core.findings import ZARR_TRAILING
from ...core.node import ERROR, Node
from ...core.status import Status
from ...filters.bits import bitunshuffle_whole_blocks, byteunshuffle_rows
from . import blosclz
from .base import Codec, CodecError, CodecSpec, register
from .shuffle import bitunshuffle
from .zstd import decode_all

SPEC = "c-blosc README_CHUNK_FORMAT / blosc.c"
HEADER = 16
CODECS = {0: "blosclz", 1: "lz4", 2: "snappy", 3: "zlib", 4: "zstd"}
D_VERSION = doc("version: blosc format version (2 for c-blosc 1.x)", spec=SPEC)
D_VERSIONLZ = doc("versionlz: version of the inner codec's format (1)", spec=SPEC)
D_FLAGS = doc("flags: bit 0 byte-shuffle, bit 1 memcpyed (raw copy after the header), bit 2 "
              "bit-shuffle, bit 3 reserved, bit 4 blocks not split into per-byte streams, "
              "bits 5-7 inner codec (0 blosclz, 1 lz4/lz4hc, 2 snappy, 3 zlib, 4 zstd)", spec=SPEC)
D_SHUF = doc("Byte-shuffle flag (0x01): each block was byte-shuffled with typesize", spec=SPEC)
D_MEMCPY = doc("Memcpyed flag (0x02): the data follows the header uncompressed", spec=SPEC)
D_BITSHUF = doc("Bit-shuffle flag (0x04): each block was bit-shuffled with typesize", spec=SPEC)
D_RESERVED = doc("Reserved bit (0x08)", spec=SPEC)
D_NOSPLIT = doc("Dont-split flag (0x10): one stream per block instead of one per byte of "
                "typesize", spec=SPEC)
D_CODEC = doc("Compressor format (bits 5-7): 0 blosclz, 1 lz4/lz4hc, 2 snappy, 3 zlib, 4 zstd",
              spec=SPEC)
D_TYPESIZE = doc("typesize: bytes per element for shuffling (numcodecs passes the record "
                 "itemsize, or 1 when it exceeds 255)", spec=SPEC)
D_NBYTES = doc("nbytes: decompressed size of the whole buffer", spec=SPEC)
D_BLOCKSIZE = doc("blocksize: decompressed bytes per block (the last block may be shorter)",
                  spec=SPEC)
D_CBYTES = doc("cbytes: compressed size of the whole buffer, header included", spec=SPEC)
D_BSTARTS = doc("bstarts: offset of each block's first stream from the start of the buffer",
                spec=SPEC)
D_CSIZE = doc("csize: compressed bytes of this stream (equal to its decoded size: stored raw)",
              spec=SPEC)
D_STREAM = doc("Stream data: compressed with the inner codec (or raw)", spec=SPEC)
D_RAW = doc("Memcpyed data: the buffer uncompressed", spec=SPEC)


@dataclass
class Stream:
    csize_at: int
    data_at: int
    csize: int
    nbytes: int


@dataclass
class Block:
    index: int
    start: int
    nbytes: int
    streams: List[Stream] = field(default_factory=list)


@dataclass
class Layout:
    version: int
    versionlz: int
    flags: int
    typesize: int
    nbytes: int
    blocksize: int
    cbytes: int
    blocks: List[Block] = field(default_factory=list)

    @property
    def codec(self) -> int:
        return self.flags >> 5

    @property
    def memcpyed(self) -> bool:
        return bool(self.flags & 0x02)

    @property
    def nblocks(self) -> int:
        return -(-self.nbytes // self.blocksize) if self.blocksize else 0


def read_header(data: bytes) -> Layout:
    if len(data) < HEADER:
        raise CodecError(f"blosc: a frame starts with a 16-byte header; only {len(data)} bytes", 0)
    v, vlz, flags, ts = data[0], data[1], data[2], data[3]
    nbytes, bsize, cbytes = struct.unpack_from("<III", data, 4)
    return Layout(v, vlz, flags, ts, nbytes, bsize, cbytes)


def layout(data: bytes, limit: int) -> Layout:
    """Where every block and stream is; raises CodecError at the first impossible field."""
    lay = read_header(data)
    if lay.nbytes > limit:
        raise CodecError(f"blosc: nbytes {lay.nbytes} is more than the {limit} bytes this "
                         f"chunk can hold", 4)
    if lay.nbytes and lay.blocksize == 0:
        raise CodecError("blosc: blocksize is 0", 8)
    if lay.cbytes > len(data) or lay.cbytes < HEADER:
        raise CodecError(f"blosc: cbytes says {lay.cbytes} bytes, the frame has {len(data)}", 12)
    # bytes after cbytes are no part of the frame: c-blosc (and so zarr) reads the frame and
    # ignores them; `frame` names them with a warning
    data = data[:lay.cbytes]
    if lay.memcpyed:
        if HEADER + lay.nbytes > len(data):
            raise CodecError(f"blosc: memcpyed data needs {lay.nbytes} bytes after the header, "
                             f"{len(data) - HEADER} present", HEADER)
        return lay
    nb = lay.nblocks
    if HEADER + 4 * nb > len(data):
        raise CodecError(f"blosc: {nb} block starts need {4 * nb} bytes, only "
                         f"{len(data) - HEADER} follow the header", HEADER)
    starts = struct.unpack_from(f"<{nb}i", data, HEADER)
    leftover = lay.nbytes % lay.blocksize
    split = not (lay.flags & 0x10)
    for j, bs in enumerate(starts):
        last = j == nb - 1 and leftover
        bsize = leftover if last else lay.blocksize
        blk = Block(j, bs, bsize)
        nsplits = lay.typesize if (split and not last and lay.typesize and
                                   bsize % lay.typesize == 0) else 1
        neblock = bsize // nsplits
        pos = bs
        if not HEADER + 4 * nb <= bs < len(data):
            raise CodecError(f"blosc: block {j + 1} starts at {bs}, outside the streams "
                             f"({HEADER + 4 * nb}..{len(data)})", HEADER + 4 * j)
        for _ in range(nsplits):
            if pos + 4 > len(data):
                raise CodecError(f"blosc: block {j + 1}: stream size field runs past the end", pos)
            cs = struct.unpack_from("<i", data, pos)[0]
            if cs <= 0 or pos + 4 + cs > len(data):
                raise CodecError(f"blosc: block {j + 1}: stream of {cs} bytes at {pos + 4} does "
                                 f"not fit the frame ({len(data)} bytes)", pos)
            blk.streams.append(Stream(pos, pos + 4, cs, neblock))
            pos += 4 + cs
        lay.blocks.append(blk)
    return lay


def _inner(codec: int, src, n: int) -> bytes:
    if codec == 0:
        try:
            return blosclz.decompress(bytes(src), n)
        except blosclz.BloscLZError as e:
            raise CodecError(f"blosclz: {e}", e.where)
    if codec == 1:
        return lz4.block.decompress(src, uncompressed_size=n)
    if codec == 3:
        d = zlib.decompressobj()
        return d.decompress(src, n + 1)
    if codec == 4:
        return decode_all(src, n)
    if codec == 2:
        raise CodecError("blosc: snappy streams are not decoded by arrayscope", status="warning")
    raise CodecError(f"blosc: unknown inner codec {codec}")


Buf = Union[bytes, bytearray]


def decode_layout(data: bytes, lay: Layout) -> Tuple[Buf, Optional[Tuple[int, int, str]]]:
    """(decoded bytes, None) or (partial, (stream index, offset, message)). Streams are
    decoded straight into the output: a byte-shuffled block of one stream is un-shuffled
    from the codec's bytes into place; split blocks (byte planes) and bit-shuffled blocks
    go to a scratch copy first and are un-shuffled together, the full ones in one
    vectorised call over a (blocks, blocksize) view. The output is a bytearray the numpy
    view writes into (returned as is: no final copy, no join of parts or blocks)."""
    if lay.memcpyed:
        return bytes(data[HEADER:HEADER + lay.nbytes]), None
    total = sum(b.nbytes for b in lay.blocks)
    buf = bytearray(total)
    out = np.frombuffer(buf, np.uint8)
    ts = lay.typesize
    shuffled = bool(lay.flags & 0x01) and ts > 1
    bits = not shuffled and bool(lay.flags & 0x04)
    # un-shuffled as decoded, no scratch: one stream per block, or one per byte plane
    direct = shuffled and all(len(b.streams) in (1, ts) for b in lay.blocks)
    dst = np.empty(total, np.uint8) if (shuffled or bits) and not direct else out
    view = memoryview(data)
    k = 0
    at = 0
    for j, blk in enumerate(lay.blocks):
        blk_at = at
        for s in blk.streams:
            raw = view[s.data_at:s.data_at + s.csize]
            if s.csize == s.nbytes:
                dec: Union[bytes, memoryview] = raw
            else:
                try:
                    dec = _inner(lay.codec, raw, s.nbytes)
                except CodecError as e:
                    where = s.data_at + (e.where or 0) if e.status != "warning" else s.data_at
                    return _unshuffle(lay, dst, out, buf, j), (k, where, str(e))
                except Exception as e:  # library errors on corrupt input
                    return _unshuffle(lay, dst, out, buf, j), (k, s.data_at, f"{CODECS.get(lay.codec)}: "
                                                          f"{type(e).__name__}: {e}")
                if len(dec) != s.nbytes:
                    return _unshuffle(lay, dst, out, buf, j), (k, s.data_at, f"{CODECS.get(lay.codec)} "
                                                          f"stream decodes to {len(dec)} bytes, "
                                                          f"expected {s.nbytes}")
            if direct and len(blk.streams) == ts:  # byte plane p: byte p of every element
                p = (at - blk_at) // s.nbytes
                out[blk_at:blk_at + blk.nbytes].reshape(-1, ts)[:, p] = \
                    np.frombuffer(dec, np.uint8, s.nbytes)
            elif direct:
                byteunshuffle_rows(np.frombuffer(dec, np.uint8, s.nbytes).reshape(1, -1), ts,
                                   out[at:at + s.nbytes].reshape(1, -1))
            else:
                dst[at:at + s.nbytes] = np.frombuffer(dec, np.uint8, s.nbytes)
            at += s.nbytes
            k += 1
    return _unshuffle(lay, dst, out, buf, len(lay.blocks)), None


def _unshuffle(lay: Layout, dst: np.ndarray, out: np.ndarray, buf: bytearray,
               nblocks: int) -> Buf:
    """The first `nblocks` decoded blocks of `dst` un-shuffled into `buf` (when `dst` is not
    already `buf`'s view); `buf` itself when they are all of it."""
    blocks = lay.blocks[:nblocks]
    end = sum(b.nbytes for b in blocks)
    if dst is not out:
        _unshuffle_into(lay, dst, out, blocks, end)
    return buf if end == len(buf) else bytes(buf[:end])


def _unshuffle_into(lay: Layout, dst: np.ndarray, out: np.ndarray, blocks: List[Block],
                    end: int) -> None:
    ts, bsize = lay.typesize, lay.blocksize
    # full blocks lead (only the last may be short): one call over all of them
    full = sum(1 for b in blocks if b.nbytes == bsize)
    whole = full * bsize
    if lay.flags & 0x01 and ts > 1:
        if full:
            byteunshuffle_rows(dst[:whole].reshape(full, bsize), ts,
                               out[:whole].reshape(full, bsize))
        if end > whole:
            byteunshuffle_rows(dst[whole:end].reshape(1, -1), ts, out[whole:end].reshape(1, -1))
        return
    if full and ts and bsize % ts == 0 and (bsize // ts) % 8 == 0:
        bitunshuffle_whole_blocks(dst[:whole], ts, full, out[:whole])
    else:
        whole = 0
    at = whole
    for b in blocks[full if whole else 0:]:  # short last block, or odd block shapes
        seg = dst[at:at + b.nbytes]
        out[at:at + b.nbytes] = np.frombuffer(bitunshuffle(seg.tobytes(), ts), np.uint8) \
            if b.nbytes >= ts else seg
        at += b.nbytes


def flag_nodes(node: Node, flags: int) -> None:
    for name, bit, d in (("byte-shuffle", 0, D_SHUF), ("memcpyed", 1, D_MEMCPY),
                         ("bit-shuffle", 2, D_BITSHUF), ("reserved", 3, D_RESERVED),
                         ("dont-split", 4, D_NOSPLIT)):
        v = (flags >> bit) & 1
        node.add(Node(f"{name} (0x{1 << bit:02X})", "flag", node.source, node.offset, 1,
                      value=bool(v), display="set" if v else "not set", doc=d))
    c = flags >> 5
    node.add(Node("compressor format", "enum", node.source, node.offset, 1, value=c,
                  display=f"{c} ({CODECS.get(c, 'unknown')})", doc=D_CODEC))


def describe_flags(flags: int) -> str:
    names = [n for n, b in (("shuffle", 1), ("memcpyed", 2), ("bitshuffle", 4),
                            ("dont-split", 0x10)) if flags & b]
    names.append(CODECS.get(flags >> 5, f"codec {flags >> 5}"))
    return f"0x{flags:02X} ({', '.join(names)})"


@register
class Blosc(Codec):
    names = ("blosc",)

    def decode(self, spec: CodecSpec, data: bytes, limit: int) -> bytes:
        lay = layout(data, limit)
        out, err = decode_layout(data, lay)
        if err is not None:
            raise CodecError(err[2], err[1])
        if len(out) != lay.nbytes:
            raise CodecError(f"blosc: blocks decode to {len(out)} bytes, nbytes says {lay.nbytes}", 4)
        # a bytearray (no copy into bytes): the stages after and `values` only read buffers
        return cast(bytes, out)

    def frame(self, spec: CodecSpec, cur: Cursor, limit: int):
        """Header, bstarts, and each block's streams (csize + data): all on disk, nothing
        decompressed; a layout that cannot be (cbytes, a bstart outside the frame) fails here."""
        base = cur.pos
        data = cur.source.read(base, cur.remaining)

        def header(h: Cursor):
            h.u8("version", D_VERSION)
            h.u8("versionlz", D_VERSIONLZ)
            f = h.u8("flags", D_FLAGS)
            flag_nodes(f, f.value)
            f.display = describe_flags(f.value)
            if f.value >> 5 not in CODECS:
                f.mark(ERROR, f"flags: unknown compressor format {f.value >> 5}")
            h.u8("typesize", D_TYPESIZE)
            h.u32("nbytes", D_NBYTES)
            h.u32("blocksize", D_BLOCKSIZE)
            h.u32("cbytes", D_CBYTES)
        hg = cur.group("Blosc header", header, size=HEADER if cur.remaining >= HEADER else None)
        try:
            lay = layout(data, limit)
        except CodecError as e:
            target = _field_at(hg, base + (e.where or 0)) if e.where is not None and e.where < HEADER else None
            if target is not None:
                target.mark(ERROR, str(e))
                e.status = "marked"
            raise
        ts = hg.find("typesize")
        # the element size the codec saw, or the typesize its configuration declares (zarr
        # 3.1's v3 BloscCodec keeps the array's, whatever a filter before it made)
        if ts is not None and spec.itemsize and \
                ts.value not in (spec.itemsize, 1, spec.config.get("typesize")) \
                and (lay.flags & 0x05):
            ts.mark(Status.WARNING, f"typesize {ts.value} is neither the record size "
                               f"{spec.itemsize} nor 1: the shuffle groups bytes across fields")
        if lay.memcpyed:
            cur.raw("Memcpyed data", lay.nbytes, D_RAW).kind = "payload"
        else:
            nb = len(lay.blocks)
            cur.array("bstarts", "i32", nb, D_BSTARTS, item_name="bstart {i}")
            for blk in sorted(lay.blocks, key=lambda b: b.start):
                def streams(c: Cursor, blk=blk):
                    for i, s in enumerate(blk.streams):
                        def one(sc: Cursor, s=s):
                            n = sc.i32("csize", D_CSIZE)
                            if s.csize == s.nbytes:
                                n.display = f"{s.csize} (= decoded size: stored raw)"
                            sc.raw("data", s.csize, D_STREAM).kind = "payload"
                        c.group(f"Stream {i + 1}", one, size=4 + s.csize, kind="chunk")
                end = blk.streams[-1].data_at + blk.streams[-1].csize if blk.streams else blk.start
                if cur.pos != base + blk.start:
                    if cur.pos > base + blk.start:
                        cur.fail(f"Block {blk.index + 1}", f"block {blk.index + 1} starts at "
                                 f"{blk.start}, inside the previous block")
                    cur.raw("gap", base + blk.start - cur.pos).mark(
                        Status.WARNING, "bytes between blocks that no bstart points to")
                g = cur.group(f"Block {blk.index + 1}", streams, size=end - blk.start, kind="chunk")
                g.display = f"{blk.nbytes} B in {len(blk.streams)} stream(s)"
        if lay.cbytes < len(data):
            if cur.pos < base + lay.cbytes:
                cur.raw("gap", base + lay.cbytes - cur.pos).mark(
                    Status.WARNING, "bytes inside the frame that no block uses")
            t = cur.raw("Trailing bytes", len(data) - lay.cbytes)
            t.mark(Status.WARNING, f"{len(data) - lay.cbytes} bytes after the blosc frame's end "
                              f"(cbytes {lay.cbytes}): no part of it; readers ignore them")
            t.code = ZARR_TRAILING
        return lay, base

    def finish(self, spec: CodecSpec, data: bytes, state, limit: int) -> bytes:
        lay, _base = state
        out, err = decode_layout(data, lay)
        if err is not None:
            raise CodecError(err[2], err[1], status="warning" if "snappy" in err[2] else "error")
        return bytes(out)  # immutable for the tree's derived source


def _field_at(group: Node, offset: int) -> Optional[Node]:
    for c in group.iter_children():
        if c.offset <= offset < c.end:
            return c
    return None

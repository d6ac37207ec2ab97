"""GZIP (zlib stream), ZSTD, LZ4 (raw block) and BZIP2: library codecs in TileDB's framing.

Chunk metadata: u32 metadata-part count, u32 data-part count, then (u32 original length,
u32 compressed length) per part; the data is every compressed metadata part, then every
compressed data part. Earlier filters' metadata travels compressed inside the data."""
from __future__ import annotations

import zlib
from typing import List, Optional, Tuple

import zstandard

from ..accel.unread import unread_metadata
from ..core.cursor import Cursor
from ..core.fielddoc import doc
from ..core.record import Field, Record
from . import zstdframes
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .enums import COMPRESSORS, DATATYPE_NAMES, Compressor, Datatype, FilterType
from .options import Editor, Option
from .util import MetaReader, check_size

D_COMPRESSOR = doc("Compressor type: the compressor id, a separate enum from filter types "
                   "(Dictionary is compressor 7, Delta compressor 8)", spec="filter_pipeline.md")
D_LEVEL = doc("Compression level; -1 means the compressor's default", spec="filter_pipeline.md")
D_REINTERPRET = doc("Reinterpret datatype: the type the values are read as before (double) "
                    "delta encoding; 17 (ANY) means none", spec="filter_pipeline.md")


def compressor_options(compressor: Compressor, reinterpret: bool = False) -> Tuple[Option, ...]:
    """The options of a compression-style filter: its compressor id (which must be this
    filter's), its level and, for the delta codecs, the datatype values are read as."""
    opts: Tuple[Option, ...] = (Option("compressor", "Compressor type", "u8", D_COMPRESSOR, default=compressor,
                   enum=COMPRESSORS, expected=compressor),
            Option("level", "Compression level", "i32", D_LEVEL, default=-1,
                   shown=lambda v: str(v), editor=Editor("int", -1, 22, special_text="default", label="Level")))
    if reinterpret:
        opts += (Option("reinterpret", "Reinterpret datatype", "u8", D_REINTERPRET,
                        default=Datatype.ANY, enum=DATATYPE_NAMES, optional=True,
                        shown=lambda v: "" if v == Datatype.ANY
                        else f"reinterpret={DATATYPE_NAMES.get(v, v)}"),)  # type: ignore[call-overload]
    return opts


D_NMD = doc("Number of metadata parts: input metadata parts (earlier filters' metadata) "
            "that this compressor compressed into its data", spec="filters: compression")
D_NDATA = doc("Number of data parts compressed", spec="filters: compression")
D_ORIG = doc("Part original length: input bytes of the part before compression")
D_COMP = doc("Part compressed length: bytes of the part in this filter's output data")

# The chunk metadata of a compressor: part counts, then per part its two lengths.
COMPRESSED_PART = Record(Field("Part original length", "u32", D_ORIG),
                         Field("Part compressed length", "u32", D_COMP), group="{kind} {n}")
PART_COUNTS = Record(
    Field("Number of metadata parts", "u32", D_NMD, item_size=COMPRESSED_PART.size, unit="parts"),
    Field("Number of data parts", "u32", D_NDATA, item_size=COMPRESSED_PART.size, unit="parts"))


def table_size(nmd: int, ndata: int) -> int:
    """Bytes of a compressor's part table: the two counts, then two lengths a part."""
    return PART_COUNTS.size + COMPRESSED_PART.size * (nmd + ndata)


class CompressionFilter(Filter):
    passes_metadata = False
    deterministic = False  # output depends on the library version; verified by decoding
    default_level = 0

    def level(self, spec: FilterSpec) -> int:
        lvl = int(spec.options.get("level", -1))
        return self.default_level if lvl == -1 else lvl

    def compress(self, data: bytes, level: int, info: DataInfo) -> bytes:
        raise NotImplementedError

    def decompress(self, data: bytes | memoryview, original: int, info: DataInfo) -> bytes:
        raise NotImplementedError

    # Codecs that need the filter options (reinterpret datatype) override these two.
    def compress_part(self, data: bytes, spec: FilterSpec, info: DataInfo,
                      run: Optional[RunContext] = None) -> bytes:
        return self.compress(data, self.level(spec), info)

    def decompress_part(self, data: bytes | memoryview, original: int, spec: FilterSpec,
                        info: DataInfo) -> bytes:
        """One part decoded by the planned paths (`batch`, verify's chunk windows)."""
        return self.decompress(data, original, info)

    def reference_part(self, data: bytes | memoryview, original: int, spec: FilterSpec,
                       info: DataInfo) -> bytes:
        """One part decoded by the reference (`reverse`, stage by stage): the same as the
        planned paths' unless the codec's `decompress_part` runs a compiled kernel, when it
        is written once more in plain numpy (DELTA, DOUBLE_DELTA: `deltas.py`)."""
        return self.decompress_part(data, original, spec, info)

    # ---- metadata ------------------------------------------------------------------------
    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        nmd, ndata = PART_COUNTS.annotate(cur)
        for kind, n in (("Metadata part", nmd), ("Data part", ndata)):
            for i in range(n):
                COMPRESSED_PART.annotate(cur, kind=kind, n=i + 1)

    @staticmethod
    def read_table(md: bytes, name: str) -> Tuple[int, List[Tuple[int, int]]]:
        """(metadata part count, [(original, compressed length)] of every part)."""
        r = MetaReader(md, name)
        nmd, ndata = r.counts(PART_COUNTS, COMPRESSED_PART, "part counts")
        return nmd, [r.record(COMPRESSED_PART, "part lengths") for _ in range(nmd + ndata)]

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        md = stage.metadata_bytes
        data = stage.data_bytes
        nmd, sizes = self.read_table(md, spec.name)
        pos = 0
        out_md: List[bytes] = []
        out_data: List[bytes] = []
        limit = run.size_limit()
        view = memoryview(data)
        for i, (orig, comp) in enumerate(sizes):
            where = len(md) + pos
            if pos + comp > len(data):
                raise FilterError(f"{spec.name} part {i + 1}: compressed length {comp} runs past "
                                  f"the {len(data)} data bytes", where)
            if orig > limit:
                check_size(orig, run, f"{spec.name} part {i + 1} original length", where)
            try:
                plain = self.reference_part(view[pos:pos + comp], orig, spec, info)
            except FilterError as e:
                if e.where is None:   # a codec's own error: at the part it read
                    e.where = where
                raise
            except Exception as e:  # codec errors differ per library
                raise FilterError(f"{spec.name} part {i + 1}: cannot decompress: {e}", where)
            if len(plain) != orig:
                raise FilterError(f"{spec.name} part {i + 1}: decompressed to {len(plain)} bytes, "
                                  f"metadata says {orig}", where)
            (out_md if i < nmd else out_data).append(plain)
            pos += comp
        if pos != len(data):
            raise FilterError(f"{spec.name}: parts cover {pos} of {len(data)} data bytes",
                              len(md) + pos)
        return Stage([b"".join(out_md)] if out_md else [], [b"".join(out_data)],
                     unread=unread_metadata(len(md), table_size(nmd, len(sizes) - nmd)))

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        parts = [p for p in stage.metadata] + [p for p in stage.data]
        table = [PART_COUNTS.pack(len(stage.metadata), len(stage.data))]
        out = []
        for p in parts:
            c = self.compress_part(bytes(p), spec, info, run)
            table.append(COMPRESSED_PART.pack(len(p), len(c)))
            out.append(c)
        return Stage([b"".join(table)], [b"".join(out)])


def _bounded(original: int) -> int:
    return max(0, int(original))


class Gzip(CompressionFilter):
    """TileDB's GZIP writes a zlib stream (header 78 xx), not a gzip file.

    Read as libtiledb reads it (`GZip::decompress`, tiledb/sm/compressors/gzip_compressor.cc:
    one `inflate(Z_FINISH)` over the part, an error unless it returns Z_STREAM_END): the
    stream must end, with its checksum, inside the part; bytes after its end are ignored
    (garbage, zeros, a second stream: tiledb-py 0.36.1 reads the cells alike)."""

    type = FilterType.GZIP
    options = compressor_options(Compressor.GZIP)
    default_level = 6

    def compress(self, data, level, info):
        return zlib.compress(data, level)

    def decompress(self, data, original, info):
        # zlib-ng (the same streams, about 1.9× the system zlib's speed), through its
        # public zlib-compatible API, which releases the GIL while it inflates; imported
        # here, as the other codecs' libraries, by the arrays that use it
        from zlib_ng import zlib_ng

        d = zlib_ng.decompressobj()
        out = d.decompress(data, _bounded(original) + 1)  # never more than declared (+1 to detect)
        if not d.eof and len(out) <= original:
            raise FilterError(f"GZIP: the zlib stream does not end within the part's "
                              f"{len(data)} bytes ({len(out)} bytes decoded, no end of stream "
                              f"and checksum after them); libtiledb refuses it")
        return out


class Zstd(CompressionFilter):
    """-1 is passed to libzstd unchanged: zstd's fast level -1 (checked on bytes written by
    libtiledb 2.30: they equal zstd level -1, not its default 3).

    A part is read as libtiledb reads it: `ZSTD_decompressDCtx` over the whole part into
    the part's original length (`ZStd::decompress`, tiledb/sm/compressors/zstd_compressor.cc),
    so every frame is decoded in turn and skippable frames are skipped (an empty or
    skippable frame after the data reads alike, as tiledb-py 0.36.1 shows), while anything
    else after the frames ("Src size is incorrect") or frames holding more than the part
    ("Destination buffer is too small") is an error. python-zstandard's `decompress` reads
    one frame and ignores what follows, so the frames are walked first (`zstdframes`)."""

    type = FilterType.ZSTD
    options = compressor_options(Compressor.ZSTD)
    default_level = -1

    def compress(self, data, level, info):
        return zstandard.ZstdCompressor(level=level).compress(data)

    def decompress(self, data, original, info):
        out, err = zstdframes.decompress_all(data, _bounded(original))
        if out is not None and len(out) == original:
            return out
        raise FilterError(_zstd_problem(data, original, out, err))


def _zstd_problem(data, original: int, out, err: str) -> str:
    """What is wrong with a ZSTD part that does not decode to `original` bytes: what the
    part holds against what libtiledb expects of it."""
    w = zstdframes.walk(data)
    frames, end = [f for f in w.frames], w.end
    said = f" (libzstd: {err})" if err else ""
    if not frames:
        return f"ZSTD: the part does not start with a whole zstd frame{said}"
    one = len(frames) == 1
    whole = "the frame" if one else f"the {len(frames)} frames"
    if out is not None:   # decoded, to fewer bytes
        return f"ZSTD: {whole} {'holds' if one else 'hold'} {len(out)} bytes, the part {original}"
    if end < len(data):
        return (f"ZSTD: {len(data) - end} bytes after {whole} ({end} of the part's "
                f"{len(data)} bytes) are not a zstd frame; libtiledb decompresses the whole "
                f"part and refuses it{said}")
    sizes = [f.content for f in frames]
    if -1 not in sizes and sum(sizes) != original:
        held = f"holds {sizes[0]}" if one else f"hold {sum(sizes)}"
        return f"ZSTD: {whole} {held} bytes, the part {original}{said}"
    return f"ZSTD: {whole} cannot be decompressed into the part's {original} bytes{said}"


class LZ4(CompressionFilter):
    """LZ4 raw block (LZ4_compress_default): no frame, no stored size. The level is not
    used. libtiledb 2.30 bundles a newer liblz4 than python-lz4 (1.9.4): both decode each
    other's blocks, but their encoders pick different matches, so re-encoding does not
    always reproduce the stored bytes.

    Bytes after the block: a block has no end marker, `LZ4_decompress_safe` reads it to the
    end of the part it is given, in libtiledb (`LZ4::decompress`) as in python-lz4, so
    whatever follows is read as more of the block: an error (or more bytes than the part)
    on every path alike."""

    type = FilterType.LZ4
    options = compressor_options(Compressor.LZ4)
    default_level = 1

    def compress(self, data, level, info):
        import lz4.block

        return lz4.block.compress(data, store_size=False)

    def decompress(self, data, original, info):
        if original == 0:
            return b""
        import lz4.block

        return lz4.block.decompress(data, uncompressed_size=_bounded(original))


class Bzip2(CompressionFilter):
    """Level -1 (the default) writes block size 1 ('BZh1'), as libtiledb 2.30 does.

    Read as libtiledb reads it (`BZip::decompress`, tiledb/sm/compressors/bzip_compressor.cc:
    `BZ2_bzBuffToBuffDecompress`, an error unless the stream ends): the stream must end,
    with its checksum, inside the part; bytes after its end are ignored (tiledb-py 0.36.1
    reads the cells alike)."""

    type = FilterType.BZIP2
    options = compressor_options(Compressor.BZIP2)
    default_level = 1

    def compress(self, data, level, info):
        import bz2

        return bz2.compress(data, max(1, min(9, level)))

    def decompress(self, data, original, info):
        import bz2

        d = bz2.BZ2Decompressor()
        out = d.decompress(data, max_length=_bounded(original) + 1)
        if not d.eof and len(out) <= original:
            raise FilterError(f"BZIP2: the stream does not end within the part's {len(data)} "
                              f"bytes ({len(out)} bytes decoded, no end of stream and "
                              f"checksum after them); libtiledb refuses it")
        return out

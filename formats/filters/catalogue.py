"""Every TileDB filter arrayscope implements besides the library codecs (GZIP, ZSTD, LZ4,
BZIP2) and AES-256-GCM, which `formats.filters` registers itself."""
from __future__ import annotations

from .checksum import ChecksumMD5, ChecksumSHA256
from .deltas import Delta, DoubleDelta
from .dictionary import Dictionary
from .rle import Rle
from .scale import FloatScale
from .shuffle import BitShuffle, ByteShuffle
from .webp import Webp
from .windows import BitWidthReduction, PositiveDelta
from .xor import Xor

FILTERS = [
    Rle(), DoubleDelta(), BitWidthReduction(), BitShuffle(), ByteShuffle(), PositiveDelta(),
    ChecksumMD5(), ChecksumSHA256(), Dictionary(), FloatScale(), Xor(), Webp(), Delta(),
]

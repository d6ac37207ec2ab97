"""CHECKSUM_MD5 (12) and CHECKSUM_SHA256 (13).

Metadata (tile.md, "Checksum Filters"): `u32 metadata checksum count, u32 data checksum
count`, then per input metadata part and per input data part `u64 bytes, digest`. It is
prepended to the earlier filters' metadata ("Input metadata, copied intact"); the data
parts pass through as they are. Reversing verifies every digest."""
from __future__ import annotations

import hashlib
import struct

from ..cursor import Cursor
from ..fielddoc import doc
from ..tiledb.enums import FilterType
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .util import MetaReader

D_NMD = doc("Num metadata checksums: one per input metadata part (earlier filters' "
            "metadata)", spec="tile.md: Checksum Filters")
D_NDATA = doc("Num data checksums: one per input data part", spec="tile.md: Checksum Filters")
D_NBYTES_MD = doc("Num input bytes for metadata checksum: bytes of metadata this digest "
                  "covers", spec="tile.md: Checksum Filters")
D_NBYTES_DATA = doc("Num input bytes for data checksum: bytes of data this digest covers",
                    spec="tile.md: Checksum Filters")
D_DIGEST = doc("The digest (MD5: 16 bytes, SHA-256: 32 bytes) of the bytes it covers",
               spec="tile.md: Checksum Filters")


class _Checksum(Filter):
    algorithm = ""
    digest_size = 0

    def digest(self, data) -> bytes:
        return hashlib.new(self.algorithm, data).digest()

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        entry = 8 + self.digest_size
        nmd = cur.length("u32", "Num metadata checksums", entry, D_NMD, "checksums").value
        nd = cur.length("u32", "Num data checksums", entry, D_NDATA, "checksums").value
        for kind, n, d in (("metadata", nmd, D_NBYTES_MD), ("data", nd, D_NBYTES_DATA)):
            for i in range(n):
                cur.u64(f"Num input bytes for {kind} checksum {i + 1}", d)
                cur.raw(f"{kind.capitalize()} checksum {i + 1}", self.digest_size, D_DIGEST)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        md = stage.metadata_bytes
        r = MetaReader(md, spec.name)
        entry = 8 + self.digest_size
        nmd = r.count("Num metadata checksums", entry)
        nd = r.count("Num data checksums", entry)
        table = []
        for i in range(nmd + nd):
            at = r.pos
            n = r.u64("checksummed bytes")
            table.append((n, r.take(self.digest_size, "digest"), at))
        rest = r.rest()
        data = stage.data_bytes
        for label, entries, buf, base in (("metadata", table[:nmd], rest, len(md) - len(rest)),
                                          ("data", table[nmd:], data, len(md))):
            pos = 0
            for i, (n, expected, at) in enumerate(entries):
                if pos + n > len(buf):
                    raise FilterError(f"{spec.name}: {label} checksum {i + 1} covers {n} bytes, "
                                      f"only {len(buf) - pos} remain", at)
                found = self.digest(memoryview(buf)[pos:pos + n])
                if found != expected:
                    raise FilterError(
                        f"{spec.name} mismatch on {label} part {i + 1} ({n} bytes): expected "
                        f"{expected.hex()}, found {found.hex()}", base + pos)
                pos += n
        return Stage([rest] if rest else [], list(stage.data))

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        out = [struct.pack("<II", len(stage.metadata), len(stage.data))]
        for p in list(stage.metadata) + list(stage.data):
            out.append(struct.pack("<Q", len(p)) + self.digest(p))
        return Stage([b"".join(out)] + list(stage.metadata), list(stage.data))


class ChecksumMD5(_Checksum):
    type = FilterType.CHECKSUM_MD5
    algorithm = "md5"
    digest_size = 16


class ChecksumSHA256(_Checksum):
    type = FilterType.CHECKSUM_SHA256
    algorithm = "sha256"
    digest_size = 32

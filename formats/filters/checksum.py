"""CHECKSUM_MD5 (12) and CHECKSUM_SHA256 (13).

Metadata (tile.md, "Checksum Filters"): `u32 metadata checksum count, u32 data checksum
count`, then per input metadata part and per input data part `u64 bytes, digest`. It is
prepended to the earlier filters' metadata ("Input metadata, copied intact"); the data
parts pass through as they are. Reversing verifies every digest."""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from ..core.cursor import Cursor
from ..core.fielddoc import FieldDoc, doc
from ..core.record import Field, Record
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .enums import FilterType
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



class Layout(NamedTuple):
    """A checksum filter's metadata: the counts, then an entry per metadata part and per
    data part (the digest size makes one layout per algorithm)."""

    counts: Record
    md_entry: Record
    data_entry: Record


@lru_cache(maxsize=None)
def layout(digest_size: int) -> Layout:
    def entry(kind: str, d: FieldDoc) -> Record:
        return Record(Field(f"Num input bytes for {kind} checksum {{n}}", "u64", d),
                      Field(f"{kind.capitalize()} checksum {{n}}", raw=digest_size, doc=D_DIGEST))
    md_entry = entry("metadata", D_NBYTES_MD)
    size = md_entry.size
    counts = Record(Field("Num metadata checksums", "u32", D_NMD, item_size=size, unit="checksums"),
                    Field("Num data checksums", "u32", D_NDATA, item_size=size, unit="checksums"))
    return Layout(counts, md_entry, entry("data", D_NBYTES_DATA))


class _Checksum(Filter):
    algorithm = ""
    digest_size = 0

    def digest(self, data) -> bytes:
        import hashlib  # here: a command that only shows the filter never loads OpenSSL

        return hashlib.new(self.algorithm, data).digest()

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        lay = layout(self.digest_size)
        nmd, nd = lay.counts.annotate(cur)
        for rec, n in ((lay.md_entry, nmd), (lay.data_entry, nd)):
            for i in range(n):
                rec.annotate(cur, n=i + 1)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        md = stage.metadata_bytes
        r = MetaReader(md, spec.name)
        lay = layout(self.digest_size)
        nmd, nd = r.counts(lay.counts, lay.md_entry, "checksum counts")
        table = []
        for i in range(nmd + nd):
            at = r.pos
            n, digest = r.record(lay.md_entry, "checksum entry")
            table.append((n, digest, at))
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
        lay = layout(self.digest_size)
        out = [lay.counts.pack(len(stage.metadata), len(stage.data))]
        for p in list(stage.metadata) + list(stage.data):
            out.append(lay.md_entry.pack(len(p), self.digest(p)))
        kept = stage.passed_on()   # one digest per input part; the parts pass on as views
        return Stage([b"".join(out)] + kept.metadata, kept.data)


class ChecksumMD5(_Checksum):
    type = FilterType.CHECKSUM_MD5
    algorithm = "md5"
    digest_size = 16


class ChecksumSHA256(_Checksum):
    type = FilterType.CHECKSUM_SHA256
    algorithm = "sha256"
    digest_size = 32

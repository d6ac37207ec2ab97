"""TileDB's internal AES-256-GCM filter (type 11).

Chunk metadata (upstream `AESPart`, confirmed on bytes written by libtiledb 2.30; the seed
document's "AESPartMD" with u32 IV/tag lengths is wrong): u32 metadata-part count, u32
data-part count, then per part u32 plaintext length, u32 encrypted length, 12-byte IV,
16-byte tag. The data is the ciphertext of each metadata part, then of each data part."""
from __future__ import annotations

import os
import struct

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..context import KEY_HINT
from ..cursor import Cursor
from ..fielddoc import doc
from ..tiledb.enums import FilterType
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage

PART_SIZE = 4 + 4 + 12 + 16
D_PLAIN = doc("Plaintext length: bytes of the part before encryption")
D_CIPHER = doc("Encrypted length: bytes of ciphertext in this filter's data "
               "(equal to the plaintext length: GCM is a stream mode)")
D_IV = doc("AES-256-GCM initialisation vector (12 random bytes per part)")
D_TAG = doc("AES-256-GCM authentication tag: a wrong key or any changed byte fails it")


class Aes256Gcm(Filter):
    type = FilterType.INTERNAL_FILTER_AES_256_GCM
    passes_metadata = False
    deterministic = False  # a fresh random IV per part
    random_iv = True

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        nmd = cur.length("u32", "Number of metadata parts", PART_SIZE, what="parts").value
        ndata = cur.length("u32", "Number of data parts", PART_SIZE, what="parts").value
        for kind, n in (("Metadata part", nmd), ("Data part", ndata)):
            for i in range(n):
                def part(c: Cursor):
                    c.u32("Plaintext length", D_PLAIN)
                    c.u32("Encrypted length", D_CIPHER)
                    c.raw("IV", 12, D_IV)
                    c.raw("Tag", 16, D_TAG)
                cur.group(f"AES {kind.lower()} {i + 1}", part, size=PART_SIZE)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        if not run.key:
            raise FilterError(f"encrypted with AES-256-GCM: no key given; {KEY_HINT}", 0,
                              FilterError.NO_KEY)
        md, data = stage.metadata_bytes, stage.data_bytes
        if len(md) < 8:
            raise FilterError("AES metadata needs 8 bytes", 0)
        nmd, ndata = struct.unpack_from("<II", md, 0)
        if 8 + PART_SIZE * (nmd + ndata) > len(md):
            raise FilterError(f"AES metadata lists {nmd}+{ndata} parts, only {len(md)} bytes", 0)
        aes = AESGCM(run.key)
        pos, out_md, out_data = 0, [], []
        for i in range(nmd + ndata):
            o = 8 + PART_SIZE * i
            plain_len, cipher_len = struct.unpack_from("<II", md, o)
            iv, tag = md[o + 8:o + 20], md[o + 20:o + 36]
            if pos + cipher_len > len(data):
                raise FilterError(f"AES part {i + 1}: {cipher_len} bytes run past the data",
                                  len(md) + pos)
            try:
                plain = aes.decrypt(iv, bytes(data[pos:pos + cipher_len]) + tag, None)
            except InvalidTag:
                raise FilterError(f"AES-256-GCM tag check failed on part {i + 1}: wrong key, or "
                                  f"the ciphertext, IV or tag was changed", len(md) + pos,
                                  FilterError.TAG)
            if len(plain) != plain_len:
                raise FilterError(f"AES part {i + 1}: {len(plain)} plaintext bytes, metadata "
                                  f"says {plain_len}", len(md) + pos)
            (out_md if i < nmd else out_data).append(plain)
            pos += cipher_len
        return Stage([b"".join(out_md)] if out_md else [], [b"".join(out_data)])

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        if not run.key:
            raise FilterError(f"no key to encrypt with; {KEY_HINT}")
        aes = AESGCM(run.key)
        table = [struct.pack("<II", len(stage.metadata), len(stage.data))]
        out = []
        for p in list(stage.metadata) + list(stage.data):
            iv = os.urandom(12)
            ct = aes.encrypt(iv, bytes(p), None)
            body, tag = ct[:-16], ct[-16:]
            table.append(struct.pack("<II", len(p), len(body)) + iv + tag)
            out.append(body)
        return Stage([b"".join(table)], [b"".join(out)])

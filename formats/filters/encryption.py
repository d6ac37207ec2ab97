"""TileDB's internal AES-256-GCM filter (type 11).

Chunk metadata (upstream `AESPart`, confirmed on bytes written by libtiledb 2.30; the seed
document's "AESPartMD" with u32 IV/tag lengths is wrong): u32 metadata-part count, u32
data-part count, then per part u32 plaintext length, u32 encrypted length, 12-byte IV,
16-byte tag. The data is the ciphertext of each metadata part, then of each data part."""
from __future__ import annotations

import os
from typing import List

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..core.context import KEY_HINT
from ..core.cursor import Cursor
from ..core.fielddoc import doc
from ..core.record import Field, Record
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .enums import FilterType
from .util import MetaReader

D_PLAIN = doc("Plaintext length: bytes of the part before encryption")
D_CIPHER = doc("Encrypted length: bytes of ciphertext in this filter's data "
               "(equal to the plaintext length: GCM is a stream mode)")
D_IV = doc("AES-256-GCM initialisation vector (12 random bytes per part)")
D_TAG = doc("AES-256-GCM authentication tag: a wrong key or any changed byte fails it")
D_NMD = doc("Number of metadata parts: input metadata parts (earlier filters' metadata) "
            "encrypted into this filter's data")
D_NDATA = doc("Number of data parts encrypted")

# upstream `AESPart`: the chunk metadata is the part counts, then one of these per part
AES_PART = Record(Field("Plaintext length", "u32", D_PLAIN),
                  Field("Encrypted length", "u32", D_CIPHER),
                  Field("IV", raw=12, doc=D_IV), Field("Tag", raw=16, doc=D_TAG),
                  group="AES {kind} {n}")
PART_COUNTS = Record(
    Field("Number of metadata parts", "u32", D_NMD, item_size=AES_PART.size, unit="parts"),
    Field("Number of data parts", "u32", D_NDATA, item_size=AES_PART.size, unit="parts"))


class Aes256Gcm(Filter):
    type = FilterType.INTERNAL_FILTER_AES_256_GCM
    passes_metadata = False
    deterministic = False  # a fresh random IV per part
    random_iv = True

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        nmd, ndata = PART_COUNTS.annotate(cur)
        for kind, n in (("metadata part", nmd), ("data part", ndata)):
            for i in range(n):
                AES_PART.annotate(cur, kind=kind, n=i + 1)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        if not run.key:
            raise FilterError(f"encrypted with AES-256-GCM: no key given; {KEY_HINT}", 0,
                              FilterError.NO_KEY)
        md, data = stage.metadata_bytes, stage.data_bytes
        r = MetaReader(md, spec.name)
        nmd, ndata = r.counts(PART_COUNTS, AES_PART, "part counts")
        aes = AESGCM(run.key)
        pos = 0
        out_md: List[bytes] = []
        out_data: List[bytes] = []
        for i in range(nmd + ndata):
            plain_len, cipher_len, iv, tag = r.record(AES_PART, "AES part")
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
        return Stage([b"".join(out_md)] if out_md else [], [b"".join(out_data)],
                     unread=r.remaining)

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        if not run.key:
            raise FilterError(f"no key to encrypt with; {KEY_HINT}")
        aes = AESGCM(run.key)
        table = [PART_COUNTS.pack(len(stage.metadata), len(stage.data))]
        out = []
        for p in list(stage.metadata) + list(stage.data):
            iv = os.urandom(12)
            ct = aes.encrypt(iv, bytes(p), None)
            body, tag = ct[:-16], ct[-16:]
            table.append(AES_PART.pack(len(p), len(body), iv, tag))
            out.append(body)
        return Stage([b"".join(table)], [b"".join(out)])


def decrypt_chunk(aes: AESGCM, md, data, into=None):
    """The decrypted (metadata parts, data parts) of one chunk's AES stage, every check of
    `reverse` applied; None when any fails (the general path then reports it). With `into`
    (a writable buffer), a chunk of exactly one data part of that size is decrypted straight
    into it and its data parts are `[into]`."""
    try:
        r = MetaReader(md, "AES")
        nmd, ndata = r.counts(PART_COUNTS, AES_PART, "part counts")
        parts = [r.record(AES_PART, "AES part") for _ in range(nmd + ndata)]
    except FilterError:
        return None
    if sum(p[1] for p in parts) > len(data):
        return None
    view = memoryview(data)
    out: List = []
    pos = 0
    try:
        for plain_len, cipher_len, iv, tag in parts:
            if plain_len != cipher_len:
                return None   # GCM keeps lengths: the general path says what is wrong
            ct = bytes(view[pos:pos + cipher_len]) + tag   # the tag follows, as AESGCM wants
            if into is not None and nmd == 0 and ndata == 1 and len(into) == plain_len:
                aes.decrypt_into(iv, ct, None, into)
                out.append(into)
            else:
                out.append(aes.decrypt(iv, ct, None))
            pos += cipher_len
    except (InvalidTag, ValueError, TypeError):
        return None
    return out[:nmd], out[nmd:]

"""The codec-stage model: each codec turns its stage's bytes into the previous stage's.

Like the TileDB filters (formats/filters/base.py), a chunk is reversed stage by stage: the
stored bytes are the last stage; reversing codec k gives stage k's input, a derived source of
its own with the nodes that explain the encoded bytes (frame headers, blocks, streams).
`reverse` annotates and decodes; `decode` only decodes (the fast path of `values`).

`reverse` is two steps so a chunk can be shown before it is decoded: `frame` annotates what
is on disk and needs no decompression (zstd frame and block headers, blosc header, bstarts
and stream sizes, a checksum field), `finish` decodes and checks what only the decoded bytes
can tell (a content checksum, sizes that must agree), marking the nodes `frame` made.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional, Type, TypeVar

from ...core.cursor import Cursor


class CodecError(Exception):
    """A stage that cannot be reversed: `where` is the offset in the stage's input."""

    def __init__(self, message: str, where: Optional[int] = None, status: str = "error"):
        super().__init__(message)
        self.where = where
        self.status = status


@dataclass
class CodecSpec:
    """One codec as the metadata declares it: its name (v3 name or v2 id, normalised),
    its configuration, the metadata node that declares it, and the record size."""

    name: str
    config: Dict[str, object] = field(default_factory=dict)
    node: object = None
    written: str = ""          # the name as written ("numcodecs.shuffle", "blosc", ...)
    itemsize: int = 1

    @property
    def label(self) -> str:
        return self.written or self.name


class Codec:
    """Base class: a bytes->bytes codec. A subclass decorated with `@register` is found by
    `get(name)` under each of its `names` (the v2 numcodecs `id` and the v3 `name`; a v3
    "numcodecs.X" name is looked up as "X"): a new codec is one module in this package."""

    names: tuple = ()

    def reverse(self, spec: CodecSpec, cur: Cursor, limit: int) -> bytes:
        """Annotate the encoded bytes at `cur` (its whole range) and return them decoded
        (never more than `limit` bytes)."""
        data = cur.source.read(cur.pos, cur.remaining)
        state = self.frame(spec, cur, limit)
        return self.finish(spec, data, state, limit)

    def frame(self, spec: CodecSpec, cur: Cursor, limit: int):
        """Annotate the encoded bytes at `cur` (its whole range) without decoding them;
        returns what `finish` needs (frame nodes, a layout); `limit` bounds sizes the framing
        declares. Raises CodecError / ParseStop for framing that is wrong on its face."""
        self.annotate(spec, cur)
        return None

    def finish(self, spec: CodecSpec, data: bytes, state, limit: int) -> bytes:
        """Decode `data` (the bytes from where `frame` started, to the end) after `frame`;
        may mark `state`'s nodes. Raises CodecError (status "marked" when a node says it)."""
        return self.decode(spec, data, limit)

    def annotate(self, spec: CodecSpec, cur: Cursor) -> None:
        n = cur.raw(f"{spec.label} data", cur.remaining)
        n.kind = "payload"

    def decode(self, spec: CodecSpec, data: bytes, limit: int) -> bytes:  # pragma: no cover
        raise CodecError(f"decoding {spec.label} is not supported")

    def encoded_itemsize(self, spec: CodecSpec, itemsize: int) -> int:
        """The element size of what this codec writes, given that of what it reads (a filter
        that changes the type changes it: the codec after it sees the new elements)."""
        return itemsize

    def encode(self, spec: CodecSpec, data: bytes) -> bytes:
        """The stage bytes `decode` reverses (optional: tests and forward checks use it)."""
        raise CodecError(f"encoding {spec.label} is not supported", status="warning")


# ---- the registry -------------------------------------------------------------------------
REGISTRY: Dict[str, Codec] = {}
C = TypeVar("C", bound=Type[Codec])


def register(cls: C) -> C:
    """Class decorator: one instance of `cls` answers for each of its names."""
    inst = cls()
    for n in cls.names:
        if n in REGISTRY and type(REGISTRY[n]) is not cls:
            raise ValueError(f"codec name {n!r} registered twice ({type(REGISTRY[n]).__name__},"
                             f" {cls.__name__})")
        REGISTRY[n] = inst
    return cls


# Object codecs (numcodecs' pickle, msgpack, ...): named, their bytes never unpickled or
# evaluated; vlen-* are decoded by vlen.py as the array->bytes step, not as a stage.
OBJECT_CODECS = {"pickle", "msgpack2", "json2", "vlen-utf8", "vlen-bytes", "vlen-array",
                 "json", "msgpack"}


class Undecodable(Codec):
    """A codec that is named, not decoded: its bytes one payload node and a warning."""

    def __init__(self, message: str):
        self.message = message

    def frame(self, spec, cur, limit):
        cur.raw(f"{spec.label} data", cur.remaining).kind = "payload"
        raise CodecError(self.message, status="warning")

    def decode(self, spec, data, limit):
        raise CodecError(self.message, status="warning")

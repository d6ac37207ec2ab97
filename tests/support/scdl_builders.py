"""Shared helpers of the SCDL tests (no tests here): hand-made header bytes, tree queries."""
from __future__ import annotations

import os
import struct
from typing import Iterable, Optional, Sequence

from arrayscope.formats.core import engine
from arrayscope.formats.core.node import Node
from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.scdl.header import parse_header_source
from tests.support import paths

DATA_DIR = os.path.join(paths.DATA, "scdl")
ARCHIVES = ("basic", "uint_data", "concat_blocks", "concat_stale", "legacy_008", "v012_basic")


def fixture(name: str) -> str:
    return os.path.join(DATA_DIR, name)


def s(text) -> bytes:
    """A header string: uint32 BE byte count, then the bytes."""
    b = text.encode("utf-8") if isinstance(text, str) else text
    return struct.pack(">I", len(b)) + b


def shape_bytes(shape: Optional[Sequence[int]], flag: Optional[int] = None) -> bytes:
    if shape is None:
        return bytes([0 if flag is None else flag])
    return bytes([1 if flag is None else flag]) + struct.pack(">I", len(shape)) + \
        b"".join(struct.pack(">I", d) for d in shape)


def array_desc(name, length: int, dtype: int, shape=None, flag=None) -> bytes:
    return s(name) + struct.pack(">QI", length, dtype) + shape_bytes(shape, flag)


def fi_desc(name, length: int, dtype: int, files: Iterable, shape=None) -> bytes:
    files = list(files)
    return (s(name) + struct.pack(">QI", length, dtype) + struct.pack(">I", len(files))
            + b"".join(s(f) for f in files) + shape_bytes(shape))


def header_bytes(arrays: Sequence[bytes] = (), fis: Optional[Sequence[bytes]] = (),
                 version=(0, 1, 0), endian: int = 1, backend: int = 1, magic: bytes = b"SCDL",
                 array_count: Optional[int] = None, fi_count: Optional[int] = None) -> bytes:
    out = magic + bytes(version) + bytes([endian]) + struct.pack(
        ">II", backend, len(arrays) if array_count is None else array_count)
    out += b"".join(arrays)
    if fis is not None:
        out += struct.pack(">I", len(fis) if fi_count is None else fi_count) + b"".join(fis)
    return out


def parse(data: bytes):
    src = BytesSource(data, "header.sch")
    root, model = parse_header_source(src)
    return root, model, src


def errors(root: Node):
    return [n for n in root.walk() if n.status == "error"]


def warnings_(root: Node):
    return [n for n in root.walk() if n.status == "warning"]


def full_coverage(root: Node, src) -> bool:
    covered, size = engine.coverage(root, src)
    return covered == size

"""Byte shuffle and blosc's bit shuffle, vectorised with numpy (no per-byte loops).

Byte shuffle (numcodecs `Shuffle`, blosc flag 0x01): for N = len // E elements of E bytes,
`stored[j*N + i] = decoded[i*E + j]`; trailing `len % E` bytes are copied as they are.

Bit shuffle (blosc flag 0x04, c-blosc `bitshuffle-generic.c`): for n elements of E bytes
with n a multiple of 8, the stored block is 8·E bit-rows of n/8 bytes; row `8j + b` holds
bit b of byte j of every element, element i at bit `i % 8` of row byte `i // 8`. Blocks
whose element count is not a multiple of 8 are stored unshuffled; bytes after the last
whole element are copied as they are.
"""
from __future__ import annotations

import numpy as np


def unshuffle(data: bytes, elem: int) -> bytes:
    if elem <= 1 or len(data) < 2 * elem:
        return bytes(data)
    n = len(data) // elem
    a = np.frombuffer(data, dtype=np.uint8, count=n * elem)
    out = a.reshape(elem, n).T.tobytes()
    return out + bytes(data[n * elem:])


def shuffle(data: bytes, elem: int) -> bytes:
    if elem <= 1 or len(data) < 2 * elem:
        return bytes(data)
    n = len(data) // elem
    a = np.frombuffer(data, dtype=np.uint8, count=n * elem)
    return a.reshape(n, elem).T.tobytes() + bytes(data[n * elem:])


def bitunshuffle(data: bytes, elem: int) -> bytes:
    """One blosc block."""
    n = len(data) // elem if elem else 0
    if elem <= 0 or n == 0 or n % 8:
        return bytes(data)
    a = np.frombuffer(data, dtype=np.uint8, count=n * elem).reshape(elem * 8, n // 8)
    bits = np.unpackbits(a, axis=1, bitorder="little")          # (8E, n): row 8j+b, col i
    bits = bits.reshape(elem, 8, n).transpose(2, 0, 1)          # (n, E, 8)
    out = np.packbits(bits, axis=-1, bitorder="little").reshape(n * elem)
    return out.tobytes() + bytes(data[n * elem:])


def bitshuffle(data: bytes, elem: int) -> bytes:
    n = len(data) // elem if elem else 0
    if elem <= 0 or n == 0 or n % 8:
        return bytes(data)
    a = np.frombuffer(data, dtype=np.uint8, count=n * elem).reshape(n, elem, 1)
    bits = np.unpackbits(a, axis=-1, bitorder="little")         # (n, E, 8)
    rows = bits.transpose(1, 2, 0).reshape(elem * 8, n)
    return np.packbits(rows, axis=1, bitorder="little").tobytes() + bytes(data[n * elem:])

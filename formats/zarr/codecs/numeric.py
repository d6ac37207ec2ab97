"""numcodecs' numeric filters, decoded with numpy as numcodecs documents them (no numcodecs
import: the installed program needs neither zarr nor numcodecs).

Each is a v2 filter (`{"id": ..., ...}`) turning the chunk's values into other values: the
stored bytes are values of the encoded type (`astype`), the decoded bytes those of `dtype`.
FixedScaleOffset, Quantize, AsType and BitRound are lossy or type changes on encode; their
decode is a numpy cast (BitRound's none at all). PackBits packs booleans 8 to a byte after
a count of padding bits; Categorize stores each string as its 1-based label index.
"""
from __future__ import annotations

import numpy as np

from ...core.cursor import Cursor
from ...core.fielddoc import doc
from .base import Codec, CodecError, CodecSpec, register

D_ENCODED = doc("Encoded values: the chunk's values as the filter's `astype`, in order",
                spec="numcodecs filters")
D_PADBITS = doc("Padding bits: how many bits of the last packed byte are no element",
                spec="numcodecs PackBits")
D_PACKED = doc("Packed booleans: 8 elements a byte, the first in the high bit",
               spec="numcodecs PackBits")


def _dtype(spec: CodecSpec, key: str, default=None, kinds: str = "iufcb") -> np.dtype:
    from ..dtype import _TYPESTR
    text = spec.config.get(key, default)
    if not isinstance(text, str) or not _TYPESTR.match(text):
        raise CodecError(f"{spec.label}: {key} must be a type string like '<f8', found {text!r}")
    dt = np.dtype(text)
    if dt.kind not in kinds:
        raise CodecError(f"{spec.label}: {key} {text!r} is not a {kinds!r} type")
    return dt


def _encoded(spec: CodecSpec, data: bytes, at: np.dtype, dt: np.dtype, limit: int) -> np.ndarray:
    if len(data) % at.itemsize:
        raise CodecError(f"{spec.label}: {len(data)} bytes is not a whole number of {at.str} "
                         f"values", len(data) - len(data) % at.itemsize)
    if len(data) // at.itemsize * dt.itemsize > limit:
        raise CodecError(f"{spec.label}: decodes to more than {limit} bytes")
    return np.frombuffer(data, dtype=at)


def _number(spec: CodecSpec, key: str):
    v = spec.config.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise CodecError(f"{spec.label}: {key} must be a number, found {v!r}")
    return v


class _Cast(Codec):
    """Values of `astype` (stored) cast to `dtype` (decoded)."""

    decoded_key, encoded_key = "dtype", "astype"

    def types(self, spec):
        dt = _dtype(spec, self.decoded_key)
        return _dtype(spec, self.encoded_key, spec.config.get(self.decoded_key)), dt

    def encoded_itemsize(self, spec, itemsize):
        return self.types(spec)[0].itemsize

    def convert(self, spec, enc: np.ndarray, dt: np.dtype) -> np.ndarray:
        with np.errstate(all="ignore"):
            return enc.astype(dt)

    def decode(self, spec, data, limit):
        at, dt = self.types(spec)
        return self.convert(spec, _encoded(spec, data, at, dt, limit), dt).tobytes()

    def frame(self, spec, cur: Cursor, limit: int):
        at, _dt = self.types(spec)
        n = cur.raw("Encoded values", cur.remaining, D_ENCODED)
        n.kind = "payload"
        n.display = f"{n.size // at.itemsize} × {at.str}"


@register
class FixedScaleOffset(_Cast):
    """decoded = stored / scale + offset, as `dtype` (numcodecs' own arithmetic)."""

    names = ("fixedscaleoffset",)

    def convert(self, spec, enc, dt):
        scale, offset = _number(spec, "scale"), _number(spec, "offset")
        with np.errstate(all="ignore"):
            return ((enc / scale) + offset).astype(dt)


@register
class Quantize(_Cast):
    """Rounding on encode; decode is the cast from `astype` to `dtype`."""

    names = ("quantize",)


@register
class AsType(_Cast):
    names = ("astype",)
    decoded_key, encoded_key = "decode_dtype", "encode_dtype"


@register
class BitRound(Codec):
    """Mantissa bits zeroed on encode: the stored bytes are the values themselves."""

    names = ("bitround",)

    def decode(self, spec, data, limit):
        return data

    def annotate(self, spec, cur: Cursor) -> None:
        n = cur.raw("Rounded values", cur.remaining, D_ENCODED)
        n.kind = "payload"


@register
class PackBits(Codec):
    """`u8 padding bits | packed bits` (numpy.packbits, big bit order)."""

    names = ("packbits",)

    def encoded_itemsize(self, spec, itemsize):
        return 1

    def decode(self, spec, data, limit):
        if not data:
            raise CodecError("packbits: no padding-bits byte", 0)
        pad = data[0]
        if pad > 7 or (pad and len(data) == 1):
            raise CodecError(f"packbits: {pad} padding bits is not possible here", 0)
        n = (len(data) - 1) * 8 - pad
        if n > limit:
            raise CodecError(f"packbits: decodes to more than {limit} bytes")
        bits = np.unpackbits(np.frombuffer(data, np.uint8, offset=1))
        return bits[:n].tobytes()

    def frame(self, spec, cur: Cursor, limit: int):
        cur.u8("Padding bits", D_PADBITS)
        n = cur.raw("Packed bits", cur.remaining, D_PACKED)
        n.kind = "payload"


@register
class Categorize(_Cast):
    """Each value stored as the 1-based index of its label (0: none of them → '')."""

    names = ("categorize",)

    def types(self, spec):
        if spec.config.get("dtype") in ("|O", "O"):
            raise CodecError("categorize: labels of an object array decode to Python objects, "
                             "which arrayscope leaves undecoded", status="warning")
        dt = _dtype(spec, "dtype", kinds="US")
        return _dtype(spec, "astype", "|u1", kinds="iu"), dt

    def convert(self, spec, enc, dt):
        labels = spec.config.get("labels")
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise CodecError(f"categorize: labels must be a list of strings, found {labels!r}"
                             [:200])
        out = np.full(enc.shape, "", dtype=dt)
        for i, label in enumerate(labels):
            out[enc == i + 1] = label
        return out

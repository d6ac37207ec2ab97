"""BloscLZ decompression (c-blosc's FastLZ-derived codec), written from blosc/blosclz.c.

No Python library decodes blosclz, and numcodecs is not used at run time. The stream is a
sequence of instructions; the first byte's top 3 bits are a marker (ignored):

- literal run: `ctrl < 32`: copy the next `ctrl + 1` bytes;
- match: `len = (ctrl >> 5) - 1` (7-1 = 6 means more length bytes follow, each added, until
  one is not 255), then one distance byte; `ref = op - ((ctrl & 31) << 8) - code - 1`; when
  the code byte is 255 and the high bits are all set, a 16-bit big-endian far distance
  follows and `ref = op - far - 8191 - 1`; `len + 3` bytes are copied from ref (overlap
  allowed: a distance of 1 is a run of the previous byte).
"""
from __future__ import annotations

MAX_DISTANCE = 8191


class BloscLZError(ValueError):
    def __init__(self, message: str, where: int):
        super().__init__(message)
        self.where = where


def decompress(data: bytes, maxout: int) -> bytes:
    ip, n = 0, len(data)
    if n == 0:
        raise BloscLZError("empty blosclz stream", 0)
    out = bytearray()
    ctrl = data[0] & 31
    ip = 1
    while True:
        if ctrl >= 32:
            at = ip - 1
            length = (ctrl >> 5) - 1
            ofs = (ctrl & 31) << 8
            if length == 6:
                while True:
                    if ip >= n:
                        raise BloscLZError("match length runs past the end of the stream", ip)
                    code = data[ip]
                    ip += 1
                    length += code
                    if code != 255:
                        break
            if ip >= n:
                raise BloscLZError("match distance runs past the end of the stream", ip)
            code = data[ip]
            ip += 1
            length += 3
            dist = ofs + code
            if code == 255 and ofs == 31 << 8:
                if ip + 2 > n:
                    raise BloscLZError("far distance runs past the end of the stream", ip)
                dist = (data[ip] << 8 | data[ip + 1]) + MAX_DISTANCE
                ip += 2
            ref = len(out) - dist - 1
            if ref < 0:
                raise BloscLZError(f"match refers {dist + 1} bytes back, only {len(out)} "
                                   f"bytes decoded", at)
            if len(out) + length > maxout:
                raise BloscLZError(f"match of {length} bytes overflows the {maxout}-byte block", at)
            d = dist + 1
            if d >= length:
                out += out[ref:ref + length]
            else:  # overlapping copy: repeat the period
                chunk = bytes(out[ref:ref + d])
                reps = -(-length // d)
                out += (chunk * reps)[:length]
        else:
            cnt = ctrl + 1
            if ip + cnt > n:
                raise BloscLZError(f"literal run of {cnt} bytes runs past the end of the stream",
                                   ip - 1)
            if len(out) + cnt > maxout:
                raise BloscLZError(f"literal run overflows the {maxout}-byte block", ip - 1)
            out += data[ip:ip + cnt]
            ip += cnt
        if ip >= n:
            break
        ctrl = data[ip]
        ip += 1
    return bytes(out)

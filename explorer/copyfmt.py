"""Selections as text for the clipboard (no Qt)."""
from __future__ import annotations

MAX_COPY = 64 << 20


def as_hex(data: bytes) -> str:
    return data.hex(" ")


def as_c_array(data: bytes, name: str = "data") -> str:
    lines = []
    for i in range(0, len(data), 12):
        lines.append("    " + ", ".join(f"0x{b:02x}" for b in data[i:i + 12]) + ",")
    body = "\n".join(lines)
    return f"const unsigned char {name}[{len(data)}] = {{\n{body}\n}};\n"


def as_python(data: bytes) -> str:
    return repr(bytes(data))


def as_base64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode("ascii")


FORMATS = {"Hex": as_hex, "C array": as_c_array, "Python bytes": as_python, "Base64": as_base64}

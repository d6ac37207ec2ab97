"""What a parser needs beyond the bytes."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

KEY_ENV = "ARRAYSCOPE_KEY"
KEY_HINT = (f"give the 32-byte key with --key-file FILE or the {KEY_ENV} environment variable "
            "(32 raw characters or 64 hex digits)")


class KeyError_(ValueError):
    """A key that cannot be an AES-256 key (wrong length)."""


def parse_key(raw: bytes) -> bytes:
    """32 key bytes from a key file's or variable's content (one trailing newline ignored;
    64 hex digits are accepted too)."""
    if raw.endswith(b"\r\n"):
        raw = raw[:-2]
    elif raw.endswith(b"\n"):
        raw = raw[:-1]
    if len(raw) == 32:
        return raw
    if len(raw) == 64:
        try:
            return bytes.fromhex(raw.decode("ascii"))
        except ValueError:
            pass
    raise KeyError_(f"an AES-256 key has 32 bytes (or 64 hex digits); this one has {len(raw)}")


def load_key(key_file: Optional[str] = None) -> Optional[bytes]:
    """The key from `key_file`, else from $ARRAYSCOPE_KEY, else None. Never logged."""
    if key_file:
        with open(key_file, "rb") as fh:
            return parse_key(fh.read(1024))
    env = os.environ.get(KEY_ENV)
    if env:
        try:
            raw = env.encode("latin-1")
        except UnicodeEncodeError as e:  # never guess bytes for a character ("?" is a key too)
            raise KeyError_(f"{KEY_ENV} holds a character that is not one byte (position "
                            f"{e.start}): give the key as 64 hex digits, or its 32 bytes "
                            f"with --key-file") from None
        return parse_key(raw)
    return None


@dataclass
class Context:
    """Format version, schema, pipeline, key and anything else parsers pass down.

    `extra` holds format-specific objects (e.g. the TileDB array model for a fragment)."""

    format_version: Optional[int] = None
    schema: Any = None
    pipeline: Any = None
    key: Optional[bytes] = field(default=None, repr=False)
    root_path: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)

    def derive(self, **changes) -> "Context":
        c = Context(self.format_version, self.schema, self.pipeline, self.key, self.root_path,
                    dict(self.extra))
        for k, v in changes.items():
            setattr(c, k, v)
        return c

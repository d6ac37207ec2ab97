"""What a parser needs beyond the bytes."""
from __future__ import annotations

import copy
import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Type, TypeVar

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


def key_name(key: bytes) -> str:
    """A name for `key` that can travel where the key must not (a task to a worker): a
    one-way, personalised digest, from which the key cannot be recovered."""
    import hashlib

    return hashlib.blake2b(key, digest_size=16, person=b"arrayscope-key").hexdigest()


# Keys handed to this process for the tasks it runs (`Executor.share_key`): a task names its
# key (`key_name`), never carries it.
_KEYS: Dict[str, bytes] = {}   # key_name -> key, in this process only


def remember_key(key: bytes) -> None:
    """Make `key` available to the tasks run in this process (`Executor.share_key`)."""
    _KEYS[key_name(key)] = key


def key_named(key_id: Optional[str]) -> Optional[bytes]:
    """The key a task names: handed to this process, or in its $ARRAYSCOPE_KEY."""
    if not key_id:
        return None
    if key_id not in _KEYS:
        env = load_key()
        if env is not None:
            remember_key(env)
    if key_id not in _KEYS:
        raise RuntimeError("this worker has no key for the encrypted dataset: set "
                           "ARRAYSCOPE_KEY in the environment of the processes that run "
                           "the workers")
    return _KEYS[key_id]


class FormatContext:
    """A format's own part of a `Context` (TileDB: the schema and the array model; Zarr: how
    chunks are shown), held in its one typed slot `Context.format`. Subclasses are
    dataclasses; each derived context gets its own copy."""


F = TypeVar("F", bound=FormatContext)


@dataclass
class Context:
    """What parsers pass down: the format version read so far, the decryption key, the
    opened path, and the format's own typed context."""

    format_version: Optional[int] = None
    key: Optional[bytes] = field(default=None, repr=False)
    root_path: Optional[str] = None
    format: Optional[FormatContext] = None

    def derive(self, **changes: Any) -> "Context":
        c = dataclasses.replace(self, format=copy.copy(self.format))
        for k, v in changes.items():
            setattr(c, k, v)
        return c

    def of(self, kind: Type[F]) -> F:
        """The format context of type `kind`, made empty on first use (a document opens one
        format: another format's context is replaced)."""
        if not isinstance(self.format, kind):
            self.format = kind()
        return self.format

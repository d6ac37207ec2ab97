"""Zarr codecs, reversible stage by stage (see base.py); `get(name)` finds one."""
from .base import Codec, CodecError, CodecSpec
from .simple import OBJECT_CODECS, get

__all__ = ["Codec", "CodecError", "CodecSpec", "get", "OBJECT_CODECS"]

"""Zarr codecs, reversible stage by stage (see base.py); `get(name)` finds one.

Every module of this package is imported once, on the first `get`: a codec class decorated
with `base.register` in any of them is known by its names. Adding a codec is adding a module.
"""
from __future__ import annotations

import importlib
import pkgutil

from .base import OBJECT_CODECS, REGISTRY, Codec, CodecError, CodecSpec, Undecodable, register

__all__ = ["Codec", "CodecError", "CodecSpec", "OBJECT_CODECS", "Undecodable", "get",
           "known", "register"]
_loaded = False


def _load_all() -> None:
    global _loaded
    if not _loaded:
        for m in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{m.name}")
        _loaded = True


def known(name: str) -> bool:
    """True when a registered codec decodes `name`."""
    _load_all()
    return name in REGISTRY


def get(name: str) -> Codec:
    _load_all()
    c = REGISTRY.get(name)
    if c is not None:
        return c
    if name in OBJECT_CODECS:
        return Undecodable(f"{name} is an object codec: arrayscope names it and leaves the bytes "
                           f"undecoded (it never unpickles or evaluates stored data)")
    return Undecodable(f"codec {name!r} is not known to arrayscope: the chunk stays undecoded")

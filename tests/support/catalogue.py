"""A catalogue of named test datasets: `@catalogue.array` registers a function that writes
the dataset at a path, `catalogue.build(name, directory)` writes it there once."""
from __future__ import annotations

import os
from typing import Callable, Dict

Builder = Callable[[str], None]


class Catalogue:
    def __init__(self) -> None:
        self.builders: Dict[str, Builder] = {}

    def array(self, fn: Builder) -> Builder:
        self.builders[fn.__name__] = fn
        return fn

    def build(self, name: str, dest_dir: str) -> str:
        uri = os.path.join(dest_dir, name)
        if not os.path.exists(uri):
            self.builders[name](uri)
        return uri

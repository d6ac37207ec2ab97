"""Bookmarks: named, coloured byte ranges of one opened dataset, kept in the user's settings
(keyed by the dataset's absolute path) — never written beside the opened file. No Qt
here: the caller gives a key/value store (QSettings in the window)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import List, Optional, Protocol

# distinct hues a new bookmark cycles through (readable on light and dark backgrounds)
COLOURS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#bfef45")


@dataclass
class Bookmark:
    source: str      # the source's name (a file of the dataset, relative to it)
    start: int
    end: int         # exclusive
    name: str
    colour: str

    @property
    def size(self) -> int:
        return self.end - self.start


class KeyValue(Protocol):
    def value(self, key: str, defaultValue: object = ...) -> object: ...
    def setValue(self, key: str, value: object) -> None: ...
    def remove(self, key: str) -> None: ...


def settings_key(dataset_path: str) -> str:
    """One settings entry per dataset (a hash: paths hold characters settings keys cannot)."""
    return "bookmarks/" + hashlib.sha1(dataset_path.encode("utf-8", "surrogateescape")).hexdigest()


class BookmarkStore:
    def __init__(self, settings: KeyValue):
        self.settings = settings
        self.path: Optional[str] = None
        self.items: List[Bookmark] = []

    def load(self, dataset_path: Optional[str]) -> List[Bookmark]:
        self.path = dataset_path
        self.items = []
        if dataset_path is None:
            return self.items
        raw = self.settings.value(settings_key(dataset_path), "")
        try:
            data = json.loads(raw) if isinstance(raw, str) and raw else {}
        except ValueError:
            data = {}
        for b in data.get("bookmarks", []) if isinstance(data, dict) else []:
            try:
                self.items.append(Bookmark(str(b["source"]), int(b["start"]), int(b["end"]),
                                           str(b["name"]), str(b["colour"])))
            except (KeyError, TypeError, ValueError):
                continue   # a damaged entry is dropped, the others stay
        return self.items

    def save(self) -> None:
        if self.path is None:
            return
        key = settings_key(self.path)
        if not self.items:
            self.settings.remove(key)
            return
        self.settings.setValue(key, json.dumps({"path": self.path,
                                                "bookmarks": [asdict(b) for b in self.items]}))

    def next_colour(self) -> str:
        return COLOURS[len(self.items) % len(COLOURS)]

    def add(self, source: str, start: int, end: int, name: str = "",
            colour: Optional[str] = None) -> Bookmark:
        b = Bookmark(source, start, max(end, start + 1), name or f"Bookmark {len(self.items) + 1}",
                     colour or self.next_colour())
        self.items.append(b)
        self.save()
        return b

    def remove(self, b: Bookmark) -> None:
        self.items = [x for x in self.items if x is not b]
        self.save()

    def update(self, b: Bookmark, name: Optional[str] = None, colour: Optional[str] = None) -> None:
        if name is not None:
            b.name = name
        if colour is not None:
            b.colour = colour
        self.save()

    def for_source(self, source: str) -> List[Bookmark]:
        return [b for b in self.items if b.source == source]

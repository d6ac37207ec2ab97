"""What a field means, written once beside the field's definition."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class FieldDoc:
    """Documentation of one on-disk field.

    `added_in` / `removed_in` are format versions (TileDB format version, SCDL schema
    version...). `spec` names the document section; `note` records where the real writer
    differs from the document.
    """

    description: str
    added_in: Optional[int] = None
    removed_in: Optional[int] = None
    spec: Optional[str] = None
    note: Optional[str] = None

    def present_in(self, version: Optional[int]) -> bool:
        if version is None:
            return True
        if self.added_in is not None and version < self.added_in:
            return False
        if self.removed_in is not None and version >= self.removed_in:
            return False
        return True

    def presence_text(self, version: Optional[int]) -> str:
        """Why the field is (or is not) in a file of `version`, for the inspector."""
        parts = []
        if self.added_in is not None:
            parts.append(f"added in version {self.added_in}")
        if self.removed_in is not None:
            parts.append(f"removed in version {self.removed_in}")
        span = ", ".join(parts) if parts else "present in every version"
        if version is None:
            return span
        state = "present" if self.present_in(version) else "absent"
        return f"{span}; {state} in this file (version {version})"


def doc(description: str, added_in: Optional[int] = None, removed_in: Optional[int] = None,
        spec: Optional[str] = None, note: Optional[str] = None) -> FieldDoc:
    return FieldDoc(description, added_in, removed_in, spec, note)

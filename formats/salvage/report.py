"""What a salvage kept and lost: per part (a fragment, a chunk file, a metadata file), the
cells kept and lost, and for each loss the finding that condemned it (code and place)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional


@dataclass(frozen=True)
class Loss:
    """Why a part was left out: the verify finding (or the rule) that condemned it."""

    code: str
    source: str          # the file, relative to the salvaged dataset
    offset: int
    node: str
    message: str


@dataclass
class Part:
    """One unit the salvage decided on as a whole (a fragment, a chunk, a shard's inner
    chunk, an array-metadata file)."""

    array: str           # the array it belongs to, relative to the dataset ("." for the root)
    kind: str            # "fragment", "chunk", "inner-chunk", "array-metadata", ...
    name: str            # its path relative to its array
    fields: List[str]
    cells: Optional[int]    # cells it holds (per field); None when unknown
    kept: bool
    why: List[Loss] = field(default_factory=list)

    @property
    def cells_kept(self) -> int:
        return (self.cells or 0) if self.kept else 0

    @property
    def cells_lost(self) -> int:
        return 0 if self.kept else (self.cells or 0)


@dataclass
class SalvageReport:
    path: str
    out: str
    parts: List[Part] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)     # what was left out on purpose, and why
    written: bool = False                              # something was written at `out`
    failure: str = ""                                  # why nothing could be written

    @property
    def lost(self) -> List[Part]:
        """Parts left out (a damaged consolidated fragment whose cells all came back from
        the fragments it replaced is one, with 0 cells)."""
        return [p for p in self.parts if not p.kept]

    @property
    def anything_lost(self) -> bool:
        """Some cells (or a part of unknown cells: array metadata) are not in OUT."""
        return any(p.cells is None or p.cells > 0 for p in self.lost)

    def exit_code(self) -> int:
        """0 nothing lost, 3 something lost, 2 nothing could be written."""
        if not self.written:
            return 2
        return 3 if self.anything_lost else 0

    def totals(self) -> Dict[str, Dict[str, Dict[str, int]]]:
        """array -> field -> {"kept": cells, "lost": cells}."""
        out: Dict[str, Dict[str, Dict[str, int]]] = {}
        for p in self.parts:
            for f in p.fields:
                t = out.setdefault(p.array, {}).setdefault(f, {"kept": 0, "lost": 0})
                t["kept"] += p.cells_kept
                t["lost"] += p.cells_lost
        return out

    def to_json(self) -> dict:
        return {"path": self.path, "out": self.out, "exit": self.exit_code(),
                "written": self.written, "failure": self.failure, "totals": self.totals(),
                "parts": [dict(asdict(p), cells_kept=p.cells_kept, cells_lost=p.cells_lost)
                          for p in self.parts],
                "notes": list(self.notes)}

    def lines(self) -> List[str]:
        from ..core.printable import printable  # names come from the dataset: escaped

        out: List[str] = []
        for p in self.lost:
            where = f"{p.array}/{p.name}" if p.array != "." else p.name
            if p.fields:   # cells of fields (unknown where the metadata itself is lost)
                n = "an unknown number of" if p.cells is None else str(p.cells)
                what = f" ({n} cells of {', '.join(p.fields)} lost)"
            else:          # metadata, attributes: no cells
                what = ""
            out.append(printable(f"left out: {p.kind} {where}{what}"))
            for w in p.why:
                out.append(printable(f"  {w.code}: {w.source}:{w.offset}: {w.message}"))
        for array, fields in sorted(self.totals().items()):
            for f, t in sorted(fields.items()):
                out.append(printable(f"{array}: {f}: {t['kept']} cells kept, {t['lost']} lost"))
        out.extend(printable(f"note: {n}") for n in self.notes)
        return out

    def summary(self) -> str:
        if not self.written:
            return f"nothing written: {self.failure}"
        kept = sum(p.kept for p in self.parts)
        return (f"{self.out}: {kept} of {len(self.parts)} parts kept, "
                f"{len(self.lost)} left out")

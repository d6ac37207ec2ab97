"""Which parts are damaged: the errors `arrayscope verify` finds, each by the file (source,
relative to the dataset) it was found in. Salvage decides nothing itself: a part is left
out exactly when verify located an error in it."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ..core.findings import Finding
from .report import Loss


class Damage:
    """The error findings of one dataset, by source file."""

    def __init__(self, findings: List[Finding]):
        self.by_source: Dict[str, List[Finding]] = {}
        for f in findings:
            if f.status == "error":
                self.by_source.setdefault(f.source, []).append(f)

    def in_file(self, rel: str) -> List[Loss]:
        return [_loss(f) for f in self.by_source.get(rel, [])]

    def under(self, rel: str) -> List[Loss]:
        """The errors in `rel` or in any file below it (a fragment's folder)."""
        pre = rel.rstrip("/") + "/"
        return [_loss(f) for src, fs in self.by_source.items()
                if src == rel or src.startswith(pre) for f in fs]


    def inner(self, rel: str) -> Dict[Tuple[int, ...], List[Loss]]:
        """The errors in the inner chunks of shard `rel`, by coordinates in the shard (an
        inner chunk's findings name its derived source: zarr/shard.py `inner_label`)."""
        from ..zarr.shard import split_inner_label

        out: Dict[Tuple[int, ...], List[Loss]] = {}
        for src, fs in self.by_source.items():
            named = split_inner_label(src) if src.endswith("]") else None
            if named is not None and named[0] == rel:
                out.setdefault(named[1], []).extend(_loss(f) for f in fs)
        return out


def _loss(f: Finding) -> Loss:
    return Loss(f.code, f.source, f.offset, f.node, f.message)


def verify_findings(path: str, key: Optional[bytes]) -> List[Finding]:
    """Every finding `arrayscope verify PATH` reports (the same run, the same rules)."""
    from ..core.verify import open_for_verify, verify_report

    doc = open_for_verify(path, key)
    try:
        return verify_report(doc).findings
    finally:
        doc.close()

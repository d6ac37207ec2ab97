"""Where two files differ field by field (no Qt): their annotation trees walked side by
side, children paired by name (the n-th child of a name with the n-th), and each leaf
whose value or size differs listed with its path and both values. This names what a byte
diff only locates ("Tile 1/Num chunks: 1 → 2", not "0x48: 01 → 02"). The trees are the
document's own nodes, built as selecting them builds them (deferred children on the way);
long generated runs (cells, offsets) are compared as their parent's bytes, not walked."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple

from arrayscope.formats.core.node import Node

MAX_FIELDS = 10_000     # differences listed; the byte diff still locates the rest
LAZY_CHILDREN = 1000    # a longer run of generated children is compared as a whole
COMPARED_BYTES = 4 << 20   # a leaf's bytes compared (a larger payload: its first 4 MiB)


@dataclass(frozen=True)
class FieldDiff:
    path: str                 # the field's path under the compared file ("Tile 1/Num chunks")
    left: Optional[Node]      # None: only on the right
    right: Optional[Node]

    @staticmethod
    def shown(n: Optional[Node]) -> str:
        if n is None:
            return "(absent)"
        return n.display_text() or f"{n.size:,} bytes"


def field_diffs(a: Node, b: Node, limit: int = MAX_FIELDS) -> List[FieldDiff]:
    out: List[FieldDiff] = []
    for d in _walk(a, b, ""):
        out.append(d)
        if len(out) >= limit:
            break
    return out


def _same_bytes(a: Node, b: Node) -> bool:
    if a.size != b.size:
        return False
    n = min(a.size, COMPARED_BYTES)
    return a.source.read(a.offset, n) == b.source.read(b.offset, n)


def _kids(n: Node) -> List[Node]:
    n.ensure_built()
    if n.is_lazy and (n.is_run or n.child_count() > LAZY_CHILDREN):
        return []
    return list(n.iter_children())


def _paired(a: List[Node], b: List[Node]) -> Iterator[Tuple[str, Optional[Node], Optional[Node]]]:
    seen: Dict[str, int] = {}
    keyed_b: Dict[Tuple[str, int], Node] = {}
    count: Dict[str, int] = {}
    for n in b:
        k = count.get(n.name, 0)
        count[n.name] = k + 1
        keyed_b[(n.name, k)] = n
    for n in a:
        k = seen.get(n.name, 0)
        seen[n.name] = k + 1
        yield n.name, n, keyed_b.pop((n.name, k), None)
    for (name, _k), n in keyed_b.items():
        yield name, None, n


def _walk(a: Node, b: Node, path: str) -> Iterator[FieldDiff]:
    ka, kb = _kids(a), _kids(b)
    if not ka and not kb:
        if a.display_text() != b.display_text() or not _same_bytes(a, b):
            yield FieldDiff(path or a.name, a, b)
        return
    for name, x, y in _paired(ka, kb):
        sub = f"{path}/{name}" if path else name
        if x is None or y is None:
            yield FieldDiff(sub, x, y)
        elif not isinstance(x.source, str) and not isinstance(y.source, str):
            yield from _walk(x, y, sub)

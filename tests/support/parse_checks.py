"""Test helper: what a clean parse of a file looks like."""
from __future__ import annotations

from arrayscope.formats.core.engine import coverage
from arrayscope.formats.core.node import ERROR


def assert_clean(doc, src, root):
    """No error or unparsed node, and every byte of `src` and of each derived source covered."""
    bad = [(n.path(), n.message) for n in root.walk()
           if n.status == ERROR or n.kind == "unparsed"]
    assert not bad, bad
    assert coverage(root, src) == (src.size, src.size)
    for d in doc.derived:
        assert coverage(root, d) == (d.size, d.size), d.name

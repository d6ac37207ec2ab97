"""`arrayscope verify`: every finding of the tree plus each format's own cross-checks."""
from __future__ import annotations

from typing import Iterable, List

from . import registry
from .findings import CHECK_CRASHED, Finding, default_code
from .node import OK


def finding(node, document) -> Finding:
    """The finding a warning or error node stands for."""
    return Finding(status=node.status, code=default_code(node.status, node.code),
                   source=document.source_name(node.source) if node.source is not None else "",
                   offset=node.offset, node=node.path(), message=node.message or node.name,
                   hint=getattr(node.doc, "hint", "") or "")


def verify(document, executor=None) -> List[Finding]:
    """Every finding of the document, tree order first, then the format's own checks.
    With an `executor` (formats/executors.py) the decoding runs as tasks there
    (formats/verify_tasks.py): the same findings, in the same order."""
    if executor is not None:
        from .verify_tasks import verify_with

        return verify_with(document, executor)
    from .remote import build_read_deferred

    build_read_deferred(document.root)   # a remote dataset's tiles: the tree verify checks
    nodes = list(document.diagnostics())
    plugin = registry.plugin_named(document.format) if document.format else None
    extra = getattr(plugin, "verify", None)
    if extra is not None:
        try:
            nodes.extend(extra(document))
        except Exception as e:  # noqa: BLE001 - verify reports, never raises
            from .node import ERROR, Node
            n = Node("verify", "error", None, 0, 0, status=ERROR, code=CHECK_CRASHED,
                     message=f"format checks could not finish: {type(e).__name__}: {e}")
            nodes.append(n)
    return unique(finding(n, document) for n in nodes if n.status != OK)


def unique(findings: Iterable[Finding]) -> List[Finding]:
    """The findings in order, each place and message once."""
    seen = set()
    out: List[Finding] = []
    for f in findings:
        key = (f.source, f.offset, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out

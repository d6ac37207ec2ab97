"""`arrayscope verify`: every finding of the tree plus each format's own cross-checks."""
from __future__ import annotations

from typing import Dict, List

from . import registry
from .node import OK


def finding(node, document) -> Dict:
    return {"source": document.source_name(node.source) if node.source is not None else "",
            "offset": node.offset, "status": node.status,
            "message": node.message or node.name, "node": node.path()}


def verify(document) -> List[Dict]:
    """Findings (dicts with source, offset, status, message, node), tree order first."""
    seen = set()
    out: List[Dict] = []
    nodes = list(document.diagnostics())
    plugin = registry.plugin_named(document.format) if document.format else None
    extra = getattr(plugin, "verify", None)
    if extra is not None:
        try:
            nodes.extend(extra(document))
        except Exception as e:  # noqa: BLE001 - verify reports, never raises
            from .node import ERROR, Node
            n = Node("verify", "error", None, 0, 0, status=ERROR,
                     message=f"format checks could not finish: {type(e).__name__}: {e}")
            nodes.append(n)
    for n in nodes:
        if n.status == OK:
            continue
        f = finding(n, document)
        key = (f["source"], f["offset"], f["message"])
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out

"""How a TileDB check says what it found: a finding node at a place, and a check run so
that damage it trips over is reported rather than raised."""
from __future__ import annotations

import os
from typing import Optional

from ...core.dataset_fs import unreadable_node
from ...core.node import ERROR, Node
from ...core.status import Status


def finding(source, offset: int, status: Status, message: str, name: str = "verify",
            code: Optional[str] = None) -> Node:
    n = Node(name, "error" if status == ERROR else "field", source, offset, 0, code=code)
    n.status, n.message = status, message
    return n



def guard(out: list, where, fn, *args, document=None) -> None:
    """Run one check; a check that trips over damaged input reports it instead of raising.
    A file it cannot read is said as its node in the tree says it (`unreadable_node`: the
    same finding, kept once)."""
    try:
        out.extend(fn(*args) or ())
    except OSError as e:
        if document is None or not e.filename:
            out.append(finding(where, 0, ERROR, f"check {fn.__name__} could not finish: "
                                                f"{type(e).__name__}: {e}"))
            return
        node = unreadable_node(document, os.fsdecode(e.filename), e)
        out.append(finding(node.source or where, 0, ERROR, node.message or "", code=node.code))
    except Exception as e:  # noqa: BLE001 - verify never raises
        out.append(finding(where, 0, ERROR, f"check {fn.__name__} could not finish: "
                                            f"{type(e).__name__}: {e}"))

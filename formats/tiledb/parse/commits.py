"""Files of `__commits/` (and `.vac` files of `__meta/`): format_spec/array_file_hierarchy.md,
consolidated_commits_file.md, ignore_file.md, vacuum_file.md, delete_commit_file.md,
update_commit_file.md.

| file | content |
| --- | --- |
| `.wrt` | empty: its presence commits the fragment of the same name |
| `.vac` | text: one URI per line (fragments / metadata files consolidated away, to vacuum) |
| `.ign` | text: one URI per line (commit files consolidated into a `.con`) |
| `.con` | text lines of commit URIs; a `.del`/`.upd` line is followed by `u64 size` and that |
|        | commit's whole generic tile |
| `.del` | a generic tile: the negated delete condition (condition.py) |
| `.upd` | a generic tile: the negated update condition, then the update values |

`parse_commit_file(document, source, ctx)` picks the parser by the file's extension.
"""
from __future__ import annotations

import os
from typing import List, Optional

from ...core.cursor import Cursor, ParseStop
from ...core.engine import run_parser
from ...core.fielddoc import doc
from ...core.node import WARNING, Node, hex_preview
from .condition import parse_delete_condition, parse_update
from .tile import parse_generic_tile

D_WRT = doc("Write commit marker: an empty file whose presence makes the fragment of the "
            "same name visible to readers", spec="array_file_hierarchy.md")
D_VAC_URI = doc("URI followed by a new line: a fragment (or metadata file) that consolidation "
                "replaced and a vacuum will delete", spec="vacuum_file.md",
                note="libtiledb 2.30 writes `/__fragments/<name>` with a leading slash, relative "
                     "to the array (format 19 and later; absolute URIs before)")
D_IGN_URI = doc("URI followed by a new line: a commit file (relative to the array) that is "
                "ignored because a consolidated commits file holds it", spec="ignore_file.md")
D_CON_COMMIT = doc("Commit: a commit file's URI, followed for delete and update commits by "
                   "that commit's whole file", spec="consolidated_commits_file.md")
D_CON_URI = doc("URI followed by a new line character: the commit consolidated here (relative "
                "to the array)", spec="consolidated_commits_file.md")
D_CON_SIZE = doc("Delete condition size: bytes of the delete (or update) commit file that "
                 "follows", spec="consolidated_commits_file.md")
D_CON_TILE = doc("Delete condition tile: the whole `.del`/`.upd` file, a generic tile",
                 spec="consolidated_commits_file.md",
                 note="the document calls it a tile; it is the commit's full generic tile "
                      "(header, pipeline, GZIP'd condition), byte for byte the `.del` file")



def _lines(cur: Cursor):
    """(start, end_without_newline, has_newline) of each line in the cursor's range."""
    data = cur.source.read(cur.pos, cur.remaining)
    base, pos, n = cur.pos, 0, len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        if nl < 0:
            yield base + pos, base + n, False
            return
        yield base + pos, base + nl, True
        pos = nl + 1


def _line_node(cur: Cursor, name: str, start: int, end: int, has_nl: bool, d) -> Node:
    raw = cur.source.read(start, end - start)
    text = raw.decode("utf-8", errors="replace")
    size = end - start + (1 if has_nl else 0)
    n = Node(name, "string", cur.source, start, size, value=text, display=repr(text), doc=d,
             type=f"char[{end - start}]" + (" + '\\n'" if has_nl else ""))
    if not has_nl:
        n.mark(WARNING, f"{name}: the last line has no terminating new line")
    if not text:
        n.mark(WARNING, f"{name}: an empty line")
    cur.node.add(n)
    cur.pos = start + size
    return n


def parse_uri_list(cur: Cursor, ctx=None, item_doc=D_VAC_URI, item: str = "URI") -> List[str]:
    """A text list (`.vac`, `.ign`): one node per line, named '<item> N'."""
    out: List[str] = []
    for i, (a, b, nl) in enumerate(_lines(cur)):
        out.append(_line_node(cur, f"{item} {i + 1}", a, b, nl, item_doc).value)
    return out


def parse_consolidated_commits(cur: Cursor, ctx=None, document=None) -> Optional[List[dict]]:
    """A `.con` payload: `[{"uri": str, "condition": ConditionNode | None, "commit": (offset,
    size) | None}]`, None when cut. `commit` locates a delete/update commit's embedded file
    (byte for byte its `.del`/`.upd`: salvage writes it out again)."""
    ctx = ctx if ctx is not None else cur.ctx
    commits: List[dict] = []
    i = 0
    try:
        while not cur.at_end():
            i += 1
            entry: dict = {"uri": None, "condition": None, "commit": None}

            def one(c: Cursor):
                a, b, has_nl = next(_lines(c))  # the commit's URI line (c is not at its end)
                uri = _line_node(c, "URI", a, b, has_nl, D_CON_URI).value
                entry["uri"] = uri
                c.node.display = uri
                if uri.endswith(".del") or uri.endswith(".upd"):
                    size = c.length("u64", "Delete condition size", 1, D_CON_SIZE, "bytes").value
                    sub = Cursor(c.source, c.pos, c.pos + size, c.node, c.endian, c.ctx)
                    entry["commit"] = (c.pos, size)
                    is_del = uri.endswith(".del")
                    holder: list = []
                    fn = parse_delete_condition if is_del else parse_update

                    def payload(pc: Cursor):
                        holder.append(fn(pc, ctx))
                    try:
                        parse_generic_tile(sub, document, "Delete condition tile", payload,
                                           payload_name=f"{c.source.name} @{c.pos} condition",
                                           ctx=ctx, payload_title="Delete condition payload"
                                           if is_del else "Update payload")
                    except ParseStop:
                        pass
                    tile = c.node.children[-1]
                    tile.doc = D_CON_TILE
                    if tile.end < c.pos + size:
                        tile.add(Node("unparsed", "unparsed", c.source, tile.end,
                                      c.pos + size - tile.end, status=WARNING,
                                      display=hex_preview(c.source.read(tile.end, 16)),
                                      message="bytes of the embedded commit after its tile"))
                        tile.size = size
                    c.pos += size
                    cond = holder[0] if holder else None
                    if cond is not None and not is_del:
                        cond = cond[0]
                    entry["condition"] = cond
                    if cond is not None:
                        c.node.display = f"{uri}: keep {cond.text()}"
            cur.group(f"Commit {i}", one, doc=D_CON_COMMIT)
            commits.append(entry)
    except ParseStop:
        return None
    return commits


# ---- whole files ----------------------------------------------------------------------------
def _base(source) -> str:
    return os.path.basename(getattr(source, "name", "commit")) or "commit"


def parse_wrt_file(document, source, ctx=None) -> Node:
    n = Node(_base(source), "file", source, 0, source.size, doc=D_WRT,
             display="(empty commit marker)" if source.size == 0 else None)
    if source.size:
        n.add(Node("unparsed", "unparsed", source, 0, source.size, status=WARNING,
                   message=f".wrt commit markers are empty; this one has {source.size} bytes",
                   display=hex_preview(source.read(0, 16))))
    return n


def _text_file(source, ctx, item_doc, item: str, what: str) -> Node:
    holder: list = []
    root = run_parser(_base(source), "file", source,
                      lambda c: holder.append(parse_uri_list(c, ctx, item_doc, item)), ctx)
    uris = holder[0] if holder else []
    root.data = uris
    root.display = f"{what}: {len(uris)} URI(s)"
    return root


def parse_vac_file(document, source, ctx=None) -> Node:
    return _text_file(source, ctx, D_VAC_URI, "URI", "vacuum file")


def parse_ign_file(document, source, ctx=None) -> Node:
    return _text_file(source, ctx, D_IGN_URI, "URI", "ignore file")


def parse_con_file(document, source, ctx=None) -> Node:
    holder: list = []
    root = run_parser(_base(source), "file", source,
                      lambda c: holder.append(parse_consolidated_commits(c, ctx, document)), ctx)
    commits = holder[0] if holder else None
    root.data = commits
    if commits is not None:
        root.display = f"consolidated commits: {len(commits)} commit(s)"
    return root


def _condition_file(document, source, ctx, fn, title: str) -> Node:
    holder: list = []

    def payload(c: Cursor):
        holder.append(fn(c, ctx))

    root = run_parser(_base(source), "file", source,
                      lambda cur: parse_generic_tile(cur, document, "Generic tile", payload,
                                                     payload_name=f"{source.name} ({title})",
                                                     ctx=ctx, payload_title=title), ctx)
    root.data = holder[0] if holder else None
    return root


def parse_del_file(document, source, ctx=None) -> Node:
    """A `.del` file; the node's `data` is the (negated) ConditionNode or None."""
    root = _condition_file(document, source, ctx, parse_delete_condition, "Delete condition payload")
    if root.data is not None:
        root.display = f"delete commit: deletes cells where NOT {root.data.text()}"
    return root


def parse_upd_file(document, source, ctx=None) -> Node:
    """A `.upd` file; the node's `data` is (condition, [UpdateValue]) or None."""
    root = _condition_file(document, source, ctx, parse_update, "Update payload")
    if root.data is not None:
        cond, vals = root.data
        root.display = (f"update commit: where NOT {cond.text()} set "
                        + ", ".join(v.field_name for v in vals))
    return root


FILE_PARSERS = {".wrt": parse_wrt_file, ".vac": parse_vac_file, ".ign": parse_ign_file,
                ".con": parse_con_file, ".del": parse_del_file, ".upd": parse_upd_file}


def parse_commit_file(document, source, ctx=None) -> Node:
    """Any file of `__commits/` (or a `.vac` of `__meta/`), by its extension. Unknown kinds
    come back as one 'unparsed' leaf with a warning."""
    name = _base(source)
    ext = os.path.splitext(name)[1]
    fn = FILE_PARSERS.get(ext)
    if fn is not None:
        return fn(document, source, ctx)
    n = Node(name, "file", source, 0, source.size)
    if source.size:
        n.add(Node("unparsed", "unparsed", source, 0, source.size, status=WARNING,
                   message=f"commit file kind {ext or '(no extension)'!r} is not known",
                   display=hex_preview(source.read(0, 16))))
    return n

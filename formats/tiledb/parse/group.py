"""A TileDB group directory as one tree (format_spec/group.md): its own files, then its members.

A group is `__tiledb_group.tdb` (an empty marker), `__group/` (details files: the member
lists, group_details.py) and `__meta/` (metadata, the same files as an array's). Its members
are arrays and groups, shown under the member's name; each member is parsed with its own
context (an array its own schema, a group its own details) when it is first opened
(`DeferredChildren`: the window builds it on expansion, `dump` and `verify` walk it), so
opening a SOMA experiment costs its groups' few small files until a member is looked at.
Members that do not resolve safely inside the group (group_members.py) are findings on the
member entry's URI, never followed. Directories of the group's folder that no member names
(an array removed from the group keeps its files) are shown, and opened, as non-members.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from ...core.context import Context
from ...core.dataset_fs import entry_node, mark_unlistable
from ...core.fielddoc import doc
from ...core.node import ERROR, OK, WARNING, BackgroundBuild, DeferredChildren, Node, hex_preview
from ...core.plain import dir_node, file_node
from ...core.remote import absolute
from ..model import layout, names, soma
from ..model.group_members import Member, effective_members, real_path, resolve, uri_to_path
from .array_metadata import ArrayMetadata, parse_array_metadata_file
from .commits import parse_commit_file
from .decode import decode_generic_tile
from .group_details import GroupDetails, MemberEntry, member_nodes, parse_group_details_file, read_group_details
from .rawtile import peek_generic_tile

D_MARKER = doc("Group file: an empty file whose presence makes the folder a TileDB group",
               spec="group.md")
D_DETAILS_DIR = doc("Group details folder: one file per write of the member list, named by "
                    "the write's timestamp and the details format version", spec="group.md")
D_META_DIR = doc("Group metadata folder: key/value metadata, the same files as an array's "
                 "`__meta` (array_metadata.md)", spec="group.md")
D_MEMBER = doc("A member of the group, named by its member name; opened with its own context "
               "(an array's schema, a group's member list) when first expanded", spec="group.md")
D_NON_MEMBER = doc("A folder inside the group that no member entry names (libtiledb does not "
                   "list it; an array removed from a group keeps its files)", spec="group.md")


@dataclass
class TileDBGroup:
    """The group model: its details files in timestamp order, members in effect, metadata."""

    path: str
    details: List[Tuple[str, Optional[GroupDetails]]] = field(default_factory=list)
    members: List[Member] = field(default_factory=list)
    metadata: Dict[str, Any] = field(default_factory=dict)
    # the node of each details file that counts, by file name (a member's finding points
    # into the file of its entry)
    files: Dict[str, Node] = field(default_factory=dict, repr=False, compare=False)

    @property
    def soma_type(self) -> Optional[str]:
        return soma.soma_type(self.metadata)


@dataclass
class MemberRef:
    """`data` of a member node: where it is and, once opened, its model (array or group)."""

    name: str
    member_path: str             # member names from the opened group, joined by "/"
    path: Optional[str]          # absolute local path (None: not followed)
    kind: str                    # "array", "group" or "dir"
    member: Optional[Member] = None   # None for a folder no member names
    soma_type: Optional[str] = None
    model: Any = None            # TileDBArray / TileDBGroup after the member is opened


# ---- the group's own files -----------------------------------------------------------------
def _name_display(name: str) -> Optional[str]:
    try:
        return names.describe_name(name)
    except Exception:  # noqa: BLE001 - a damaged name is shown undecoded
        return None


def _marker_node(document, path: str) -> Node:
    src = document.open_source(path)
    n = Node(layout.GROUP_FILE, "file", src, 0, src.size, doc=D_MARKER,
             display="group marker (empty)" if not src.size else None)
    if src.size:
        n.add(Node("unparsed", "unparsed", src, 0, src.size, status=WARNING,
                   message=f"{layout.GROUP_FILE} is empty when libtiledb writes it; this one "
                           f"has {src.size} bytes", display=hex_preview(src.read(0, 16))))
    return n


def _own_dir(document, path: str, title_doc, parse,
             deferred: Optional[Callable[[Any, Any], Optional[Node]]] = None
             ) -> Tuple[Node, List[Tuple[str, Node]]]:
    """`__group` or `__meta`: a folder node and the (file name, node) that count, in
    timestamp order: files a `.vac` lists were consolidated away and are not read (as
    libtiledb skips them), only shown. `deferred(document, source)` may give a file's node
    with its tree built when shown (None: parsed now)."""
    d = Node(os.path.basename(path), "dir", document.relname(path), 0, 0, doc=title_doc)
    parsed: List[Tuple[str, Node]] = []
    try:
        entries = sorted(document.fs.list(path), key=lambda e: layout.timestamp_order(e.name))
    except OSError as e:
        mark_unlistable(d, e)
        return d, parsed
    vacuumed: Dict[str, str] = {}
    for entry in entries:
        name, full = entry.name, entry.path
        if entry.is_dir:
            d.add(dir_node(document, full))
            continue
        if not entry.is_file:
            d.add(entry_node(document, entry))  # a link out, a FIFO...: a finding, not opened
            continue
        src = document.open_source(full)
        if name.endswith(".vac"):
            node = parse_commit_file(document, src, document.ctx)
            for uri in node.data if isinstance(node.data, list) else []:
                vacuumed[uri.rstrip("/").rsplit("/", 1)[-1]] = name
        elif layout.TIMESTAMPED_RE.match(name):
            node = (deferred(document, src) if deferred is not None else None) or \
                parse(document, src)
            parsed.append((name, node))
        else:
            node = file_node(document, full, "not a timestamped file of the TileDB group format")
        node.name = name
        node.display = _name_display(name) or node.display
        d.add(node)
    for name, node in parsed:
        if name in vacuumed:
            node.display = f"{node.display} · consolidated away (listed in {vacuumed[name]})"
    return d, [(n, node) for n, node in parsed if n not in vacuumed]


def _annotate_entries(group: TileDBGroup, fname: str, file_node: Node) -> None:
    """Say on each member entry of details file `fname` (its tree built) whether it is
    still in effect (a later entry replaces or removes an earlier one), and on the entry
    of a member that is not followed, that it is not."""
    gd = file_node.data
    if not isinstance(gd, GroupDetails) or fname not in group.files:
        return
    current = {m.entry.key: m for m in group.members}
    last = group.details[-1][1] if group.details else None
    latest_v1 = group.details[-1][0] if last is not None and last.version == 1 else None
    for i, (e, n) in enumerate(zip(gd.members, member_nodes(file_node))):
        m = current.get(e.key)
        mine = m is not None and m.file == fname and m.index == i
        if latest_v1 is not None and fname != latest_v1:
            note = "superseded: only the latest version-1 file counts"
        elif e.deleted:
            note = "removes the member"
        elif mine:
            note = "in effect"
        elif m is not None:
            note = f"replaced by the entry in {m.file}"
        else:
            note = "removed by a later entry"
        n.display = f"{n.display} · {note}"
        if mine and m is not None and m.problem is not None:
            n.display = f"{n.display} · not followed ({m.problem[0]})"


def details_findings(group_node: Node) -> List[Node]:
    """The non-OK nodes of the group's details files whose trees are deferred, each built,
    read and released in turn (verify: 1 000 files never held at once)."""
    out: List[Node] = []
    d = next((c for c in group_node.iter_children() if c.name == layout.GROUP_DETAILS_DIR
              and c.kind == "dir"), None) if not group_node.is_lazy else None
    for f in d.iter_children() if d is not None else ():
        if isinstance(f.children, _DetailsChildren):
            f.ensure_built()
            out.extend(n for n in f.walk() if n.status != OK)
            f.release_deferred()
    return out


class _DetailsChildren(DeferredChildren):
    """A details file's tree, built when shown (the window's expansion, a dump, verify,
    which release it again): at open its members are read without nodes."""

    __slots__ = ()
    owner_fields = True   # the build sets the file node's status


def _deferred_details(document, src, ctx: Context, group: TileDBGroup,
                      shared: Dict[bytes, MemberEntry]) -> Optional[Node]:
    """The node of a details file whose member list reads cleanly without nodes (one
    generic tile that is the whole file, decoded to its declared size; every member as
    libtiledb writes it: `read_group_details`), its tree deferred; None for any other
    file, which is parsed at open (where it is not as written shows there)."""
    head = peek_generic_tile(src, 0)
    if head is None or head[0] != src.size:
        return None
    try:
        payload, _encrypted = decode_generic_tile(src, 0, ctx.key)
    except Exception:  # noqa: BLE001 - a tile that does not decode: the parse says why
        return None
    if len(payload) != head[4]:
        return None
    gd = read_group_details(payload, shared)
    if gd is None:
        return None
    fname = os.path.basename(src.name) if getattr(src, "name", None) else ""
    node = Node(fname, "file", src, 0, src.size, data=gd)
    added: List[object] = []

    def build() -> List[Node]:
        before = {id(s) for s in document.derived}
        full = parse_group_details_file(document, src, ctx)
        added[:] = [s for s in document.derived if id(s) not in before]
        _annotate_entries(group, node.name, full)
        if full.status != OK:
            node.mark(full.status, full.message or "")
        return list(full.children)

    def release(_kids: List[Node]) -> None:
        for s in added:
            document.remove_derived(s)
        added.clear()

    node.set_lazy(_DetailsChildren(build, release))
    return node


def load_group(document, path: str, ctx: Context, root: Node) -> TileDBGroup:
    """Parse the group's own files into `root` and return its model (members resolved)."""
    group = TileDBGroup(path)
    marker = os.path.join(path, layout.GROUP_FILE)
    details_dir = os.path.join(path, layout.GROUP_DETAILS_DIR)
    meta_dir = os.path.join(path, layout.META_DIR)
    fs = document.fs
    shared: Dict[bytes, MemberEntry] = {}   # entries written alike: one object
    if fs.stat(details_dir).is_dir:
        d, parsed = _own_dir(document, details_dir, D_DETAILS_DIR,
                             lambda doc_, src: parse_group_details_file(doc_, src, ctx),
                             lambda doc_, src: _deferred_details(doc_, src, ctx, group, shared))
        group.details = [(n, node.data if isinstance(node.data, GroupDetails) else None)
                         for n, node in parsed]
        group.files = dict(parsed)
        root.add(d)
    if fs.stat(meta_dir).is_dir:
        d, parsed = _own_dir(document, meta_dir, D_META_DIR,
                             lambda doc_, src: parse_array_metadata_file(doc_, src, ctx))
        for _n, node in parsed:
            if isinstance(node.data, ArrayMetadata):
                for e in node.data.entries:
                    if e.deleted:
                        group.metadata.pop(e.key, None)
                    else:
                        group.metadata[e.key] = e.value
        root.add(d)
    if fs.stat(marker).is_file:
        root.add(_marker_node(document, marker))
    seen: Dict[str, tuple] = {}   # a path many members name is looked at once
    group.members = [resolve(path, m, fs, seen) for m in effective_members(group.details)]
    for m in group.members:   # a member's finding points into its entry: that file is kept
        held = group.files.get(m.file)
        if m.problem is not None and held is not None and held.pending:
            held.keep_built()
    for fname, node in group.files.items():
        if not node.deferred:   # parsed at open (a deferred file is annotated when built)
            _annotate_entries(group, fname, node)
    return group


# ---- members -----------------------------------------------------------------------------
def _member_display(ref: MemberRef, parent: TileDBGroup, parent_name: str,
                    summary: Optional[str] = None) -> str:
    parts = []
    if ref.soma_type:
        parts.append(ref.soma_type)
    r = soma.role(parent.soma_type, parent_name, ref.name)
    if r:
        parts.append(r)
    if ref.member is None:
        parts.append(f"{ref.kind}, not a member of the group")
    elif summary:
        parts.append(summary)
    else:
        parts.append(f"{ref.kind} member")
    return " · ".join(parts)


def _problem_node(document, m: Member, parent_files: Dict[str, Node]) -> Node:
    """A member that is not followed: a node on its entry's URI (the finding's place)."""
    status, code, message = m.problem or (ERROR, "", "")
    file_node = parent_files.get(m.file)
    entries = member_nodes(file_node) if file_node is not None else []
    uri_node = entries[m.index].find("URI") if m.index < len(entries) else None
    if uri_node is not None:
        # the finding is the member's (its path names it); its entry says so (annotated)
        src, off, size = uri_node.source, uri_node.offset, uri_node.size
    else:
        src, off, size = None, 0, 0
    n = Node(m.name, "dir", src, off, size, value=m.entry.uri,
             display=f"{m.entry.type_name} member → {m.entry.uri} (not followed)", doc=D_MEMBER,
             status=status, message=message, code=code)
    return n


def _builder(document, node: Node, ref: MemberRef, ctx: Context, parent: TileDBGroup,
             parent_name: str):
    """The DeferredChildren of a member node: open the member with its own context."""
    added: List[object] = []

    def build() -> List[Node]:
        assert ref.path is not None  # only resolved members get a builder
        before = {id(s) for s in document.derived}
        sub_ctx = ctx.derive(format=None)
        if ref.kind == "array":
            from .array import open_array_dir

            r = open_array_dir(document, ref.path, sub_ctx)
        elif ref.kind == "group":
            r = open_group_dir(document, ref.path, sub_ctx, ref.member_path)
        else:
            r = dir_node(document, ref.path)
        added[:] = [s for s in document.derived if id(s) not in before]
        ref.model = r.data
        node.display = _member_display(ref, parent, parent_name, r.display)
        if r.status != "ok":
            node.mark(r.status, r.message or "")
        return list(r.children)

    def release(kids: List[Node]) -> None:
        for k in kids:
            for n in k.walk():
                if n.deferred:
                    n.release_deferred()
        for s in added:
            document.remove_derived(s)
        added.clear()

    return _MemberChildren(build, release)


class _MemberChildren(BackgroundBuild, DeferredChildren):
    """A member's children: opening the member (a whole array or group) is real work, built
    off the GUI thread (`BackgroundBuild`)."""

    __slots__ = ("_lock",)


def _member_node(document, ref: MemberRef, ctx: Context, parent: TileDBGroup,
                 parent_name: str) -> Node:
    assert ref.path is not None
    node = Node(ref.name, "dir", document.relname(ref.path), 0, 0,
                doc=D_MEMBER if ref.member is not None else D_NON_MEMBER, data=ref)
    ref.soma_type = soma.soma_type(soma.peek_metadata(ref.path, ctx.key, document.fs)) \
        if ref.kind in ("array", "group") else None
    node.display = _member_display(ref, parent, parent_name)
    node.set_lazy(_builder(document, node, ref, ctx, parent, parent_name))
    return node


def _repeated_member_node(document, ref: MemberRef, shown: str) -> Node:
    """A member naming the same folder as an earlier member: not opened again (10 000
    members naming one array cost one array), the earlier member shows it."""
    assert ref.path is not None
    return Node(ref.name, "dir", document.relname(ref.path), 0, 0, doc=D_MEMBER, data=ref,
                display=f"{ref.kind} member · the same {ref.kind} as member {shown!r}: "
                        f"opened and shown there")


def _other_entries(document, group: TileDBGroup) -> Tuple[List[str], List[Node]]:
    """What else the group's folder holds: folders no member is or leads to (their paths),
    and nodes for stray files and entries the dataset FS will not open (links out, FIFOs)."""
    fs = document.fs
    named = set()   # every member's own path, followed or not: reported as the member
    taken = set()   # the real folders of followed members
    for m in group.members:
        path, _why = uri_to_path(group.path, m.entry)
        if path is not None:
            named.add(absolute(path))
        if m.path:
            taken.add(real_path(fs, m.path))
    dirs: List[str] = []
    nodes: List[Node] = []
    try:
        entries = document.fs.list(group.path)
    except OSError:
        return dirs, nodes
    own = (layout.GROUP_DETAILS_DIR, layout.META_DIR, layout.GROUP_FILE)
    for e in entries:
        if e.name in own or absolute(e.path) in named:
            continue
        if e.is_dir:
            real = e.real or absolute(e.path)
            if real in taken or any(t.startswith(real + "/") for t in taken):
                continue
            dirs.append(e.path)
        elif e.is_file:
            nodes.append(file_node(document, e.path, "file not part of the TileDB group format"))
        else:
            nodes.append(entry_node(document, e))
    return dirs, nodes


def open_group_dir(document, path: str, ctx: Optional[Context] = None,
                   member_path: str = "") -> Node:
    """The tree of the group at `path`: its own files, its members (opened on demand),
    folders no member names, and stray files."""
    ctx = ctx or document.ctx
    name = os.path.basename(path.rstrip(os.sep)) or path
    root = Node(name, "dir", document.relname(path), 0, 0)
    group = load_group(document, path, ctx, root)
    root.data = group
    if document.model is None:
        document.model = group
    prefix = f"{member_path}/" if member_path else ""
    first: Dict[str, str] = {}   # member path -> the first member there (opened once)
    for m in group.members:
        if m.problem is not None or m.path is None:
            root.add(_problem_node(document, m, group.files))
            continue
        ref = MemberRef(m.name, prefix + m.name, m.path, "group" if m.is_group else "array", m)
        shown = first.setdefault(m.path, m.name)
        if shown != m.name:
            root.add(_repeated_member_node(document, ref, shown))
            continue
        root.add(_member_node(document, ref, ctx, group, name))
    dirs, others = _other_entries(document, group)
    for full in dirs:
        kind = "array" if layout.is_array_dir(full) else "group" if layout.is_group_dir(full) \
            else "dir"
        ref = MemberRef(os.path.basename(full), prefix + os.path.basename(full), full, kind)
        root.add(_member_node(document, ref, ctx, group, name))
    for n in others:
        root.add(n)
    n_members = len(group.members)
    what = f"TileDB group, {n_members} member{'' if n_members == 1 else 's'}"
    root.display = f"{group.soma_type} · {what}" if group.soma_type else what
    return root


def open_group_file(document, group_dir: str, path: str) -> Node:
    """One of a group's own files opened alone: the marker, a details or a metadata file."""
    name = os.path.basename(path)
    if name == layout.GROUP_FILE:
        return _marker_node(document, path)
    src = document.open_source(path)
    if name.endswith(".vac"):
        node = parse_commit_file(document, src, document.ctx)
    elif os.path.basename(os.path.dirname(path)) == layout.GROUP_DETAILS_DIR:
        node = parse_group_details_file(document, src, document.ctx)
    else:
        node = parse_array_metadata_file(document, src, document.ctx)
    node.display = _name_display(name) or node.display
    return node

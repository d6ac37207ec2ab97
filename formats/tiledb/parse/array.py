"""The whole TileDB array directory as one tree, every file parsed with its array's context.

Files are parsed in dependency order (schemas, enumerations, fragment metadata, data files,
then the rest) and the nodes are then placed in the directory tree in name order.

A lazy open (`document.lazy`: the window) parses only the schemas and enumerations, which
give every other file its context; each fragment directory is one node whose entries are
listed when it is expanded (`_FragmentDeferred`), and every other file is a node whose
parse waits until it is shown (`_FileDeferred`). Built, both are exactly what the eager
open makes (tests/tiledb/test_tiledb_lazy_open.py compares the dumps), so `dump` and
`verify` build them and print or check the same tree."""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

from ...core.context import Context
from ...core.dataset_fs import DatasetFS, entry_node, mark_unlistable, unreadable_node
from ...core.engine import guarded
from ...core.fielddoc import doc
from ...core.findings import NO_SCHEMA
from ...core.node import ERROR, OK, WARNING, BackgroundBuild, BuildDeferred, Node, hex_preview
from ...core.plain import file_node
from ...core.standin import parse_failed, stand_in_node
from ..model import layout, names
from ..model.array_model import ArraySchema, Fragment, TileDBArray, tiledb_context, with_schema
from . import array_metadata, commits, consolidated_meta, data_files, enumeration, fragment_metadata
from . import schema as schema_mod

D_OK = doc("Fragment commit marker of format versions before 12: an empty file")

# Parse order of file roles (context flows from earlier roles to later ones).
ORDER = ["legacy_schema", "schema", "enumeration", "fragment_metadata", "fragment_meta", "data",
         "array_metadata", "array_metadata_vac", "commit", "ok_marker", "unknown"]
# What a lazy open parses at once: the roles that give other files their context.
CONTEXT_ROLES = ("legacy_schema", "schema", "enumeration")



def decode_name(name: str) -> Optional[dict]:
    """t1, t2, uuid, version... of a timestamped name (None when it is not one)."""
    try:
        return names.decode_name(name)
    except Exception:  # a damaged name is shown undecoded, never fatal
        return None


def _name_display(name: str) -> Optional[str]:
    info = decode_name(name)
    return info.get("display") if info else None


# ---- per-role file parsers --------------------------------------------------------------
def parse_schema_file(document, src, ctx) -> Tuple[Node, Optional[ArraySchema]]:
    """The schema file's node and its ArraySchema (None when unreadable)."""
    node = schema_mod.parse_schema_file(document, src, ctx)
    return node, node.data if isinstance(node.data, ArraySchema) else None


def parse_data(document, src, ctx, fragment: Optional[Fragment], schema) -> Node:
    fm = fragment.metadata if fragment is not None else None
    if fm is None or schema is None:
        why = "no fragment metadata to locate its tiles" if fm is None else "no schema to interpret it"
        node = file_node(document, src.path, f"data file not parsed: {why}")
        if fragment is not None:
            # its fragment's metadata file is missing or broken, or the array's schema is
            # (no schema, unreadable, not parsed): a finding of its own there (reader_faults.py,
            # the file's parse, the array's root); this file is only not looked into
            for leaf in node.children:
                leaf.status, leaf.display, leaf.message = OK, f"not parsed: {why}", None
        return node
    return data_files.parse_data_file(document, src, ctx, fm, schema, os.path.basename(src.name))


def parse_ok_marker(document, src, ctx) -> Node:
    n = Node(os.path.basename(src.name), "file", src, 0, src.size, doc=D_OK)
    if src.size:
        n.add(Node("unparsed", "unparsed", src, 0, src.size, status=WARNING,
                   message=".ok markers are empty; this one has bytes",
                   display=hex_preview(src.read(0, 16))))
    return n


# ---- the directory ---------------------------------------------------------------------
def _walk(fs: DatasetFS, path: str, skip_dirs=(layout.LABELS_DIR,)) -> List[str]:
    """The regular files under `path`, depth first in name order (links out of the dataset,
    loops and special files are left to `_place`, which shows them as findings)."""
    out: List[str] = []

    def visit(d: str, top: bool) -> None:
        try:
            entries = fs.list(d)
        except OSError:
            return
        for e in entries:
            if e.is_file:
                out.append(e.path)
        for e in entries:
            if e.is_dir and not (top and e.name in skip_dirs):
                visit(e.path, False)
    visit(path, True)
    return out


def _context_files(fs: DatasetFS, array_dir: str) -> List[str]:
    """Where the files that give the others their context live (a lazy open parses only
    those): the array folder itself (a legacy `__array_schema.tdb`) and `__schema/`."""
    try:
        out = [e.path for e in fs.list(array_dir) if e.is_file]
    except OSError:
        return []   # shown as an unlistable folder by _place
    sdir = os.path.join(array_dir, layout.SCHEMA_DIR)
    return out + (_walk(fs, sdir) if fs.stat(sdir).is_dir else [])


def _fragment_of(array: TileDBArray, array_dir: str, path: str) -> Optional[Fragment]:
    return array.fragment_in(os.path.dirname(os.path.abspath(path)))


def _fragment_dirs(fs: DatasetFS, array_dir: str) -> List[str]:
    out = []
    fd = os.path.join(array_dir, layout.FRAGMENTS_DIR)
    if fs.stat(fd).is_dir:
        try:
            out += [e.path for e in fs.list(fd) if e.is_dir]
        except OSError:
            pass  # shown as an unlistable folder by _place
    try:
        top = fs.list(array_dir)
    except OSError:
        top = []
    for e in top:  # format versions < 12: fragments at the root
        if layout.TIMESTAMPED_RE.match(e.name) and e.is_dir:
            out.append(e.path)
    return out


def load_array(document, array_dir: str, ctx: Context, only: Optional[str] = None
               ) -> Tuple[TileDBArray, Dict[str, Node]]:
    """Parse the files of `array_dir` (all of them, or just what `only` needs for context
    plus `only` itself). Returns the array model and {abs path: file node}."""
    array = TileDBArray(array_dir)
    tiledb_context(ctx).array = array
    fs = document.fs
    lazy = only is None and bool(getattr(document, "lazy", False))
    fdirs = _fragment_dirs(fs, array_dir)
    for fdir in fdirs:
        name = os.path.basename(fdir)
        info = decode_name(name) or {}
        array.fragments.append(Fragment(name, fdir, info.get("t1"), info.get("t2"),
                                        info.get("uuid"), info.get("version")))
    files = _context_files(fs, array_dir) if lazy else _walk(fs, array_dir)
    roles = {p: layout.role_of(array_dir, p) for p in files}
    if lazy:   # the rest is parsed when shown (`_place` makes their nodes)
        files = [p for p in files if roles[p] in CONTEXT_ROLES]
    if only is not None:
        target = os.path.abspath(only)
        needed = {"legacy_schema", "schema"}
        files = [p for p in files if roles[p] in needed or os.path.abspath(p) == target or
                 (roles[p] == "fragment_metadata" and roles.get(target) == "data" and
                  os.path.dirname(p) == os.path.dirname(target))]
    nodes: Dict[str, Node] = {}
    by_role = sorted(files, key=lambda p: (ORDER.index(roles[p]) if roles[p] in ORDER else 99, p))
    tracker = getattr(document, "progress", None)
    if tracker is not None:
        _plan(tracker, fs, array_dir, only, len(by_role))
    for p in by_role:
        role = roles[p]
        keep = only is None or os.path.abspath(p) == os.path.abspath(only)
        doc_for = document if keep else _Scratch(document)
        try:
            src = doc_for.open_source(p)
            size = src.size   # (opens the file)
        except OSError as e:
            if keep:
                nodes[os.path.abspath(p)] = unreadable_node(document, p, e)
            continue
        node = guarded(lambda: _parse_role(doc_for, src, ctx, role, array, p),
                       os.path.basename(p), src, 0, size)
        if keep:
            nodes[os.path.abspath(p)] = node
        if tracker is not None:
            tracker.step(document.relname(p))
    if array.schemas:
        array.latest_schema = array.schemas[max(array.schemas)]
    return array, nodes


def _plan(tracker, fs: DatasetFS, array_dir: str, only: Optional[str], count: int) -> None:
    """Plan this array's files and, for a whole array, its dimension-label arrays' (parsed
    later by `_place`), so that the total is known before the first file is reported."""
    key = os.path.abspath(array_dir)
    tracker.plan(key if only is None else (key, os.path.abspath(only)), count)
    labels = os.path.join(array_dir, layout.LABELS_DIR)
    if only is None and fs.stat(labels).is_dir:
        for e in fs.list(labels):
            if e.is_dir and layout.is_array_dir(e.path):
                tracker.plan(os.path.abspath(e.path), len(_walk(fs, e.path)))


class _Scratch:
    """A stand-in document for files parsed only for context (not shown, not covered)."""

    def __init__(self, real):
        from ...core.document import Document

        self._doc = Document(real.path)
        self._doc.fs = real.fs  # the same dataset, the same confinement

    def __getattr__(self, name):
        return getattr(self._doc, name)


def _parse_role(document, src, ctx: Context, role: str, array: TileDBArray, path: str) -> Node:
    node = _parse_as(document, src, ctx, role, array, path)
    if not parse_failed(node):
        return node
    standing = stand_in_node(src, os.path.basename(path))
    if standing is None:
        return node
    frag = _fragment_of(array, array.path, path) if role == "fragment_metadata" else None
    if frag is not None:
        frag.metadata = None   # what its parse made of the stand-in is no fragment's metadata
    return standing


def _parse_as(document, src, ctx: Context, role: str, array: TileDBArray, path: str) -> Node:
    if role in ("schema", "legacy_schema"):
        node, schema = parse_schema_file(document, src, ctx.derive())
        if schema is not None:
            array.schemas[schema.name] = schema
            array.latest_schema = array.schemas[max(array.schemas)]
        node.display = _name_display(os.path.basename(path))
        return node
    if role == "enumeration":
        return enumeration.parse_enumeration_file(document, src,
                                                  with_schema(ctx, array.latest_schema))
    if role == "fragment_metadata":
        frag = _fragment_of(array, array.path, path)
        node, fm = fragment_metadata.parse_fragment_metadata_file(document, src, with_schema(ctx, array.latest_schema))
        if frag is not None:
            frag.metadata = fm
            if frag.version is None and fm is not None and fm.version:
                frag.version = fm.version  # formats 1–4: no version in the name
        return node
    if role == "data":
        frag = _fragment_of(array, array.path, path)
        schema = array.latest_schema
        if frag is not None and frag.metadata is not None:
            schema = array.schema_for(getattr(frag.metadata, "schema_name", None))
        return parse_data(document, src, with_schema(ctx, schema), frag, schema)
    if role == "fragment_meta":
        return consolidated_meta.parse_consolidated_meta_file(
            document, src, with_schema(ctx, array.latest_schema))
    if role == "array_metadata":
        node = array_metadata.parse_array_metadata_file(document, src, ctx)
        node.display = _name_display(os.path.basename(path))
        return node
    if role in ("commit", "array_metadata_vac"):
        node = commits.parse_commit_file(document, src, with_schema(ctx, array.latest_schema))
        node.display = node.display or _name_display(os.path.basename(path))
        return node
    if role == "ok_marker":
        return parse_ok_marker(document, src, ctx)
    return file_node(document, path, "file not part of the TileDB format")


def open_array_dir(document, path: str, ctx: Optional[Context] = None) -> Node:
    """The tree of the array directory `path`: its files and folders in name order, each
    file parsed with the array's context; `__labels/*` are arrays of their own."""
    ctx = ctx or document.ctx
    array, nodes = load_array(document, path, ctx)
    if document.model is None:
        document.model = array
    root = Node(os.path.basename(path.rstrip(os.sep)) or path, "dir", document.relname(path), 0, 0,
                display=_array_summary(array), data=array)
    if not _has_schema_files(document.fs, path):
        root.mark(ERROR, f"this TileDB array has no schema: it holds fragments or commits but "
                         f"no {layout.SCHEMA_DIR}/ (a partial copy?); libtiledb cannot open it "
                         f"(\"Array does not exist\")")
        root.code = NO_SCHEMA
    lazy = _Lazy(array, {os.path.abspath(f.path) for f in array.fragments}) \
        if getattr(document, "lazy", False) else None
    _place(document, root, path, path, nodes, ctx, lazy)
    return root


def _has_schema_files(fs: DatasetFS, path: str) -> bool:
    if fs.stat(os.path.join(path, layout.LEGACY_SCHEMA_FILE)).is_file:
        return True
    schema_dir = os.path.join(path, layout.SCHEMA_DIR)
    try:
        return any(e.is_file for e in fs.list(schema_dir))
    except OSError:   # a folder there that cannot be listed is its own finding
        return fs.stat(schema_dir).is_dir


def _array_summary(array: TileDBArray) -> str:
    s = array.latest_schema
    kind = ("dense" if s.dense else "sparse") if s else "schema unreadable"
    return f"TileDB array, {kind}, {len(array.fragments)} fragment(s), {len(array.schemas)} schema(s)"


class _Lazy:
    """What a lazy open's `_place` needs: the array (context) and its fragment folders."""

    def __init__(self, array: TileDBArray, fragment_dirs):
        self.array = array
        self.fragment_dirs = fragment_dirs


def _place(document, parent: Node, array_dir: str, dirpath: str, nodes: Dict[str, Node], ctx,
           lazy: Optional[_Lazy] = None) -> None:
    fs = document.fs
    try:
        entries = fs.list(dirpath)
    except OSError as e:
        mark_unlistable(parent, e)
        return
    for entry in entries:
        name, full = entry.name, entry.path
        if entry.is_dir:
            if dirpath == array_dir and name == layout.LABELS_DIR:
                lab = Node(name, "dir", document.relname(full), 0, 0,
                           display="dimension label arrays")
                try:
                    labels = fs.list(full)
                except OSError as e:
                    mark_unlistable(lab, e)
                    labels = []
                for le in labels:
                    if le.is_dir and layout.is_array_dir(le.path):
                        lab.add(open_array_dir(document, le.path, ctx.derive(format=None)))
                    elif le.is_dir:
                        from ...core.plain import dir_node
                        lab.add(dir_node(document, le.path))
                    elif not le.is_file:
                        lab.add(entry_node(document, le))
                    else:
                        lab.add(file_node(document, le.path, "file not part of the TileDB format"))
                parent.add(lab)
                continue
            d = Node(name, "dir", document.listed_name(entry), 0, 0, display=_name_display(name))
            # a fragment folder, and the commits folder (one file per write: 10 000 fragments
            # make 10 000 commit files), are listed when first expanded
            if lazy is not None and dirpath == array_dir and name == layout.COMMITS_DIR:
                d.set_lazy(_CommitsDeferred(document, d, array_dir, full, ctx, lazy))
            elif lazy is not None and os.path.abspath(full) in lazy.fragment_dirs:
                d.set_lazy(_FragmentDeferred(document, d, array_dir, full, ctx, lazy))
            else:
                _place(document, d, array_dir, full, nodes, ctx, lazy)
            parent.add(d)
        elif entry.is_file:
            node = nodes.get(os.path.abspath(full))
            if node is None and lazy is not None:
                node = _deferred_file(document, array_dir, entry, ctx, lazy.array)
            if node is None:
                try:
                    node = file_node(document, full, "file not part of the TileDB format")
                except OSError as e:
                    node = unreadable_node(document, full, e)
            node.name = name
            parent.add(node)
        else:
            parent.add(entry_node(document, entry))


# ---- a lazy open: fragments listed on expansion, files parsed when shown ------------------
class _FragmentDeferred(BuildDeferred):
    """A fragment folder's entries (or the commits folder's), listed (files not parsed) when
    it is first expanded."""

    owner_fields = True   # an unlistable folder marks its own node

    def __init__(self, document, node: Node, array_dir: str, path: str, ctx, lazy: _Lazy):
        def build() -> List[Node]:
            scratch = Node(node.name, "dir", node.source, 0, 0)
            _place(document, scratch, array_dir, path, {}, ctx, lazy)
            if scratch.status != "ok":
                node.status, node.message, node.code = scratch.status, scratch.message, scratch.code
            return list(scratch.children)

        def release(kids: List[Node]) -> None:
            for k in kids:   # what its files' parses registered goes too: a rebuild is fresh
                if k.deferred:
                    k.release_deferred()
            frag = lazy.array.fragment_in(os.path.abspath(path))
            if frag is not None:
                frag.metadata = None
        super().__init__(build, release)


class _CommitsDeferred(BackgroundBuild, _FragmentDeferred):
    """The commits folder: its (empty) commit files give the first screen nothing to show,
    and listing them (one per write: thousands) is work for a worker thread."""

    first_screen = False


class _FileDeferred(BuildDeferred):
    """A file of the array parsed when it is first shown (expanded, selected, clicked)."""

    owner_fields = True   # the parse gives the file node its display, status and data


def _deferred_file(document, array_dir: str, entry, ctx, array: TileDBArray
                   ) -> Optional[Node]:
    """The node of listed file `entry` whose parse waits until it is shown (an error node
    when it cannot be opened)."""
    path = entry.path
    try:
        src = document.open_listed(entry)
        size = src.size   # (opens the file)
    except OSError as e:
        return unreadable_node(document, path, e)
    name = os.path.basename(path)
    node = Node(name, "file", src, 0, size)
    role = layout.role_of(array_dir, path)

    def build() -> List[Node]:
        if role == "data":   # its tiles are found through its fragment's metadata
            frag = _fragment_of(array, array_dir, path)
            sibling = node.parent.find(layout.FRAGMENT_METADATA_FILE) \
                if node.parent is not None else None
            if frag is not None and frag.metadata is None and sibling is not None:
                sibling.ensure_built()
        start = len(document.derived)   # a parse only appends (no set of every source
        parsed = guarded(lambda: _parse_role(document, src, ctx, role, array, path), name, src,
                         0, src.size)   # per file: 10 000 fragments made that quadratic)
        added[:] = document.derived[start:]
        for f in ("kind", "value", "display", "doc", "status", "message", "code", "type",
                  "data"):
            setattr(node, f, getattr(parsed, f))
        return list(parsed.children)

    def release(_kids: List[Node]) -> None:
        for s in added:   # payloads decoded for the parse: a rebuild makes them again
            document.remove_derived(s)
        added.clear()
    added: List[object] = []
    node.set_lazy(_FileDeferred(build, release))
    return node


def open_file_in_array(document, array_dir: str, path: str) -> Node:
    """One file of an array, parsed with the context its array gives it."""
    ctx = document.ctx
    array, nodes = load_array(document, array_dir, ctx, only=path)
    document.model = array
    node = nodes.get(os.path.abspath(path))
    if node is None:
        node = file_node(document, path)
    return node

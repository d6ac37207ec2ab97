"""Directories: a Zarr array (metadata, chunk files, absent chunks) and groups of arrays."""
from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..core import jsontree, progress
from ..core.context import FormatContext
from ..core.dataset_fs import DatasetFS, entry_node, mark_unlistable, unreadable_node
from ..core.fielddoc import doc
from ..core.filesystems import fs_of
from ..core.findings import ZARR_KEY_SEPARATOR, ZARR_LOST_METADATA, ZARR_NOT_A_KEY, ZARR_OUTSIDE_GRID
from ..core.node import ERROR, WARNING, LazyChildren, Node
from ..core.plain import file_node
from ..core.registry import declared
from ..core.standin import HEAD as STAND_IN_HEAD
from ..core.standin import stand_in, stand_in_node
from . import consolidated
from .chunk import chunk_file_node
from .meta import D_ATTRS, D_ZGROUP, ArrayMeta, from_zarr_json, from_zarray
from .records import RecordView

METADATA_NAMES = (".zarray", ".zattrs", ".zgroup", "zarr.json", ".zmetadata")
D_ZARRAY = doc(".zarray: the v2 array metadata (shape, chunks, dtype, codecs, fill value)",
               spec="zarr v2 spec: metadata")
D_ZARR_JSON = doc("zarr.json: the v3 metadata of an array or group", spec="zarr v3 core spec")
D_ZMETA = doc(".zmetadata: consolidated metadata of a v2 hierarchy (every .zarray/.zattrs/"
              ".zgroup in one object)", spec="zarr-python consolidated metadata")
D_ABSENT = doc("Absent chunks: grid positions with no chunk file; every record there is the "
               "fill value", spec="zarr v2/v3: missing chunks")
D_FILL_RECORD = doc("The fill value decoded as one record")
MAX_ABSENT_LIST = 1_000_000
# An array at most this big (stored chunk bytes, chunk files) is decoded at open: its chunk
# nodes show stages and records at once. A bigger one is decoded on demand (chunk.py).
EAGER_MAX_BYTES = 8 << 20
EAGER_MAX_CHUNKS = 256
EAGER_MAX_DECODED = 64 << 20


@dataclass
class ZarrContext(FormatContext):
    """Zarr's part of a parse `Context`."""

    lazy_chunks: bool = False  # leave every chunk undecoded (`values` decodes them itself)


@dataclass
class ZarrModel:
    """document.model: every array found, by path relative to the opened path."""

    arrays: Dict[str, ArrayMeta] = field(default_factory=dict)
    root_array: Optional[str] = None


# A Zarr node: v2 array or group metadata, or v3 metadata (array or group).
DETECTION = declared("zarr").detection   # declared in the registry: matched before import


def node_kind(path: str, fs: Optional[DatasetFS] = None) -> Optional[str]:
    """'array' / 'group' / None for a directory (`fs`: the dataset it belongs to; by
    default the directory itself)."""
    fs = fs_of(None, path) if fs is None else fs
    if fs.stat(os.path.join(path, ".zarray")).is_file:
        return "array"
    zj = os.path.join(path, "zarr.json")
    if fs.stat(zj).is_file:
        # The whole document (anndata's v3 root with inline consolidated metadata is over
        # 64 KiB): a group is told from an array by its top-level node_type only.
        try:
            text, over = fs.read_bytes(zj, jsontree.MAX_DOCUMENT_BYTES)
        except OSError:
            return _kind_without_metadata(fs, path)
        if over:
            return "group"  # json_file reports the size; nothing is decoded from it
        import json
        try:
            v = json.loads(text)
            return "array" if isinstance(v, dict) and v.get("node_type") == "array" else "group"
        except (ValueError, RecursionError):
            if stand_in(text[:STAND_IN_HEAD]) is not None:
                return _kind_without_metadata(fs, path)
            return "array" if b'"array"' in text and b'"consolidated_metadata"' not in text \
                else "group"
    if fs.stat(os.path.join(path, ".zgroup")).is_file:
        return "group"
    return None


def _kind_without_metadata(fs: DatasetFS, path: str) -> str:
    """What a folder whose zarr.json cannot be read (or is a stand-in) is: a group when a
    folder in it has zarr metadata of its own, else an array (its chunk folders are then
    shown under it, not called arrays that lost their metadata)."""
    try:
        entries = fs.list(path)
    except OSError:
        return "group"
    for e in entries:
        if e.is_dir and any(fs.stat(os.path.join(e.path, m)).is_file
                            for m in (".zarray", ".zgroup", "zarr.json")):
            return "group"
    return "array"


def json_file(document, path: str, d=None) -> Tuple[Node, jsontree.JsonDoc]:
    """A metadata file's node and its JSON; a file that cannot be opened, or that is a
    stand-in (a git-lfs pointer, a saved HTML page), is said as such, with no JSON."""
    try:
        src = document.open_source(path)
    except OSError as e:
        node = unreadable_node(document, path, e)
        return node, jsontree.JsonDoc(node, None, False, node)
    node = Node(os.path.basename(path), "file", src, 0, src.size, doc=d)
    jd = jsontree.parse(src, node)
    if not jd.ok:
        standing = stand_in_node(src, os.path.basename(path))
        if standing is not None:
            standing.doc = d
            return standing, jsontree.JsonDoc(standing, None, False, standing.children[0])
    return node, jd


def readable_file_node(document, path: str, build) -> Node:
    """`build(document, path)`, or the unreadable-entry node of a file that cannot be
    opened (mode 000): said once, where it is."""
    try:
        return build(document, path)
    except OSError as e:
        return unreadable_node(document, path, e)


def load_meta(document, array_dir: str) -> Tuple[Optional[Node], Optional[ArrayMeta]]:
    fs = document.fs
    za = os.path.join(array_dir, ".zarray")
    if fs.stat(za).is_file:
        node, jd = json_file(document, za, D_ZARRAY)
        return node, from_zarray(array_dir, jd)
    zj = os.path.join(array_dir, "zarr.json")
    if fs.stat(zj).is_file:
        node, jd = json_file(document, zj, D_ZARR_JSON)
        return node, from_zarr_json(array_dir, jd)
    return None, None


def add_fill_record(document, meta: ArrayMeta) -> None:
    """Show the fill value decoded as a record under its metadata node."""
    if meta.fill_node is None or meta.rtype is None or meta.fill is None:
        return
    rel = document.relname(meta.path)
    label = "fill record" if rel == "." else f"{rel} fill record"
    src = document.add_derived(meta.fill, label,
                               origin="fill_value decoded", origin_node=meta.fill_node)
    view = RecordView(meta.rtype, src, 1)
    rec = view.record(0, "Fill record")
    rec.doc = D_FILL_RECORD
    if meta.fill_note:
        rec.message = meta.fill_note
    meta.fill_node.add(rec)


def absent_node(document, meta: ArrayMeta, present: set) -> Optional[Node]:
    total = math.prod(meta.grid) if meta.grid else 1
    missing = total - len(present)
    if missing <= 0 or meta.rtype is None:
        return None
    where = document.relname(meta.path)
    fill_text = ""
    if meta.fill is not None:
        fill_text = RecordView(meta.rtype, _Bytes(meta.fill), 1).record(0).display_text()
    node = Node("Absent chunks", "chunk", where, 0, 0, doc=D_ABSENT,
                value=missing,
                display=f"{missing} of {total} chunk keys absent: every record is the fill "
                        f"value {fill_text}")
    node.message = (f"{missing} chunk key(s) have no file: each of their "
                    f"{meta.records_per_chunk} records is the fill value")
    if total <= MAX_ABSENT_LIST:
        grid = meta.grid
        import numpy as np
        absent = [tuple(int(x) for x in np.unravel_index(i, grid)) if grid else ()
                  for i in range(total)]
        absent = [c for c in absent if c not in present]

        def make(i: int) -> Node:
            c = absent[i]
            key = meta.key(c)
            n = Node(key, "chunk", where, 0, 0, value=key, doc=D_ABSENT,
                     display=f"chunk {list(c)} absent: {meta.records_per_chunk} fill records")
            n.message = (f"chunk key {key!r} is absent: every record of chunk {list(c)} is the "
                         f"fill value {fill_text}")
            return n
        node.set_lazy(LazyChildren(len(absent), make, uniform=False))
    return node


class _Bytes:
    """A tiny source over bytes for display-only record views."""

    def __init__(self, data: bytes):
        self.data = data
        self.name = "fill"
        self.size = len(data)

    def read(self, off, n):
        return self.data[off:off + n]


# A zarr node found inside another, opened later by `open_any`: (its path, the node it
# goes under, its index there: a placeholder holds the place meanwhile).
Pending = Tuple[str, Node, int]


def _placeholder(dnode: Node, full: str, pending: List[Pending]) -> None:
    pending.append((full, dnode, dnode.child_count()))
    dnode.add(Node(os.path.basename(full), "dir", None, 0, 0))   # replaced by open_any


def array_dir_node(document, path: str, model: ZarrModel,
                   pending: Optional[List[Pending]] = None) -> Node:
    """The tree of the array at `path`. Folders under it are walked with a stack, and zarr
    nodes inside it are left to `pending` (opened by `open_any`), so how deep the dataset
    nests costs no recursion."""
    pending = [] if pending is None else pending
    rel = document.relname(path)
    node = Node(os.path.basename(path.rstrip(os.sep)) or path, "dir", rel, 0, 0)
    meta_node, meta = load_meta(document, path)
    present = set()
    if meta is not None:
        model.arrays[rel] = meta
        if meta.rtype is not None:
            add_fill_record(document, meta)
        if meta.usable:
            node.display = (f"zarr v{meta.zarr_format} array, shape {list(meta.shape)}, chunks "
                            f"{list(meta.chunks)}, {meta.rtype.describe() if meta.rtype else ''}")
        else:
            node.display = f"zarr v{meta.zarr_format} array (metadata unusable: {meta.problem})"

    jobs = []   # chunk files: (dir node, child index, path, coords, key, size)

    fs = document.fs

    folders = [(path, node)]
    while folders:
        d, dnode = folders.pop()
        try:
            entries = fs.list(d)
        except OSError as e:
            mark_unlistable(dnode, e)
            continue
        for entry in entries:
            name, full = entry.name, entry.path
            relkey = os.path.relpath(full, path).replace(os.sep, "/")
            if entry.is_dir:
                if node_kind(full, fs) is not None:
                    _placeholder(dnode, full, pending)
                    continue
                sub = Node(name, "dir", document.relname(full), 0, 0)
                dnode.add(sub)
                folders.append((full, sub))
                continue
            if not entry.is_file:
                dnode.add(entry_node(document, entry))  # a link out, a loop, a FIFO...
                continue
            if d == path and name in (".zarray", "zarr.json"):
                dnode.add(meta_node)
                progress.step(document, full)
            elif d == path and name == ".zattrs":
                dnode.add(json_file(document, full, D_ATTRS)[0])
                progress.step(document, full)
            elif d == path and name in METADATA_NAMES:
                dnode.add(json_file(document, full, D_ZGROUP if name == ".zgroup" else D_ZMETA)[0])
                progress.step(document, full)
            else:
                # a 0-d array has one chunk, key "c" (v3) or "0" (v2), usable dtype or not
                coords = meta.coords_of(relkey) if (meta is not None and
                                                    (meta.chunks or meta.ndim == 0)) else None
                if coords is not None:
                    present.add(coords)
                    size = entry.size
                    jobs.append((dnode, dnode.child_count(), full, coords, relkey, size))
                    dnode.add(Node(name, "file", None, 0, 0))   # replaced below
                else:
                    dnode.add(readable_file_node(document, full, lambda doc_, p, key=relkey:
                                                 stray_file_node(doc_, meta, p, key)))
                    progress.step(document, full)
    decoded = len(jobs) * meta.records_per_chunk * meta.itemsize if meta is not None and jobs else 0
    # a shard is many chunks: what counts is its inner chunks
    units = len(jobs) * (meta.shard.count if meta is not None and meta.shard else 1)
    lazy = (units > EAGER_MAX_CHUNKS or sum(j[5] for j in jobs) > EAGER_MAX_BYTES or
            decoded > EAGER_MAX_DECODED or  # a few stored bytes may declare gigabytes
            document.ctx.of(ZarrContext).lazy_chunks)  # `values`: it decodes them itself
    for dnode, i, full, coords, relkey, _size in jobs:
        assert meta is not None   # a job is a chunk key of the array's metadata
        cn = readable_file_node(document, full, lambda doc_, p, meta=meta, coords=coords, key=relkey:
                                chunk_file_node(doc_, meta, p, coords, key, lazy=lazy))
        cn.parent = dnode
        kids = dnode.children
        assert isinstance(kids, list)   # a directory node built here: a plain list
        kids[i] = cn
        progress.step(document, full)
    if meta is not None and meta.usable:
        a = absent_node(document, meta, present)
        if a is not None:
            node.add(a)
    return node


def group_dir_node(document, path: str, model: ZarrModel,
                   pending: Optional[List[Pending]] = None) -> Node:
    """The tree of the group at `path`; its member folders are left to `pending` (opened
    by `open_any`: no recursion however deep the hierarchy)."""
    pending = [] if pending is None else pending
    rel = document.relname(path)
    node = Node(os.path.basename(path.rstrip(os.sep)) or path, "dir", rel, 0, 0)
    node.display = "zarr group"
    fs = document.fs
    try:
        entries = fs.list(path)
    except OSError as e:
        mark_unlistable(node, e)
        return node
    for entry in entries:
        name, full = entry.name, entry.path
        if entry.is_dir:
            keys = None if node_kind(full, fs) is not None else lost_chunk_keys(fs, full)
            if keys:
                node.add(lost_array_node(document, full, keys, anndata_encoding(fs, path)))
            else:
                _placeholder(node, full, pending)
        elif not entry.is_file:
            node.add(entry_node(document, entry))
        else:
            if name in METADATA_NAMES:
                d = {".zgroup": D_ZGROUP, ".zattrs": D_ATTRS, "zarr.json": D_ZARR_JSON}.get(name, D_ZMETA)
                n, jd = json_file(document, full, d)
                node.add(n)
                if name in (".zmetadata", "zarr.json"):
                    consolidated.check(fs, path, name, n, jd)
                if name == "zarr.json" and jd.ok and isinstance(jd.value, dict):
                    node.display = f"zarr v{jd.value.get('zarr_format')} group"
                    nt = jsontree.member(n, "node_type")
                    if nt is not None:
                        nt.doc = doc("node_type: 'group' here: a container of arrays and groups")
            else:
                node.add(readable_file_node(document, full, lambda doc_, p: file_node(
                    doc_, p, "not part of a zarr group")))
            progress.step(document, full)
    return node


# A chunk key of either format and separator: '0', '1.2', '1/2', 'c', 'c/1/2', 'c.1.2'.
_CHUNK_KEY = re.compile(r"(?:c|[0-9]+)(?:[./][0-9]+)*\Z")
MAX_LOST_SCAN = 10_000


def lost_chunk_keys(fs: DatasetFS, folder: str) -> List[str]:
    """The chunk keys of a folder in a group that has no metadata of its own but holds only
    files named like chunk keys (an array whose .zarray / zarr.json was lost: zarr and
    anndata skip it); [] when it is anything else."""
    keys: List[str] = []
    stack = [folder]
    while stack:
        d = stack.pop()
        try:
            entries = fs.list(d)
        except OSError:
            return []
        for e in entries:
            if e.name == ".zattrs" and d == folder:
                continue   # attributes outlive the metadata (anndata's encoding-type)
            if e.name in METADATA_NAMES:
                return []
            if e.is_dir:
                stack.append(e.path)
            elif not e.is_file:
                return []   # a link out, a FIFO...: the group lists it as it is
            else:
                key = os.path.relpath(e.path, folder).replace(os.sep, "/")
                if not _CHUNK_KEY.match(key):
                    return []
                keys.append(key)
            if len(keys) > MAX_LOST_SCAN:
                return keys
    return sorted(keys)


def anndata_encoding(fs: DatasetFS, group: str) -> Optional[str]:
    """The group's anndata `encoding-type` attribute (v2 .zattrs or v3 zarr.json
    attributes), None when it has none."""
    import json
    for name, pick in ((".zattrs", lambda v: v), ("zarr.json", lambda v: v.get("attributes"))):
        p = os.path.join(group, name)
        if not fs.stat(p).is_file:
            continue
        try:
            text, over = fs.read_bytes(p, jsontree.MAX_DOCUMENT_BYTES)
            v = json.loads(text) if not over else None
        except (OSError, ValueError, RecursionError):
            continue
        attrs = pick(v) if isinstance(v, dict) else None
        if isinstance(attrs, dict) and isinstance(attrs.get("encoding-type"), str):
            return attrs["encoding-type"]
    return None


def lost_array_node(document, folder: str, keys: List[str], encoding: Optional[str]) -> Node:
    """A folder of chunk files with no array metadata: an error on the folder, its files
    shown as the chunks they are (they cannot be decoded without the metadata)."""
    rel = document.relname(folder)
    node = Node(os.path.basename(folder.rstrip(os.sep)), "dir", rel, 0, 0)
    who = (f"anndata (this group's encoding-type is {encoding!r}) and zarr skip the element "
           f"without a word" if encoding else "zarr does not see an array here")
    shown = ", ".join(repr(k) for k in keys[:4]) + (", ..." if len(keys) > 4 else "")
    node.mark(ERROR, f"{rel}: {len(keys)} chunk file(s) ({shown}) and no .zarray or zarr.json: "
                     f"the array's metadata is missing, so {who}")
    node.code = ZARR_LOST_METADATA
    node.display = "array without metadata"
    attrs = os.path.join(folder, ".zattrs")
    if document.fs.stat(attrs).is_file:
        node.add(json_file(document, attrs, D_ATTRS)[0])
    for key in keys[:MAX_LOST_SCAN]:
        full = os.path.join(folder, *key.split("/"))
        try:
            src = document.open_source(full)
        except OSError as e:
            node.add(Node(key, "file", rel, 0, 0).mark(ERROR, f"cannot be read: {e}"))
            continue
        f = Node(key, "file", src, 0, src.size)
        if src.size:
            c = Node("chunk data", "payload", src, 0, src.size,
                     display="undecodable: the array's metadata is missing")
            f.add(c)
        node.add(f)
    return node


def stray_file_node(document, meta: Optional[ArrayMeta], path: str, key: str) -> Node:
    """A file in an array directory that is no chunk of it: a key outside the chunk grid
    (zarr ignores it: stale after a shrink, or misplaced) or a name no key spells."""
    if meta is None or (not meta.usable and not meta.chunks):
        # the metadata's own finding says why nothing here can be placed: a file is shown,
        # not called a stray once per chunk
        src = document.open_source(path)
        return Node(os.path.basename(path), "file", src, 0, src.size,
                    display=f"not placed: the array's metadata is unusable ({key!r})")
    outside = meta.parse_key(key) if meta is not None and meta.usable and \
        (meta.chunks or meta.ndim == 0) else None
    spelled = other_encoding_coords(meta, key) if outside is None else None
    if meta is not None and spelled is not None:
        other, as_meta = spelled
        sep = meta.separator
        if as_meta.key_encoding == meta.key_encoding:
            what = "dimension_separator" if meta.zarr_format == 2 else "chunk_key_encoding separator"
            said = (f"with the separator {as_meta.separator!r}; the array's {what} is {sep!r}")
        else:
            said = (f"in the {as_meta.key_encoding!r} chunk key encoding (separator "
                    f"{as_meta.separator!r}); the array's chunk_key_encoding is "
                    f"{meta.key_encoding!r} (separator {sep!r})")
        message = (f"chunk key {key!r} spells chunk {list(other)} {said}, so zarr looks for "
                   f"{meta.key(other)!r} and never reads this file: the chunk reads as the "
                   f"fill value")
        node = file_node(document, path, message)
        target = node.children[0] if node.child_count() else node
        target.status, target.message, target.code = ERROR, message, ZARR_KEY_SEPARATOR
        return node
    if meta is not None and outside is not None:
        code = ZARR_OUTSIDE_GRID
        message = (f"chunk key {key!r} is outside the chunk grid {list(meta.grid)} (array "
                   f"shape {list(meta.shape)}, chunks {list(meta.chunks)}): not part of the "
                   f"array, its bytes are not read")
    else:
        code = ZARR_NOT_A_KEY
        message = f"not a chunk key of this array ({key!r})"
    node = file_node(document, path, message)
    target = node.children[0] if node.child_count() else node
    target.status, target.message, target.code = WARNING, message, code
    return node


def other_encoding_coords(meta: Optional[ArrayMeta], key: str
                          ) -> Optional[Tuple[Tuple[int, ...], ArrayMeta]]:
    """(the grid coordinates `key` spells, the key encoding that spells them) when `key` is
    a chunk key of the array's grid written with another separator ('.' for '/', '/' for
    '.') or, in a v3 array, the other chunk_key_encoding ('0.1' or '0/1' where 'c/0/1' is
    declared, or the reverse); None when it spells none."""
    if meta is None or not meta.usable or not meta.chunks:
        return None
    encodings = ("v2",) if meta.zarr_format == 2 else (meta.key_encoding,) + tuple(
        e for e in ("default", "v2") if e != meta.key_encoding)
    for encoding in encodings:
        for sep in ("/", "."):
            if (encoding, sep) == (meta.key_encoding, meta.separator):
                continue
            other = dataclasses.replace(meta, key_encoding=encoding, separator=sep)
            coords = other.coords_of(key)
            if coords is not None:
                return coords, other
    return None


def open_any(document, path: str, model: ZarrModel) -> Node:
    """The tree of the zarr node at `path` and everything under it, opened with a work list
    (a hierarchy 1 200 groups deep is as safe as a flat one): each node opened puts the
    nodes under it on the list, behind placeholders that keep their place."""
    pending: List[Pending] = []
    root = _open_one(document, path, model, pending)
    while pending:
        full, parent, index = pending.pop()
        n = _open_one(document, full, model, pending)
        n.parent = parent
        kids = parent.children
        assert isinstance(kids, list)   # a directory node built here: a plain list
        kids[index] = n
    return root


def _open_one(document, path: str, model: ZarrModel, pending: List[Pending]) -> Node:
    if node_kind(path, document.fs) == "array":
        return array_dir_node(document, path, model, pending)
    return group_dir_node(document, path, model, pending)


def find_array_dir(path: str, max_up: int = 12) -> Optional[str]:
    """The array directory a file belongs to (the nearest parent with array metadata)."""
    d = os.path.dirname(os.path.abspath(path))
    for _ in range(max_up):
        if node_kind(d) == "array":
            return d
        nd = os.path.dirname(d)
        if nd == d:
            return None
        d = nd
    return None

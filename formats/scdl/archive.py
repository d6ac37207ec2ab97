"""An SCDL archive directory: which parser each file gets, and with what context.

header.sch is parsed first; its array descriptors type the raw array files (a header-less
legacy archive uses the library's default dtypes, with a warning). JSON, NPY and Parquet
files are annotated by their own modules; cross-file checks run last (`checks`).
"""
from __future__ import annotations

import os
from typing import Dict, Optional, Tuple

from ..core import jsontree, plain, progress
from ..core.dataset_fs import member_path
from ..core.engine import guarded
from ..core.fielddoc import doc
from ..core.filesystems import fs_of
from ..core.node import WARNING, Node
from ..core.npy import MAGIC as NPY_MAGIC
from ..core.npy import open_npy
from ..core.registry import declared
from ..core.remote import absolute
from . import checks
from .arrays import parse_array_file
from .enums import (
    ARRAY_FILES,
    FEATURE_DIRS,
    HEADER_FILE,
    LEGACY_DTYPES,
    MAGIC,
    METADATA_FILE,
    NEIGHBOR_DTYPES,
    VERSION_FILE,
)
from .header import parse_header_file, parse_header_source
from .model import Archive, ArrayDesc, FeatureDir
from .parquet import MAGIC as PAR_MAGIC
from .parquet import num_rows as parquet_num_rows
from .parquet import open_parquet

ARCHIVE_DOC = doc(
    "An SCDL archive (bionemo-scdl SingleCellMemMapDataset): header.sch, the CSR arrays "
    "data.npy / row_ptr.npy / col_ptr.npy, metadata.json, version.json and the feature-index "
    "folders.", spec="SCDL schema v0.0.9",
    note="header.sch, metadata.json, version.json and the neighbour files are described "
         "neither by the document nor by header.sch.")
METADATA_DOC = doc(
    "Archive metadata, written with json.dump: {\"num_rows\": N}.",
    note="Not in the schema document. save() writes num_rows only when the key is missing, "
         "so after a concat it keeps the first dataset's count; the reader takes the row "
         "count from row_ptr.npy.")
NUM_ROWS_DOC = doc("Number of rows (cells) of the matrix, as first saved.")
VERSION_DOC = doc(
    "The bionemo-scdl PACKAGE version that wrote the archive, as a JSON string (\"0.1.3\").",
    note="Not the schema version: header.sch carries that (0.1.0).")
FEATURE_FILE_DOCS = {
    "cumulative_sum_index.npy": doc(
        "Row blocks of the feature index (real NPY, int64): [-1, end of block 1, end of "
        "block 2, ...]; block k covers rows max(c[k], 0) .. c[k+1]-1."),
    "labels.npy": doc("Label of each block (real NPY, <U n): the path of the source h5ad.",
                      note="An object array (pickled) when a label is None."),
    "version.npy": doc("0-d NPY string: the bionemo-scdl package version that saved the index."),
}
PARQUET_DOC = doc("One feature block (dataframe_<i>.parquet): the var table (one row per "
                  "feature/gene) or the obs table (one row per cell).",
                  note="The loader reads the blocks in sorted file-name order; i is zero-padded "
                       "to the width of the block count.")


# ---- detection ------------------------------------------------------------------------------
# An archive: header.sch, or the raw core arrays of a header-less legacy archive.
DETECTION = declared("scdl").detection   # the registry's: matched before import (the
# header, or the core arrays: tests/core/test_plugin.py)
detect_dir = DETECTION.matches_dir


def container_of(path: str) -> Optional[str]:
    d = os.path.dirname(absolute(path))
    if detect_dir(d):
        return d
    if os.path.basename(d) in FEATURE_DIRS and detect_dir(os.path.dirname(d)):
        return os.path.dirname(d)
    return None


def sniff(head: bytes, path: str) -> bool:
    return head.startswith(MAGIC) or head.startswith(NPY_MAGIC)


# ---- descriptors --------------------------------------------------------------------------
def descriptors(archive: Archive) -> Dict[str, ArrayDesc]:
    """{file name relative to the archive: descriptor} for every array file to type."""
    out: Dict[str, ArrayDesc] = {}
    fs = fs_of(None, archive.path)
    if archive.header is not None:
        for a in archive.header.arrays:
            rel = ARRAY_FILES.get(a.name)
            inside = member_path(a.name)  # "/etc/passwd", "../x": never a file of the archive
            if rel is None and inside and fs.stat(os.path.join(archive.path, inside)).is_file:
                rel = inside  # the document's reading: the name is a file name
            if rel is not None and rel not in out:
                out[rel] = a
    else:
        for name, dt in LEGACY_DTYPES.items():
            out[ARRAY_FILES[name]] = ArrayDesc(name, None, None, dt,
                                               source_of_dtype="legacy default, no header.sch")
    for name, dt in NEIGHBOR_DTYPES.items():
        rel = ARRAY_FILES[name]
        if rel not in out and fs.stat(os.path.join(archive.path, rel)).is_file:
            out[rel] = ArrayDesc(name, None, None, dt, source_of_dtype="library hard-coded")
    return out


# ---- the directory ----------------------------------------------------------------------------
def open_dir(document, path: str) -> Node:
    archive = Archive(absolute(path))
    document.model = archive
    header_node = None
    progress.plan_tree(document, archive.path)
    hp = os.path.join(archive.path, HEADER_FILE)
    if document.fs.stat(hp).is_file:
        header_node, archive.header = parse_header_file(document, hp)
        progress.step(document, hp)
    descs = descriptors(archive)

    def file_fn(doc_, full: str) -> Node:
        if header_node is not None and absolute(full) == hp:
            return header_node
        src = doc_.open_source(full)
        node = guarded(lambda: file_node(doc_, archive, descs, full), os.path.basename(full),
                       src, 0, src.size)
        progress.step(doc_, full)
        return node

    root = plain.dir_node(document, archive.path, file_fn)
    root.doc = ARCHIVE_DOC
    root.type = "SCDL archive"
    if archive.header is None:
        root.mark(WARNING, "no header.sch: a legacy archive (written before bionemo-scdl "
                           "0.1.1); arrays typed with the library's defaults DATA float32, "
                           "ROWPTR uint64, COLPTR uint32")
        root.display = "SCDL archive (legacy, no header)"
    else:
        v = archive.header.version
        root.display = f"SCDL archive, header {v[0]}.{v[1]}.{v[2]}"
    checks.run(archive, root)
    return root


def file_node(document, archive: Archive, descs: Dict[str, ArrayDesc], full: str) -> Node:
    """The annotated node of one file of the archive."""
    rel = os.path.relpath(absolute(full), archive.path).replace(os.sep, "/")
    base = os.path.basename(rel)
    if rel in descs:
        node, af = parse_array_file(document, full, descs[rel])
        archive.arrays[descs[rel].name] = af
        return node
    if rel == METADATA_FILE:
        node, jd = json_file(document, full, METADATA_DOC)
        m = jsontree.member(node, "num_rows")
        if m is not None:
            m.doc = NUM_ROWS_DOC
        if jd.ok and isinstance(jd.value, dict) and type(jd.value.get("num_rows")) is int:
            archive.metadata_num_rows, archive.metadata_node = jd.value["num_rows"], m
        elif jd.ok:
            node.mark(WARNING, "metadata.json: expected an object with an integer num_rows")
        return node
    if rel == VERSION_FILE:
        node, jd = json_file(document, full, VERSION_DOC)
        if jd.ok and not isinstance(jd.value, str):
            node.mark(WARNING, "version.json: expected a JSON string (the package version)")
        return node
    if base.endswith(".json"):
        return json_file(document, full, None)[0]
    head = document.fs.read_bytes(full, 8)[0]
    fdir = _feature_dir(archive, rel)
    if head.startswith(NPY_MAGIC):
        node = open_npy(document, full)
        node.doc = FEATURE_FILE_DOCS.get(base) if fdir else None
        if fdir is not None and base == "cumulative_sum_index.npy":
            data = node.find("data")
            if data is not None and data.data is not None and data.data.dtype.kind in "iu":
                fdir.cumsum = [int(x) for x in data.data[:1_000_000]]
                fdir.cumsum_node = data
        return node
    if head.startswith(PAR_MAGIC) or base.endswith(".parquet"):
        node = open_parquet(document, full)
        node.doc = PARQUET_DOC
        if fdir is not None:
            fdir.parquet_rows[base] = parquet_num_rows(node)
            fdir.parquet_nodes[base] = node
        return node
    return plain.file_node(document, full, "not a file bionemo-scdl writes in an archive")


def json_file(document, path: str, file_doc) -> Tuple[Node, "jsontree.JsonDoc"]:
    """A JSON file annotated token by token; the file node's value is its whole text."""
    src = document.open_source(path)
    node = Node(os.path.basename(path), "file", src, 0, src.size, doc=file_doc, type="JSON")
    jd = jsontree.parse(src, node)
    if src.size <= 65536:
        node.value = src.read(0, src.size).decode("utf-8", errors="replace")
    return node, jd


def _feature_dir(archive: Archive, rel: str) -> Optional[FeatureDir]:
    parts = rel.split("/")
    if len(parts) != 2 or parts[0] not in FEATURE_DIRS:
        return None
    return archive.feature_dirs.setdefault(parts[0], FeatureDir(parts[0]))


# ---- one file of an archive, or a stray file ------------------------------------------------
def open_file_in(document, container: str, path: str) -> Node:
    archive = Archive(absolute(container))
    document.model = archive
    hp = os.path.join(archive.path, HEADER_FILE)
    if absolute(path) == hp:
        node, archive.header = parse_header_file(document, path)
        return node
    if document.fs.stat(hp).is_file:
        # context only: not one of the document's sources
        src = document.fs.open_source(hp, HEADER_FILE)
        try:
            _, archive.header = parse_header_source(src)
        finally:
            src.close()
    return file_node(document, archive, descriptors(archive), path)


def open_file(document, path: str) -> Node:
    head = document.fs.read_bytes(path, 8)[0]
    archive = Archive(os.path.dirname(absolute(path)))
    document.model = archive
    if head.startswith(MAGIC):
        node, archive.header = parse_header_file(document, path)
        return node
    if head.startswith(NPY_MAGIC):
        document.model = None
        return open_npy(document, path)
    return plain.file_node(document, path)

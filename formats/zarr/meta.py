"""Array metadata (v2 `.zarray`, v3 `zarr.json`) read from its annotated JSON tree.

Each known key gets its field doc; every problem marks the node of the offending value.
The result is an `ArrayMeta`: shape, chunk shape, storage axis order, record type, fill
record, the bytes->bytes codec chain and how chunk keys are spelled.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..core.fielddoc import FieldDoc, doc
from ..core.findings import UNCHECKED
from ..core.jsontree import JsonDoc, element, member, value_node
from ..core.node import ERROR, WARNING, Node
from ..core.status import Status
from .codecs import OBJECT_CODECS, CodecSpec
from .dtype import D_DTYPE_V2, D_DTYPE_V3, D_FIELD, DtypeError, RecordType, from_v2, from_v3, has_multibyte
from .fill import D_FILL, FillError, encode
from .vlen import VLEN_CODECS, is_object_dtype_v2, vlen_of_filters

V2 = "zarr v2 spec: metadata"
V3 = "zarr v3 core spec: array metadata"
DOCS_V2: Dict[str, FieldDoc] = {
    "zarr_format": doc("zarr_format: 2", spec=V2),
    "shape": doc("shape: length of each dimension of the array", spec=V2),
    "chunks": doc("chunks: length of each dimension of a chunk; edge chunks are stored full "
                  "size", spec=V2),
    "dtype": D_DTYPE_V2,
    "compressor": doc("compressor: the numcodecs config ({\"id\": …}) that compresses each "
                      "chunk, or null", spec=V2),
    "fill_value": D_FILL,
    "order": doc("order: 'C' (row-major) or 'F' (column-major) layout of the records inside "
                 "each chunk", spec=V2),
    "filters": doc("filters: numcodecs configs applied before the compressor, in order; "
                   "decoding runs them in reverse", spec=V2),
    "dimension_separator": doc("dimension_separator: '.' (default) or '/' between the chunk "
                               "indices of a chunk key", spec=V2),
}
DOCS_V3: Dict[str, FieldDoc] = {
    "zarr_format": doc("zarr_format: 3", spec=V3),
    "node_type": doc("node_type: 'array' or 'group'", spec=V3),
    "shape": doc("shape: length of each dimension of the array", spec=V3),
    "data_type": D_DTYPE_V3,
    "chunk_grid": doc("chunk_grid: {'name': 'regular', 'configuration': {'chunk_shape': […]}}",
                      spec=V3),
    "chunk_key_encoding": doc("chunk_key_encoding: 'default' (keys 'c/0/1', separator '/' or "
                              "'.') or 'v2' ('0.1')", spec=V3),
    "fill_value": D_FILL,
    "codecs": doc("codecs: array->array codecs (transpose), one array->bytes codec (bytes: "
                  "endian), then bytes->bytes codecs (zstd, blosc, gzip, crc32c, …); decoding "
                  "runs them in reverse", spec=V3,
                  note="zarr 3.1.6 writes the bytes codec without endian for structs"),
    "attributes": doc("attributes: user metadata", spec=V3),
    "storage_transformers": doc("storage_transformers: must be empty for arrayscope", spec=V3),
    "dimension_names": doc("dimension_names: a name (or null) per dimension", spec=V3),
}
D_ATTRS = doc(".zattrs: user attributes of the array or group (JSON object)", spec=V2)
D_ZGROUP = doc(".zgroup: marks a v2 group ({\"zarr_format\": 2})", spec=V2)
D_BYTES = doc("bytes codec: the array->bytes codec; configuration.endian ('little'/'big') is "
              "the byte order of every multi-byte field (absent: little, per the struct "
              "extension)", spec="zarr v3 bytes codec")
D_CODEC = doc("A codec: its name (v3) or id (v2 numcodecs) and its configuration")
MAX_CHUNK_RECORDS = 1 << 31


@dataclass
class ArrayMeta:
    zarr_format: int
    path: str
    shape: Tuple[int, ...] = ()
    chunks: Tuple[int, ...] = ()
    perm: Tuple[int, ...] = ()            # storage axis order inside a chunk (C: identity)
    rtype: Optional[RecordType] = None
    fill: Optional[bytes] = None
    fill_note: Optional[str] = None
    codecs: List[CodecSpec] = field(default_factory=list)
    key_encoding: str = "v2"              # "v2": '0.1'; "default": 'c/0/1'
    separator: str = "."
    endian: Optional[str] = None          # v3: 'little'/'big' as declared; None when absent
    node: Optional[Node] = None
    fill_node: Optional[Node] = None
    usable: bool = True                   # False when chunks cannot be decoded at all
    problem: Optional[str] = None
    vlen: Optional[str] = None            # object arrays: vlen-utf8 / vlen-bytes / vlen-array
    vlen_dtype: Optional[str] = None      # vlen-array: the items' numpy dtype
    fill_json: object = None              # object arrays: the fill value as written
    shard: Optional["ShardSpec"] = None   # v3 sharding_indexed: chunks are shards

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def grid(self) -> Tuple[int, ...]:
        return tuple(-(-s // c) if c else 0 for s, c in zip(self.shape, self.chunks))

    @property
    def records_per_chunk(self) -> int:
        return math.prod(self.chunks) if self.chunks else 1

    @property
    def itemsize(self) -> int:
        return self.rtype.itemsize if self.rtype else 0

    def storage_shape(self) -> Tuple[int, ...]:
        return tuple(self.chunks[p] for p in self.perm)

    # ---- chunk keys ------------------------------------------------------------------------
    def key(self, coords) -> str:
        if self.key_encoding == "default":
            return "/".join(["c"] + [str(c) for c in coords]) if self.separator == "/" \
                else self.separator.join(["c"] + [str(c) for c in coords])
        return self.separator.join(str(c) for c in coords) if coords else "0"

    def coords_of(self, key: str) -> Optional[Tuple[int, ...]]:
        """Grid coordinates of a chunk key (relative path with '/'), None if not one (a key
        that does not parse, or one outside the chunk grid)."""
        coords = self.parse_key(key)
        if coords is None or any(c >= g for c, g in zip(coords, self.grid)):
            return None
        return coords

    def parse_key(self, key: str) -> Optional[Tuple[int, ...]]:
        """The coordinates a key spells, inside the grid or not; None when it is no key."""
        if self.key_encoding == "default":
            if key == "c" and self.ndim == 0:
                return ()
            prefix = "c" + self.separator
            if not key.startswith(prefix):
                return None
            parts = key[len(prefix):].split(self.separator)
        else:
            if self.ndim == 0:
                return () if key == "0" else None
            parts = key.split(self.separator)
        # ASCII digits only: "²" is a digit to str.isdigit (and int() refuses it), "٠" and
        # "２" are digits to int(): a look-alike key must never stand for a real chunk
        if len(parts) != self.ndim or not all(p.isascii() and p.isdigit() and (p == "0" or p[0] != "0")
                                               for p in parts):
            return None
        return tuple(int(p) for p in parts)


def _ints(v, positive: bool) -> bool:
    return isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool)
                                       and (x > 0 if positive else x >= 0) for x in v)


def _doc_members(obj_node: Node, docs: Dict[str, FieldDoc]) -> None:
    if obj_node is None or not isinstance(obj_node.data, dict):
        return
    for k, n in obj_node.data.items():
        if k in docs:
            n.doc = docs[k]


def _fail(meta: ArrayMeta, node: Optional[Node], message: str, status: Status = ERROR) -> None:
    target = value_node(node) if node is not None else meta.node
    if target is not None:
        target.mark(status, message)
    if status == ERROR:
        meta.usable = False
        meta.problem = meta.problem or message


def _unsupported(meta: ArrayMeta, node: Optional[Node], message: str) -> None:
    """Metadata arrayscope cannot decode but the spec allows: a warning (unchecked), never
    an error (a valid store is not damaged because arrayscope cannot read it); the chunks
    stay undecoded."""
    target = value_node(node) if node is not None else meta.node
    if target is not None:
        target.mark(WARNING, message)
        target.code = UNCHECKED
    meta.usable = False
    meta.problem = meta.problem or message


def annotate_fields(rt: RecordType) -> None:
    """Describe each field's declaration node with its packed place."""
    seen = set()
    for f in rt.leaves():
        # a subarray of structs shares one declaration among its unrolled elements: describe
        # it by element 0 (pts[0].x), not by whichever element came last
        if isinstance(f.node, Node) and rt.is_struct and id(f.node) not in seen:
            seen.add(id(f.node))
            f.node.doc = D_FIELD
            f.node.display = (f"{f.name}: {f.type_text()} @ {f.offset}..{f.offset + f.size - 1}"
                              f" ({f.size} B)")


def _record_type(meta: ArrayMeta, fn, node: Optional[Node]) -> None:
    try:
        meta.rtype = fn()
    except DtypeError as e:
        _fail(meta, e.node or node, f"dtype: {e}")
        return
    annotate_fields(meta.rtype)
    if node is not None:
        node.display = meta.rtype.describe()


def _fill(meta: ArrayMeta, value, node: Optional[Node]) -> None:
    meta.fill_node = node
    if meta.rtype is None:
        return
    try:
        meta.fill, meta.fill_note = encode(value, meta.rtype)
    except FillError as e:
        meta.fill = bytes(meta.itemsize)
        meta.fill_note = f"fill_value unusable ({e}); zero bytes used instead"
        target = value_node(node)
        if target is not None:
            target.mark(ERROR, f"fill_value: {e}")
        return
    if meta.fill_note and node is not None:
        node.message = meta.fill_note  # a note, not a problem: status stays ok


def _common_shape(meta: ArrayMeta, v: dict, shape_node, chunks, chunks_node) -> None:
    shape = v.get("shape")
    if not isinstance(shape, list) or not _ints(shape, positive=False):
        _fail(meta, shape_node, f"shape must be a list of non-negative integers, found {shape!r}"
              [:200])
        return
    meta.shape = tuple(shape)
    if not isinstance(chunks, list) or not _ints(chunks, positive=True) \
            or len(chunks) != len(shape):
        _fail(meta, chunks_node, f"chunk shape must be {len(shape)} positive integers, found "
                                 f"{chunks!r}"[:200])
        return
    meta.chunks = tuple(chunks)
    meta.perm = tuple(range(len(shape)))
    if math.prod(chunks) > MAX_CHUNK_RECORDS:
        _fail(meta, chunks_node, f"a chunk of {math.prod(chunks)} records is not plausible")


def _codec_spec(meta: ArrayMeta, conf, node: Optional[Node], v3: bool,
                itemsize: int = 0) -> Optional[CodecSpec]:
    """`itemsize`: the element size of the stage the codec reads (0: the record's)."""
    if v3 and isinstance(conf, str):
        conf = {"name": conf}
    key = "name" if v3 else "id"
    if not isinstance(conf, dict) or not isinstance(conf.get(key), str):
        _fail(meta, node, f"a codec is an object with a {key!r} string, found {conf!r}"[:200])
        return None
    written = conf[key]
    name = written[len("numcodecs."):] if written.startswith("numcodecs.") else written
    cfg = conf.get("configuration", {}) if v3 else {k: x for k, x in conf.items() if k != "id"}
    if not isinstance(cfg, dict):
        _fail(meta, node, "codec configuration must be an object")
        return None
    if node is not None:
        node.doc = D_CODEC
    spec = CodecSpec(name, cfg, node, written, itemsize or meta.itemsize or 1)
    from .codecs import known
    if not known(name) and node is not None:
        what = "an object codec: its bytes are named, never unpickled or evaluated" \
            if name in OBJECT_CODECS else "not known to arrayscope: chunks stay undecoded"
        node.mark(WARNING, f"codec {written!r} is {what}")
    return spec


def _encoded_itemsize(spec: CodecSpec, size: int) -> int:
    from .codecs import CodecError, get
    try:
        return get(spec.name).encoded_itemsize(spec, size)
    except CodecError:   # a bad configuration: reported where the chunk is decoded
        return size


# ---- v2 -----------------------------------------------------------------------------------
def from_zarray(path: str, jd: JsonDoc) -> ArrayMeta:
    meta = ArrayMeta(2, path, node=jd.node)
    v = jd.value
    if not jd.ok:
        meta.usable, meta.problem = False, ".zarray is not valid JSON"
        return meta
    if not isinstance(v, dict):
        _fail(meta, jd.node, f".zarray must hold a JSON object, found {type(v).__name__}")
        return meta
    root = jd.node
    _doc_members(root, DOCS_V2)
    if v.get("zarr_format") != 2:
        _fail(meta, member(root, "zarr_format") or root,
              f"zarr_format: expected 2, found {v.get('zarr_format')!r}")
    for key in ("shape", "chunks", "dtype"):
        if key not in v:
            _fail(meta, root, f".zarray has no {key!r}")
    if not meta.usable:
        return meta
    _common_shape(meta, v, member(root, "shape"), v.get("chunks"), member(root, "chunks"))
    order = v.get("order", "C")
    if order not in ("C", "F"):
        _fail(meta, member(root, "order"), f"order must be 'C' or 'F', found {order!r}")
    elif order == "F" and meta.shape:
        meta.perm = tuple(reversed(range(len(meta.shape))))
    sep = v.get("dimension_separator", ".")
    if sep not in (".", "/"):
        _fail(meta, member(root, "dimension_separator"),
              f"dimension_separator must be '.' or '/', found {sep!r}")
    else:
        meta.separator = sep
    dnode = member(root, "dtype")
    filters = v.get("filters")
    fnode = member(root, "filters")
    if filters is not None and not isinstance(filters, list):
        _fail(meta, fnode, "filters must be a list of codec configs or null")
        filters = []
    vlen_at = -1
    if is_object_dtype_v2(v["dtype"]):
        meta.vlen, meta.vlen_dtype, vlen_at = vlen_of_filters(filters)
    if meta.vlen:
        meta.fill_json = v.get("fill_value")
        if dnode is not None:
            dnode.display = f"object array ({meta.vlen})"
    else:
        _record_type(meta, lambda: from_v2(v["dtype"], value_node(dnode)), dnode)
        _fill(meta, v.get("fill_value"), member(root, "fill_value"))
    size = meta.itemsize or 1   # the elements each codec sees: a filter may change them
    for i, f in enumerate(filters or []):
        if i == vlen_at:
            continue   # the object codec turns the items into bytes: decoded by vlen.py
        spec = _codec_spec(meta, f, element(value_node(fnode), i), False, size)
        if spec:
            meta.codecs.append(spec)
            size = _encoded_itemsize(spec, size)
    comp = v.get("compressor")
    if comp is not None:
        spec = _codec_spec(meta, comp, member(root, "compressor"), False, size)
        if spec:
            meta.codecs.append(spec)
    return meta


# ---- v3 -----------------------------------------------------------------------------------
def _cname(c) -> Optional[str]:
    n = c if isinstance(c, str) else c.get("name") if isinstance(c, dict) else None
    return n if isinstance(n, str) else None
ARRAY_TO_BYTES = {"bytes", "sharding_indexed", "vlen-utf8", "vlen-bytes"}
# numcodecs filters zarr-python 3 writes as v3 array->array codecs (zarr.codecs.numcodecs):
# each keeps the element count, decoded like its v2 filter from the bytes of its encoded type
NUMCODECS_ARRAY_TO_ARRAY = {f"numcodecs.{n}" for n in ("delta", "fixedscaleoffset", "quantize",
                                                        "astype", "bitround", "packbits")}


def from_zarr_json(path: str, jd: JsonDoc) -> ArrayMeta:
    meta = ArrayMeta(3, path, node=jd.node, key_encoding="default", separator="/")
    v = jd.value
    root = jd.node
    if not jd.ok or not isinstance(v, dict):
        meta.usable, meta.problem = False, "zarr.json is not a valid JSON object"
        return meta
    _doc_members(root, DOCS_V3)
    for key in ("shape", "data_type", "chunk_grid", "codecs", "fill_value"):
        if key not in v:
            _fail(meta, root, f"zarr.json of an array has no {key!r}")
    if not meta.usable:
        return meta
    grid = v.get("chunk_grid")
    gnode = member(root, "chunk_grid")
    chunks = None
    if isinstance(grid, dict) and grid.get("name") == "regular" \
            and isinstance(grid.get("configuration"), dict):
        chunks = grid["configuration"].get("chunk_shape")
        cnode = member(member(value_node(gnode), "configuration"), "chunk_shape")
    else:
        _fail(meta, gnode, f"chunk_grid: only 'regular' grids are supported, found "
                           f"{grid!r}"[:200])
        return meta
    _common_shape(meta, v, member(root, "shape"), chunks, cnode)
    kenc = v.get("chunk_key_encoding", {"name": "default"})
    knode = member(root, "chunk_key_encoding")
    if isinstance(kenc, dict) and kenc.get("name") in ("default", "v2"):
        meta.key_encoding = kenc["name"]
        conf = kenc.get("configuration") or {}
        sep = conf.get("separator", "/" if kenc["name"] == "default" else ".") \
            if isinstance(conf, dict) else None
        if sep not in (".", "/"):
            _fail(meta, knode, f"chunk_key_encoding separator must be '.' or '/', found {sep!r}")
        else:
            meta.separator = sep
    else:
        _fail(meta, knode, f"chunk_key_encoding: unknown encoding {kenc!r}"[:200])
    codecs = v.get("codecs")
    cnode = member(root, "codecs")
    if not _v3_chain(meta, codecs, cnode, v, member(root, "data_type")):
        return meta
    st = v.get("storage_transformers")
    if st:
        _unsupported(meta, member(root, "storage_transformers"),
                     "storage transformers are not supported by arrayscope")
    if not meta.vlen:
        _fill(meta, v.get("fill_value"), member(root, "fill_value"))
        if meta.shard is not None:
            meta.shard.inner.fill = meta.fill
    return meta


def _v3_chain(meta: ArrayMeta, codecs, cnode: Optional[Node], v: dict, dnode: Optional[Node],
              inner: bool = False) -> bool:
    """Read a v3 codec list into `meta` (perm, endian, record type or vlen, bytes->bytes
    codecs, shard); False when the chunks cannot be decoded. `inner`: the codecs of a
    sharding_indexed codec (its inner chunks)."""
    if not isinstance(codecs, list) or not codecs:
        _fail(meta, cnode, "codecs must be a non-empty list")
        return False
    # the array->bytes codec first: its endian shapes the record type
    ab_index = None
    for i, c in enumerate(codecs):
        if _cname(c) in ARRAY_TO_BYTES:
            ab_index = i
            break
    if ab_index is None:
        _fail(meta, cnode, "codecs has no array->bytes codec (bytes)")
        return False
    ab = codecs[ab_index]
    ab_node = element(value_node(cnode), ab_index)
    ab_name = _cname(ab)
    if ab_name == "sharding_indexed":
        if inner:
            _unsupported(meta, ab_node, "sharding inside sharding is not supported by arrayscope")
            return False
        meta.shard = shard_spec(meta, ab, ab_node, v, dnode)
        if meta.shard is None:
            return False
        inner_meta = meta.shard.inner
        meta.rtype, meta.endian = inner_meta.rtype, inner_meta.endian
        meta.vlen, meta.vlen_dtype, meta.fill_json = (inner_meta.vlen, inner_meta.vlen_dtype,
                                                      inner_meta.fill_json)
    elif ab_name in VLEN_CODECS:
        meta.vlen = ab_name
        meta.fill_json = v.get("fill_value")
    elif ab_name != "bytes":
        _unsupported(meta, ab_node, f"array->bytes codec {ab_name!r} is not supported by "
                                    f"arrayscope")
        return False
    if ab_node is not None and ab_name == "bytes":
        ab_node.doc = D_BYTES
    if ab_name == "bytes":
        endian = None
        conf = ab.get("configuration") if isinstance(ab, dict) else None
        if isinstance(conf, dict) and "endian" in conf:
            endian = conf["endian"]
            if endian not in ("little", "big"):
                _fail(meta, member(member(ab_node, "configuration"), "endian"),
                      f"endian must be 'little' or 'big', found {endian!r}")
                endian = None
        meta.endian = endian
        _record_type(meta, lambda: from_v3(v["data_type"], value_node(dnode),
                                           ">" if endian == "big" else "<"),
                     None if inner else dnode)
        if meta.rtype is not None and endian is None and has_multibyte(meta.rtype) and ab_node:
            ab_node.message = ("no configuration.endian: multi-byte fields are read "
                               "little-endian (the struct extension's default)")
    numeric: List[CodecSpec] = []   # numcodecs array->array codecs, in list order
    size = meta.itemsize or 1        # the elements each codec sees: a filter may change them
    for i, c in enumerate(codecs[:ab_index]):
        n = element(value_node(cnode), i)
        name = _cname(c)
        if name in NUMCODECS_ARRAY_TO_ARRAY:
            spec = _codec_spec(meta, c, n, True, size)
            if spec is not None:
                numeric.append(spec)
                size = _encoded_itemsize(spec, size)
            continue
        if name != "transpose":
            _unsupported(meta, n, f"array->array codec {name!r} is not supported by arrayscope")
            continue
        conf = c.get("configuration") if isinstance(c, dict) else None
        order = conf.get("order") if isinstance(conf, dict) else None
        if isinstance(order, str):
            order = list(range(meta.ndim)) if order == "C" else list(reversed(range(meta.ndim)))
        if not isinstance(order, list) or sorted(order) != list(range(meta.ndim)):
            _fail(meta, n, f"transpose order must be a permutation of the axes, found {order!r}")
            continue
        meta.perm = tuple(meta.perm[o] for o in order)
        if meta.shard is not None:
            # a transpose before sharding reorders the shard's axes; arrayscope reads shards
            # in array order only
            _unsupported(meta, n, "transpose before sharding_indexed is not supported by "
                                  "arrayscope")
        if n is not None:
            n.doc = doc("transpose: chunks are stored with their axes in this order",
                        spec="zarr v3 transpose codec")
    if numeric and meta.endian == "big" and meta.itemsize > 1:
        # zarr-python 3.1 hands these codecs the big-endian bytes as their own (little-endian)
        # type and reads wrong values back: no reading to agree with
        _unsupported(meta, ab_node, "numcodecs array->array codecs under a big-endian bytes "
                                    "codec are not supported by arrayscope")
    # they run before `bytes` on write, so after the bytes->bytes codecs on read: first in
    # meta.codecs, which is reversed to decode
    meta.codecs[:0] = numeric
    for i, c in enumerate(codecs[ab_index + 1:], start=ab_index + 1):
        spec = _codec_spec(meta, c, element(value_node(cnode), i), True, size)
        if spec:
            meta.codecs.append(spec)
    return True


# ---- the sharding_indexed codec's declaration (its index and inner chunks: shard.py) ------
SHARD_SPEC = "zarr v3 sharding_indexed codec"
ENTRY = 16   # bytes of one index entry: u64 offset, u64 nbytes
D_SHARD_CODEC = doc("sharding_indexed: each chunk file is a shard of inner chunks (chunk_shape), "
                    "each encoded with `codecs`, located by an index of (offset, nbytes) pairs "
                    "encoded with `index_codecs` at `index_location`", spec=SHARD_SPEC)


@dataclass
class ShardSpec:
    """The sharding_indexed codec of an array: `inner` reads the inner chunks."""

    inner: ArrayMeta
    per_shard: Tuple[int, ...]       # inner chunks along each axis of one shard
    index_endian: str                # "<" or ">"
    index_crc: bool
    index_at_end: bool

    @property
    def count(self) -> int:
        return math.prod(self.per_shard) if self.per_shard else 1

    @property
    def index_size(self) -> int:
        return ENTRY * self.count + (4 if self.index_crc else 0)


def shard_spec(meta: ArrayMeta, ab, ab_node: Optional[Node], v: dict,
               dnode: Optional[Node]) -> Optional[ShardSpec]:
    """The ShardSpec of a sharding_indexed codec declaration (None: not usable, marked)."""
    if ab_node is not None:
        ab_node.doc = D_SHARD_CODEC
    conf = ab.get("configuration") if isinstance(ab, dict) else None
    conf_node = member(ab_node, "configuration")
    if not isinstance(conf, dict):
        _fail(meta, ab_node, "sharding_indexed has no configuration object")
        return None
    shape = conf.get("chunk_shape")
    if not (isinstance(shape, list) and len(shape) == meta.ndim and
            all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in shape)):
        _fail(meta, member(conf_node, "chunk_shape") or conf_node,
              f"sharding chunk_shape must be {meta.ndim} positive integers, found {shape!r}"[:200])
        return None
    if any(s % c for s, c in zip(meta.chunks, shape)):
        _fail(meta, member(conf_node, "chunk_shape"),
              f"the shard shape {list(meta.chunks)} is not a multiple of the inner chunk shape "
              f"{shape} on every axis")
        return None
    loc = conf.get("index_location", "end")
    if loc not in ("start", "end"):
        _fail(meta, member(conf_node, "index_location"),
              f"index_location must be 'start' or 'end', found {loc!r}"[:200])
        return None
    endian, crc = _index_codecs(meta, conf.get("index_codecs"), member(conf_node, "index_codecs"))
    if endian is None:
        return None
    inner = ArrayMeta(3, meta.path, shape=meta.shape, chunks=tuple(shape),
                      perm=tuple(range(meta.ndim)), key_encoding=meta.key_encoding,
                      separator=meta.separator, node=ab_node)
    _v3_chain(inner, conf.get("codecs"), member(conf_node, "codecs"), v, dnode, inner=True)
    if not inner.usable:
        meta.usable, meta.problem = False, f"sharding_indexed: {inner.problem}"
        return None
    return ShardSpec(inner, tuple(s // c for s, c in zip(meta.chunks, shape)), endian, crc,
                     loc == "end")


def _index_codecs(meta: ArrayMeta, codecs, node: Optional[Node]) -> Tuple[Optional[str], bool]:
    """(byte order, crc32c present) of index_codecs: `bytes` then an optional `crc32c` are
    what the spec's writers use; any other chain is not read (warning, not an error)."""
    names = [c.get("name") if isinstance(c, dict) else c for c in codecs] \
        if isinstance(codecs, list) else None
    if names not in (["bytes"], ["bytes", "crc32c"]):
        _unsupported(meta, node, f"index_codecs {names!r}: arrayscope reads 'bytes' with an "
                                 f"optional 'crc32c' only"[:200])
        return None, False
    conf = codecs[0].get("configuration") if isinstance(codecs[0], dict) else None
    endian = conf.get("endian", "little") if isinstance(conf, dict) else "little"
    if endian not in ("little", "big"):
        _fail(meta, element(value_node(node), 0),
              f"index bytes codec: endian must be 'little' or 'big', found {endian!r}")
        return None, False
    return ("<" if endian == "little" else ">"), len(names) == 2

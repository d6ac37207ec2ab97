"""Typed, bounds-checked reads that return Nodes.

A short or impossible read adds an error node at the offending offset (what was expected,
what was found) and raises `ParseStop`. `group(..., size=N)` contains the failure inside its
N bytes so the caller goes on after them; without a size the stop travels up to the parse
entry point, which turns it into a finished tree (see `formats.core.engine.run_parser`).
"""
from __future__ import annotations

import math
import struct
from typing import Callable, NoReturn, Optional

import numpy as np

from .fielddoc import FieldDoc
from .node import ERROR, WARNING, LazyChildren, Node, hex_preview
from .status import Status

# Lists longer than this are not copied into `value` (the node's data keeps the array).
MAX_VALUE_LIST = 4096


class Limits:
    """Per-parse budget shared by a cursor and its sub-cursors, in the spirit of ImHex's
    pattern-language limits: nesting depth and eagerly built nodes. Lazy children do not
    count (they are built on request). Hitting a limit ends the parse with a warning node
    covering the rest of the bytes."""

    MAX_DEPTH = 64
    MAX_NODES = 1_000_000

    __slots__ = ("nodes", "max_nodes", "max_depth")

    def __init__(self, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH):
        self.nodes = 0
        self.max_nodes = max_nodes
        self.max_depth = max_depth


class ParseStop(Exception):
    """Raised after an error node was recorded: the bytes that follow cannot be parsed."""

    def __init__(self, node: Node):
        super().__init__(node.message)
        self.node = node


_PRIMS = {
    # name: (struct code, size, type label)
    "u8": ("B", 1, "uint8"), "u16": ("H", 2, "uint16"), "u32": ("I", 4, "uint32"),
    "u64": ("Q", 8, "uint64"), "i8": ("b", 1, "int8"), "i16": ("h", 2, "int16"),
    "i32": ("i", 4, "int32"), "i64": ("q", 8, "int64"), "f16": ("e", 2, "float16"),
    "f32": ("f", 4, "float32"), "f64": ("d", 8, "float64"),
}


def format_scalar(v, bits: int = 64) -> str:
    """A value as a person reads it; floats of `bits` < 64 at their own shortest round-trip
    form (a float32 0.57 shows as 0.57, not 0.5699999928474426)."""
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v == 0.0 and math.copysign(1.0, v) < 0:
            return "-0.0"
        if bits == 32:
            return str(np.float32(v))
        if bits == 16:
            return str(np.float16(v))
        return repr(v)
    return str(v)

_STRUCTS: dict = {}


def _struct(fmt: str) -> struct.Struct:
    """One compiled struct per format (a field read is the parsers' hot path)."""
    st = _STRUCTS.get(fmt)
    if st is None:
        st = _STRUCTS[fmt] = struct.Struct(fmt)
    return st


class Cursor:
    """Reads fields from `source` between `pos` and `end`, appending nodes to `node`."""

    def __init__(self, source, offset: int = 0, end: Optional[int] = None,
                 node: Optional[Node] = None, endian: str = "<", ctx=None,
                 limits: Optional[Limits] = None, depth: int = 0):
        self.limits = limits if limits is not None else Limits()
        self.depth = depth
        self.source = source
        self.pos = offset
        self.end = source.size if end is None else min(end, source.size)
        self.declared_end = source.size if end is None else end
        self.node = node if node is not None else Node("root", "struct", source, offset, 0)
        self.endian = endian
        self.ctx = ctx

    # ---- position --------------------------------------------------------------------
    @property
    def remaining(self) -> int:
        return max(0, self.end - self.pos)

    def at_end(self) -> bool:
        return self.pos >= self.end

    def peek(self, n: int) -> bytes:
        return self.source.read(self.pos, min(n, self.remaining))

    def peek_prim(self, kind: str, at: Optional[int] = None):
        code, size, _ = _PRIMS[kind]
        off = self.pos if at is None else at
        if off + size > self.end:
            return None
        raw = self.source.read(off, size)
        return struct.unpack(self.endian + code, raw)[0] if len(raw) == size else None

    def sub(self, size: int, node: Optional[Node] = None) -> "Cursor":
        """A cursor over the next `size` bytes (not advancing this one)."""
        return Cursor(self.source, self.pos, self.pos + size, node or self.node, self.endian,
                      self.ctx, self.limits, self.depth)

    def _add(self, n: Node) -> Node:
        """Attach a node, counting it against the parse's node budget."""
        lim = self.limits
        lim.nodes += 1
        if lim.nodes > lim.max_nodes:
            self.stop("node limit reached",
                      f"more than {lim.max_nodes} nodes: the remaining bytes are shown as one "
                      f"leaf (a limit like ImHex's pattern limit)")
        self.node.add(n)
        return n

    # ---- errors ----------------------------------------------------------------------
    def stop(self, name: str, message: str) -> NoReturn:
        """End this range with a warning leaf over its remaining bytes (a limit was hit,
        not an error in the data)."""
        n = self.remaining
        leaf = Node(name, "unparsed", self.source, self.pos, n, status=WARNING, message=message,
                    display=hex_preview(self.source.read(self.pos, min(n, 16))) if n else "")
        self.node.add(leaf)
        self.pos += n
        raise ParseStop(leaf)

    def fail(self, name: str, message: str, size: Optional[int] = None) -> NoReturn:
        """Record an error node at the current offset covering `size` bytes (default: the
        rest of this cursor's range) and stop parsing this range."""
        n = self.remaining if size is None else max(0, min(size, self.remaining))
        err = Node(name, "error", self.source, self.pos, n, status=ERROR, message=message,
                   display=hex_preview(self.source.read(self.pos, min(n, 16))) if n else "")
        self.node.add(err)
        self.pos += n
        raise ParseStop(err)

    def need(self, name: str, size: int, what: str) -> None:
        """Stop with a located error when fewer than `size` bytes remain."""
        if size > self.remaining:
            where = "end of file" if self.end >= self.source.size else "end of its container"
            self.fail(name, f"{name}: expected {what} ({size} bytes), found {self.remaining} "
                            f"bytes before the {where}")

    def check(self, node: Node, ok: bool, message: str, status: Status = ERROR) -> bool:
        if not ok:
            node.mark(status, message)
        return ok

    # ---- fields ----------------------------------------------------------------------
    def prim(self, kind: str, name: str, doc: Optional[FieldDoc] = None,
             enum: Optional[dict] = None, display: Optional[str] = None,
             node_kind: Optional[str] = None) -> Node:
        code, size, label = _PRIMS[kind]
        if size > self.end - self.pos:
            self.need(name, size, label)
        raw = self.source.read(self.pos, size)
        if len(raw) < size:   # the source read short (a remote read failed): say why
            self.fail(name, f"{name}: {size} bytes at offset {self.pos} could not be read: "
                            f"{self.source.last_error or 'the source ended early'}")
        v = _struct(self.endian + code).unpack(raw)[0]
        if kind[0] == "f":
            v = float(v)
        text = display
        nk = node_kind or "field"
        if enum is not None:
            nk = "enum"
            label_name = enum.get(v)
            text = f"{v} ({label_name})" if label_name is not None else f"{v} (unknown)"
        elif text is None:
            text = format_scalar(v, size * 8)
        n = Node(name, nk, self.source, self.pos, size, value=v, display=text, doc=doc, type=label)
        if enum is not None and enum.get(v) is None:
            n.mark(WARNING, f"{name}: unknown value {v}; known: "
                            + ", ".join(f"{k}={n_}" for k, n_ in list(enum.items())[:24]))
        self._add(n)
        self.pos += size
        return n

    def u8(self, name, doc=None, **kw): return self.prim("u8", name, doc, **kw)
    def u16(self, name, doc=None, **kw): return self.prim("u16", name, doc, **kw)
    def u32(self, name, doc=None, **kw): return self.prim("u32", name, doc, **kw)
    def u64(self, name, doc=None, **kw): return self.prim("u64", name, doc, **kw)
    def i8(self, name, doc=None, **kw): return self.prim("i8", name, doc, **kw)
    def i32(self, name, doc=None, **kw): return self.prim("i32", name, doc, **kw)
    def i64(self, name, doc=None, **kw): return self.prim("i64", name, doc, **kw)
    def f64(self, name, doc=None, **kw): return self.prim("f64", name, doc, **kw)

    def boolean(self, name: str, doc: Optional[FieldDoc] = None) -> Node:
        n = self.prim("u8", name, doc, node_kind="flag")
        v = n.value
        n.value = bool(v)
        n.display = "true" if v == 1 else "false" if v == 0 else f"{v} (not 0/1)"
        n.type = "bool"
        if v not in (0, 1):
            n.mark(WARNING, f"{name}: expected 0 or 1, found {v}")
        return n

    def field(self, name: str, size: int, value=None, display: Optional[str] = None,
              kind: str = "field", doc: Optional[FieldDoc] = None, type: Optional[str] = None,
              what: Optional[str] = None) -> Node:
        """A node over the next `size` bytes with a value the caller computed."""
        self.need(name, size, what or f"{size} bytes")
        n = Node(name, kind, self.source, self.pos, size, value=value, display=display,
                 doc=doc, type=type)
        self._add(n)
        self.pos += size
        return n

    def raw(self, name: str, size: int, doc: Optional[FieldDoc] = None, kind: str = "bytes",
            what: Optional[str] = None) -> Node:
        self.need(name, size, what or f"{size} bytes")
        data = self.source.read(self.pos, min(size, 64))
        return self.field(name, size, None, hex_preview(data, 16) if size else "(empty)",
                          kind, doc, f"uint8[{size}]")

    def string(self, name: str, size: int, doc: Optional[FieldDoc] = None,
               encoding: str = "utf-8") -> Node:
        self.need(name, size, f"a {size}-byte string")
        data = self.source.read(self.pos, size)
        try:
            text = data.decode(encoding)
            bad = None
        except UnicodeDecodeError as e:
            text = data.decode(encoding, errors="replace")
            bad = f"{name}: invalid {encoding} at byte {e.start}"
        n = self.field(name, size, text, repr(text) if size else "''", "string", doc,
                       f"char[{size}]")
        if bad:
            n.mark(WARNING, bad)
        return n

    def length(self, kind: str, name: str, item_size: int = 1, doc: Optional[FieldDoc] = None,
               what: str = "items") -> Node:
        """A count or length field whose items must fit in the remaining bytes.

        An impossible count (more items than bytes could hold) marks the field as an error
        and stops: nothing is ever allocated from it."""
        n = self.prim(kind, name, doc)
        v = n.value
        if item_size and v * item_size > self.remaining:
            n.mark(ERROR, f"{name}: {v} {what} × {item_size} B = {v * item_size} B, but only "
                          f"{self.remaining} bytes remain")
            self.fail(f"{name} (cannot be honoured)",
                      f"{self.remaining} bytes that {name} = {v} cannot describe")
        return n

    def array(self, name: str, kind: str, count: int, doc: Optional[FieldDoc] = None,
              item_name: str = "{i}", node_kind: str = "array",
              item_doc: Optional[FieldDoc] = None) -> Node:
        """`count` primitives as one node with lazy children (one per item)."""
        code, size, label = _PRIMS[kind]
        self.need(name, count * size, f"{count} × {label}")
        dt = np.dtype(self.endian + code)
        arr = self.source.array(self.pos, count, dt)
        base = self.pos
        src = self.source
        fmt = kind

        def make(i: int, arr=arr) -> Node:
            v = arr[i].item()
            return Node(item_name.format(i=i + 1, i0=i), "field", src, base + i * size, size,
                        value=v, display=format_scalar(v, size * 8), type=label, doc=item_doc)

        value = arr.tolist() if count <= MAX_VALUE_LIST else None
        disp = _summary(arr, count)
        n = Node(name, node_kind, src, base, count * size, value=value, display=disp, doc=doc,
                 type=f"{label}[{count}]", data=arr)
        n.set_lazy(LazyChildren(count, make, elements=True))
        self._add(n)
        self.pos += count * size
        del fmt
        return n

    def group(self, name: str, fn: Callable[["Cursor"], object], size: Optional[int] = None,
              kind: str = "struct", doc: Optional[FieldDoc] = None, value=None,
              display: Optional[str] = None) -> Node:
        """Parse a sub-structure with `fn(sub_cursor)` into its own node.

        With `size`, the group owns exactly those bytes: a failure inside stays inside,
        unread bytes become an 'unparsed' leaf, and the caller continues after them."""
        start = self.pos
        if self.depth >= self.limits.max_depth:
            self.stop("depth limit reached",
                      f"{name}: nested deeper than {self.limits.max_depth} levels; the rest is "
                      f"shown as one leaf (a limit like ImHex's recursion limit)")
        g = Node(name, kind, self.source, start, 0, value=value, display=display, doc=doc)
        self._add(g)
        limit = self.end if size is None else min(self.end, start + size)
        sub = Cursor(self.source, start, limit, g, self.endian, self.ctx, self.limits,
                     self.depth + 1)
        if size is not None and start + size > self.end:
            # The declared size runs past the container: parse what is there, then report.
            pass
        try:
            fn(sub)
        except ParseStop:
            if size is None:
                g.size = sub.pos - start
                self.pos = sub.pos
                raise
        if size is None:
            g.size = sub.pos - start
        else:
            if sub.pos < limit:
                leftover = Node("unparsed", "unparsed", self.source, sub.pos, limit - sub.pos,
                                display=hex_preview(self.source.read(sub.pos, 16)),
                                status=WARNING,
                                message=f"{limit - sub.pos} bytes inside {name} not explained "
                                        f"by its format")
                g.add(leftover)
            g.size = limit - start
            if start + size > self.end:
                g.mark(ERROR, f"{name}: declared {size} bytes, only {self.end - start} present")
        self.pos = start + g.size
        return g


def _summary(arr: np.ndarray, count: int) -> str:
    if count == 0:
        return "[]"
    bits = arr.dtype.itemsize * 8
    head = ", ".join(format_scalar(x, bits) for x in arr[:8].tolist())
    return f"[{head}{', …' if count > 8 else ''}] ({count} items)"

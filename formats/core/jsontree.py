"""Annotated JSON: every key and every value a node with its byte range.

A small tokenizer over the raw bytes records where each token starts and ends, so the hex
view can highlight `"dtype"` or the `3` in `"chunks": [3]`. Python's `json` decodes the
individual strings and numbers (escapes, exponents) but never the whole text, so a broken
file still gives the nodes up to the offending byte, then one error node there.

Shape of the tree (names are the JSON keys; array elements are named `[0]`, `[1]`, ...):

- an object or array is a node whose children are its members or elements, plus `syntax`
  padding leaves for braces, brackets, commas, colons and whitespace;
- an object member is one node covering `"key": value`: a `key` leaf, a syntax leaf, then
  either a `value` leaf (scalar) or the container's own children;
- an array element that is a scalar is itself the leaf.

`node.data` of an object node is `{key: member node}` and of an array node the list of
element nodes, so format code can find members even when a key is called "syntax".
`parse(...)` returns a `JsonDoc` with the root node and the decoded Python value (None
when the text is not valid JSON; `ok` says which).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .fielddoc import doc
from .findings import SIZE_OVER_LIMIT
from .node import ERROR, OK, Node, hex_preview

D_SYNTAX = doc("JSON punctuation and whitespace: braces, brackets, commas, colons, blanks")
D_KEY = doc("Object key: the member's name as a JSON string")

MAX_NESTING = 200
# A metadata document bigger than this is not decoded (a finding says so): the largest real
# ones (anndata's v3 root with inline consolidated metadata, ~73 KB) are far below it.
MAX_DOCUMENT_BYTES = 16 << 20
_VALUE_BYTES = 4096  # containers larger than this keep value None (display only)

_WS = b" \t\n\r"
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_LITERALS = ((b"true", True), (b"false", False), (b"null", None),
             (b"NaN", float("nan")), (b"Infinity", float("inf")),
             (b"-Infinity", float("-inf")))
_KIND = {dict: "struct", list: "array", str: "string", bool: "flag"}


class JsonError(Exception):
    def __init__(self, pos: int, message: str):
        super().__init__(message)
        self.pos = pos
        self.message = message


@dataclass
class JsonDoc:
    node: Node
    value: Any
    ok: bool
    error: Optional[Node] = None


def _compact(v, limit: int = 80) -> str:
    try:
        text = json.dumps(v, separators=(",", ":"), ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(v)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _kind_of(v) -> str:
    if isinstance(v, bool):
        return "flag"
    return _KIND.get(type(v), "field")


class _Parser:
    def __init__(self, source, start: int, end: int):
        self.src = source
        self.base = start
        self.buf = source.read(start, end - start)
        self.n = len(self.buf)
        self.bad: dict = {}  # offset: why the scalar there could not be decoded
        self.open: list = []  # containers being parsed (fixed up on error)

    # ---- helpers ---------------------------------------------------------------------
    def ws(self, i: int) -> int:
        buf, n = self.buf, self.n
        while i < n and buf[i] in _WS:
            i += 1
        return i

    def found(self, i: int) -> str:
        if i >= self.n:
            return "end of file"
        return repr(self.buf[i:i + 12].decode("latin-1"))

    def node(self, name, kind, a, b, value=None, display=None, d=None) -> Node:
        return Node(name, kind, self.src, self.base + a, b - a, value=value,
                    display=display, doc=d)

    # ---- grammar ---------------------------------------------------------------------
    def scalar(self, i: int):
        """(python value, end) of the scalar at i, or raise JsonError."""
        buf = self.buf
        c = buf[i:i + 1]
        if c == b'"':
            m = _STRING.match(buf, i)
            if m is None:
                raise JsonError(i, "unterminated string")
            try:
                return json.loads(m.group().decode("utf-8")), m.end()
            except (UnicodeDecodeError, ValueError) as e:
                raise JsonError(i, f"invalid string ({str(e).split(':')[0]})")
        for lit, v in _LITERALS:
            if buf.startswith(lit, i):
                return v, i + len(lit)
        m = _NUMBER.match(buf, i)
        if m is not None and m.end() > i:
            text = m.group()
            try:
                v = float(text) if (b"." in text or b"e" in text or b"E" in text) else int(text)
            except ValueError:  # over Python's int digit limit: this value only is bad
                self.bad[i] = f"a number of {len(text)} digits: too long to decode"
                v = None
            return v, m.end()
        raise JsonError(i, f"expected a JSON value, found {self.found(i)}")

    def value_into(self, parent: Node, name: str, i: int, depth: int, member_start=None,
                   key_node=None):
        """Parse the value at i as a child of `parent`; returns (python value, end)."""
        c = self.buf[i:i + 1]
        start = i if member_start is None else member_start
        if c in (b"{", b"["):
            if depth > MAX_NESTING:
                raise JsonError(i, f"nesting deeper than {MAX_NESTING} levels")
            node = self.node(name, "struct" if c == b"{" else "array", start, self.n)
            parent.add(node)
            if key_node is not None:
                node.add(key_node)
            self.open.append(node)
            v, end = (self.obj if c == b"{" else self.arr)(node, i, depth + 1)
            self.open.pop()
            node.size = end - start
            node.value = v if end - i <= _VALUE_BYTES else None
            node.display = _compact(v)
            return v, end
        v, end = self.scalar(i)
        kind = _kind_of(v)
        disp = self.buf[i:end].decode("utf-8", "replace")
        leaf = self.node(name if member_start is None else "value", kind, i, end, v, disp)
        bad = self.bad.pop(i, None)
        if bad is not None:
            leaf.mark(ERROR, f"{bad} (at byte {self.base + i})")
        if member_start is None:
            parent.add(leaf)
        else:
            node = self.node(name, kind, start, end, v, disp)
            parent.add(node)
            node.add(key_node)
            node.add(leaf)
        return v, end

    def obj(self, node: Node, i: int, depth: int):
        out: Dict[str, object] = {}
        members: Dict[str, Node] = {}
        node.data = members
        i = self.ws(i + 1)
        if self.buf[i:i + 1] == b"}":
            return out, i + 1
        while True:
            if self.buf[i:i + 1] != b'"':
                raise JsonError(i, f"expected a key (a string), found {self.found(i)}")
            key, kend = self.scalar(i)
            key_node = self.node("key", "string", i, kend, key, repr(key), D_KEY)
            j = self.ws(kend)
            if self.buf[j:j + 1] != b":":
                raise JsonError(j, f"expected ':' after key {key!r}, found {self.found(j)}")
            j = self.ws(j + 1)
            if j >= self.n:
                raise JsonError(j, f"expected the value of {key!r}, found end of file")
            try:
                v, i = self.value_into(node, key, j, depth,
                                       member_start=key_node.offset - self.base,
                                       key_node=key_node)
            except JsonError:
                if key_node.parent is None:
                    node.add(key_node)
                raise
            out[key] = v
            members[key] = node.children[-1]
            i = self.ws(i)
            c = self.buf[i:i + 1]
            if c == b"}":
                return out, i + 1
            if c != b",":
                raise JsonError(i, f"expected ',' or '}}' in an object, found {self.found(i)}")
            i = self.ws(i + 1)

    def arr(self, node: Node, i: int, depth: int):
        out: List[object] = []
        elems: List[Node] = []
        node.data = elems
        i = self.ws(i + 1)
        if self.buf[i:i + 1] == b"]":
            return out, i + 1
        while True:
            if i >= self.n:
                raise JsonError(i, "expected an array element, found end of file")
            v, i = self.value_into(node, f"[{len(out)}]", i, depth)
            out.append(v)
            elems.append(node.children[-1])
            i = self.ws(i)
            c = self.buf[i:i + 1]
            if c == b"]":
                return out, i + 1
            if c != b",":
                raise JsonError(i, f"expected ',' or ']' in an array, found {self.found(i)}")
            i = self.ws(i + 1)


def add_syntax(node: Node) -> None:
    """Cover the bytes between a JSON node's children with `syntax` padding leaves."""
    if node.is_lazy:
        return
    kids = [c for c in node.children if c.source is node.source]
    if not kids:
        return
    for c in kids:
        add_syntax(c)
    pos, gaps = node.offset, []
    for c in sorted(kids, key=lambda c: c.offset):
        if c.offset > pos:
            gaps.append((pos, c.offset))
        pos = max(pos, c.end)
    if pos < node.end:
        gaps.append((pos, node.end))
    for a, b in gaps:
        text = node.source.read(a, min(b - a, 24)).decode("latin-1")
        node.add(Node("syntax", "padding", node.source, a, b - a, display=repr(text)[1:-1],
                      doc=D_SYNTAX))
    if gaps:
        node.order_children()


def parse(source, root: Node, offset: int = 0, end: Optional[int] = None) -> JsonDoc:
    """Parse `source[offset:end]` as one JSON text into `root` (its children become the top
    value's members, or one `value` leaf for a scalar). Never raises."""
    end = source.size if end is None else min(end, source.size)
    if end - offset > MAX_DOCUMENT_BYTES:
        err = Node("too large", "error", source, offset, end - offset, status=ERROR,
                   code=SIZE_OVER_LIMIT,
                   message=f"a JSON document of {end - offset} bytes, over the "
                           f"{MAX_DOCUMENT_BYTES}-byte limit for metadata: not decoded")
        root.add(err)
        return JsonDoc(root, None, False, err)
    p = _Parser(source, offset, end)
    err_node = None
    value, ok = None, False
    try:
        i = p.ws(0)
        if i >= p.n:
            raise JsonError(i, "empty file: expected a JSON value")
        c = p.buf[i:i + 1]
        if c in (b"{", b"["):
            p.open.append(root)
            value, j = (p.obj if c == b"{" else p.arr)(root, i, 1)
            p.open.pop()
        else:
            value, j = p.value_into(root, "value", i, 1)
        j = p.ws(j)
        if j < p.n:
            raise JsonError(j, f"extra bytes after the JSON value: {p.found(j)}")
        ok = True
        root.value = value if j <= _VALUE_BYTES else None
        if root.display is None:
            root.display = _compact(value)
    except JsonError as e:
        for n in p.open:
            n.size = p.base + p.n - n.offset
        target = p.open[-1] if p.open else root
        err_node = Node("invalid JSON", "error", source, p.base + e.pos, p.n - e.pos,
                        status=ERROR, message=f"invalid JSON at byte {p.base + e.pos}: {e.message}",
                        display=hex_preview(p.buf[e.pos:e.pos + 16]))
        if err_node.size == 0:
            err_node.message = f"{err_node.message} (the file ends here)"
        target.add(err_node)
        value = None
    except RecursionError:
        err_node = Node("invalid JSON", "error", source, offset, 0, status=ERROR,
                        message="JSON nested too deeply to parse")
        root.add(err_node)
    add_syntax(root)
    return JsonDoc(root, value, ok, err_node)


def member(node: Optional[Node], key: str) -> Optional[Node]:
    """The member node `key` of an object node (None when absent or not an object)."""
    if node is None or not isinstance(node.data, dict):
        return None
    return node.data.get(key)


def element(node: Optional[Node], i: int) -> Optional[Node]:
    if node is None or not isinstance(node.data, list) or not 0 <= i < len(node.data):
        return None
    return node.data[i]


def value_node(node: Optional[Node]) -> Optional[Node]:
    """The node holding a member's value bytes (its `value` leaf for scalars)."""
    if node is None:
        return None
    if isinstance(node.data, (dict, list)):
        return node
    v = node.find("value")
    return v if v is not None else node


__all__ = ["parse", "JsonDoc", "member", "element", "value_node", "add_syntax", "OK"]

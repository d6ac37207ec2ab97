"""Serialized query conditions: delete (`.del`) and update (`.upd`) commit payloads.

format_spec/delete_commit_file.md and update_commit_file.md, checked against
`tiledb/sm/query/deletes_and_updates/serialization.cc`:

- expression node: `u8 node type (0) | u8 combination op | u64 num children | children…`
- value node: `u8 node type (1) | u8 op | u32 field name size | name | u64 value size | value`
  and, for the set ops IN / NOT_IN, `| u64 offsets size | offsets (uint64)`.

A delete stores the **negated** condition: `DELETE WHERE v < 0` is stored as `v >= 0` (the
cells to keep). An update payload is a condition followed by the update values:
`u64 count | per value: u64 field name size, name, u64 value size, value`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional

from ...core.cursor import Cursor, ParseStop
from ...core.fielddoc import doc
from ...core.node import ERROR, WARNING, hex_preview
from ...filters.enums import (
    DATATYPE_NAMES,
    QUERY_CONDITION_COMBINATION_OPS,
    QUERY_CONDITION_OPS,
    TEXT_TYPES,
    format_value,
)
from ..model.array_model import tiledb_context

SPEC = "delete_commit_file.md"
# Below the engine's generic nesting limit (formats.core.cursor.Limits.MAX_DEPTH = 64), so a
# runaway condition gets this specific error rather than the generic limit warning.
MAX_DEPTH = 48

NODE_TYPES = {0: "EXPRESSION", 1: "VALUE"}
OP_SYMBOLS = {0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!=", 6: "in", 7: "not in"}
SET_OPS = (6, 7)

D_NODE = doc("A condition node: an expression (combining its children) or a value "
             "comparison", spec=SPEC)
D_NODE_TYPE = doc("Node type: 0 for an expression node, 1 for a value node", spec=SPEC)
D_COMBINATION = doc("Combination op: how the children combine: AND(0), OR(1), NOT(2)",
                    spec=SPEC)
D_NUM_CHILDREN = doc("Num children: number of child nodes that follow", spec=SPEC)
D_OP = doc("Op: the comparison: LT(0), LE(1), GT(2), GE(3), EQ(4), NE(5), and the set ops "
           "IN(6), NOT_IN(7)", spec=SPEC,
           note="the document lists only 0–5; IN/NOT_IN (6/7) add an offsets field")
D_FIELD_SIZE = doc("Field name size: bytes of the field (attribute or dimension) name",
                   spec=SPEC)
D_FIELD = doc("Field name value: the attribute or dimension compared", spec=SPEC)
D_VALUE_SIZE = doc("Value size: bytes of the value compared against", spec=SPEC)
D_VALUE = doc("Value content: the raw value, in the field's datatype (typed here when the "
              "array schema is known)", spec=SPEC)
D_OFFSETS_SIZE = doc("Offsets size: bytes of the uint64 offsets splitting the set members "
                     "(IN / NOT_IN only)", spec=SPEC,
                     note="not in the document; written by serialization.cc for set ops")
D_OFFSETS = doc("Offsets: start of each set member in the value (uint64)", spec=SPEC,
                note="not in the document")
D_CONDITION = doc("The delete condition, stored negated: the cells it matches are kept; the "
                  "delete removes the others", spec=SPEC)
D_UPD_CONDITION = doc("The update condition, stored negated like a delete's: the cells it "
                      "matches are left alone, the update was meant for the others. libtiledb "
                      "2.30 readers apply it as a delete condition (those cells vanish from "
                      "reads of fragments written at or before the commit) and never apply "
                      "the values", spec="update_commit_file.md",
                      note="checked on `.upd` files libtiledb 2.30 wrote through its "
                           "experimental update query (tests/data/tiledb_updates)")
D_UPD_COUNT = doc("Number of values: update values that follow", spec="update_commit_file.md")
D_UPD_VALUE = doc("Update value: a field and the value written into it",
                  spec="update_commit_file.md")
D_UPD_NAME_SIZE = doc("Field name size", spec="update_commit_file.md",
                      note="uint64 here, while the condition's field name size is uint32")
D_UPD_NAME = doc("Field name value", spec="update_commit_file.md")
D_UPD_VALUE_SIZE = doc("Value size", spec="update_commit_file.md")
D_UPD_VALUE_CONTENT = doc("Value content", spec="update_commit_file.md")


@dataclass
class ConditionNode:
    is_expr: bool
    op: Optional[int] = None              # QueryConditionOp (value node)
    combination_op: Optional[int] = None  # AND/OR/NOT (expression node)
    field_name: str = ""
    value_raw: bytes = b""
    value: Any = None
    offsets: Optional[List[int]] = None
    children: List["ConditionNode"] = field(default_factory=list)

    def text(self) -> str:
        if not self.is_expr:
            op = OP_SYMBOLS.get(self.op, f"op{self.op}") if self.op is not None else "op?"
            return f"{self.field_name} {op} {_vtext(self.value)}"
        comb = QUERY_CONDITION_COMBINATION_OPS.get(self.combination_op, f"op{self.combination_op}") \
            if self.combination_op is not None else "op?"
        if comb == "NOT":
            return "NOT (" + " AND ".join(c.text() for c in self.children) + ")"
        return "(" + f" {comb} ".join(c.text() for c in self.children) + ")"


def _vtext(v) -> str:
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex() if v else "''"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_vtext(x) for x in v) + "]"
    return str(v)


def _field_type(ctx, name: str) -> Optional[int]:
    """The field's datatype in the schema parsed against, else in any schema of the array: a
    delete or update commit was checked against the schema of its own time, and a later
    evolution may have dropped the field (libtiledb keeps the commit and reads the array)."""
    tc = tiledb_context(ctx) if ctx is not None else None
    if tc is None or tc.schema is None:
        return None
    schemas = [tc.schema] + (list(tc.array.schemas.values()) if tc.array is not None else [])
    for schema in schemas:
        f = schema.field(name)
        if f is not None:
            return f.datatype
    return None


def _typed_value(raw: bytes, dt: Optional[int], offsets: Optional[List[int]]):
    """(value, display) of a condition value, typed by `dt` when known."""
    if offsets is not None:
        ends = offsets[1:] + [len(raw)]
        members = [_typed_value(raw[a:b], dt, None)[0] for a, b in zip(offsets, ends)]
        return members, "{" + ", ".join(_vtext(m) for m in members) + "}"
    if dt is None:
        try:
            text = raw.decode("ascii")
            if text.isprintable():
                return raw, f"{hex_preview(raw)} ({text!r} if a string)"
        except UnicodeDecodeError:
            pass
        return raw, hex_preview(raw) if raw else "(empty)"
    v, text = format_value(dt, raw)
    if isinstance(v, list) and len(v) == 1:
        v = v[0]
    return v, text


def parse_condition(cur: Cursor, ctx=None, name: str = "Condition", depth: int = 0,
                    node_doc=D_NODE) -> ConditionNode:
    """One condition node (and its subtree) as a group node `name`; raises ParseStop when
    the bytes stop short."""
    ctx = ctx if ctx is not None else cur.ctx
    out = ConditionNode(False)
    if depth > MAX_DEPTH:
        cur.fail(name, f"condition nested deeper than {MAX_DEPTH} levels", 0)

    def body(c: Cursor):
        nt = c.u8("Node type", D_NODE_TYPE, enum=NODE_TYPES)
        if nt.value == 0:
            out.is_expr = True
            op = c.u8("Combination op", D_COMBINATION, enum=QUERY_CONDITION_COMBINATION_OPS)
            out.combination_op = op.value
            n = c.length("u64", "Num children", 10, D_NUM_CHILDREN, "children").value
            if n == 0:
                c.node.mark(WARNING, "an expression node without children")
            for i in range(n):
                out.children.append(parse_condition(c, ctx, f"Children {i + 1}", depth + 1))
        elif nt.value == 1:
            op = c.u8("Op", D_OP, enum={k: v for k, v in QUERY_CONDITION_OPS.items() if k < 8})
            out.op = op.value
            fn = c.length("u32", "Field name size", 1, D_FIELD_SIZE, "bytes").value
            fnode = c.string("Field name value", fn, D_FIELD)
            out.field_name = fnode.value
            vs = c.length("u64", "Value size", 1, D_VALUE_SIZE, "bytes").value
            out.value_raw = c.source.read(c.pos, vs)
            vnode = c.field("Value content", vs, None, None, "bytes", D_VALUE, f"uint8[{vs}]")
            dt = _field_type(ctx, out.field_name)
            if out.op in SET_OPS:
                os_ = c.length("u64", "Offsets size", 1, D_OFFSETS_SIZE, "bytes")
                if os_.value % 8:
                    os_.mark(ERROR, f"Offsets size {os_.value} is not a multiple of 8")
                    c.fail("Offsets", "not whole uint64 offsets", os_.value)
                arr = c.array("Offsets", "u64", os_.value // 8, D_OFFSETS)
                offs = [int(x) for x in arr.data.tolist()]
                if offs and (offs[0] != 0 or any(b < a for a, b in zip(offs, offs[1:]))
                             or offs[-1] > vs):
                    arr.mark(ERROR, "Offsets: not increasing from 0 within the value")
                else:
                    out.offsets = offs
            out.value, text = _typed_value(out.value_raw, dt, out.offsets)
            vnode.display = text
            if dt is not None:
                vnode.type = f"{DATATYPE_NAMES.get(dt, '?')} ({vs} B)"
                vnode.kind = "string" if dt in TEXT_TYPES else "field"
                if not isinstance(out.value, (bytes, bytearray)):
                    vnode.value = out.value
            if ctx is not None and tiledb_context(ctx).schema is not None and dt is None:
                fnode.mark(WARNING, f"field {out.field_name!r} is not in the array schema")
        else:
            nt.mark(ERROR, f"Node type {nt.value}: neither 0 (expression) nor 1 (value); "
                           f"the rest cannot be read")
            c.fail("Condition node", "unknown node type")

    g = cur.group(name, body, doc=node_doc)
    g.value = None
    try:
        g.display = out.text()
    except RecursionError:  # pragma: no cover - bounded by MAX_DEPTH
        g.display = "…"
    return out


def parse_delete_condition(cur: Cursor, ctx=None) -> Optional[ConditionNode]:
    """A `.del` payload: one (negated) condition tree. None when it is cut short."""
    try:
        cond = parse_condition(cur, ctx, "Delete condition", node_doc=D_CONDITION)
    except ParseStop:
        return None
    g = cur.node.children[-1] if cur.node.children else None
    if g is not None and g.name == "Delete condition":
        g.display = f"keep {cond.text()}  (deletes NOT {cond.text()})"
    return cond


@dataclass
class UpdateValue:
    field_name: str
    value_raw: bytes
    value: Any = None


def parse_update(cur: Cursor, ctx=None):
    """An `.upd` payload: (condition, [UpdateValue]) or None when cut short."""
    ctx = ctx if ctx is not None else cur.ctx
    values: List[UpdateValue] = []
    try:
        cond = parse_condition(cur, ctx, "Update condition", node_doc=D_UPD_CONDITION)
        n = cur.length("u64", "Number of values", 16, D_UPD_COUNT, "values").value
        for i in range(n):
            def one(c: Cursor):
                k = c.length("u64", "Field name size", 1, D_UPD_NAME_SIZE, "bytes").value
                name = c.string("Field name value", k, D_UPD_NAME).value
                vs = c.length("u64", "Value size", 1, D_UPD_VALUE_SIZE, "bytes").value
                raw = c.source.read(c.pos, vs)
                v, text = _typed_value(raw, _field_type(ctx, name), None)
                c.field("Value content", vs, None if isinstance(v, bytes) else v, text,
                        "bytes", D_UPD_VALUE_CONTENT, f"uint8[{vs}]")
                values.append(UpdateValue(name, raw, v))
                c.node.display = f"{name} = {_vtext(v)}"
            cur.group(f"Update value {i + 1}", one, doc=D_UPD_VALUE)
    except ParseStop:
        return None
    return cond, values

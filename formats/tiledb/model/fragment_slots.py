"""The slots of a fragment: one per attribute, the legacy `__coords`, one per dimension
(format ≥ 5), then `__timestamps` and the two delete-metadata slots when the footer says so."""
from __future__ import annotations

from typing import List, Optional

from .array_model import ArraySchema

SPECIAL_SLOTS = {"__timestamps": (10, 1), "__delete_timestamps": (10, 1),
                 "__delete_condition_index": (10, 1), "__coords": (None, 1)}


def slot_names(schema: Optional[ArraySchema], version: int, ts: bool, dl: bool,
                n: Optional[int] = None) -> List[str]:
    """Slot names in footer order; without a schema, `slot 1` … `slot n`."""
    if schema is not None:
        names = [a.name for a in schema.attributes] + ["__coords"]
        if version >= 5:
            names += [d.name for d in schema.dimensions]
        if ts:
            names.append("__timestamps")
        if dl:
            names += ["__delete_timestamps", "__delete_condition_index"]
        return names
    return [f"slot {i + 1}" for i in range(n or 0)]


def slot_field(schema: Optional[ArraySchema], name: str):
    """(datatype, cell_val_num) of a slot, or (None, 1) when unknown."""
    if schema is not None:
        f = schema.field(name)
        if f is not None:
            return f.datatype, f.cell_val_num
    return SPECIAL_SLOTS.get(name, (None, 1))

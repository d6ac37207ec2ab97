"""A guard against a reference-count bug of PySide6 6.12 on CPython 3.11.

PySide6 6.12.0's generated wrappers return `None` from void methods without taking a
reference (fine on CPython >= 3.12, where None is immortal). On 3.11 every call such as
`QPainter.fillRect`, `QLabel.setText` or `QWidget.update` drops one reference to None, and
after a few thousand calls the interpreter aborts with "none_dealloc: deallocating None"
(and, more rarely, "bool_dealloc" for True/False). PySide6 6.11.3 does not have the bug.
Making None's count huge, as CPython 3.12 does, keeps the window alive.
"""
from __future__ import annotations

import sys

_BIG = 1 << 40


def immortalize_none() -> None:
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return
    import ctypes

    for obj in (None, True, False):  # bools are dropped the same way in a few places
        ref = ctypes.c_ssize_t.from_address(id(obj))
        if ref.value < _BIG:
            ref.value += _BIG


immortalize_none()

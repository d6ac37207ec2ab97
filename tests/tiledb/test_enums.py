"""The typed enums are libtiledb's own: every value and name checked against tiledb-py's
bindings of the C API enums (the library that writes the bytes)."""
from __future__ import annotations

import pytest
import tiledb.libtiledb as L

from arrayscope.formats.filters import enums as E


@pytest.mark.parametrize("ours,theirs", [
    (E.Datatype, L.DataType), (E.FilterType, L.FilterType), (E.ArrayType, L.ArrayType),
    (E.Layout, L.LayoutType), (E.DataOrder, L.DataOrder), (E.Encryption, L.EncryptionType),
    (E.QueryConditionOp, L.QueryConditionOp), (E.WebpFormat, L.WebpInputFormat),
])
def test_enum_matches_libtiledb(ours, theirs):
    lib = {int(v): k for k, v in theirs.__members__.items()}
    for m in ours:
        if int(m) in lib:
            assert lib[int(m)] == m.name, (ours.__name__, int(m))
    # every value libtiledb defines is known here (the internal AES filter is ours only)
    assert set(lib) <= {int(m) for m in ours}


def test_name_tables_are_derived_from_the_enums():
    assert E.FILTER_TYPES[9] == "BYTESHUFFLE" and E.DATATYPE_NAMES[40] == "BLOB"
    assert E.Datatype.CHAR not in E.STRING_TYPES
    assert E.TEXT_TYPES == E.STRING_TYPES | {E.Datatype.CHAR}
    assert E.DATATYPES[E.Datatype.DATETIME_NS] == ("DATETIME_NS", 8, "<i8")
    assert E.DATETIME_UNITS[E.Datatype.DATETIME_AS] == "as" and E.TIME_UNITS[E.Datatype.TIME_HR] == "h"

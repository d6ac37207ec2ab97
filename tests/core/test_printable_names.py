"""Names from a dataset never spoof the output (issue 31): a TileDB group member named with a
newline, a NUL and `../` is printed escaped, on one line, by every command that names it."""
from __future__ import annotations

import numpy as np
import pytest
import tiledb

from arrayscope.explorer.cli import main
from arrayscope.formats.core.printable import printable, printable_member_path, printable_name

NAME = "../evil\nfake: line\x00x"


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("names") / "grp")
    tiledb.Group.create(root)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.int64))
    tiledb.Array.create(root + "/arr", tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64)]))
    with tiledb.open(root + "/arr", "w") as A:
        A[:] = np.arange(10)
    with tiledb.Group(root, "w") as g:
        g.add("arr", name=NAME, relative=True)
    with tiledb.Group(root) as g:   # what the library itself keeps of the name
        assert [m.name for m in g][0].startswith("../evil\nfake: line")
    return root


def test_escapes():
    assert printable("a\nb\x00") == "a\\x0ab\\x00"
    assert printable_name("../x\\y") == "..\\x2fx\\x5cy"
    assert printable_name("plain_name") == "plain_name"
    assert printable_member_path("ms/RNA/X/data") == "ms/RNA/X/data"
    assert printable_member_path("../a\nb") == "\\x2e\\x2e/a\\x0ab"


@pytest.mark.parametrize("argv", [["stats"], ["fragments"], ["values", "--field", "a"],
                                  ["dump"], ["verify"]])
def test_commands_print_the_member_name_escaped(group, capsys, argv):
    main([*argv, group])
    out = capsys.readouterr()
    text = out.out + out.err
    lines = text.splitlines()
    assert not any(line.startswith("fake: line") for line in lines), text[-3000:]
    assert "\x00" not in text
    if argv[0] in ("stats", "fragments"):
        assert "== \\x2e\\x2e/evil\\x0afake: line" in text, text[-3000:]

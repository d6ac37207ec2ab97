"""The window has no format knowledge: what it shows differently by format comes from the
plugin's declared members (`formats/core/plugin.py`, read through `formats/core/registry.py`), never
from a switch on a format's name."""
from __future__ import annotations

import ast
import os

from arrayscope.formats.core import registry
from tests.core.test_architecture import _modules
from tests.support.paths import REPO


def _format_switches(names) -> list:
    """`x == "zarr"`, `fmt in ("tiledb", ...)`, a table keyed by format names, a lookup by
    a `.format` attribute: each with its file and line."""
    bad = []
    for _module, path in _modules("explorer"):
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        where = os.path.relpath(path, REPO)
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                for side in [node.left, *node.comparators]:
                    consts = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                    if any(isinstance(c, ast.Constant) and c.value in names for c in consts):
                        bad.append(f"{where}:{node.lineno}: compares with a format name")
            elif isinstance(node, ast.Dict) and node.keys:
                if all(isinstance(k, ast.Constant) and k.value in names for k in node.keys):
                    bad.append(f"{where}:{node.lineno}: a table keyed by format names")
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Attribute) \
                    and node.slice.attr == "format":
                bad.append(f"{where}:{node.lineno}: a lookup by format name")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "get" and node.args \
                    and isinstance(node.args[0], ast.Attribute) and node.args[0].attr == "format":
                bad.append(f"{where}:{node.lineno}: a lookup by format name")
    return bad


def test_the_window_switches_on_no_format_name():
    names = {p.name for p in registry.plugins()}
    assert names >= {"tiledb", "zarr", "scdl"}
    assert _format_switches(names) == []


def test_the_rule_sees_a_switch(tmp_path, monkeypatch):
    """The walk above finds the forms it forbids (the old dock-title table among them)."""
    import tests.core.test_window_knows_no_format as me

    f = tmp_path / "explorer" / "bad.py"
    f.parent.mkdir()
    f.write_text('t = {"scdl": "Archive", "zarr": "Hierarchy"}.get(doc.format, "Array")\n'
                 'if fmt == "tiledb":\n    pass\n'
                 'w = TITLES[doc.format]\n')
    monkeypatch.setattr(me, "REPO", str(tmp_path))
    monkeypatch.setattr(me, "_modules", lambda folder: [("arrayscope.explorer.bad", str(f))])
    assert sorted(b.split(": ", 1)[1] for b in _format_switches({"tiledb", "zarr", "scdl"})) == [
        "a lookup by format name", "a lookup by format name", "a table keyed by format names",
        "compares with a format name"]


def test_plugins_declare_what_the_window_reads(tmp_path):
    by_name = {p.name: p for p in registry.plugins()}
    assert {n: by_name[n].browser_title for n in ("tiledb", "zarr", "scdl")} == {
        "tiledb": "Array", "zarr": "Hierarchy", "scdl": "Archive"}

    class Doc:
        format = "tiledb"

    frag = "__1700000012345_1700000012345_0123456789abcdef0123456789abcdef_22"
    assert registry.source_title(Doc, f"arr/__fragments/{frag}/a0.tdb") == "…12345/a0.tdb"
    assert registry.source_title(Doc, "arr/__schema/__1_1_abc_22") is None
    Doc.format = "zarr"
    assert registry.source_title(Doc, "grp/arr/c/0/1") == "grp/arr/c/0/1"
    assert registry.source_title(Doc, "arr/zarr.json") is None
    Doc.format = "scdl"
    assert registry.source_title(Doc, "archive/data.npy") is None
    assert registry.browser_title(None) == "Array"   # plain bytes: no plugin

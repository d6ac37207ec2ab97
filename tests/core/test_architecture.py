"""The layers hold (DESIGN.md "Layers"): `formats` never imports Qt or `explorer`; `explorer`
imports the core API of `formats`, never a format plugin module nor an oracle library.

An AST walk over every module: imports inside functions count too, relative imports are
resolved against the module's package."""
from __future__ import annotations

import ast
import os
from typing import Iterator, List, Tuple

from tests.support.paths import REPO

PLUGIN_PACKAGES = ("tiledb", "zarr", "scdl", "filters")           # under arrayscope.formats
ORACLES = ("tiledb", "zarr", "bionemo", "numcodecs", "tiledbsoma")  # the libraries tests compare with
QT = ("PySide6", "shiboken6", "shiboken")


def _modules(folder: str) -> Iterator[Tuple[str, str]]:
    """(dotted module name under arrayscope, file path) of every .py file in `folder`."""
    base = os.path.join(REPO, folder)
    for dirpath, dirnames, files in os.walk(base):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "__pycache__"))]
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, f), REPO)[:-3].replace(os.sep, ".")
                if rel.endswith(".__init__"):
                    rel = rel[: -len(".__init__")]
                yield "arrayscope." + rel, os.path.join(dirpath, f)


def imports_of(module: str, path: str) -> List[Tuple[int, str]]:
    """(line, absolute module name) of every import in the file, `from x import y` also
    giving `x.y` (y may be a submodule)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    is_pkg = path.endswith("__init__.py")
    package = module if is_pkg else module.rpartition(".")[0]
    out: List[Tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            out.append((node.lineno, target))
            out.extend((node.lineno, f"{target}.{a.name}") for a in node.names)
    return out


def _under(name: str, roots) -> bool:
    return any(name == r or name.startswith(r + ".") for r in roots)


def violations(folder: str, forbidden) -> List[str]:
    bad = []
    for module, path in _modules(folder):
        for line, name in imports_of(module, path):
            if _under(name, forbidden):
                bad.append(f"{os.path.relpath(path, REPO)}:{line}: imports {name}")
    return bad


def test_formats_never_imports_qt_or_the_window():
    assert violations("formats", QT + ("arrayscope.explorer",)) == []


def test_the_window_imports_no_format_plugin_nor_oracle():
    plugins = tuple(f"arrayscope.formats.{p}" for p in PLUGIN_PACKAGES)
    assert violations("explorer", plugins + ORACLES) == []


def test_runtime_code_imports_no_oracle_library():
    assert violations("formats", ORACLES) == []


def test_the_walk_sees_relative_and_nested_imports(tmp_path):
    pkg = tmp_path / "explorer"
    pkg.mkdir()
    f = pkg / "panel.py"
    f.write_text("def f():\n    from ..formats.tiledb import enums\n    import zarr\n")
    names = [n for _l, n in imports_of("arrayscope.explorer.panel", str(f))]
    assert "arrayscope.formats.tiledb" in names and "arrayscope.formats.tiledb.enums" in names
    assert "zarr" in names

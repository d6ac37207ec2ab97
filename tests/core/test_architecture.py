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


# The one place runtime code may use an oracle library: salvage writes a damaged fragment's
# intact cells back through libtiledb when tiledb-py is installed (the optional `salvage`
# extra); without it the fragment is left out whole (tests/salvage: tiledb blocked).
OPTIONAL_ORACLE_USERS = ("formats/salvage/libtiledb_write.py",)


def test_runtime_code_imports_no_oracle_library():
    bad = [v for v in violations("formats", ORACLES)
           if not v.startswith(OPTIONAL_ORACLE_USERS)]
    assert bad == []


def test_the_optional_oracle_user_imports_it_only_inside_functions():
    """Importing the salvage writer must work without tiledb-py: no module-level import."""
    path = os.path.join(REPO, OPTIONAL_ORACLE_USERS[0])
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not [n for n in top if any(_under(a.name, ORACLES) for a in n.names)
                or _under(getattr(n, "module", "") or "", ORACLES)]


def test_the_walk_sees_relative_and_nested_imports(tmp_path):
    pkg = tmp_path / "explorer"
    pkg.mkdir()
    f = pkg / "panel.py"
    f.write_text("def f():\n    from ..formats.tiledb import enums\n    import zarr\n")
    names = [n for _l, n in imports_of("arrayscope.explorer.panel", str(f))]
    assert "arrayscope.formats.tiledb" in names and "arrayscope.formats.tiledb.enums" in names
    assert "zarr" in names


# ---- other packages: public API only (issue 26) ----------------------------------------------
def _private_names(module: str, path: str) -> List[Tuple[int, str]]:
    """(line, name) of every import of another package's private module or name: a dotted
    segment after the first that starts with one underscore (`zstandard._cffi`,
    `lz4.block._block`), or a top-level module of one (`_zstd_cffi`). Also the literal names
    given to `importlib.import_module`."""
    names = list(imports_of(module, path))
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) \
                in ("import_module", "__import__") and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            names.append((node.lineno, node.args[0].value))
    return [(line, n) for line, n in names
            if n and not _under(n, ("arrayscope", "__future__"))
            and any(s.startswith("_") and not s.startswith("__") for s in n.split("."))]


def test_no_private_module_of_another_package():
    bad = [f"{os.path.relpath(path, REPO)}:{line}: imports {name}"
           for folder in ("formats", "explorer") for module, path in _modules(folder)
           for line, name in _private_names(module, path)]
    assert bad == []


def _loads(node: ast.Call) -> bool:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    return name in ("CDLL", "PyDLL", "LoadLibrary", "WinDLL")


def test_shared_libraries_are_the_systems_never_another_packages_file():
    """ctypes loads only what `ctypes.util.find_library` names (a system library, as a C
    program links it) or a literal library name — never a file inside an installed package
    (`some_module.__file__`, a path built from one)."""
    bad = []
    for folder in ("formats", "explorer"):
        for _module, path in _modules(folder):
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path)
            for fn in ast.walk(tree):
                if not isinstance(fn, (ast.FunctionDef, ast.Module)):
                    continue
                found = {t.id for a in ast.walk(fn) if isinstance(a, ast.Assign)
                         and isinstance(a.value, ast.Call) and "find_library" in ast.unparse(a.value)
                         for t in a.targets if isinstance(t, ast.Name)}
                for call in ast.walk(fn):
                    if not (isinstance(call, ast.Call) and _loads(call) and call.args):
                        continue
                    arg = call.args[0]
                    text = ast.unparse(arg)
                    ok = "__file__" not in text and (
                        "find_library" in text or isinstance(arg, ast.Constant)
                        or (isinstance(arg, ast.Name) and arg.id in found))
                    if not ok:
                        bad.append(f"{os.path.relpath(path, REPO)}:{call.lineno}: {text}")
    assert bad == []

"""The layers hold (DESIGN.md "Layers"): `formats` never imports Qt or `explorer`; `explorer`
imports the core API of `formats`, never a format plugin module nor an oracle library; the
core modules of `formats` never import a format plugin (they reach plugins through the
registry); and no import cycle among arrayscope's modules.

An AST walk over every module: imports inside functions count too (they run at run time,
only later), relative imports are resolved against the module's package."""
from __future__ import annotations

import ast
import functools
import os
from typing import Dict, Iterator, List, Set, Tuple

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
# ---- the core never imports a plugin ----------------------------------------------------------
# Core modules: `formats/*.py` (the engine's API, documents, nodes, verify's plan -> map ->
# merge). They reach a format through `registry` (the plugin's name as data), never by import.
def _core_modules() -> Iterator[Tuple[str, str]]:
    """The modules of formats/core/ (the other packages are plugins, `filters`, `accel`, or
    a feature over the formats: `salvage`)."""
    base = os.path.join(REPO, "formats", "core")
    for module, path in _modules("formats"):
        if os.path.dirname(path) == base:
            yield module, path


def test_the_core_never_imports_a_plugin():
    plugins = tuple(f"arrayscope.formats.{p}" for p in PLUGIN_PACKAGES)
    bad = [f"{os.path.relpath(path, REPO)}:{line}: imports {name}"
           for module, path in _core_modules()
           for line, name in imports_of(module, path) if _under(name, plugins)]
    assert bad == []


def test_no_plugin_imports_verify():
    """What a plugin's checks share with verify is in `verify_tally` and `findings`."""
    plugins = [m for m in _modules("formats")
               if any(m[0].startswith(f"arrayscope.formats.{p}.") or
                      m[0] == f"arrayscope.formats.{p}" for p in PLUGIN_PACKAGES)]
    bad = [f"{os.path.relpath(path, REPO)}:{line}: imports {name}"
           for module, path in plugins for line, name in imports_of(module, path)
           if name == "arrayscope.formats.core.verify" or name.startswith("arrayscope.formats.core.verify.")]
    assert bad == []


# ---- no import cycle ----------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def import_graph(folders=("formats", "explorer")) -> Dict[str, Set[str]]:
    """module -> the arrayscope modules it imports (anywhere in the file, but not under
    `if TYPE_CHECKING:`). `from package import name` is an edge to the submodule when `name`
    is one, else to the package (a package's own `__init__` running first is no cycle)."""
    mods = dict(m for folder in folders for m in _modules(folder))

    def nearest(name: str) -> str:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    graph: Dict[str, Set[str]] = {}
    for module, path in mods.items():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and
                       "TYPE_CHECKING" in ast.dump(node.test)
                       for sub in node.body for n in ast.walk(sub)}
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        out: Set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                out.update(nearest(a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1])
                    target = f"{base}.{node.module}" if node.module else base
                else:
                    target = node.module or ""
                for a in node.names:
                    full = f"{target}.{a.name}"
                    out.add(full if full in mods else nearest(target))
        out.discard("")
        out.discard(module)
        parts = module.split(".")   # a module's own packages run first: no cycle through them
        out -= {".".join(parts[:i]) for i in range(1, len(parts))}
        graph[module] = out
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module, each sorted (Tarjan's
    algorithm, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    found: List[List[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found)


def test_no_import_cycle():
    """Import every module (what runs at run time), then the graph of their imports: no
    cycle at all (issue 25 broke the last ones at their causes; DESIGN.md "Layers")."""
    import importlib

    for module, _path in _modules("formats"):
        importlib.import_module(module)
    assert cycles(import_graph()) == []


def test_verify_is_in_no_cycle():
    found = {m for c in cycles(import_graph()) for m in c}
    verify = {m for m in found if "verify" in m.rpartition(".")[2] or m.endswith((".checks", ".executors"))}
    assert verify == set()


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


# --- layers of formats/ (issue 25, written by relayout.py) ---
LAYER_RULES = {   # package under arrayscope.formats -> packages of formats it must not import
    "core": ("accel", "filters", "tiledb", "zarr", "scdl", "salvage"),
    "accel": ("filters", "tiledb", "zarr", "scdl", "salvage"),
    "filters": ("tiledb", "zarr", "scdl", "salvage"),
    "tiledb": ("zarr", "scdl", "salvage"),
    "zarr": ("tiledb", "scdl", "salvage"),
    "scdl": ("tiledb", "zarr", "salvage"),
}
# Imports that still cross a layer, by (importing module, imported package), each with its
# cause; none now (issue 25). The test fails when one is gone, so the list only shrinks.
NOT_YET: Dict[Tuple[str, str], str] = {}


def _layer_violations():
    found = {}
    for module, path in _modules("formats"):
        rel = module[len("arrayscope.formats."):] if module.startswith("arrayscope.formats.") else ""
        layer = rel.split(".")[0]
        for line, name in imports_of(module, path):
            for banned in LAYER_RULES.get(layer, ()):
                if _under(name, (f"arrayscope.formats.{banned}",)):
                    found.setdefault((rel, banned), []).append(f"{os.path.relpath(path, REPO)}:{line}: {name}")
    return found


def test_each_layer_imports_only_the_layers_below_it():
    found = _layer_violations()
    assert {k: v for k, v in found.items() if k not in NOT_YET} == {}
    assert sorted(k for k in NOT_YET if k not in found) == [], "fixed: take it off NOT_YET"


def test_the_window_imports_the_core_api_only():
    """explorer/ reaches formats through the facade, `formats.core` and `formats.salvage`."""
    inner = tuple(f"arrayscope.formats.{p}" for p in ("accel", "filters", "tiledb", "zarr", "scdl"))
    assert violations("explorer", inner) == []


def test_no_loose_modules_outside_the_layer_packages():
    """A module of `formats/` or `formats/tiledb/` lives in the package of its layer or role."""
    for folder in ("formats", os.path.join("formats", "tiledb")):
        loose = sorted(f for f in os.listdir(os.path.join(REPO, folder))
                       if f.endswith(".py") and f != "__init__.py")
        assert loose == [], folder


def test_no_filter_module_imports_numba():
    """The filter registry imports every module of `filters/`; accelerators live in `accel/`."""
    import ast as _ast
    top = []
    for module, path in _modules(os.path.join("formats", "filters")):
        with open(path, encoding="utf-8") as fh:
            for node in _ast.parse(fh.read()).body:
                names = [a.name for a in node.names] if isinstance(node, _ast.Import) else \
                    [node.module or ""] if isinstance(node, _ast.ImportFrom) else []
                if any(n.split(".")[0] == "numba" for n in names):
                    top.append(module)
    assert top == []

"""The program depends on the Qt subset it uses (issue 31): every `PySide6.QtX` module imported by
the program or its tests ships in the PySide6-Essentials distribution, and that distribution, not
the full PySide6 (418 MiB more of Addons), is what pyproject.toml asks for."""
from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _qt_modules_imported() -> set[str]:
    found: set[str] = set()
    for folder in ("explorer", "formats", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            found.update(re.findall(r"(?:from|import)\s+PySide6\.(Qt\w+)", text))
            for names in re.findall(r"from PySide6 import \(?([\w ,\n]+)\)?", text):
                found.update(n.strip() for n in names.split(",") if n.strip().startswith("Qt"))
    return found


def _essentials_modules() -> set[str]:
    files = metadata.files("PySide6-Essentials") or []
    return {Path(str(f)).name.split(".")[0] for f in files
            if str(f).startswith("PySide6/Qt") and str(f).endswith((".so", ".pyd"))}


def test_every_qt_module_used_is_in_essentials():
    used = _qt_modules_imported()
    assert {"QtCore", "QtGui", "QtWidgets"} <= used
    essentials = _essentials_modules()
    assert "QtCore" in essentials and "QtWidgets" in essentials
    assert used <= essentials, f"not in PySide6-Essentials: {sorted(used - essentials)}"


def test_the_dependency_is_essentials_not_the_full_pyside6():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    deps = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    names = re.findall(r'^\s*"([A-Za-z0-9_.-]+)', deps, flags=re.M)
    assert "PySide6-Essentials" in names
    assert "PySide6" not in names

"""First run and install: --version, a clear message without a display, --screenshot that
leaves nothing behind, the installed samples complete (dot-files included)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import pytest

from arrayscope.explorer import app
from arrayscope.explorer.cli import main, subcommands
from tests.support.paths import REPO, SAMPLES


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("arrayscope ") and out.split()[1][0].isdigit()


def test_every_subcommand_has_a_description(capsys):
    subs = subcommands()
    assert {"dump", "values", "verify"} <= set(subs)
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name, mod in subs.items():
        assert mod.HELP and f"{name}" in out and mod.HELP in out


def test_no_display_says_what_to_do(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    msg = app.display_problem()
    assert msg is not None and "--screenshot" in msg and "DISPLAY" in msg
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert app.display_problem() is None


def test_screenshot_leaves_no_scratch_folder(tmp_path, monkeypatch, qapp):
    scratch_root = tmp_path / "tmp"
    scratch_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch_root))
    out = tmp_path / "shot.png"
    assert app.screenshot(os.path.join(SAMPLES, "tiledb_dense"), str(out), None, None,
                          size=(1024, 700)) == 0
    assert out.stat().st_size > 10_000
    assert list(scratch_root.iterdir()) == []


@pytest.mark.slow
def test_wheel_installs_one_name_and_every_sample_file(tmp_path):
    src = tmp_path / "src"   # a copy: building writes build/ and *.egg-info beside the sources
    src.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md", "formats", "explorer", "resources"):
        copy = shutil.copytree if os.path.isdir(os.path.join(REPO, name)) else shutil.copy
        copy(os.path.join(REPO, name), src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "-w", str(tmp_path), str(src)], check=True, capture_output=True)
    [wheel] = list(tmp_path.glob("arrayscope-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        top = next(n for n in names if n.endswith("top_level.txt"))
        assert z.read(top).decode().split() == ["arrayscope"]
    for dirpath, _dirs, files in os.walk(SAMPLES):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), SAMPLES).replace(os.sep, "/")
            assert f"arrayscope/resources/samples/{rel}" in names, rel

"""The package imports and opens datasets where the system lacks what confined reads use on
Linux (issue 31, item 2: Windows has no O_NONBLOCK, O_NOFOLLOW, pread or dir_fd opens)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import zarr

from arrayscope import formats
from arrayscope.formats.core import confined
from arrayscope.formats.core.verify import verify


def test_imports_without_the_posix_open_flags():
    code = ("import os\n"
            "for name in ('O_NONBLOCK', 'O_NOFOLLOW', 'O_DIRECTORY', 'pread'):\n"
            "    delattr(os, name)\n"
            "from arrayscope.formats.accel import bulkread\n"
            "from arrayscope.formats.core import confined, dataset_fs, source\n"
            "from arrayscope.explorer import cli\n"
            "assert not confined.AVAILABLE\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_without_dir_fd_opens_paths_by_name(tmp_path, monkeypatch):
    path = str(tmp_path / "z")
    z = zarr.create_array(path, shape=(8,), chunks=(4,), dtype="int32", zarr_format=3)
    z[:] = np.arange(8, dtype="int32")
    confined_found = verify(formats.open(path))
    monkeypatch.setattr(confined, "AVAILABLE", False)
    assert verify(formats.open(path)) == confined_found == []

"""`arrayscope salvage` on an SCDL archive: refused with the reason (the format's raw,
unchecksummed arrays let verify flag broken structure, not locate every damaged row)."""
from __future__ import annotations

import os

from tests.salvage.support import salvage_cli
from tests.support import paths


def test_scdl_archive_refused_with_the_reason(tmp_path, capsys):
    out = str(tmp_path / "out")
    code, rep = salvage_cli(os.path.join(paths.DATA, "scdl", "basic"), out, capsys=capsys)
    assert code == 2 and not os.path.exists(out)
    assert rep["failure"].startswith("SCDL archives are not salvaged: their arrays are raw")
    assert not rep["written"] and rep["parts"] == []

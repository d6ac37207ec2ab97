"""One salvage run: the dataset read (confined to its root), the damage verify found in it,
the reader's time, the output and the report; each format's salvager takes it."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Optional

from ..core.dataset_fs import FILE, LocalFS
from ..core.findings import UNREADABLE_ENTRY
from .damage import Damage
from .output import Output
from .report import Loss, SalvageReport


def join_rel(*parts: str) -> str:
    """A path relative to the dataset (or OUT) from its parts ("." and empty parts dropped)."""
    return "/".join(p for p in parts if p and p != ".")


@dataclass
class Job:
    fs: LocalFS               # the dataset PATH: every read goes through it
    key: Optional[bytes]
    at: int                   # the reader's time, ms since 1970
    damage: Damage
    out: Output
    report: SalvageReport

    def rel(self, path: str) -> str:
        """`path` relative to the dataset root, "/"-separated ("." for the root)."""
        return self.fs.rel(path)

    def copy(self, path: str, out_rel: str) -> bool:
        """Copy the dataset's regular file `path` to `out_rel` of OUT; False (and nothing
        written) when it is no regular file inside the dataset (a link out, a FIFO)."""
        e = self.fs.stat(path)
        if e.kind != FILE:
            self.report.notes.append(f"{e.rel}: not copied ({e.kind})")
            return False
        self.out.copy(e.real, self.fs.real_root, out_rel)
        return True

    def uncopyable(self, path: str) -> List[Loss]:
        """What below folder `path` cannot be copied (a link out of the dataset, a FIFO, a
        loop): a part holding one is not whole in OUT."""
        out: List[Loss] = []
        for e in self.fs.list(path):
            if e.is_dir:
                out += self.uncopyable(os.path.join(path, e.name))
            elif not e.is_file:
                _status, code, message = e.problem() or ("error", UNREADABLE_ENTRY, e.rel)
                out.append(Loss(code, e.rel, 0, e.rel, message))
        return out

    def copy_tree(self, path: str, out_rel: str) -> None:
        """Every regular file below folder `path`, to the same names under `out_rel`."""
        for e in self.fs.list(path):
            target = f"{out_rel}/{e.name}" if out_rel else e.name
            if e.is_dir:
                self.out.mkdir(target)
                self.copy_tree(os.path.join(path, e.name), target)
            else:
                self.copy(e.path, target)

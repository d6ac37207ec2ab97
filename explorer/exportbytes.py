"""Writing bytes out (no Qt): a range of a source, copied in blocks to a new file. Never
onto a file of the open dataset — arrayscope does not write to what it opened."""
from __future__ import annotations

import os
from typing import Iterable

BLOCK = 4 << 20


class ExportError(OSError):
    pass


def export_range(source, start: int, end: int, dest: str, protected: Iterable[str] = ()) -> int:
    """Copy bytes [start, end) of `source` to `dest`; returns the bytes written. `protected`
    are paths that must not be written (the dataset's files)."""
    real = os.path.realpath(dest)
    for p in protected:
        if os.path.realpath(p) == real:
            raise ExportError(f"{dest} is a file of the open dataset: arrayscope does not write to it")
    end = min(end, source.size)
    written = 0
    with open(dest, "wb") as out:
        pos = start
        while pos < end:
            data = source.read(pos, min(BLOCK, end - pos))
            if not data:
                break
            out.write(data)
            pos += len(data)
            written += len(data)
    return written


def dataset_files(sources) -> list:
    """Paths of the file-backed sources (the ones export must not overwrite)."""
    return [s.path for s in sources if isinstance(getattr(s, "path", None), str)]

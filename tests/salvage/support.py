"""What the salvage tests share: damaging one codec frame, hashing a tree, running the CLI."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Dict, Tuple

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def break_zstd_frame(path: str, nth: int = 0) -> int:
    """Set a reserved bit of the `nth` zstd frame's header descriptor in file `path` (every
    zstd decoder refuses the frame); the offset changed."""
    data = bytearray(open(path, "rb").read())
    at = -1
    for _ in range(nth + 1):
        at = data.index(ZSTD_MAGIC, at + 1)
    data[at + 4] |= 0x08          # Frame_Header_Descriptor bit 3: reserved, must be 0
    with open(path, "wb") as f:
        f.write(data)
    return at + 4


def flip(path: str, offset: int, n: int = 4) -> None:
    data = bytearray(open(path, "rb").read())
    for i in range(offset, offset + n):
        data[i] ^= 0xFF
    with open(path, "wb") as f:
        f.write(data)


def tree_hash(root: str) -> Dict[str, str]:
    """Every file under `root` (relative name -> sha256), and every folder."""
    out: Dict[str, str] = {}
    for dirpath, dirs, files in os.walk(root):
        for d in dirs:
            out[os.path.relpath(os.path.join(dirpath, d), root) + "/"] = ""
        for f in files:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, root)] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    return out


def salvage_cli(src: str, out: str, *extra: str, capsys=None) -> Tuple[int, dict]:
    """`arrayscope salvage SRC OUT --json ...`: (exit code, the JSON report)."""
    from arrayscope.explorer.cli import main

    code = main(["salvage", src, out, "--json", *extra])
    text = capsys.readouterr().out if capsys is not None else "{}"
    return code, json.loads(text) if text.strip() else {}


def verify_exit(path: str, key=None) -> Tuple[int, list]:
    from arrayscope.formats.core.verify import open_for_verify, verify_report

    doc = open_for_verify(path, key)
    try:
        r = verify_report(doc)
    finally:
        doc.close()
    return r.exit_code(), [f.line() for f in r.findings]


def lost_parts(report: dict):
    return [p for p in report["parts"] if not p["kept"]]

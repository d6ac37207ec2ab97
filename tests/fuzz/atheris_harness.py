"""Coverage-guided fuzzing with atheris (on demand; `pip install atheris`).

    python -m tests.fuzz.atheris_harness --array filter_stacks_array --role data -- -runs=20000

One file of a real array (chosen by --role: schema, fragment_metadata, data, array_metadata,
commit) is replaced by each fuzz input, then the file is opened with its array's context,
dumped, and verified. Any exception escaping the engine is a crash atheris reports."""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

import atheris  # noqa: E402

with atheris.instrument_imports():
    from arrayscope import formats  # noqa: E402
    from arrayscope.formats.core.node import to_json  # noqa: E402
    from arrayscope.formats.core.verify import verify  # noqa: E402
    from arrayscope.formats.tiledb.model import layout  # noqa: E402

from tests.support import tiledb_arrays  # noqa: E402


def pick(array_dir: str, role: str) -> str:
    for d, _dirs, files in os.walk(array_dir):
        for f in sorted(files):
            p = os.path.join(d, f)
            if layout.role_of(array_dir, p) == role and os.path.getsize(p):
                return p
    raise SystemExit(f"no {role} file in {array_dir}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--array", default="filter_stacks_array")
    ap.add_argument("--role", default="data")
    args, rest = ap.parse_known_args()
    work = tempfile.mkdtemp(prefix="arrayscope-atheris-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    src = tiledb_arrays.build(args.array, work)
    target = pick(src, args.role)
    seed = open(target, "rb").read()
    corpus = os.path.join(work, "corpus")
    os.makedirs(corpus)
    open(os.path.join(corpus, "seed"), "wb").write(seed)
    key = tiledb_arrays.KEY.encode() if args.array == "encrypted" else None

    def one_input(data: bytes):
        with open(target, "wb") as fh:
            fh.write(data)
        doc = formats.open(target, key=key)
        to_json(doc.root, doc.source_name)
        verify(doc)
        doc.close()

    atheris.Setup([sys.argv[0]] + [a for a in rest if a != "--"] + [corpus], one_input)
    try:
        atheris.Fuzz()
    finally:
        shutil.copyfile(os.path.join(corpus, "seed"), target)


if __name__ == "__main__":
    main()

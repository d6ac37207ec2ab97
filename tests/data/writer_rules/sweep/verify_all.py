"""`verify` over every TileDB array under the given roots: each error and warning printed,
infos counted; exit status 1 when any (see fresh.py)."""

import collections
import os
import sys

from arrayscope import formats
from arrayscope.formats.core.verify import verify_report


def arrays_under(root):
    for d, dirs, files in os.walk(root):
        if "__schema" in dirs or "__array_schema.tdb" in files:
            yield d
            dirs[:] = [
                x
                for x in dirs
                if x not in ("__fragments", "__schema", "__commits", "__meta", "__fragment_meta", "__labels")
            ]


def run(paths, key=None):
    bad = 0
    infos = collections.Counter()
    for p in paths:
        try:
            doc = formats.open(p, key=key) if key else formats.open(p)
            rep = verify_report(doc)
        except Exception as e:
            print("EXC", p, type(e).__name__, e)
            bad += 1
            continue
        for f in rep.findings:
            if f.status in ("error", "warning"):
                print(f.status.upper(), p, f.line()[:400])
                bad += 1
            else:
                infos[(f.code, f.message[:90])] += 1
        doc.close()
    for k, n in infos.most_common(30):
        print("  info x%d" % n, k)
    return bad


if __name__ == "__main__":
    roots = sys.argv[1:]
    paths = []
    for r in roots:
        paths += list(arrays_under(r))
    print(len(paths), "arrays")
    bad = run(paths)
    print("bad:", bad)
    sys.exit(1 if bad else 0)

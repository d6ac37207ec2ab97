"""verify's model path (`array_verify._Streamed.fast`: a fragment's `__fragment_metadata.tdb`
checked from the model and its raw tile bytes, no annotated tree unless something is found)
gives the annotated reference path's findings — code, status, file, offset, node path,
message, in the same order — and the same tally, on every committed TileDB array (tests/data,
resources/samples) and on damaged copies of them: a byte flipped in a data tile, in the
fragment metadata's sections and in its footer, the metadata file cut short, and the random
damage of tests/support/mutations."""
from __future__ import annotations

import os
import random
import shutil
from typing import List, Tuple

import pytest

from arrayscope.formats.core.verify import open_for_verify, verify_report
from arrayscope.formats.tiledb.model import layout
from arrayscope.formats.tiledb.verify import array_verify
from tests.support.mutations import mutate
from tests.support.paths import REPO


def committed_arrays() -> List[str]:
    out = []
    for top in (os.path.join(REPO, "tests", "data"), os.path.join(REPO, "resources", "samples")):
        for d, dirs, _files in os.walk(top):
            if layout.is_array_dir(d):
                dirs[:] = []
                out.append(d)
    return sorted(out)


ARRAYS = committed_arrays()


FAST = {"folders": 0}   # fragment folders the model path answered for (not the tree)


def _counted(fast):
    def spy(self, node):
        got = fast(self, node)
        FAST["folders"] += got is not None
        return got
    return spy


@pytest.fixture(autouse=True)
def count_fast(monkeypatch):
    monkeypatch.setattr(array_verify._Streamed, "fast", _counted(array_verify._Streamed.fast))
    FAST["folders"] = 0


def _report(path: str, model_path: bool, key=None):
    saved = array_verify.MODEL_PATH
    array_verify.MODEL_PATH = model_path
    try:
        doc = open_for_verify(path, key)
        try:
            r = verify_report(doc)
        finally:
            doc.close()
    finally:
        array_verify.MODEL_PATH = saved
    found = [(f.code, f.status, f.source, f.offset, f.node, f.message) for f in r.findings]
    return found, (sorted(r.tally.files), r.tally.tiles, r.tally.nbytes)


def same_on_both_paths(path: str, key=None) -> int:
    """Assert the model path's findings and tally are the reference path's; their number."""
    ref = _report(path, False, key)
    assert _report(path, True, key) == ref, path
    return len(ref[0])


def _flip(path: str, at: int) -> None:
    raw = bytearray(open(path, "rb").read())
    raw[min(max(at, 0), len(raw) - 1)] ^= 0x5A
    open(path, "wb").write(bytes(raw))


def damaged_copies(path: str, dest: str) -> List[Tuple[str, str]]:
    """[(copy, what was damaged)]: targeted damage in the first fragment that has metadata."""
    frags = sorted(os.path.join(d, layout.FRAGMENT_METADATA_FILE)
                   for d, _dirs, files in os.walk(path) if layout.FRAGMENT_METADATA_FILE in files)
    if not frags:
        return []
    meta = os.path.relpath(frags[0], path)
    folder = os.path.dirname(meta)
    data = sorted(f for f in os.listdir(os.path.join(path, folder))
                  if f.endswith(".tdb") and f != layout.FRAGMENT_METADATA_FILE)
    size = os.path.getsize(frags[0])
    plans = [(meta, "flip", 40), (meta, "flip", size // 3), (meta, "flip", size * 2 // 3),
             (meta, "flip", size - 24), (meta, "cut", size * 2 // 3)]
    if data:
        f = os.path.join(folder, data[0])
        plans.append((f, "flip", os.path.getsize(os.path.join(path, f)) // 2))
    out = []
    for k, (rel, how, at) in enumerate(plans):
        dst = os.path.join(dest, f"d{k}")
        shutil.copytree(path, dst)
        target = os.path.join(dst, rel)
        if how == "flip":
            _flip(target, at)
        else:
            raw = open(target, "rb").read()
            open(target, "wb").write(raw[:at])
        out.append((dst, f"{how} {rel}@{at}"))
    return out


def test_committed_arrays_are_many():
    assert len(ARRAYS) >= 90


def test_every_committed_array_verifies_the_same_on_both_paths():
    found = sum(same_on_both_paths(p) for p in ARRAYS)
    print(f"\n{len(ARRAYS)} committed arrays compared, {found} findings, "
          f"{FAST['folders']} fragment folders on the model path")
    assert found > 0   # the writer-rule arrays have findings of their own
    assert FAST["folders"] >= len(ARRAYS) // 2   # it answered (formats >= 10, headers seen)


def test_an_encrypted_array_with_its_key(tmp_path):
    """AES-256-GCM sections (the tags checked, the payloads decrypted) on both paths; and
    with a flipped byte in its metadata."""
    from resources.make_samples import KEY

    path = os.path.join(REPO, "resources", "samples", "tiledb_encrypted")
    same_on_both_paths(path, KEY)
    assert FAST["folders"] >= 1
    found = sum(same_on_both_paths(copy, KEY) for copy, _what in
                damaged_copies(path, str(tmp_path)))
    assert found > 0


def _damaged_sweep(arrays: List[str], tmp_path) -> Tuple[int, int]:
    copies = found = 0
    for i, path in enumerate(arrays):
        plans = damaged_copies(path, str(tmp_path / f"a{i}"))
        rng = random.Random(i)
        dst = str(tmp_path / f"a{i}" / "random")
        plans.append((dst, str(mutate(path, dst, rng))))
        for copy, what in plans:
            try:
                found += same_on_both_paths(copy)
            except AssertionError as e:
                raise AssertionError(f"{os.path.relpath(path, REPO)}, {what}: {e}") from None
            copies += 1
    return copies, found


def test_damaged_copies_verify_the_same_on_both_paths(tmp_path):
    copies, found = _damaged_sweep(ARRAYS[::5], tmp_path)
    print(f"\n{copies} damaged copies of {len(ARRAYS[::5])} arrays compared, {found} findings, "
          f"{FAST['folders']} fragment folders on the model path")
    assert copies >= 6 * len(ARRAYS[::5]) - 5 and found > copies   # the damage is seen


@pytest.mark.slow
def test_damaged_copies_of_every_committed_array(tmp_path):
    copies, found = _damaged_sweep(ARRAYS, tmp_path)
    print(f"\n{copies} damaged copies of {len(ARRAYS)} arrays compared, {found} findings")
    assert found > copies


def _big_sections(path: str):
    """(metadata file, offset, size) of each fragment metadata section shown lazily."""
    from arrayscope import formats
    from arrayscope.formats.tiledb.parse.rawtile import GenericTileSpan

    doc = formats.open(path)
    try:
        return [(doc.source_name(n.data.source), n.data.offset, n.data.size)
                for n in doc.root.walk() if isinstance(n.data, GenericTileSpan)]
    finally:
        doc.close()


def test_a_section_over_64_kib_is_checked(tmp_path):
    """A section the tree shows lazily (over 64 KiB: 20 000 tile offsets) has its chunks
    checked one at a time on both paths (they were left out: a flipped byte there went
    unseen), its payload not parsed."""
    import numpy as np
    import tiledb

    n = 20000
    path = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=1, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    with tiledb.open(path, "w") as A:
        A[:] = np.arange(n, dtype=np.int64) * 3
    big = _big_sections(path)   # (over 64 KiB decoded: 8 bytes a tile)
    assert len(big) >= 3        # offsets, and the tiles' min, max, sum
    assert same_on_both_paths(path) == 0
    assert FAST["folders"] == 1   # the model path took it
    meta, start, size = big[0]
    checked = open_for_verify(path)
    try:
        tally = verify_report(checked).tally
    finally:
        checked.close()
    assert tally.tiles > n + len(big)   # the data tiles, the small sections, the big ones' chunks
    copy = str(tmp_path / "b")
    shutil.copytree(path, copy)
    _flip(os.path.join(copy, meta), start + size // 2)
    assert same_on_both_paths(copy) > 0
    found, _tally = _report(copy, True)
    assert any(src == meta and start <= off < start + size for _c, _s, src, off, _n, _m in found)


def _footer_flag_places(meta: str):
    """(name, offset in the file) of each flag byte of the footer of `meta`, and the first
    byte of the schema name it gives (format 10 on)."""
    from arrayscope.formats.core.source import FileSource
    from arrayscope.formats.tiledb.model.footer_layout import head_fields, tail_fields, tail_layout
    from arrayscope.formats.tiledb.parse.fragment_metadata import footer_bytes

    src = FileSource(meta)
    try:
        fb = footer_bytes(src)
    finally:
        src.close()
    assert fb is not None and fb.version >= 10 and fb.schema_name
    at = fb.start + 12 + len(fb.schema_name.encode())
    places = [("schema name", fb.start + 12)]
    for f in head_fields(fb.version):
        if f.kind == "bool":
            places.append((f.name, at))
            at += 1
    ned_dims = 2 * 8   # one int64 dimension: min and max
    slots = 3          # the attribute, __coords, the dimension
    lay = tail_layout(fb.version, slots)
    assert fb.start + len(fb.data) - lay[""][0] == at + ned_dims
    places += [(f.name, at + ned_dims + lay[f.name][0]) for f in tail_fields(fb.version)
               if f.kind == "bool"]
    return places


def test_a_footer_the_annotated_parse_warns_on_takes_the_tree(tmp_path):
    """What the footer's annotated parse warns of and its node-free read takes as it comes
    (`footer_reader.marks_nothing`): a flag byte of 2 — and a schema name that is not UTF-8
    (no schema has it: the array's error). The model path gives the tree's findings for
    each (the warning among them), and answers for the clean copy."""
    import numpy as np
    import tiledb

    path = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=50, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    with tiledb.open(path, "w") as A:
        A[:] = np.arange(100, dtype=np.int64)
    assert same_on_both_paths(path) == 0 and FAST["folders"] == 1
    meta = os.path.join(path, [d for d, _dirs, files in os.walk(path)
                               if layout.FRAGMENT_METADATA_FILE in files][0][len(path) + 1:],
                        layout.FRAGMENT_METADATA_FILE)
    places = _footer_flag_places(meta)
    assert [n for n, _at in places] == ["schema name", "dense", "null_ned", "has_timestamps",
                                        "has_delete_meta"]
    for k, (what, at) in enumerate(places):
        copy = str(tmp_path / f"c{k}")
        shutil.copytree(path, copy)
        target = os.path.join(copy, os.path.relpath(meta, path))
        raw = bytearray(open(target, "rb").read())
        raw[at] = 0xFF if what == "schema name" else 2
        open(target, "wb").write(bytes(raw))
        FAST["folders"] = 0
        assert same_on_both_paths(copy) > 0, what
        found, _tally = _report(copy, True)
        if what == "schema name":   # (a name no schema has: the array does not open)
            assert [c for c, *_ in found] == ["schema-missing"], found
        else:
            assert any(s == "warning" and "expected 0 or 1, found 2" in m
                       for _c, s, _src, _o, _n, m in found), (what, found)

"""Spec links (issue 13): a field's spec reference opens the bundled format document at the
cited heading (resources/spec/, shipped as package data), in a read-only viewer."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QUrl  # noqa: E402

from arrayscope.formats.core import specref  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import REPO, SAMPLES  # noqa: E402


def test_every_cited_bundled_document_exists_with_its_heading():
    """Every spec reference of the samples' nodes that names a bundled document resolves to a
    file that exists, and a cited heading is found in it."""
    import arrayscope.formats as formats

    seen = {}
    for name in sorted(os.listdir(SAMPLES)):
        if name.endswith(".key"):
            continue
        doc = formats.open(os.path.join(SAMPLES, name))
        for n in doc.root.walk():
            if n.doc is not None and n.doc.spec:
                seen[n.doc.spec] = doc.format
    linked = 0
    for spec, fmt in seen.items():
        for link in specref.resolve(spec, fmt):
            path = specref.spec_path(link)
            assert os.path.isfile(path), (spec, path)
            if link.heading:
                with open(path, encoding="utf-8") as f:
                    assert specref.find_heading(f.read(), link.heading) is not None, spec
            linked += 1
    assert linked >= 20
    for must in ("tile.md", "fragment.md Footer", "array_schema.md#attribute",
                 "SCDL schema v0.0.9, Backend Header", "FORMAT_NOTES §3"):
        assert any(s.startswith(must) and specref.resolve(s, f) for s, f in seen.items()), must


def test_spec_documents_are_package_data():
    """A non-editable install ships them: pyproject's package-data names resources/spec."""
    text = open(os.path.join(REPO, "pyproject.toml"), encoding="utf-8").read()
    assert '"spec/*.md"' in text
    # the installed package (editable or not) holds every bundled document of the checkout
    installed = sorted(f for f in os.listdir(specref.spec_dir()) if f.endswith(".md"))
    bundled = sorted(f for f in os.listdir(os.path.join(REPO, "resources", "spec"))
                     if f.endswith(".md"))
    assert bundled and installed == bundled


def test_inspector_spec_link_opens_the_document_at_its_heading(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    frag = next(win.session.document.root["__fragments"].iter_children())
    footer = frag["__fragment_metadata.tdb"]["Footer"]
    win.select_node(footer)
    insp = win.inspector
    assert insp.spec_links and insp.spec_links[0].file == "tiledb_fragment.md"
    assert "href='spec:0'" in insp.info.toHtml().replace('"', "'")
    insp.info.anchorClicked.emit(QUrl("spec:0"))
    viewer = insp.spec_viewer
    assert viewer is not None and viewer.isVisible()
    assert os.path.isfile(viewer.path) and viewer.path.endswith("tiledb_fragment.md")
    assert viewer.heading_text == "Footer"
    assert viewer.current_block_text() == "Footer"
    assert "Array schema name size" in viewer.text.toPlainText()
    assert viewer.text.verticalScrollBar().value() > 0

"""The fragment footer's one declaration (`footer_layout.FOOTER`): every field lands in the
Footer both readers fill, and the sizes derived from it are libtiledb's."""
from arrayscope.formats.tiledb.model.footer_layout import (
    FOOTER,
    Footer,
    footer_tail_size,
    section_kinds,
    tail_layout,
)


def test_every_declared_field_is_a_footer_value():
    ft = Footer()
    for f in FOOTER:
        if f.kind == "section":
            assert f.name in section_kinds(22)
        else:
            assert hasattr(ft, f.name), f.name


def test_tail_sizes_by_format():
    # format 22, 4 slots: sparse tiles + last tile cells, two flags, three file-size lists,
    # the R-tree offset, eight section lists, fmmsn and processed-conditions offsets
    assert footer_tail_size(22, 4) == 16 + 2 + 8 * 4 * 3 + 8 + 8 * 4 * 8 + 16
    # format 4: no validity, and no var entries for the coords slot (libtiledb footer_size_v3_v4)
    assert footer_tail_size(4, 3) == 16 + 8 * 3 + 8 * 2 + 8 + 8 * 3 + 8 * 2 * 2
    lay = tail_layout(16, 5)
    assert lay["rtree"] == (16 + 2 + 8 * 5 * 3, 0)
    assert lay["tile_offsets"] == (lay["rtree"][0] + 8, 5)
    assert section_kinds(6) == ["tile_offsets", "tile_var_offsets", "tile_var_sizes"]

"""Pictures: notebooks' _repr_svg_ and files in every format, written safely."""

import os

import pytest

import axe


def test_repr_svg_of_layouts_shapes_and_shardings():
    for obj in [
        axe.Layout("S[(8,2):(4@lane,1)] + R[2:4@warp]"),
        axe.Shape("f32[3,5]{1,0:T(2,2)}"),
        axe.Sharding("P('x', 'y')", shape=[8, 8], mesh="x=2,y=2"),
    ]:
        svg = obj._repr_svg_()
        assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")


def test_render_to_files(tmp_path):
    l = axe.Layout.row_major([4, 4])
    for ext, head in [("svg", b"<svg"), ("png", b"\x89PNG"), ("txt", None)]:
        path = tmp_path / f"l.{ext}"
        axe.render(l, str(path), shape=[4, 4])
        data = path.read_bytes()
        assert data and (head is None or data.startswith(head))
    with pytest.raises(axe.AxeError, match="svg"):
        axe.render(l, str(tmp_path / "l.jpg"))
    with pytest.raises(TypeError):
        axe.render(42, str(tmp_path / "x.svg"))
    # A planted link is replaced, never followed.
    target = tmp_path / "victim"
    target.write_text("keep")
    link = tmp_path / "link.svg"
    os.symlink(target, link)
    axe.Shape("f32[3,5]{1,0:T(2,2)}").render(str(link))
    assert target.read_text() == "keep" and not link.is_symlink()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".axe-")] == []

"""Pictures: notebooks' _repr_svg_ and files in every format, written safely."""

import os

import pytest

import axe


def test_repr_svg_of_layouts_shapes_and_shardings():
    for obj in [
        axe.Layout("S[(8,2):(4@lane,1)] + R[2:4@warp]"),
        axe.Shape("f32[3,5]{1,0:T(2,2)}"),
        axe.Sharding("P('x', 'y')", shape=[8, 8], mesh="x=2,y=2"),
        axe.cute.Layout("(4,2):(2,1)"),
        axe.cute.Layout("Sw<3,3,3> o 0 o (8,64):(64,1)"),
        axe.triton.LinearLayout(
            "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])",
            shape=[32, 16],
        ),
    ]:
        svg = obj._repr_svg_()
        assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")


def test_kernel_layout_pictures(tmp_path):
    tv = axe.cute.Layout("((4,2),2):((2,8),1)")
    assert "T" in tv.svg(tv=True, shape=[4, 4])
    with pytest.raises(axe.AxeError, match="tile"):
        tv.svg(tv=True)
    tv.render(str(tmp_path / "tv.txt"), tv=True, shape=[4, 4])
    assert "L0 r0" in (tmp_path / "tv.txt").read_text()


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


def test_shardings_draw_one_block_per_device_region(tmp_path):
    s = axe.Sharding("P('data', None)", shape="bf16[64,128]", mesh="data=2,model=4")
    svg = s.svg()
    width = int(svg.split('width="')[1].split('"')[0])
    assert width <= 2000
    assert ">0,1,2,3<" in svg and ">4,5,6,7<" in svg
    assert "P('data', None) over bf16[64,128]" in svg.replace("&apos;", "'")
    s.render(tmp_path / "s.png")
    assert (tmp_path / "s.png").read_bytes().startswith(b"\x89PNG")
    # Text stays element by element; rank 3 is drawn element by element too.
    s.render(tmp_path / "s.txt")
    assert "gpu_data" in (tmp_path / "s.txt").read_text()
    t = axe.Sharding("P('x')", shape=[4, 2, 2], mesh="x=2")
    assert t.svg().startswith("<svg")


def test_uneven_shardings_write_their_pieces_as_text(tmp_path):
    # No Axe form (5 rows in 2 shards): the text lists each piece's region and devices.
    s = axe.Sharding("P('x')", shape="f32[5]", mesh="x=2")
    s.render(tmp_path / "u.txt")
    text = (tmp_path / "u.txt").read_text()
    assert text.splitlines()[2:] == ["  [0:3]  0", "  [3:5]  1"], text
    axe.render(s, str(tmp_path / "v.txt"))
    assert (tmp_path / "v.txt").read_text() == text

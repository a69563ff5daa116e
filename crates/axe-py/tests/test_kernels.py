"""axe.cute and axe.triton through Python: CuTe's examples, Triton's semantics, errors."""

import pytest

import axe
from axe import cute, triton

BASES = (
    '{"in": {"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0]], "warp": [], "block": []}, '
    '"out": {"dim0": 4, "dim1": 4}}'
)
BLOCKED = (
    "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])"
)


def test_cute_layout_and_algebra():
    l = cute.Layout("(4,(2,3)):(1,(4,8))")
    assert (l.size, l.cosize, l.rank, l.depth) == (24, 24, 2, 2)
    assert list(l.map()[:6]) == [0, 1, 2, 3, 4, 5] and l(4) == 4
    assert str(l.to_axe()) == "S[(3,2,4):(8,4,1)]"
    assert str(cute.Layout.from_axe(l.to_axe(), shape="(4,(2,3))")) == str(l)
    assert str(cute.Layout("(2,(1,6)):(1,(6,2))").coalesce()) == "12:1"
    assert str(cute.Layout("(6,2):(8,2)").composition("(4,3):(3,1)")) == "((2,2),3):((24,2),8)"
    assert str(cute.Layout("(4,4):(0,1)").composition(cute.Layout("2:3"))) == "2:0"  # pycute refuses
    assert str(cute.Layout("4:2").complement(24)) == "(2,3):(1,8)"
    assert str(cute.Layout("(4,2):(2,1)").right_inverse()) == "(2,4):(4,1)"
    assert str(cute.Layout("24:3").logical_divide("4:1")) == "(4,6):(3,12)"
    assert str(cute.Layout("(2,2):(4,1)").logical_product("6:1")) == "((2,2),(2,3)):((4,1),(2,8))"
    sw = cute.Layout("Sw<3,3,3> o 0 o (8,64):(64,1)")
    assert sw(1) == 72
    assert str(sw.coalesce()) == "Sw<3,3,3> o 0 o (8,64):(64,1)"  # the swizzle stays outermost


def test_cute_errors_instead_of_wrong_answers():
    with pytest.raises(axe.CuteError, match="no layout"):
        cute.Layout("(4,3):(1,10)").composition("6:1")  # pycute returns a wrong size
    with pytest.raises(axe.CuteError):
        cute.Layout("(5,5):(5,5)").complement(100)  # CuTe C++ dies with SIGFPE
    with pytest.raises(axe.ParseError) as e:
        cute.Layout("((2,4),8):((1,16),2")
    assert e.value.offset == 19


def test_triton_linear_and_gluon_layouts():
    ll = triton.LinearLayout(BASES)
    assert ll.in_dims == [("register", 4), ("lane", 4), ("warp", 1), ("block", 1)]
    assert ll.out_dims == [("dim0", 4), ("dim1", 4)]
    assert ll(1) == [0, 1] and list(ll.map()[4]) == [1, 0]
    assert ll.injective and ll.surjective
    assert str(ll.to_axe()) == "S[(4,4):(1@lane,1@reg)]"
    ident = ll.compose(ll.invert())
    assert all(ident(k) == [k % 4, k // 4, 0, 0] for k in range(16))
    assert triton.LinearLayout.from_axe(ll.to_axe(), [4, 4]).to_json() == ll.to_json()
    assert (triton.LinearLayout(ll.to_ttg()).map() == ll.map()).all()
    g = triton.LinearLayout(BLOCKED, shape=[32, 16])
    assert str(g.to_axe()) == "S[(4,32,4):(1@warp,1@lane,1@reg)]"
    # 48×64: no linear layout, an Axe layout and its hardware map.
    g48 = "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[2, 2], order=[1, 0])"
    with pytest.raises(axe.TritonError, match="power of two"):
        triton.LinearLayout(g48, shape=[48, 64])
    a = triton.gluon_to_axe(g48, [48, 64])
    dims, m = triton.hardware_map(a, [48, 64])
    assert dims == [("register", 24), ("lane", 32), ("warp", 4), ("block", 1)]
    assert len({tuple(x) for x in m}) == 48 * 64
    with pytest.raises(axe.TritonError, match="shape"):
        triton.LinearLayout(BLOCKED)
    with pytest.raises(axe.ParseError):
        triton.LinearLayout('{"in": {"register": [[0, 3]]}, "out": {"dim0": 4')

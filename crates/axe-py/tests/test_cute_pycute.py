"""axe.cute shaped like pycute: free functions, tuples, tilers, the Layout protocol, and each law checked
by brute force on random layouts."""

import copy
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import axe
from axe import cute
from axe.cute import Layout


def values(l):
    return [l(i) for i in range(cute.size(l))]


def brute(shape, stride, i):
    """The definition: colexicographic digits of i over the flat leaves, the last one running on."""
    sh, sd = cute.flatten(shape), cute.flatten(stride)
    v = 0
    for k, (s, d) in enumerate(zip(sh, sd)):
        if k + 1 == len(sh):
            return v + i * d
        v += (i % s) * d
        i //= s
    return v


leaf = st.tuples(st.integers(1, 4), st.integers(0, 9))
mode = st.one_of(leaf, st.lists(leaf, min_size=1, max_size=3).map(
    lambda v: (tuple(x[0] for x in v), tuple(x[1] for x in v))))
layouts = st.one_of(mode, st.lists(mode, min_size=1, max_size=3).map(
    lambda v: (tuple(x[0] for x in v), tuple(x[1] for x in v)))).map(lambda p: Layout(*p)).filter(
    lambda l: cute.size(l) <= 64)


def test_int_tuple_functions():
    assert cute.size((2, (3, 4))) == 24 and cute.product(5) == 5
    assert cute.prefix_product((2, (3, 4))) == (1, (2, 6))
    assert cute.prefix_product((2, 3), 5) == (5, 10)
    assert cute.shape_div((6, 4), 3) == (2, 4)
    assert cute.shape_div(12, (2, 3)) == 2
    assert cute.inner_product((1, (2, 3)), (4, (5, 6))) == 4 + 10 + 18
    assert cute.flatten(((1, 2), 3)) == (1, 2, 3)
    assert cute.crd2idx((1, 2), (3, 4)) == 1 + 2 * 3
    assert cute.crd2idx(7, (3, 4), (10, 1)) == 10 * 1 + 2
    assert cute.idx2crd(7, (3, 4)) == (1, 2)
    with pytest.raises(axe.CuteError):
        cute.shape_div(6, 4)


def test_layout_from_tuples_and_its_protocol():
    l = Layout((4, (2, 3)), (1, (4, 8)))
    assert (l.shape, l.stride) == ((4, (2, 3)), (1, (4, 8)))
    assert len(l) == 2 and l[1] == Layout((2, 3), (4, 8)) and l[0] == Layout(4, 1)
    assert cute.size(l) == l.size() == l.size == 24 and cute.cosize(l) == 24
    assert l(5) == 5 and l(1, (1, 2)) == 1 + 4 + 16 and l((1, 3)) == 1 + 4 + 8
    assert l(24) == 32 - 8  # past the size the last mode runs on: (0,(0,3)) = 24
    assert Layout((2, 3)) == Layout((2, 3), (1, 2))
    assert str(l) == "(4,(2,3)):(1,(4,8))" and l == Layout("(4,(2,3)):(1,(4,8))")
    assert eval(repr(l), {"Layout": Layout}) == l
    assert pickle.loads(pickle.dumps(l)) == l and copy.deepcopy(l) == l and copy.copy(l) == l
    assert hash(l) == hash(Layout((4, (2, 3)), (1, (4, 8)))) and len({l, Layout(l.shape, l.stride)}) == 1
    assert l != Layout((4, (2, 3)), (1, (4, 9)))
    assert Layout((4,), (1,)).shape == (4,) and len(Layout(4, 1)) == 1
    # Slicing: None keeps a mode.
    assert l(None, 0) == Layout((4,), (1,)) and l(2, None) == Layout(((2, 3),), ((4, 8),))
    assert l(None, (1, None)) == Layout((4, 3), (1, 8))
    assert cute.slice_and_offset((None, (1, 2)), l) == (Layout((4,), (1,)), 4 + 16)
    assert cute.make_layout(Layout(2, 1), Layout(3, 2)) == Layout((2, 3), (1, 2))
    with pytest.raises(axe.CuteError):
        Layout((2, 3), (1,))


def test_free_functions_and_tilers():
    a = Layout((6, 2), (8, 2))
    assert cute.composition(a, Layout((4, 3), (3, 1))) == Layout(((2, 2), 3), ((24, 2), 8))
    assert cute.composition(Layout(24, 3), 4) == Layout(4, 3)  # an int tiler is n:1
    t = cute.composition(Layout((12, 8), (1, 12)), (Layout(4, 2), None))
    assert t == Layout((4, 8), (2, 12))
    assert cute.complement(Layout(4, 2), 24) == Layout((2, 3), (1, 8))
    assert cute.complement(Layout((4, 6), (1, 6)), 34) == Layout(1, 0)
    assert cute.complement(Layout((4, 10), (1, 10)), 94) == Layout(2, 4)
    assert cute.logical_divide(Layout(24, 3), 4) == Layout((4, 6), (3, 12))
    z = cute.zipped_divide(Layout((8, 6)), (2, None))
    assert z == Layout(((2, 1), (4, 6)), ((1, 0), (2, 8)))  # None: a 1:0 tile, the mode in the rest
    assert cute.tiled_divide(Layout((8, 6)), (2, None)) == Layout(((2, 1), 4, 6), ((1, 0), 2, 8))
    assert cute.logical_product(Layout((2, 2), (4, 1)), 6) == Layout(((2, 2), (2, 3)), ((4, 1), (2, 8)))
    assert cute.tiled_divide(Layout(16), 4) == Layout((4, 4), (1, 4))
    assert cute.coalesce(Layout((2, (1, 6)), (1, (6, 2)))) == Layout(12, 1)
    assert cute.coalesce(Layout(((2, 4), (3, 1)), ((1, 2), (8, 1))), (1, 1)) == Layout((8, 3), (1, 8))
    assert cute.filter(Layout((2, (3, 4)), (1, (0, 2)))) == Layout(8, 1)
    assert cute.right_inverse(Layout((4, 2), (2, 1))) == Layout((2, 4), (4, 1))
    g = cute.left_inverse(Layout((2, 2), (0, 1)))
    assert g == Layout(2, 2) and not Layout((2, 2), (0, 1)).injective
    with pytest.raises(axe.CuteError, match="not injective"):
        cute.left_inverse(Layout((2, 2), (0, 1)), strict=True)
    assert cute.blocked_product(Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))) == Layout(
        (6, (5, 4)), (5, (1, 30)))
    with pytest.raises(axe.CuteError, match="no layout"):
        cute.composition(Layout((4, 3), (1, 10)), 6)


def test_negative_strides():
    l = Layout((4, 2), (-1, 4))
    assert values(l) == [0, -1, -2, -3, 4, 3, 2, 1]
    assert cute.coalesce(l) == l
    assert cute.composition(l, Layout(2, 4)) == Layout(2, 4)


def test_swizzled_layouts_compose_divide_and_coalesce():
    sw = Layout("Sw<3,3,3> o 0 o (8,64):(64,1)")
    assert isinstance(sw, cute.ComposedLayout) and sw(1) == 72 and sw(0, 1) == 1
    assert sw.size() == 512 and sw.cosize == 512 and len(sw) == 2 and sw[0](1) == 72
    c = cute.ComposedLayout(cute.Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    assert c == sw and pickle.loads(pickle.dumps(c)) == c
    s = cute.Swizzle(3, 3, 3)
    inner = Layout((8, 64), (64, 1))
    for r, lay in [
        (cute.composition(sw, Layout((4, 8), (1, 8))), cute.composition(inner, Layout((4, 8), (1, 8)))),
        (cute.logical_divide(sw, (2, 16)), cute.logical_divide(inner, (2, 16))),
        (sw.coalesce(), cute.coalesce(inner)),
    ]:
        assert isinstance(r, cute.ComposedLayout)
        assert [r(i) for i in range(cute.size(r))] == [s(lay(i)) for i in range(cute.size(lay))]


small_swizzles = st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(-5, 5)).filter(
    lambda t: abs(t[2]) >= t[0]).map(lambda t: cute.Swizzle(*t))


@settings(max_examples=150, deadline=None)
@given(small_swizzles, small_swizzles)
def test_swizzles_compose_on_the_left_as_in_cute(s1, s2):
    # S1 ∘ S2 is a swizzle R with R(x) = S1(S2(x)), or refused where no swizzle of these sizes does it.
    want = [s1(s2(x)) for x in range(1 << 12)]
    try:
        r = s1.compose(s2)
    except axe.CuteError:
        # Both are linear over GF(2): a swizzle moves a contiguous run of bits, each to one bit, all
        # by one shift at least as long as the run (CuTe's |S| >= B: the bits read and the bits written
        # do not overlap). The bits this composition moves break one of the four.
        moved = {i: s1(s2(1 << i)) ^ (1 << i) for i in range(12)}
        moved = {i: d for i, d in moved.items() if d}
        single = all(d & (d - 1) == 0 for d in moved.values())
        shifts = {i - (d.bit_length() - 1) for i, d in moved.items()}
        run = sorted(moved) == list(range(min(moved), max(moved) + 1)) if moved else True
        apart = all(len(moved) <= abs(s) for s in shifts)
        assert not (single and len(shifts) <= 1 and run and apart)
        return
    assert cute.composition(s1, s2) == r
    assert [r(x) for x in range(1 << 12)] == want
    inner = Layout((8, 64), (64, 1))
    c = cute.composition(s1, inner)
    assert c == cute.ComposedLayout(s1, 0, inner)
    folded = cute.composition(s1, cute.ComposedLayout(s2, 4, inner))
    assert [folded(i) for i in range(512)] == [s1(s2(4 + inner(i))) for i in range(512)]


def test_a_swizzle_on_the_right_or_over_a_tiler_is_refused():
    s = cute.Swizzle(3, 3, 3)
    assert cute.Swizzle(1, 0, 2).compose(cute.Swizzle(1, 1, 2)) == cute.Swizzle(2, 0, 2)
    with pytest.raises(axe.CuteError, match="composes on the left only"):
        cute.composition(Layout((8, 64), (64, 1)), s)
    with pytest.raises(axe.CuteError, match="takes a Swizzle or a layout B"):
        cute.composition(s, (2, 4))
    with pytest.raises(TypeError):
        s.compose(Layout(4, 1))


@settings(max_examples=150, deadline=None)
@given(layouts)
def test_evaluation_and_coordinates_follow_the_definition(l):
    for i in range(cute.size(l) + 3):
        assert l(i) == brute(l.shape, l.stride, i)
    for i in range(cute.size(l)):
        assert l(cute.idx2crd(i, l.shape)) == l(i)
    assert eval(repr(l), {"Layout": Layout}) == l


@settings(max_examples=150, deadline=None)
@given(layouts, layouts)
def test_composition_law(a, b):
    try:
        r = cute.composition(a, b)
    except axe.CuteError:
        return
    assert cute.size(r) == cute.size(b)
    for i in range(cute.size(b)):
        assert r(i) == brute(a.shape, a.stride, b(i))


@settings(max_examples=150, deadline=None)
@given(layouts, st.integers(1, 80))
def test_complement_postconditions(a, bound):
    try:
        r = cute.complement(a, bound)
    except axe.CuteError as e:
        assert "postcondition" in str(e) or "non-injective" in str(e) or "negative" in str(e)
        return
    rv, av = values(r), set(values(a))
    assert all(x < y for x, y in zip(rv, rv[1:]))
    assert not any(v in av for v in rv[1:])
    assert cute.size(r) >= bound // cute.size(cute.filter(a))
    assert cute.cosize(a) + rv[-1] >= bound


@settings(max_examples=150, deadline=None)
@given(layouts)
def test_left_inverse_law(l):
    lv = values(l)
    try:
        r = cute.left_inverse(l)
    except axe.CuteError:
        return
    if len(set(lv)) == len(lv):
        assert all(r(v) == i for i, v in enumerate(lv))
    else:
        assert all(l(r(v)) == v for v in lv)


@settings(max_examples=150, deadline=None)
@given(layouts, st.lists(st.integers(0, 7), min_size=3, max_size=3))
def test_slice_law(l, picks):
    if not cute.is_tuple(l.shape) or len(l) < 2:
        return
    sizes = [cute.size(l[k]) for k in range(len(l))]
    keep = [picks[k % 3] % 2 == 0 for k in range(len(l))]
    keep[0] = keep[0] or not any(keep)
    crd = tuple(None if keep[k] else picks[k % 3] % sizes[k] for k in range(len(l)))
    r, off = cute.slice_and_offset(crd, l)
    assert r == l(*crd)
    kept = [k for k in range(len(l)) if keep[k]]
    for j in range(cute.size(r)):
        full, rest = [], j
        for k in range(len(l)):
            if keep[k]:
                full.append(rest % sizes[k])
                rest //= sizes[k]
            else:
                full.append(crd[k])
        assert off + r(j) == l(tuple(full))
    assert cute.size(r) == cute.product(tuple(sizes[k] for k in kept))

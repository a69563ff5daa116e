"""axe.Layout: construction, every operator, errors, and the laws checked by enumeration."""



import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import axe


def nonzero(cs):
    """Coordinates as comparable values: the axes where they are not zero."""
    return sorted(sorted((a, v) for a, v in c.items() if v) for c in cs)


def coords(layout, x, shape=None):
    return nonzero(layout.apply(x, shape=shape))


def test_construct_print_and_repr_round_trip():
    l = axe.Layout("S[(8,2):(4@lane,1)] + R[2:4@warp]")
    assert str(l) == "S[(8,2):(4@lane,1)] + R[2:4@warp]"
    assert eval(repr(l), {"Layout": axe.Layout}) == l
    assert l.size == 16 and l.replica_count == 2
    assert l.axes == ["lane", "m", "warp"]
    assert l.shard == [(8, 4, "lane"), (2, 1, "m")]
    assert l.replica == [(2, 4, "warp")]
    assert axe.Layout("S[4:1] + 16").offset == {"m": 16}
    assert hash(axe.Layout("S[4:1]")) == hash(axe.Layout("S[4:1]"))


def test_parse_error_is_a_value_error_with_offset():
    with pytest.raises(axe.ParseError) as e:
        axe.Layout("S[(4,8):(8,1]")
    assert isinstance(e.value, ValueError) and isinstance(e.value, axe.AxeError)
    assert e.value.offset == 12
    assert e.value.text == "S[(4,8):(8,1]"
    assert "^" in str(e.value)
    with pytest.raises(axe.ParseError):
        axe.Layout("S[" * 100_000)


def test_apply_and_map():
    l = axe.Layout("S[(8,2):(4@lane,1)] + R[2:4@warp]")
    assert l.apply(3) == [{"lane": 4, "m": 1, "warp": 0}, {"lane": 4, "m": 1, "warp": 4}]
    rm = axe.Layout.row_major([4, 4])
    assert rm.apply((1, 2), shape=[4, 4]) == [{"m": 6}]
    assert (rm.map([4, 4]) == np.arange(16).reshape(4, 4)).all()
    assert (axe.Layout.column_major([2, 3]).map([2, 3]) == [[0, 2, 4], [1, 3, 5]]).all()
    with pytest.raises(axe.LayoutError, match="replicas"):
        l.map()
    with pytest.raises(axe.LayoutError, match="axis="):
        axe.Layout("S[(2,2):(1@lane,1)]").map()
    assert list(axe.Layout("S[(2,2):(1@lane,1)]").map(axis="lane")) == [0, 0, 1, 1]
    with pytest.raises(axe.LayoutError):
        rm.apply(16)
    with pytest.raises(axe.LayoutError):
        rm.map([3, 5])


def test_operators_golden():
    assert str(axe.Layout("S[(4,8):(8,1)]").canonicalize()) == "S[32:1]"
    assert axe.Layout("S[(4,8):(8,1)]").equivalent(axe.Layout("S[32:1]"))
    g, blocks = axe.Layout("S[(3,5,7):(35,7,1)]").group([5, 21])
    assert str(g) == "S[(5,21):(21,1)]" and blocks == [(0, 1), (1, 2)]
    assert str(axe.Layout.row_major([8, 8]).slice([8, 8], [(2, 6), (1, 3)])) == "S[(4,2):(8,1)] + 17"
    a, b = axe.Layout("S[(2,2):(8,2)]"), axe.Layout("S[(2,2):(4,1)]")
    s, shape = a.direct_sum(b, [2, 2], [2, 2])
    assert shape == [4, 4] and str(s.canonicalize()) == "S[16:1]"
    t = axe.Layout("S[(2,2,3,2):(12,2,4,1)]")
    outer, oshape = t.tile_of(axe.Layout.row_major([2, 2]), [4, 6], [2, 2])
    assert (str(outer), oshape) == ("S[(2,3):(3,1)]", [2, 3])
    tiled, tshape = axe.Layout.row_major([2, 2]).tile(outer, [2, 2], [2, 3])
    assert tshape == [4, 6] and tiled.equivalent(t)
    assert axe.Layout("S[(2,4):(1@lane,1@warp)]").span("lane") == 2
    with pytest.raises(axe.LayoutError):
        axe.Layout("S[(2,3):(1,2)]").group([3, 2])


# Random layouts: a few shard iters on m / lane, maybe a replica and an offset.
iters = st.lists(
    st.tuples(st.integers(1, 4), st.integers(-6, 8), st.sampled_from(["m", "m", "lane"])),
    min_size=1,
    max_size=4,
)


def text(shard, replica=None, offset=0):
    ext = ",".join(str(e) for e, _, _ in shard)
    strides = ",".join(f"{s}@{a}" if a != "m" else str(s) for _, s, a in shard)
    t = f"S[({ext}):({strides})]"
    if replica:
        e, s, a = replica
        t += f" + R[{e}:{s}@{a}]"
    if offset:
        t += f" + {offset}"
    return t


layouts = st.builds(
    text,
    iters,
    st.one_of(st.none(), st.tuples(st.integers(2, 3), st.integers(1, 4), st.just("warp"))),
    st.integers(0, 5),
)


@settings(max_examples=150, deadline=None)
@given(layouts)
def test_canonicalize_keeps_the_map(t):
    l = axe.Layout(t)
    c = l.canonicalize()
    assert c.size == l.size
    for x in range(l.size):
        assert coords(c, x) == coords(l, x)
    assert c.equivalent(l) and l.equivalent(c)
    assert c.canonicalize() == c


@settings(max_examples=150, deadline=None)
@given(layouts, st.data())
def test_group_keeps_the_map_and_blocks_multiply_to_the_shape(t, data):
    l = axe.Layout(t)
    n = l.size
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    d0 = data.draw(st.sampled_from(divisors))
    shape = [d0, n // d0]
    try:
        g, blocks = l.group(shape)
    except axe.LayoutError:
        return  # refusals are checked by the Rust proptests against an exhaustive search
    for x in range(n):
        assert coords(g, x) == coords(l, x)
    for (start, end), want in zip(blocks, shape):
        ext = 1
        for e, _, _ in g.shard[start:end]:
            ext *= e
        assert ext == want


@settings(max_examples=150, deadline=None)
@given(layouts, st.data())
def test_slice_is_the_layout_at_the_region(t, data):
    l = axe.Layout(t)
    n = l.size
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    d0 = data.draw(st.sampled_from(divisors))
    shape = [d0, n // d0]
    region = []
    for d in shape:
        a = data.draw(st.integers(0, d - 1))
        b = data.draw(st.integers(a + 1, d))
        region.append((a, b))
    try:
        s = l.slice(shape, region)
    except axe.LayoutError:
        return
    rows, cols = region[0][1] - region[0][0], region[1][1] - region[1][0]
    assert s.size == rows * cols
    for i in range(rows):
        for j in range(cols):
            got = coords(s, (i, j), [rows, cols])
            want = coords(l, (region[0][0] + i, region[1][0] + j), shape)
            assert got == want


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_tile_law(a0, a1, b0, b1):
    inner = axe.Layout.row_major([a0, a1])
    outer = axe.Layout.column_major([b0, b1])
    t, shape = inner.tile(outer, [a0, a1], [b0, b1])
    assert shape == [a0 * b0, a1 * b1]
    span = a0 * a1
    for y0 in range(b0):
        for y1 in range(b1):
            for z0 in range(a0):
                for z1 in range(a1):
                    got = t.apply((y0 * a0 + z0, y1 * a1 + z1), shape=shape)
                    want = outer.apply((y0, y1), shape=[b0, b1])[0].get("m", 0) * span + z0 * a1 + z1
                    assert [c.get("m", 0) for c in got] == [want]
    back, bshape = t.tile_of(inner, shape, [a0, a1])
    assert bshape == [b0, b1] and back.equivalent(outer)

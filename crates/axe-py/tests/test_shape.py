"""axe.Shape: fields, sizes, indexing against numpy's own rendering of the layout, errors."""

import numpy as np
import pytest

import axe
from conftest import xla_tiled_bytes


def test_fields():
    s = axe.Shape("bf16[8,128]{1,0:T(8,128)(2,1)}")
    assert (s.dtype, s.dims, s.rank, s.minor_to_major) == ("bf16", [8, 128], 2, [1, 0])
    assert s.tiles == [[8, 128], [2, 1]]
    assert s.element_bits == 16 and s.memory_space == 0 and s.tail_padding_alignment == 1
    assert str(s) == "bf16[8,128]{1,0:T(8,128)(2,1)}"
    assert eval(repr(s), {"Shape": axe.Shape}) == s
    assert s.dynamic == [False, False]
    assert axe.Shape("f32[<=4,?]").dynamic == [True, True]
    assert axe.Shape("f32[<=4,?]").dims == [4, None]
    assert axe.Shape("s4[16]{0:E(4)S(1)}").element_bits == 4
    assert axe.Shape("s4[16]{0:E(4)S(1)}").memory_space == 1


def test_sizes_follow_xla():
    s = axe.Shape("f32[3,5]{1,0:T(2,2)}")
    assert s.sizes() == {
        "logical_bytes": 60,
        "xla_array_size_bytes": 96,
        "physical_bytes": 96,
        "padding_bytes": 36,
    }
    # XLA's ArraySize ignores L without tiles.
    assert axe.Shape("f32[3,5]{1,0:L(7)}").xla_array_size_bytes == 60
    assert axe.Shape("f32[3,5]{1,0:L(7)}").physical_bytes == 84


def test_index_agrees_with_numpy_rendering():
    s = axe.Shape("f32[5,7]{0,1:T(2,4)}")
    x = np.arange(35, dtype=np.float32).reshape(5, 7) + 1
    image = xla_tiled_bytes(x, [0, 1], [[2, 4]])
    assert image.size * 4 == s.physical_bytes
    for i in range(5):
        for j in range(7):
            assert image[s.index([i, j])] == x[i, j]
            assert s.byte_offset([i, j]) == 4 * s.index([i, j])


def test_to_axe_maps_like_index():
    s = axe.Shape("f32[5,7]{1,0:T(2,4)}")
    l = s.to_axe()
    padded = s.padded_shape
    assert padded == [6, 8]
    for i in range(5):
        for j in range(7):
            assert l.apply((i, j), shape=padded) == [{"m": s.index([i, j])}]


def test_numpy_program_is_the_recipe():
    s = axe.Shape("f32[5,7]{1,0:T(2,4)}")
    scope = {}
    exec(s.numpy_program(), scope)
    x = np.arange(35, dtype=np.float32).reshape(5, 7) + 1
    image = scope["to_memory"](x)
    assert (image == axe.to_physical(x, s).view(np.float32)).all()
    assert (image == xla_tiled_bytes(x, [1, 0], [[2, 4]])).all()


def test_errors():
    with pytest.raises(axe.ParseError) as e:
        axe.Shape("f32[3,5]{1,0:T(2,2}")
    assert e.value.offset > 0
    with pytest.raises(axe.XlaError):
        axe.Shape("f32[3,5]{1,1}")  # not a permutation
    with pytest.raises(axe.XlaError):
        axe.Shape("(f32[2], s32[])")
    with pytest.raises(axe.XlaError):
        axe.Shape("f32[3,5]").index([3, 0])
    with pytest.raises(axe.ParseError):
        axe.Shape("f32[" + "(" * 100_000)
    with pytest.raises(axe.XlaError):
        axe.Shape("f32[<=4,?]").to_axe()


def test_equality_ignores_what_printing_drops():
    # D(...) and M(n <= 0) never print: shapes that print alike are equal, hash alike and read back equal.
    pairs = [
        ("f32[3,5]{1,0:D(C)T(2,2)}", "f32[3,5]{1,0:T(2,2)}"),
        ("f32[8]{0:M(-1)}", "f32[8]{0}"),
        ("f32[8]{0:D(S+~)M(0)}", "f32[8]{0}"),
    ]
    for a, b in pairs:
        x, y = axe.Shape(a), axe.Shape(b)
        assert repr(x) == repr(y)
        assert x == y and hash(x) == hash(y), (a, b)
        assert eval(repr(x), {"Shape": axe.Shape}) == x
        assert len({x, y}) == 1
    assert axe.Shape("f32[8]{0:M(4)}") != axe.Shape("f32[8]{0}")
    assert axe.Shape("f32[8]{0:S(1)}") != axe.Shape("f32[8]{0}")


def test_split_layouts_are_sized_split_by_split():
    # Splits of 4 and 12 elements, each tiled by 8 on its own: 8 + 16 slots.
    s = axe.Shape("f32[16]{0:T(8)SC(0:4)}")
    assert (s.logical_bytes, s.xla_array_size_bytes, s.physical_bytes) == (64, 64, 96)


def test_xla_size_of_tuples_and_their_parts():
    r = axe.xla_size("(f32[3]{0:T(4)}, (s32[], token[]), b(bf16[2,2]))")
    # A tuple's ByteSizeOf is its index table, 8 bytes an element; its elements are buffers of their own.
    assert r["byte_size_of"] == 24 and r["index_table_bytes"] == 24 + 16
    assert [(p["index"], p["kind"], p["byte_size_of"]) for p in r["parts"]] == [
        ([], "tuple", 24),
        ([0], "array", 12),
        ([1], "tuple", 16),
        ([1, 0], "array", 4),
        ([1, 1], "token", 0),
        ([2], "array", 8),
    ]
    # Each array part is sized as axe.Shape sizes it, and the totals add them up.
    arrays = [p for p in r["parts"] if p["kind"] == "array"]
    for p in arrays:
        z = axe.Shape(p["shape"]).sizes()
        assert {k: p[k] for k in ("logical_bytes", "xla_array_size_bytes", "physical_bytes")} == {
            k: z[k] for k in ("logical_bytes", "xla_array_size_bytes", "physical_bytes")
        }
    for k in ("logical_bytes", "xla_array_size_bytes", "physical_bytes"):
        assert r[k] == sum(p[k] for p in arrays)
    assert r["padding_bytes"] == r["physical_bytes"] - r["logical_bytes"] == 4
    # An array is one part of its own.
    a = axe.xla_size("f32[3,5]{1,0:T(2,2)}")
    assert a["parts"][0]["kind"] == "array" and a["physical_bytes"] == 96 and a["index_table_bytes"] == 0


def test_shape_refuses_a_tuple_and_names_what_sizes_it():
    with pytest.raises(axe.XlaError, match="axe.xla_size"):
        axe.Shape("(f32[2], s32[])")
    with pytest.raises(axe.ParseError, match="offset 13") as e:
        axe.xla_size("(f32[2], s32[-1])")
    assert e.value.offset == 13

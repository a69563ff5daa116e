"""Zero-size arrays (a dim of 0, such as f32[0,5]) relayout to an empty output in every function taking
arrays, whatever the layouts (permuted, tiled, sub-tiled, sub-byte): never an error about tiles
interleaving elements and padding. The output is what the non-empty functions give, with no bytes."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import axe
from axe._numpy import natural_dtype

# (element type, numpy dtype of its logical array, tiles of a 2-D layout fitting it)
TYPES = [
    ("f32", np.float32, ["", ":T(2,2)", ":T(8,128)"]),
    ("s8", np.int8, ["", ":T(8,128)(4,1)", ":T(2,2)"]),
    ("u16", np.uint16, ["", ":T(8,128)(2,1)"]),
    ("bf16", np.uint16, ["", ":T(8,128)(2,1)"]),
    ("pred", np.bool_, ["", ":T(32,128)(32,1)E(1)"]),
    ("s4", np.int8, [":E(4)", ":T(8,128)(8,1)E(4)"]),
]


def dense_row_major(s):
    return not s.tiles and list(s.minor_to_major) == list(range(s.rank - 1, -1, -1)) and s.element_bits % 8 == 0


def layouts(rank, tiles):
    for perm in itertools.permutations(range(rank)):
        for t in tiles if rank >= 2 else [t for t in tiles if "T" not in t]:
            yield "{" + ",".join(map(str, perm)) + t + "}"


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(TYPES),
    st.lists(st.integers(0, 5), min_size=1, max_size=3).filter(lambda d: 0 in d),
    st.data(),
)
def test_a_zero_size_array_relayouts_to_an_empty_output(kind, dims, data):
    ty, dtype, tiles = kind
    options = list(layouts(len(dims), tiles))
    src = data.draw(st.sampled_from(options))
    dst = data.draw(st.sampled_from(options))
    text = f"{ty}[{','.join(map(str, dims))}]"
    x = np.zeros(dims, dtype)
    assert axe.Shape(text + src).physical_bytes == 0

    image = axe.to_physical(x, text + src)
    assert image.dtype == np.uint8 and image.shape == (0,)
    back = axe.from_physical(image, text + src)
    assert back.shape == tuple(dims) and back.size == 0
    moved = axe.relayout(image, text + src, dst)
    if dense_row_major(axe.Shape(text + dst)):
        # The element type's dtype; where the uint8 image is also a logical array of the source (1-D,
        # row-major, 8-bit elements an uint8 array holds: not pred, which only bool holds), its dtype
        # is kept, as for non-empty arrays.
        both = image.shape == tuple(dims) and dense_row_major(axe.Shape(text + src))
        holds = axe.Shape(text).element_bits == 8 and ty != "pred"
        want = np.uint8 if both and holds else natural_dtype(ty)
        assert moved.shape == tuple(dims) and moved.dtype == want
    else:
        assert moved.dtype == np.uint8 and moved.shape == (0,)
    row_major = axe.relayout(image, text + src, text)
    assert row_major.shape == tuple(dims) and row_major.size == 0
    into = np.zeros(0, np.uint8)
    assert axe.relayout(x, text, dst, out=into) is not None and into.shape == (0,)


def test_f32_0_5_as_the_issue_gives_it():
    z = np.zeros((0, 5), np.float32)
    for dst in ["{0,1}", "{1,0:T(2,2)}", "{0,1:T(8,128)}"]:
        assert axe.relayout(z, "f32[0,5]", dst).shape == (0,)
        assert axe.to_physical(z, "f32[0,5]" + dst).shape == (0,)
        y = axe.from_physical(np.zeros(0, np.uint8), "f32[0,5]" + dst)
        assert y.shape == (0, 5) and y.dtype == np.float32
    # The sizes are still checked: an array of another shape, or bytes where none fit, is refused.
    for bad in [
        lambda: axe.relayout(np.zeros((0, 6), np.float32), "f32[0,5]", "{0,1}"),
        lambda: axe.relayout(np.zeros(4, np.uint8), "f32[0,5]{0,1}", "{1,0}"),
        lambda: axe.relayout(z, "f32[0,5]", "{0,1}", out=np.zeros(4, np.uint8)),
    ]:
        try:
            bad()
        except axe.RelayoutError:
            continue
        raise AssertionError("accepted an array of the wrong size")

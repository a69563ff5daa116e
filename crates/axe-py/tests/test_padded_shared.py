"""`PaddedSharedLayout`: its linear component, its padding and its placement in padded memory."""

import pytest

import axe
from axe import triton

PADDED = (
    "PaddedSharedLayout(interval_padding_pairs=[[4, 1], [8, 2]], "
    "offset_bases=[[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], cga_layout=[], shape=[8, 4])"
)


def test_linear_component_padding_and_placement_agree():
    ll = triton.LinearLayout(PADDED)  # carries its own shape
    assert ll.in_dims == [("offset", 32), ("block", 1)]
    pairs, offsets, size = triton.padding_of(PADDED)
    assert pairs == [(4, 1), (8, 2)]
    assert size == 45
    # Brute force of the definition: after every 4 elements one padding element, after every 8 two more.
    where, nxt = [], 0
    for o in range(32):
        where.append(nxt)
        nxt += 1 + (1 if (o + 1) % 4 == 0 else 0) + (2 if (o + 1) % 8 == 0 else 0)
    assert offsets == where
    axe_layout = triton.gluon_to_axe(PADDED, [8, 4])
    assert str(axe_layout) == "S[(2,2,2,4):(12@offset,5@offset,24@offset,1@offset)]"


def test_malformed_padding_is_a_triton_error_with_its_offset():
    bad = PADDED.replace("[[4, 1], [8, 2]]", "[[4, 1], [4, 2]]")
    with pytest.raises(axe.ParseError, match="twice"):
        triton.padding_of(bad)
    with pytest.raises(axe.TritonError, match="PaddedSharedLayout"):
        triton.padding_of("BlockedLayout(size_per_thread=[1], threads_per_warp=[32], warps_per_cta=[4], order=[0])")

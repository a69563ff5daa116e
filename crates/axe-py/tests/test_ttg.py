"""`LinearLayout.to_ttg()` gives only a `#ttg.linear` attribute Triton reads as the same layout."""

import pytest

import axe
from axe import triton


def test_ttg_reads_back_as_the_same_layout():
    ll = triton.LinearLayout('{"in": {"register": [[0, 1], [1, 0]]}, "out": {"dim0": 2, "dim1": 2}}')
    again = triton.LinearLayout(ll.to_ttg())
    # Triton's attribute has all four in-dims: the missing ones come back empty, the map the same.
    assert ll.to_ttg() == "#ttg.linear<{register = [[0, 1], [1, 0]], lane = [], warp = [], block = []}>"
    assert [d for d, _ in again.in_dims] == ["register", "lane", "warp", "block"]
    assert (again.map() == ll.map()).all()
    assert str(ll) == ll.to_ttg()


def test_a_shared_layouts_offset_is_no_ttg_linear_in_dim():
    ll = triton.LinearLayout('{"in": {"offset": [[0, 1], [1, 0]]}, "out": {"dim0": 2, "dim1": 2}}')
    with pytest.raises(axe.TritonError, match="register, lane, warp and block"):
        ll.to_ttg()


def test_out_dims_out_of_order_are_refused_with_the_reason():
    ll = triton.LinearLayout('{"in": {"register": [[0, 1], [1, 0]]}, "out": {"dim1": 2, "dim0": 2}}')
    with pytest.raises(axe.TritonError, match="dim0, dim1"):
        ll.to_ttg()
    # str() falls back to the JSON bases, which keep every layout.
    assert triton.LinearLayout(str(ll)) == ll

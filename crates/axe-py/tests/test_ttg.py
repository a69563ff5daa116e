"""`LinearLayout.to_ttg()` gives only a `#ttg.linear` attribute that reads back as the same layout."""

import pytest

import axe
from axe import triton


def test_ttg_reads_back_as_the_same_layout():
    ll = triton.LinearLayout('{"in": {"register": [[0, 1], [1, 0]]}, "out": {"dim0": 2, "dim1": 2}}')
    again = triton.LinearLayout(ll.to_ttg())
    assert again == ll
    assert str(ll) == ll.to_ttg()


def test_out_dims_out_of_order_are_refused_with_the_reason():
    ll = triton.LinearLayout('{"in": {"register": [[0, 1], [1, 0]]}, "out": {"dim1": 2, "dim0": 2}}')
    with pytest.raises(axe.TritonError, match="dim0, dim1"):
        ll.to_ttg()
    # str() falls back to the JSON bases, which keep every layout.
    assert triton.LinearLayout(str(ll)) == ll

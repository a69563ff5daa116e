"""Every array's dtype, byte order and element width checked against the shape's element type, in
every function taking arrays: big-endian data read as big-endian, float16 never taken for bf16."""

import numpy as np
import pytest

import axe

ml_dtypes = pytest.importorskip("ml_dtypes")

TILED = "f32[4,6]{0,1:T(2,2)}"


def test_big_endian_input_is_read_in_its_byte_order():
    x = np.arange(24, dtype=np.float32).reshape(4, 6) + 1
    want = axe.to_physical(x, TILED)
    assert (axe.to_physical(x.astype(">f4"), TILED) == want).all()
    col = axe.relayout(x.astype(">f4"), "f32[4,6]", "{0,1}")
    assert (axe.from_physical(col, "f32[4,6]{0,1}") == x).all()
    same = axe.relayout(x.astype(">f4"), "f32[4,6]", "f32[4,6]")
    assert same.dtype == np.float32 and (same == x).all()


def test_from_physical_gives_the_byte_order_asked():
    x = np.arange(24, dtype=np.float32).reshape(4, 6) + 1
    buf = axe.to_physical(x, TILED)
    y = axe.from_physical(buf, TILED, dtype=">f4")
    assert y.dtype == np.dtype(">f4") and (y == x).all()
    assert (axe.from_physical(buf, TILED, dtype="<f4") == x).all()
    # A byte image held in a big-endian array is not the machine's bytes: refused, not misread.
    with pytest.raises(axe.RelayoutError, match="byte order"):
        axe.from_physical(buf.view(np.float32).astype(">f4"), TILED)


def test_another_type_of_the_same_width_is_refused():
    h = np.ones((4, 4), dtype=np.float16)
    for call in [
        lambda: axe.to_physical(h, "bf16[4,4]{0,1}"),
        lambda: axe.relayout(h, "bf16[4,4]", "{0,1}"),
        lambda: axe.to_physical(np.ones(4, np.int32), "f32[4]"),
        lambda: axe.to_physical(np.ones(4, ml_dtypes.bfloat16), "f16[4]"),
        lambda: axe.to_physical(np.ones(4, ml_dtypes.float8_e5m2), "f8e4m3fn[4]"),
        lambda: axe.from_physical(np.zeros(8, np.uint8), "bf16[4]", dtype=np.float16),
        lambda: axe.from_physical(np.zeros(16, np.uint8), "f32[4]", dtype=np.int32),
        # f64 is numpy's own float64 (its name begins as the 6-bit floats' f6e2m3fn does).
        lambda: axe.to_physical(np.ones(4, np.int64), "f64[4]"),
        lambda: axe.relayout(np.ones((2, 2), np.uint64), "f64[2,2]", "{0,1}"),
        lambda: axe.from_physical(np.zeros(32, np.uint8), "f64[4]", dtype=np.int64),
    ]:
        with pytest.raises(axe.RelayoutError):
            call()


def test_raw_bits_and_own_types_are_accepted():
    b = np.arange(8, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(2, 4)
    bits = b.view(np.uint16)
    assert (axe.to_physical(b, "bf16[2,4]{0,1}") == axe.to_physical(bits, "bf16[2,4]{0,1}")).all()
    assert (axe.to_physical(np.arange(4, dtype=np.uint32), "s32[4]") == np.arange(4, dtype=np.int32).view(np.uint8)).all()


def test_out_is_checked_for_type_byte_order_and_shape():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    col = axe.to_physical(x, "f32[3,4]{0,1}")
    for bad in [
        np.empty((3, 4), dtype=">f4"),
        np.empty((3, 4), dtype=np.int32),
        np.empty((4, 3), dtype=np.float32),
        np.empty(12, dtype=np.float32),
    ]:
        with pytest.raises(axe.RelayoutError):
            axe.relayout(col, "f32[3,4]{0,1}", "f32[3,4]", out=bad)
    # The byte image is taken as 1-D uint8 (only) for a tiled destination.
    with pytest.raises(axe.RelayoutError):
        axe.relayout(x, "f32[3,4]", "{1,0:T(2,2)}", out=np.empty(8, np.float32))
    good = np.empty((3, 4), np.float32)
    assert (axe.relayout(col, "f32[3,4]{0,1}", "f32[3,4]", out=good) == x).all()

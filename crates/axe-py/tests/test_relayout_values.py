"""What the bytes mean through axe.to_physical / from_physical / relayout: signed sub-byte integers
(s4, s2, s1) held in int8 as values (two's complement in the low bits, element 0 in the low bits of a
packed byte, as XLA and ml_dtypes lay them out), range-checked, never wrapped; pred bytes other than 0
and 1 refused; threads checked; clear refusals for layouts relayout does not move."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import axe

SIGNED = {"s4": 4, "s2": 2, "s1": 1}


def packed(values, bits):
    """The reference packing: element i at bit i·bits of the buffer (LSB first), its low bits."""
    out = np.zeros((len(values) * bits + 7) // 8, np.uint8)
    for i, v in enumerate(values):
        at = i * bits
        out[at // 8] |= (int(v) & ((1 << bits) - 1)) << (at % 8)
    return out


def test_s4_from_int8_keeps_its_sign():
    # The review's repro: -1 came back as 15, -8 as 8.
    x = np.array([-1, -8, 7, 3], dtype=np.int8)
    b = axe.to_physical(x, "s4[4]{0:E(4)}")
    assert b.tobytes() == bytes([0x8F, 0x37])
    back = axe.from_physical(b, "s4[4]{0:E(4)}", dtype=np.int8)
    assert back.dtype == np.int8 and back.tolist() == [-1, -8, 7, 3]
    assert np.asarray(axe.relayout(b, "s4[4]{0:E(4)}", "{0}")).astype(np.int8).tolist() == [-1, -8, 7, 3]
    assert axe.relayout(x, "s4[4]", "{0}").tolist() == [-1, -8, 7, 3]
    assert axe.relayout(x, "s4[4]", "{0:E(4)}").tobytes() == bytes([0x8F, 0x37])
    out = np.zeros(4, np.int8)
    assert axe.relayout(b, "s4[4]{0:E(4)}", "{0}", out=out) is out and out.tolist() == [-1, -8, 7, 3]


def test_unpacked_bytes_do_not_depend_on_the_dtype():
    x = np.array([-1, -8, 7, 3], dtype=np.int8)
    want = bytes([0x0F, 0x08, 0x07, 0x03])  # the low bits, the rest zero (ml_dtypes, XLA)
    assert axe.to_physical(x, "s4[4]").tobytes() == want
    assert axe.to_physical(x.view(np.uint8) & 0xF, "s4[4]").tobytes() == want
    through = axe.relayout(axe.to_physical(x, "s4[4]{0:E(4)}"), "s4[4]{0:E(4)}", "{0}")
    assert through.view(np.uint8).tobytes() == want
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert axe.to_physical(x.astype(ml_dtypes.int4), "s4[4]").tobytes() == want
    assert axe.from_physical(axe.to_physical(x, "s4[4]"), "s4[4]", dtype=np.int8).tolist() == x.tolist()


def test_s2_and_s1_from_int8():
    for t, vals in [("s2", [-1, 1, 0, -2]), ("s1", [-1, 0, -1, -1, 0, 0, 0, -1])]:
        x = np.array(vals, np.int8)
        bits = SIGNED[t]
        b = axe.to_physical(x, f"{t}[{len(vals)}]{{0:E({bits})}}")
        assert (b == packed(vals, bits)).all(), t
        back = axe.from_physical(b, f"{t}[{len(vals)}]{{0:E({bits})}}", dtype=np.int8)
        assert back.tolist() == vals, t
        # uint8 carries the raw bits.
        raw = axe.from_physical(b, f"{t}[{len(vals)}]{{0:E({bits})}}", dtype=np.uint8)
        assert raw.tolist() == [v & ((1 << bits) - 1) for v in vals], t


def test_out_of_range_values_are_refused_with_value_and_index():
    # The review's repro: each was wrapped to its low 4 bits.
    with pytest.raises(axe.RelayoutError, match=r"element \(0,\) is 100"):
        axe.to_physical(np.array([100, -100, 8, -9], np.int8), "s4[4]{0:E(4)}")
    with pytest.raises(axe.RelayoutError, match=r"-8\.\.7; element \(1,\) is 8"):
        axe.to_physical(np.array([7, 8], np.int8), "s4[2]{0:E(4)}")
    with pytest.raises(axe.RelayoutError, match=r"element \(0,\) is -9"):
        axe.to_physical(np.array([-9, 1], np.int8), "s4[2]")
    with pytest.raises(axe.RelayoutError, match=r"0\.\.15; element \(0,\) is 255"):
        axe.to_physical(np.array([255, 16, 17, 3], np.uint8), "u4[4]{0:E(4)}")
    with pytest.raises(axe.RelayoutError, match=r"element \(1, 0\) is -1"):
        axe.to_physical(np.array([[1, 2], [-1, 3]], np.int8), "u4[2,2]{1,0:E(4)}")
    with pytest.raises(axe.RelayoutError, match=r"element \(0,\) is 16"):
        axe.to_physical(np.array([16], np.uint8), "s4[1]{0:E(4)}")  # raw bits: 0..15
    with pytest.raises(axe.RelayoutError, match="is 2"):
        axe.relayout(np.array([0, 2], np.int8), "s1[2]", "{0:E(1)}")
    # The edges pass.
    x = np.array([-8, 7], np.int8)
    assert axe.from_physical(axe.to_physical(x, "s4[2]{0:E(4)}"), "s4[2]{0:E(4)}", dtype=np.int8).tolist() == [-8, 7]
    u = np.array([0, 15], np.uint8)
    assert axe.from_physical(axe.to_physical(u, "u4[2]{0:E(4)}"), "u4[2]{0:E(4)}", dtype=np.uint8).tolist() == [0, 15]


LAYOUTS = ["{1,0}", "{0,1}", "{1,0:E(BITS)}", "{0,1:E(BITS)}", "{1,0:T(2,4)E(BITS)}", "{1,0:T(4,8)}", "{0,1:T(8,2)E(BITS)}"]


@settings(max_examples=200, deadline=None)
@given(
    t=st.sampled_from(sorted(SIGNED)),
    rows=st.integers(0, 7),
    cols=st.integers(0, 19),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**32 - 1),
)
def test_signed_sub_byte_round_trip_law(t, rows, cols, layout, seed):
    """from_physical(relayout(x, row_major, dst), dst, dtype=x.dtype) == x for random signed values
    in int8; the image is the same from int8 and from the raw bits; packed row-major is the reference
    packing."""
    bits = SIGNED[t]
    rng = np.random.default_rng(seed)
    x = rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), size=(rows, cols)).astype(np.int8)
    dst = f"{t}[{rows},{cols}]" + layout.replace("BITS", str(bits))
    img = axe.to_physical(x, dst)
    raw = axe.to_physical(x.view(np.uint8) & ((1 << bits) - 1), dst)
    assert img.dtype == np.uint8 and img.tobytes() == raw.tobytes()
    moved = axe.relayout(x, f"{t}[{rows},{cols}]", dst)
    if layout == "{1,0}":
        assert moved.dtype == np.int8 and (moved == x).all()  # logical, the input's dtype
    else:
        assert moved.tobytes() == img.tobytes()
    back = axe.from_physical(img, dst, dtype=np.int8)
    assert back.dtype == np.int8 and (back == x).all()
    if layout == "{1,0:E(BITS)}":
        assert (img == packed(x.reshape(-1).tolist(), bits)).all()


def test_pred_bytes_other_than_0_and_1_are_refused():
    # The review's repro: 2 and 4 packed as false, 255 as true, and copied through unpacked.
    image = np.array([1, 2, 255, 0, 4, 1, 1, 1], np.uint8)
    for dst in ["{0:E(1)}", "{0}", "{0:T(4)}"]:
        with pytest.raises(axe.RelayoutError, match="pred source.s byte at offset 1 is 2, not 0 or 1"):
            axe.relayout(image, "pred[8]", dst)
    view = np.array([0, 0, 3], np.uint8).view(bool)
    with pytest.raises(axe.RelayoutError, match="offset 2 is 3"):
        axe.to_physical(view, "pred[3]{0:E(1)}")
    with pytest.raises(axe.RelayoutError, match="offset 2 is 3"):
        axe.to_physical(view, "pred[3]")
    with pytest.raises(axe.RelayoutError, match="offset 0 is 9"):
        axe.from_physical(np.array([9, 1], np.uint8), "pred[2]")
    # 0/1 bytes move; padding bytes of a tiled source are not elements.
    ok = np.array([1, 0, 1, 1, 0, 1, 1, 1], np.uint8)
    assert axe.relayout(ok, "pred[8]", "{0:E(1)}").tolist() == [0b11101101]
    tiled = np.array([1, 0, 1, 7], np.uint8)
    assert axe.from_physical(tiled, "pred[3]{0:T(4)}").tolist() == [True, False, True]
    x = np.array([True, False, True])
    assert (axe.from_physical(axe.to_physical(x, "pred[3]{0:E(1)}"), "pred[3]{0:E(1)}") == x).all()


def test_threads_out_of_range_say_so():
    x = np.zeros((2, 2), np.float32)
    for bad in [-1, 1025, 2**70]:
        with pytest.raises(axe.RelayoutError, match=r"threads=.*at most 1024"):
            axe.relayout(x, "f32[2,2]", "{0,1}", threads=bad)
    with pytest.raises(TypeError, match="threads must be an int"):
        axe.relayout(x, "f32[2,2]", "{0,1}", threads=1.5)
    assert (axe.relayout(x, "f32[2,2]", "{0,1}", threads=np.int64(2)) == 0).all()


def test_refusals_name_the_problem():
    with pytest.raises(axe.RelayoutError, match="E\\(64\\) is wider than f32's 32 bits"):
        axe.to_physical(np.ones(2, np.float32), "f32[2]{0:E(64)}")
    with pytest.raises(axe.RelayoutError, match="E\\(16\\) is wider than s8's 8 bits"):
        axe.to_physical(np.ones(2, np.int8), "s8[2]{0:E(16)}")
    for e in ["E(2)", "E(4)"]:
        with pytest.raises(axe.RelayoutError, match="only as pred into E\\(1\\)"):
            axe.to_physical(np.array([True, False, True]), f"pred[3]{{0:{e}}}")
    with pytest.raises(axe.RelayoutError, match="integer overflow") as e:
        axe.to_physical(np.ones(1, np.float32), "f32[1]{0:T(4611686018427387904)}")
    assert "18446744073709551615" not in str(e.value)
    with pytest.raises(axe.RelayoutError, match="is not an array shape"):
        axe.relayout(np.zeros((3, 4), np.float32), "f32[3,4]", "(f32[3,4])")
    with pytest.raises(axe.RelayoutError, match="merges dimensions with `\\*`"):
        axe.to_physical(np.arange(24, dtype=np.float32).reshape(2, 3, 4), "f32[2,3,4]{2,1,0:T(*,2,2)}")


def test_a_later_tile_padding_inside_an_earlier_one_moves():
    x = np.array([1, 2, 3], np.float32)
    b = axe.to_physical(x, "f32[3]{0:T(2)(3)}")
    assert (b.view(np.float32) == [1, 2, 0, 3, 0, 0]).all()  # axe xla index --all: [0] [1] . [2] . .
    assert (axe.from_physical(b, "f32[3]{0:T(2)(3)}") == x).all()
    y = np.arange(15, dtype=np.float32).reshape(5, 3)
    s = "f32[5,3]{1,0:T(2,2)(1,3)}"
    img = axe.to_physical(y, s)
    assert img.size == axe.Shape(s).physical_bytes
    assert (axe.from_physical(img, s) == y).all()
    flat = img.view(np.float32)
    for i in range(5):
        for j in range(3):
            assert flat[axe.Shape(s).index([i, j])] == y[i, j]


def test_the_docs_example_is_the_column_major_image():
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    b = axe.relayout(x, "f32[3,5]", "{0,1}")
    assert b.dtype == np.uint8 and b.size == 60
    assert b.tobytes() == np.asfortranarray(x).tobytes(order="A")
    assert (b.view(np.float32).reshape(5, 3).T == x).all()


def test_sub_byte_images_keep_their_high_bits_zero():
    # A byte image (not a logical array) of an unpacked s4 layout: the four bits low, the rest zero.
    with pytest.raises(axe.RelayoutError, match="s4 source's byte at offset 1 is 248"):
        axe.relayout(np.array([15, 0xF8, 7, 3, 0, 0, 0, 0], np.uint8), "s4[4]{0:T(8)}", "{0:E(4)}")
    ok = axe.relayout(np.array([15, 8, 7, 3, 0, 0, 0, 0], np.uint8), "s4[4]{0:T(8)}", "{0:E(4)}")
    assert ok.tobytes() == bytes([0x8F, 0x37])

"""Relayout of numpy arrays: against numpy's own pad / reshape / transpose, on random shapes and tilings;
bf16 as uint16, sub-byte E(4), pred; out=; errors; the GIL released while bytes move."""

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import axe
from conftest import layout_text, xla_tiled_bytes


@st.composite
def tiled_case(draw):
    rank = draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 12)) for _ in range(rank)]
    m2m = draw(st.permutations(list(range(rank))))
    k = draw(st.integers(1, rank))
    tile = [draw(st.sampled_from([1, 2, 3, 4, 8])) for _ in range(k)]
    tiles = [tile]
    if draw(st.booleans()) and len(tile) >= 2 and tile[-2] % 2 == 0:
        # A sub-tile such as bf16's (2,1), dividing its tile (axe refuses, with a reason, sub-tiles that
        # interleave elements and padding).
        tiles.append([2, 1])
    dtype = draw(st.sampled_from(["f32", "s8", "bf16", "f64", "u16"]))
    return dims, m2m, tiles, dtype


NUMPY = {"f32": np.float32, "s8": np.int8, "bf16": np.uint16, "f64": np.float64, "u16": np.uint16}


@settings(max_examples=200, deadline=None)
@given(tiled_case(), st.integers(0, 2**32 - 1))
def test_to_and_from_physical_match_numpy(case, seed):
    dims, m2m, tiles, dtype = case
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 100, size=dims).astype(NUMPY[dtype])
    shape = f"{dtype}[{','.join(map(str, dims))}]{layout_text(m2m, tiles)}"
    want = xla_tiled_bytes(x, m2m, tiles)
    got = axe.to_physical(x, shape)
    assert got.dtype == np.uint8 and got.size == axe.Shape(shape).physical_bytes
    assert (got.view(x.dtype) == want).all(), shape
    back = axe.from_physical(got, shape, dtype=x.dtype)
    assert (back == x).all()
    # relayout between two tilings equals going through the logical array.
    other = f"{dtype}[{','.join(map(str, dims))}]"
    assert (axe.relayout(got, shape, other).view(x.dtype) == x).all()


def test_bf16_as_uint16_and_ml_dtypes():
    x = np.arange(3 * 5, dtype=np.uint16).reshape(3, 5)
    shape = "bf16[3,5]{1,0:T(2,2)(2,1)}"
    got = axe.to_physical(x, shape)
    assert (got.view(np.uint16) == xla_tiled_bytes(x, [1, 0], [[2, 2], [2, 1]])).all()
    ml_dtypes = pytest.importorskip("ml_dtypes")
    y = x.astype(np.float32).astype(ml_dtypes.bfloat16)
    got = axe.to_physical(y, shape)
    back = axe.from_physical(got, shape)
    assert back.dtype == ml_dtypes.bfloat16 and (back == y).all()


def test_sub_byte_s4_packs_two_per_byte_low_nibble_first():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 16, size=(4, 6)).astype(np.uint8)  # s4 values as bytes
    got = axe.to_physical(x, "s4[4,6]{1,0:E(4)}")
    flat = x.reshape(-1)
    want = (flat[0::2] & 0xF) | ((flat[1::2] & 0xF) << 4)
    assert got.size == 12 and (got == want).all()
    assert (axe.from_physical(got, "s4[4,6]{1,0:E(4)}", dtype=np.uint8) & 0xF == x).all()


def test_pred_as_bool_tiled_and_bit_packed():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2, size=(5, 9)).astype(bool)
    got = axe.to_physical(x, "pred[5,9]{1,0:T(2,4)}")
    assert (got == xla_tiled_bytes(x, [1, 0], [[2, 4]]).view(np.uint8)).all()
    packed = axe.to_physical(x, "pred[5,9]{1,0:E(1)}")
    assert (packed == np.packbits(x.reshape(-1), bitorder="little")).all()
    back = axe.from_physical(packed, "pred[5,9]{1,0:E(1)}")
    assert back.dtype == np.bool_ and (back == x).all()


def test_relayout_to_axe_layout_and_out():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    col = axe.relayout(x, "s32[3,4]", axe.Layout("S[(3,4):(1,3)]"))
    assert (col.view(np.int32) == x.T.reshape(-1)).all()
    out = np.full((3, 4), -1, dtype=np.int32)
    r = axe.relayout(col, "s32[3,4]{0,1}", "s32[3,4]", out=out)
    assert r is out and (out == x).all()
    tiled = np.zeros(axe.Shape("s32[3,4]{1,0:T(2,2)}").physical_bytes, np.uint8)
    axe.relayout(x, "s32[3,4]", "{1,0:T(2,2)}", out=tiled)
    assert (tiled.view(np.int32) == xla_tiled_bytes(x, [1, 0], [[2, 2]])).all()



def test_bounded_dynamic_shapes_move_at_their_bounds():
    # f32[<=3,4] lies in memory as its bound, f32[3,4]: to_physical and from_physical take it as
    # relayout does, rather than calling its row-major form another tensor.
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for dims, m2m, tiles in [
        ("<=3,4", [0, 1], []),
        ("3,<=4", [1, 0], [[2, 2]]),
        ("<=3,<=4", [1, 0], []),
    ]:
        layout = layout_text(m2m, tiles)
        shape = f"f32[{dims}]{layout}"
        b = axe.to_physical(x, shape)
        assert (b.view(np.float32) == xla_tiled_bytes(x, m2m, tiles)).all(), shape
        assert (axe.from_physical(b, shape) == x).all(), shape
        assert (axe.relayout(x, f"f32[{dims}]", layout).reshape(-1).view(np.uint8) == b).all()
    with pytest.raises(axe.XlaError, match="unbounded"):
        axe.to_physical(x, "f32[?,4]")


def test_bad_inputs_get_clear_errors():
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    with pytest.raises(axe.RelayoutError, match="C-contiguous"):
        axe.to_physical(x.T, "f32[4,4]{1,0:T(2,2)}")
    with pytest.raises(axe.RelayoutError, match="cannot hold"):
        axe.to_physical(x.astype(np.float64), "f32[4,4]{1,0:T(2,2)}")
    with pytest.raises(axe.RelayoutError, match="neither"):
        axe.to_physical(x[:3], "f32[4,4]{1,0:T(2,2)}")
    with pytest.raises(axe.RelayoutError, match="bytes"):
        axe.from_physical(np.zeros(10, np.uint8), "f32[4,4]{1,0:T(2,2)}")
    with pytest.raises(axe.RelayoutError):
        axe.relayout(x, "f32[4,4]", "f32[4,5]")
    with pytest.raises(axe.RelayoutError, match="out has"):
        axe.relayout(x, "f32[4,4]", "{0,1}", out=np.zeros(3, np.uint8))
    ro = np.zeros(64, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(axe.RelayoutError, match="writeable"):
        axe.relayout(x, "f32[4,4]", "{0,1}", out=ro)
    with pytest.raises(axe.ParseError):
        axe.relayout(x, "f32[4,4]", "{0,1:T(2,}")
    with pytest.raises(axe.RelayoutError):
        axe.relayout([1, 2, 3], "f32[3]", "{0}")


def test_gil_is_released_while_bytes_move():
    x = np.ones((4096, 4096), dtype=np.float32)  # 64 MiB
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0)

    done = []

    def work():
        for _ in range(3):
            axe.to_physical(x, "f32[4096,4096]{0,1:T(8,128)}")
        done.append(time.perf_counter())

    t = threading.Thread(target=count)
    start = time.perf_counter()
    t.start()
    work()
    stop.set()
    t.join()
    during = [s for s in ticks if start < s < done[0]]
    # The counting thread runs while the relayouts do: with the GIL held it would barely tick.
    assert len(during) > 100, len(during)

"""The GIL is released in every call that can take long: a second thread keeps running Python while
the call runs (with the GIL held it would wait for the call to return)."""

import json
import os
import tempfile
import threading
import time

import numpy as np
import pytest

import axe


def ticks_inside(call, min_seconds=0.2):
    """Runs `call` repeatedly (for `min_seconds` at least) while a second thread ticks every half
    millisecond; returns (ticks counted while a call was running, number of calls)."""
    inside = threading.Event()
    stop = threading.Event()
    count = [0]

    def tick():
        while not stop.is_set():
            if inside.is_set():
                count[0] += 1
            time.sleep(0.0005)

    t = threading.Thread(target=tick)
    t.start()
    calls = 0
    start = time.perf_counter()
    try:
        while time.perf_counter() - start < min_seconds or calls < 2:
            inside.set()
            call()
            inside.clear()
            calls += 1
    finally:
        stop.set()
        t.join()
    return count[0], calls


def big_linear(bits=22):
    # 2^bits inputs (registers, lanes, warps) over a 2^(bits/2) x 2^(bits/2) tensor.
    half = bits // 2
    reg = [[0, 1 << i] for i in range(half)]
    lane = [[1 << i, 0] for i in range(5)]
    warp = [[1 << i, 0] for i in range(5, half)]
    return axe.triton.LinearLayout(
        json.dumps({"in": {"register": reg, "lane": lane, "warp": warp}, "out": {"dim0": 1 << half, "dim1": 1 << half}})
    )


LINEAR = big_linear()
# A quarter of LINEAR, as its Axe layout (the way back from Axe is as long as the way there).
LINEAR_AXE = big_linear(20).to_axe()
BIG = np.ones((2048, 2048), np.float32)

# A CuTe TV layout (256 threads x 128 values over a 256x128 tile): its picture takes a while to draw
# (about 13 ms in a release build, so a ticker every half millisecond ticks many times inside each call).
CUTE_TV = axe.cute.Layout(((32, 8), (16, 8)), ((128, 1), (8, 4096)))
CUTE_TILE = [256, 128]
PICTURES = tempfile.TemporaryDirectory()

CALLS = {
    "cute.Layout.svg": lambda: CUTE_TV.svg(tv=True, shape=CUTE_TILE),
    "cute.Layout.render": lambda: CUTE_TV.render(os.path.join(PICTURES.name, "tv.png"), tv=True, shape=CUTE_TILE),
    "Layout.map": lambda: axe.Layout("S[(4096,4096):(1,4096)]").map(),
    "LinearLayout.map": LINEAR.map,
    "LinearLayout.to_axe": LINEAR.to_axe,
    "LinearLayout.from_axe": lambda: axe.triton.LinearLayout.from_axe(LINEAR_AXE, [1 << 10, 1 << 10]),
    "LinearLayout.svg": LINEAR.svg,
    "to_physical": lambda: axe.to_physical(BIG, "f32[2048,2048]{0,1:T(8,128)}"),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_second_thread_runs_during_the_call(name):
    ticks, calls = ticks_inside(CALLS[name])
    # With the GIL held the ticker could tick at most once per call (as the call starts); released,
    # it ticks through each call.
    assert ticks > 3 * calls, (name, ticks, calls)

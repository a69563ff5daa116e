"""The GIL is released in every call that can take long: a second thread keeps making progress while
the call runs (with the GIL held it would stand still for the whole call)."""

import threading
import time

import numpy as np
import pytest

import axe


def longest_stall(call, min_seconds=0.3):
    """Runs `call` (repeated until it has taken `min_seconds`) while a second thread ticks; returns
    (the longest gap between ticks during the calls, the shortest call's duration)."""
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.0005)

    t = threading.Thread(target=tick)
    t.start()
    time.sleep(0.05)
    start = time.perf_counter()
    shortest = float("inf")
    while time.perf_counter() - start < min_seconds:
        a = time.perf_counter()
        call()
        shortest = min(shortest, time.perf_counter() - a)
    end = time.perf_counter()
    stop.set()
    t.join()
    during = [start] + [s for s in ticks if start < s < end] + [end]
    return max(b - a for a, b in zip(during, during[1:])), shortest


def big_linear():
    # 2^21 inputs: register, lane and warp bits over a 2048 x 1024 tensor.
    reg = [[0, 1 << i] for i in range(10)]
    lane = [[1 << i, 0] for i in range(5)]
    warp = [[1 << i, 0] for i in range(5, 11)]
    import json

    return axe.triton.LinearLayout(
        json.dumps({"in": {"register": reg, "lane": lane, "warp": warp}, "out": {"dim0": 2048, "dim1": 1024}})
    )


CALLS = {
    "Layout.map": lambda: axe.Layout("S[(4096,4096):(1,4096)]").map(),
    "Layout.svg": lambda: axe.Layout("S[(256,256):(1,256)]").svg(),
    "Layout.equivalent": lambda: axe.Layout("S[(4096,4096):(1,4096)]").equivalent(axe.Layout("S[(4096,4096):(1,4096)]")),
    "Shape.svg": lambda: axe.Shape("f32[512,512]{0,1:T(8,128)}").svg(),
    "LinearLayout.map": lambda: big_linear().map(),
    "LinearLayout.to_axe": lambda: big_linear().to_axe(),
    "LinearLayout.svg": lambda: axe.triton.LinearLayout(
        '{"in": {"register": [[0,1],[0,2],[0,4],[0,8]], "lane": [[1,0],[2,0],[4,0],[8,0],[16,0]], '
        '"warp": [[32,0],[64,0]]}, "out": {"dim0": 128, "dim1": 16}}'
    ).svg(),
    "Sharding.devices": lambda: axe.Sharding("P('x')", shape="f32[64]", mesh={"x": 1 << 16}).devices(),
    "Sharding.plan": lambda: axe.Sharding("P('x')", shape="f32[1048576]", mesh={"x": 4096}).plan(
        axe.Sharding("P()", shape="f32[1048576]", mesh={"x": 4096})
    ),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_second_thread_runs_during_the_call(name):
    stall, took = longest_stall(CALLS[name])
    # Held for a whole call, the GIL would stop the ticker for the call's whole time; released, the
    # ticker waits only for the Python objects made around the Rust work.
    assert took > 0.05, (name, took)  # long enough to tell
    assert stall < 0.6 * took, (name, stall, took)

"""Memory bounded by the answer: devices(), plan() and map() on meshes up to 2^20 devices take memory
proportional to what they return (a replica group is one tuple shared by its members, never a list
per device: that was devices² memory, 23 GB and an OOM kill at 2^20)."""

import json
import resource
import tracemalloc

import numpy as np

import axe

# Python objects per device of devices(): its dict, id, region, local and padded shapes.
PER_DEVICE = 1200


def traced_peak(call):
    tracemalloc.start()
    try:
        out = call()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_devices_memory_is_linear_in_the_devices():
    peaks = {}
    for n in (1 << 12, 1 << 14):
        s = axe.Sharding("P()", shape="f32[4]", mesh={"x": n})
        d, peaks[n] = traced_peak(s.devices)
        assert len(d) == n and d[0]["replica_group"] is d[-1]["replica_group"]
        assert len(d[0]["replica_group"]) == n and d[0]["replica_group"][-1] == n - 1
        assert peaks[n] < PER_DEVICE * n + (1 << 20), (n, peaks[n])
    # 4 times the devices, about 4 times the memory (devices² would be 16 times).
    assert peaks[1 << 14] < 6 * peaks[1 << 12], peaks


def test_devices_on_a_mesh_of_2_20():
    n = 1 << 20
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    d = axe.Sharding("P()", shape="f32[4]", mesh={"x": n}).devices()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert len(d) == n and d[n // 2]["region"] == [(0, 4)]
    assert len({id(x["replica_group"]) for x in d[:: n // 64]}) == 1
    assert grown < 2 * PER_DEVICE * n, grown


def test_plan_on_a_mesh_of_2_20_is_as_small_as_its_transfers():
    n = 1 << 20
    src = axe.Sharding("P()", shape="f32[4]", mesh={"x": n})
    dst = axe.Sharding("P('x')", shape="f32[4]", mesh={"x": n})
    p, peak = traced_peak(lambda: src.plan(dst))
    assert p["bytes"] == 0 and len(p["transfers"]) == 0 and len(p["locals"]) == 4
    assert peak < 1 << 20, peak


def test_map_memory_is_its_array():
    l = axe.Layout("S[(1024,1024):(1,1024)]")
    m, peak = traced_peak(l.map)
    assert m.nbytes == 8 << 20 and peak < m.nbytes + (1 << 20), peak
    half = 9
    ll = axe.triton.LinearLayout(json.dumps({
        "in": {"register": [[0, 1 << i] for i in range(half)], "lane": [[1 << i, 0] for i in range(half)]},
        "out": {"dim0": 1 << half, "dim1": 1 << half},
    }))
    m, peak = traced_peak(ll.map)
    assert m.shape == (1 << 18, 2) and m.dtype == np.uint64
    assert peak < m.nbytes + (1 << 20), peak

"""``axe.kernel.DeviceBuilder``: kernels across the devices of a mesh described in Python — device tensors,
``copy`` (a reshard), ``reduce`` (reduce-scatter / all-reduce of partial values) and per-device ``kernel``
calls — dispatched and run with one thread per device, checked against numpy; misuse is an
``axe.KernelError`` (or the sharding's own error), never a crash."""

import numpy as np
import pytest

import axe
import axe.kernel
from axe.kernel import Builder, DeviceBuilder, DeviceKernel, Scope


def mesh(n):
    return axe.Mesh({"x": n})


def test_gemm_reduce_scatter_written_in_python_is_the_shipped_one():
    # The shipped kernel's five calls, statement for statement (crates/axe-kernel/src/gemm_rs.rs).
    m, n, k, p = 128, 128, 128, 2
    x = mesh(p)
    b = DeviceBuilder("gemm_reduce_scatter", x)
    a = b.tensor("a", "f16", axe.Sharding("{maximal device=0}", [m, k], x))
    bt = b.tensor("b", "f16", axe.Sharding("{maximal device=0}", [n, k], x))
    a_k = b.tensor("a_k", "f16", axe.Sharding("P(None, 'x')", [m, k], x))
    b_k = b.tensor("b_k", "f16", axe.Sharding("P(None, 'x')", [n, k], x))
    c_part = b.tensor("c_part", "f32", axe.Sharding("[Partial()]", [m, n], x))  # DTensor's notation
    c_m = b.tensor("c_m", "f32", axe.Sharding("P('x', None)", [m, n], x))
    c = b.tensor("c", "f32", axe.Sharding("{maximal device=0}", [m, n], x))
    b.copy(a_k, a)
    b.copy(b_k, bt)
    b.kernel(axe.kernel.gemm(m, n, k // p, "f16"), [a_k, b_k, c_part])
    b.reduce(c_m, c_part, "sum")
    b.copy(c, c_m)
    mine = b.build("sm_80")
    assert isinstance(mine, DeviceKernel) and mine.mnk is None and mine.params == []
    shipped = axe.kernel.gemm_reduce_scatter(m, n, k, "f16", devices=p)
    assert mine.tensors == shipped.tensors
    assert mine.explain() == shipped.explain()
    rng = np.random.default_rng(0)
    av, bv = (rng.integers(-3, 4, s).astype(np.float16) for s in [(m, k), (n, k)])
    out = mine.run_devices({"a": [av], "b": [bv]})
    np.testing.assert_array_equal(out["c"][0].reshape(m, n), shipped.run(av, bv))
    np.testing.assert_array_equal(out["c"][0].reshape(m, n), av.astype(np.float64) @ bv.astype(np.float64).T)
    assert out["c"][1].size == 0  # device 1 holds nothing of c


@pytest.mark.parametrize("p", [2, 3, 4])
@pytest.mark.parametrize("op", ["sum", "max"])
def test_reduce_scatter_and_all_reduce_of_partial_values(p, op):
    rows, cols = 12, 5
    x = mesh(p)
    b = DeviceBuilder("combine", x)
    part = b.tensor("part", "f32", axe.Sharding("{replicated}", [rows, cols], x), partial={"x": op})
    split = b.tensor("split", "f32", axe.Sharding("P('x', None)", [rows, cols], x))
    full = b.tensor("full", "f32", axe.Sharding("{replicated}", [rows, cols], x))
    b.reduce(split, part, op)
    b.reduce(full, part, op)
    k = b.build()
    calls = k.explain()
    assert [(c["op"], c["variant"]) for c in calls] == [
        ("reduce #0", "reduce.reduce_scatter"),
        ("reduce #1", "reduce.all_reduce"),
    ]
    # all-reduce was declined for the first for a reason, reduce-scatter for the second
    assert calls[1]["declined"] and calls[1]["declined"][0][0] == "reduce.reduce_scatter"
    rng = np.random.default_rng(p)
    # small integers: every sum is exact in f32, whichever order the collective adds in
    parts = [rng.integers(-50, 51, (rows, cols)).astype(np.float32) for _ in range(p)]
    out = k.run_devices({"part": parts})
    want = np.sum(parts, axis=0, dtype=np.float32) if op == "sum" else np.max(parts, axis=0)
    per = -(-rows // p)
    for d in range(p):
        np.testing.assert_array_equal(out["full"][d].reshape(rows, cols), want)
        lo, hi = d * per, min(rows, (d + 1) * per)
        got = out["split"][d].reshape(-1, cols)[: max(0, hi - lo)]
        np.testing.assert_array_equal(got, want[lo:hi])


def test_a_copy_reshards_an_axe_layout_tensor_and_a_per_device_kernel_runs_on_each_shard():
    # x split along rows over 2 devices (Axe layout with a device axis), doubled on each device, then
    # gathered on device 0.
    x = mesh(2)
    b = DeviceBuilder("double", x)
    xs = b.tensor_axe("xs", "f32", [8, 4], "S[(2,4,4):(1@gpu_x,4,1)]")
    xr = b.tensor("xr", "f32", axe.Sharding("P('x', None)", [8, 4], x))
    ys = b.tensor("ys", "f32", axe.Sharding("P('x', None)", [8, 4], x))
    y0 = b.tensor("y0", "f32", axe.Sharding("{maximal device=0}", [8, 4], x))
    kb = Builder("twice", grid=1, threads=32)
    row = "S[(4,4):(4,1)]"
    xt = kb.tensor("x", kb.buffer("x", "global", "f32", 16), [4, 4], row)
    yt = kb.tensor("y", kb.buffer("y", "global", "f32", 16), [4, 4], row)
    kb.binary(Scope.warp(), "add", yt, xt, xt)
    b.copy(xr, xs)  # the same distribution: nothing crosses devices
    b.kernel(kb.build(), [xr, ys])
    b.copy(y0, ys)
    k = b.build()
    assert [c["variant"] for c in k.explain() if c["scope"] == "devices(x=2)"] == [
        "copy.local",
        "kernel.each_device",
        "copy.reshard",
    ]
    v = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = k.run_devices({"xs": [v[:4], v[4:]]})
    np.testing.assert_array_equal(out["y0"][0].reshape(8, 4), 2 * v)
    np.testing.assert_array_equal(out["xs"][1].reshape(4, 4), v[4:])  # inputs stay


def test_misuse_is_an_error_never_a_crash():
    x = mesh(2)
    b = DeviceBuilder("bad", x)
    s = b.tensor("s", "f32", axe.Sharding("P('x', None)", [4, 4], x))
    r = b.tensor("r", "f32", axe.Sharding("{replicated}", [4, 4], x))
    with pytest.raises(axe.KernelError, match="no device tensor 7"):
        b.copy(7, s)
    with pytest.raises(axe.KernelError, match="unknown reduction"):
        b.reduce(r, s, "prod")
    with pytest.raises(axe.KernelError, match="no axis"):
        b.tensor("p", "f32", axe.Sharding("{replicated}", [4, 4], x), partial={"y": "sum"})
    with pytest.raises(axe.KernelError, match="splits a dim"):
        b.tensor("p", "f32", axe.Sharding("P('x', None)", [4, 4], x), partial={"x": "sum"})
    with pytest.raises(axe.KernelError, match="f99"):
        b.tensor("p", "f99", axe.Sharding("{replicated}", [4, 4], x))
    with pytest.raises(axe.KernelError):  # the per-device kernel's buffers do not match the shards
        b.kernel(axe.kernel.softmax(4, 8), [s, r])
    b.copy(s, r)
    k = b.build()
    with pytest.raises(axe.KernelError, match="already built"):
        b.build()
    with pytest.raises(axe.KernelError, match="already built"):
        b.copy(s, r)
    with pytest.raises(axe.KernelError, match="no device tensor 'q'"):
        k.run_devices({"q": [np.zeros(1)]})
    with pytest.raises(axe.KernelError, match="bytes"):
        k.run_devices({"r": [np.zeros(3, np.float32)]})
    with pytest.raises(axe.KernelError, match="float64"):
        k.run_devices({"r": [np.zeros(16)]})
    with pytest.raises(axe.KernelError, match="list of arrays"):
        k.run_devices({"r": np.zeros(16, np.float32)})
    with pytest.raises(axe.KernelError, match="3 shards"):
        k.run_devices({"r": [None, None, None]})
    with pytest.raises(axe.KernelError, match="run_devices"):
        k.run(np.zeros(1), np.zeros(1))
    # A reduce of a tensor holding no partial values: every variant declines, each with its reason.
    b2 = DeviceBuilder("bad2", x)
    s2 = b2.tensor("s", "f32", axe.Sharding("P('x', None)", [4, 4], x))
    r2 = b2.tensor("r", "f32", axe.Sharding("{replicated}", [4, 4], x))
    b2.reduce(r2, s2)
    k2 = b2.build()
    for call in (k2.explain, lambda: k2.run_devices({})):
        with pytest.raises(axe.KernelError, match="no partial values"):
            call()
    # A forced variant that does not exist or does not apply: lowering says so.
    for force, says in [("copy.nothing", "copy.nothing"), ("copy.local", "copy.local")]:
        b3 = DeviceBuilder("bad3", x)
        s3 = b3.tensor("s", "f32", axe.Sharding("P('x', None)", [4, 4], x))
        r3 = b3.tensor("r", "f32", axe.Sharding("{replicated}", [4, 4], x))
        b3.copy(r3, s3, force=force)
        with pytest.raises(axe.KernelError, match=says):
            b3.build().explain()
    out = k.run_devices({"r": [np.ones((4, 4), np.float32), np.ones(16, np.float32)]})
    np.testing.assert_array_equal(out["s"][0], 1.0)


def test_the_docs_example_runs_as_written():
    import pathlib

    doc = pathlib.Path(__file__).resolve().parents[3] / "docs" / "python.md"
    if not doc.is_file():
        pytest.skip("docs/python.md is not beside this test (an installed copy)")
    text = doc.read_text()
    start = text.index("```python\n", text.index("**Describing a kernel across devices.**")) + len("```python\n")
    ns = {}
    exec(text[start : text.index("```", start)], ns)
    assert [c["variant"] for c in ns["k"].explain()] == ["reduce.reduce_scatter"]
    assert len(ns["out"]["rows"]) == 4
    for shard in ns["out"]["rows"]:
        np.testing.assert_array_equal(shard, np.full(8, 6.0, np.float32))

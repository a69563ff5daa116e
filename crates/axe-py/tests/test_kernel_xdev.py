"""``axe.kernel.gemm_reduce_scatter``: the shipped kernel across devices (the paper's §4.2) from Python —
its device tensors, every dispatch decision, and runs with one thread per device against numpy; every
misuse an ``axe.KernelError``, never a crash."""

import threading
import time

import numpy as np
import pytest

import axe
import axe.kernel
from axe.kernel import DeviceKernel, gemm_reduce_scatter


def small_ints(shape, seed, dtype=np.float16):
    """Integers in [-3, 3]: every product and sum of a 128-deep dot product is exact in f32."""
    return np.random.default_rng(seed).integers(-3, 4, size=shape).astype(dtype)


@pytest.mark.parametrize("devices", [1, 2, 4])
def test_gathered_c_is_the_product_exactly_when_sums_are_exact(devices):
    m, n, k = 128, 128, 128
    g = gemm_reduce_scatter(m, n, k, "f16", devices=devices)
    a, b = small_ints((m, k), 1), small_ints((n, k), 2)
    c = g.run(a, b)
    assert c.dtype == np.float32 and c.shape == (m, n)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64).T)
    # the same as the single-device gemm, and through axe.kernel.run
    np.testing.assert_array_equal(axe.kernel.run(g, a, b), c)
    np.testing.assert_array_equal(axe.kernel.gemm(m, n, k, "f16").run(a, b), c)


def test_bf16_random_values_within_the_f32_accumulation_bound():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    m, n, k = 128, 128, 64
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((n, k)).astype(ml_dtypes.bfloat16)
    c = gemm_reduce_scatter(m, n, k, "bf16", devices=2).run(a, b)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    bound = k * np.finfo(np.float32).eps * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)).T)
    assert np.all(np.abs(c - want) <= bound + 1e-30)


def test_each_device_holds_its_rows_after_the_reduce_scatter():
    # XLA's uneven rule: 128 rows over 3 devices are 43, 43, 42.
    m, n, k = 128, 128, 96
    g = gemm_reduce_scatter(m, n, k, "f16", devices=3)
    a, b = small_ints((m, k), 4), small_ints((n, k), 5)
    shards = g.run_shards(a, b)
    assert [s.shape for s in shards] == [(43, n), (43, n), (42, n)]
    want = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_array_equal(np.concatenate(shards), want)


def test_explain_lists_the_cross_device_calls_and_the_per_device_gemm():
    g = gemm_reduce_scatter(128, 128, 64, devices=2)
    assert isinstance(g, DeviceKernel)
    assert (g.name, g.devices, g.scope, g.target, g.mnk) == (
        "gemm_reduce_scatter", 2, "devices(x=2)", "sm_80", (128, 128, 64)
    )
    assert [t[0] for t in g.tensors] == ["a", "b", "a_k", "b_k", "c_part", "c_m", "c"]
    assert [(p[0], tuple(p[1].dims), p[2], p[3]) for p in g.params] == [
        ("a", (128, 64), 128 * 64 * 2, True),
        ("b", (128, 64), 128 * 64 * 2, True),
        ("c", (128, 128), 128 * 128 * 4, False),
    ]
    calls = g.explain()
    cross = [c for c in calls if c["scope"] == "devices(x=2)"]
    assert [(c["op"], c["variant"]) for c in cross] == [
        ("copy #0", "copy.reshard"),
        ("copy #1", "copy.reshard"),
        ("kernel #2", "kernel.each_device"),
        ("reduce #3", "reduce.reduce_scatter"),
        ("copy #4", "copy.reshard"),
    ]
    for c in cross:
        assert c["why"]
        if c["op"].startswith(("copy", "reduce")):
            assert c["collective"] and c["bytes"] > 0
        else:
            assert "collective" not in c
    # copy.local declined each reshard with its reason
    assert any(v == "copy.local" and r for v, r in cross[0]["declined"])
    # the per-device gemm's own decisions follow its kernel call, prefixed by its name
    local = [c for c in calls if c not in cross]
    assert local and all(c["op"].startswith("gemm") for c in local)
    assert any("mma" in c["variant"] for c in local)
    assert "gemm_reduce_scatter" in repr(g)


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda: gemm_reduce_scatter(128, 128, 65, devices=2), "split evenly"),
        (lambda: gemm_reduce_scatter(128, 128, 96, devices=2), "K of 32"),
        (lambda: gemm_reduce_scatter(128, 128, 64, devices=0), "at least one device"),
        (lambda: gemm_reduce_scatter(100, 128, 64, devices=1), "per-device gemm"),
        (lambda: gemm_reduce_scatter(128, 128, 64, "f64"), "f64"),
        (lambda: gemm_reduce_scatter(128, 128, 64, target="sm_99"), "sm_99"),
    ],
)
def test_bad_problems_are_kernel_errors(make, says):
    with pytest.raises(axe.KernelError, match=says):
        make()


def test_bad_inputs_are_kernel_errors():
    g = gemm_reduce_scatter(128, 128, 64, "f16", devices=2)
    a, b = small_ints((128, 64), 1), small_ints((128, 64), 2)
    with pytest.raises(axe.KernelError, match="shape"):
        g.run(a[:64], b)
    with pytest.raises(axe.KernelError, match="float32"):
        g.run(a.astype(np.float32), b)
    with pytest.raises(axe.KernelError, match="numpy array"):
        g.run([1, 2], b)
    with pytest.raises(axe.KernelError, match="2 input"):
        axe.kernel.run(g, a)
    with pytest.raises(axe.KernelError, match="target"):
        axe.kernel.run(g, a, b, target="sm_90a")
    with pytest.raises(TypeError):
        g._run(b"\0" * 3)  # missing B
    with pytest.raises(axe.KernelError, match="bytes"):
        g._run(b"\0" * 3, b"\0" * 5)  # shards of the wrong size


def test_a_second_thread_runs_while_it_works():
    g = gemm_reduce_scatter(128, 128, 64, "f16", devices=2)
    a, b = small_ints((128, 64), 1), small_ints((128, 64), 2)
    ticks = [0]
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.0005)

    t = threading.Thread(target=tick)
    t.start()
    try:
        before = ticks[0]
        start = time.perf_counter()
        g.run(a, b)
        took = time.perf_counter() - start
        during = ticks[0] - before
    finally:
        stop.set()
        t.join()
    # with the GIL held the ticker could not run at all until the call returned
    if took > 0.05:
        assert during > 10, (during, took)


def test_the_docs_example_runs_as_written():
    import pathlib

    doc = pathlib.Path(__file__).resolve().parents[3] / "docs" / "python.md"
    if not doc.is_file():
        pytest.skip("docs/python.md is not beside this test (an installed copy)")
    text = doc.read_text()
    start = text.index("```python\n", text.index("<!-- gemm-reduce-scatter -->")) + len("```python\n")
    ns = {}
    exec(text[start : text.index("```", start)], ns)
    assert ns["calls"] == [
        ("copy #0", "copy.reshard"),
        ("copy #1", "copy.reshard"),
        ("kernel #2", "kernel.each_device"),
        ("reduce #3", "reduce.reduce_scatter"),
        ("copy #4", "copy.reshard"),
    ]
    a, b = (x.astype(np.float64) for x in (ns["a"], ns["b"]))
    np.testing.assert_allclose(ns["c"], a @ b.T, rtol=1e-5)

"""axe.kernel: the shipped kernels from Python, run on the CPU interpreter against numpy references."""

import re

import numpy as np
import pytest

import axe
import axe.cute
import axe.kernel


def test_softmax_matches_numpy():
    rng = np.random.default_rng(1)
    x = (rng.random((5, 100)) * 20 - 10).astype(np.float32)
    y = axe.kernel.softmax(5, 100).run(x)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    assert y.dtype == np.float32 and y.shape == (5, 100)
    np.testing.assert_allclose(y, want, rtol=1e-5)


def test_softmax_in_bf16_rounds_once():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.linspace(-4, 4, 3 * 64, dtype=np.float32).reshape(3, 64).astype(ml_dtypes.bfloat16)
    y = axe.kernel.softmax(3, 64, "bf16").run(x)
    assert y.dtype == ml_dtypes.bfloat16
    xf = x.astype(np.float64)
    e = np.exp(xf - xf.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y.astype(np.float64), e / e.sum(axis=1, keepdims=True), rtol=2**-7)


def test_gemm_of_small_integers_is_exact():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(2)
    a = rng.integers(-2, 3, (128, 32)).astype(np.float32)
    b = rng.integers(-2, 3, (128, 32)).astype(np.float32)  # B given as [N, K]
    k = axe.kernel.gemm(128, 128, 32)
    c = k.run(a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16))
    assert c.dtype == np.float32 and c.shape == (128, 128)
    np.testing.assert_array_equal(c, a @ b.T)
    assert k.accumulates("c") and not k.accumulates("a")
    assert [p[0] for p in k.params] == ["a", "b", "c"]


def test_relayout_equals_to_physical():
    x = np.arange(30 * 260, dtype=np.float32).reshape(30, 260)
    k = axe.kernel.relayout("f32[30,260]{1,0}", "{1,0:T(8,128)}")
    got = k.run(x)
    assert got.dtype == np.uint8  # a tiled destination comes back as its byte image
    np.testing.assert_array_equal(got, axe.to_physical(x, "f32[30,260]{1,0:T(8,128)}"))


def test_a_relayout_takes_the_logical_array_of_any_source_layout():
    x = np.arange(30 * 260, dtype=np.float32).reshape(30, 260)
    for src in ["f32[30,260]{0,1}", "f32[30,260]{1,0:T(8,128)}"]:
        k = axe.kernel.relayout(src, "{1,0}")
        want = x
        for given in [x, np.asfortranarray(x), axe.to_physical(x, src)]:  # logical, or the image
            np.testing.assert_array_equal(k.run(given), want)
    with pytest.raises(axe.KernelError, match="cannot hold f32"):
        axe.kernel.relayout("f32[30,260]{0,1}", "{1,0}").run(x.astype(np.float64))
    # Packed pred (one bit an element) from its logical bool array.
    bits = np.random.default_rng(3).random((64, 256)) < 0.5
    packed = "pred[64,256]{1,0:T(32,128)(32,1)E(1)}"
    np.testing.assert_array_equal(axe.kernel.relayout(packed, "{1,0}").run(bits), bits)


def test_a_run_past_the_interpreters_memory_is_refused_before_anything_is_allocated():
    # 2^20 rows of 2^14 f32 in and out: 128 GiB, refused up front (not numpy's MemoryError).
    with pytest.raises(axe.KernelError, match="more than its limit"):
        axe.kernel.softmax(2**20, 2**14).run({})


def test_explain_and_cuda_name_the_variants():
    k = axe.kernel.relayout("f32[64,64]{1,0}", "{0,1}")
    calls = k.explain("sm_80")
    assert calls[0]["variant"] == "copy.staged"
    assert any("copy.vec16" == v for v, _ in calls[0]["declined"])
    src = k.cuda("sm_90a")
    assert 'extern "C" __global__' in src and "copy.staged" in src
    assert "mma.sync" in axe.kernel.gemm(128, 128, 32).cuda("sm_80")
    assert "axe.kernel.Kernel(relayout f32[64,64]{1,0} -> f32[64,64]{0,1})" == repr(k)


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda: axe.kernel.softmax(4, 8, "s8"), "s8"),
        (lambda: axe.kernel.gemm(100, 128, 32), "multiples of 128"),
        (lambda: axe.kernel.relayout("f32[4,4]{1,0}", "f32[4,5]{1,0}"), "differ"),
        (lambda: axe.kernel.softmax(4, 8).explain("sm_70"), "sm_70"),
        (lambda: axe.kernel.softmax(4, 8).run(np.zeros((4, 8), np.float64)), "cannot hold f32"),
        (lambda: axe.kernel.softmax(4, 8).run(np.zeros((4, 9), np.float32)), "neither the logical"),
        (lambda: axe.kernel.gemm(128, 128, 32).run(np.zeros((128, 32), np.uint16)), "takes 2 input"),
        (lambda: axe.kernel.softmax(4, 8).run([1, 2]), "expected a numpy array"),
    ],
)
def test_bad_requests_are_kernel_errors(make, says):
    with pytest.raises(axe.KernelError, match=says) as e:
        make()
    assert isinstance(e.value, axe.AxeError)


def test_cuda_refuses_the_cpu_target_naming_the_cuda_targets():
    # cpu is the interpreter's target: it runs and explains, and has no CUDA.
    k = axe.kernel.softmax(4, 64)
    with pytest.raises(axe.KernelError, match=r"CUDA is emitted for the GPU targets sm_80 and sm_90a, not cpu"):
        k.cuda("cpu")
    with pytest.raises(axe.KernelError, match=r"not trn1.*NKI"):
        axe.kernel.gemm(128, 128, 256, target="trn1").cuda("trn1")
    assert k.explain("cpu") and "generated by axe-kernel for sm_80" in k.cuda("sm_80")


def test_relayout_destinations_the_kernel_takes_and_the_ones_it_refuses():
    src = "f32[8,128]{1,0}"
    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    want = axe.kernel.relayout(src, "{0,1}").run(x)
    # An axe.Shape is taken as its text is.
    shape = axe.Shape("f32[8,128]{0,1}")
    np.testing.assert_array_equal(axe.kernel.relayout(src, shape).run(x), want)
    np.testing.assert_array_equal(axe.kernel.relayout(src, "f32[8,128]{0,1}").run(x), want)
    # Axe and CuTe layouts are not XLA layouts: the error lists what dst takes.
    takes = "dst takes an XLA layout for the source's dims"
    for dst, what in [
        (axe.Layout("S[(8,128):(1,8)]"), "an axe.Layout"),
        (axe.cute.Layout("(8,128):(1,8)"), "an axe.cute.Layout"),
        ("S[(8,128):(1,8)]", "not an XLA layout or array shape"),
        ("(8,128):(1,8)", "not an XLA layout or array shape"),
        (3, "dst is an int;"),
    ]:
        with pytest.raises(axe.KernelError, match=re.escape(what)) as e:
            axe.kernel.relayout(src, dst)
        assert takes in str(e.value) and "axe.relayout" in str(e.value)


def test_gemm_takes_b_transposed_and_says_so_when_given_b():
    rng = np.random.default_rng(3)
    a = rng.integers(-2, 3, (128, 32)).astype(np.float16)
    b = rng.integers(-2, 3, (32, 128)).astype(np.float16)  # B itself, [K, N]
    k = axe.kernel.gemm(128, 128, 32, "f16")
    # B.T is a Fortran-order view: taken in any order.
    np.testing.assert_array_equal(k.run(a, b.T), a.astype(np.float32) @ b.astype(np.float32))
    with pytest.raises(axe.KernelError, match=r"pass B\.T"):
        k.run(a, b)
    a2 = rng.integers(-2, 3, (128, 64)).astype(np.float16)
    b2 = rng.integers(-2, 3, (64, 128)).astype(np.float16)
    rs = axe.kernel.gemm_reduce_scatter(128, 128, 64, "f16", devices=2)
    np.testing.assert_array_equal(rs.run(a2, b2.T), a2.astype(np.float32) @ b2.astype(np.float32))
    with pytest.raises(axe.KernelError, match=r"pass B\.T"):
        rs.run(a2, b2)

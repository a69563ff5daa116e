"""axe.kernel.Builder: kernels described in Python. A kernel written in Python emits the same CUDA as its
Rust twin (the shipped Hopper gemm and relayout), runs on the CPU interpreter against numpy, and every
misuse is an ``axe.AxeError`` (mostly ``axe.KernelError``) naming what was wrong, never a crash."""

import itertools

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import axe
import axe.kernel
from axe.kernel import Builder, Expr, Scope, cta, tid
from kernel_twins import hopper_gemm, transpose_relayout


# --- Twins: the same kernel written in Python and in Rust emits the same CUDA. ---


@pytest.mark.parametrize(
    "m, n, k, dtype",
    [(128, 256, 64, "bf16"), (256, 256, 128, "bf16"), (256, 512, 320, "f16"), (2048, 256, 64, "bf16")],
)
def test_hopper_gemm_written_in_python_emits_the_rust_cuda(m, n, k, dtype):
    py = hopper_gemm(m, n, k, dtype)
    rust = axe.kernel.gemm(m, n, k, dtype, target="sm_90a")
    assert rust.name == py.name == "gemm_sm90"
    assert py.cuda("sm_90a") == rust.cuda("sm_90a")
    assert py.explain("sm_90a") == rust.explain("sm_90a")
    variants = {d["variant"] for d in py.explain("sm_90a")}
    assert {"copy_async.tma", "gemm.wgmma"} <= variants


def test_the_twin_test_can_fail():
    """One statement changed (the producer's registers) changes the CUDA."""
    py = hopper_gemm(128, 256, 64).cuda("sm_90a")
    rust = axe.kernel.gemm(128, 256, 64, target="sm_90a").cuda("sm_90a")
    assert py.replace("setmaxnreg.dec.sync.aligned.u32 40", "setmaxnreg.dec.sync.aligned.u32 48") != rust
    assert hopper_gemm(128, 256, 128).cuda("sm_90a") != rust


@pytest.mark.parametrize("rows, cols", [(64, 64), (8, 128), (30, 260)])
def test_relayout_written_in_python_emits_the_rust_cuda(rows, cols):
    py = transpose_relayout(rows, cols)
    rust = axe.kernel.relayout(f"f32[{rows},{cols}]{{1,0}}", "{0,1}")
    for target in ("sm_80", "sm_90a"):
        assert py.cuda(target) == rust.cuda(target)
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    got = py.run({"src": x})["dst"]
    np.testing.assert_array_equal(got, x.T.reshape(-1))
    np.testing.assert_array_equal(got.view(np.uint8), rust.run(x))  # its byte image


def test_hopper_gemm_written_in_python_runs_on_the_interpreter():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(3)
    a = rng.integers(-2, 3, (128, 64)).astype(np.float32)
    b = rng.integers(-2, 3, (256, 64)).astype(np.float32)  # B given as [N, K]
    out = hopper_gemm(128, 256, 64).run(
        {"a": a.astype(ml_dtypes.bfloat16), "b": b.astype(ml_dtypes.bfloat16)}
    )
    assert set(out) == {"a", "b", "c"}
    np.testing.assert_array_equal(out["c"].reshape(128, 256), a @ b.T)


# --- Kernels written in Python run on the interpreter against numpy. ---


def test_row_sums_of_exp_by_a_warp_per_row():
    rows = 5
    b = Builder("rowsum", grid=rows, threads=32)
    x = b.buffer("x", "global", "f32", rows * 32)
    s = b.buffer("s", "global", "f32", rows)
    xg = b.tensor("x", x, [1, 32], "S[(1,32):(32,1)]")
    sg = b.tensor("s", s, [1, 1], axe.Layout.row_major([1, 1]))
    xr = b.tensor("xr", b.buffer("xr", "registers", "f32", 1), [1, 32], "S[(1,32):(1@reg,1@lane)]")
    sr = b.tensor("sr", b.buffer("sr", "registers", "f32", 1), [1, 1], "S[1:0@reg] + R[32:1@lane]")
    with b.window(x, cta * 32, 32):
        b.copy(Scope.warp(), xr, xg)
    b.unary(Scope.warp(), "exp", xr, xr)
    b.reduce(Scope.warp(), "sum", sr, xr, [1])
    with b.window(s, cta, 1):
        b.copy(Scope.warp(), sg, sr)
    k = b.build()
    assert [d["variant"] for d in k.explain("cpu")][2] == "reduce.shfl"
    xs = np.random.default_rng(0).standard_normal((rows, 32)).astype(np.float32)
    out = k.run({"x": xs})
    np.testing.assert_allclose(out["s"], np.exp(xs.astype(np.float64)).sum(1), rtol=1e-5)
    np.testing.assert_array_equal(out["x"], xs.reshape(-1))  # inputs come back unchanged


def test_pointwise_chain_at_cta_scope():
    b = Builder("chain", grid=1, threads=128)
    row = "S[(8,32):(32,1)]"
    x, w, y = (b.tensor(n, b.buffer(n, "global", "f32", 256), [8, 32], row) for n in "xwy")
    yi = b.tensor("yi", b.buffer("yi", "global", "s32", 256), [8, 32], row)
    b.unary(Scope.cta(), "relu", y, x)
    b.binary(Scope.cta(), "mul", y, y, w)
    b.barrier()
    b.cast(Scope.cta(), yi, y)
    rng = np.random.default_rng(1)
    xs, ws = (rng.standard_normal((8, 32)).astype(np.float32) * 10 for _ in range(2))
    out = b.build().run({"x": xs, "w": ws})
    want = np.maximum(xs, 0) * ws
    np.testing.assert_array_equal(out["y"].reshape(8, 32), want)
    # float -> int truncates toward zero (and saturates), as cvt.rzi.sat does
    np.testing.assert_array_equal(out["yi"].reshape(8, 32), np.trunc(want).astype(np.int32))


@pytest.mark.parametrize("scope", ["cta", "warp"])
def test_exp_sub_is_numpys_exp_of_the_difference(scope):
    # e^(a - b): softmax's step, exp(x - rowmax), as one operator.
    b = Builder("exp_sub", grid=1, threads={"cta": 128, "warp": 32}[scope])
    row = "S[(8,32):(32,1)]"
    x, m, y = (b.tensor(n, b.buffer(n, "global", "f32", 256), [8, 32], row) for n in "xmy")
    b.binary(getattr(Scope, scope)(), "exp_sub", y, x, m)
    rng = np.random.default_rng(7)
    xs, ms = (rng.standard_normal((8, 32)).astype(np.float32) * 4 for _ in range(2))
    ms[0, :4] = xs[0, :4]  # e^0 = 1 exactly
    out = b.build().run({"x": xs, "m": ms})
    want = np.exp(xs.astype(np.float64) - ms.astype(np.float64))
    np.testing.assert_allclose(out["y"].reshape(8, 32), want, rtol=1e-6, atol=0)
    np.testing.assert_array_equal(out["y"].reshape(8, 32)[0, :4], 1.0)
    # not another operator: exp(a) - b, or exp(b - a), would be far off
    assert not np.allclose(out["y"].reshape(8, 32), np.exp(ms.astype(np.float64) - xs), rtol=1e-6)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    m=st.integers(1, 7),
    c=st.integers(0, 7),
    lo=st.integers(-3, 40),
    hi=st.integers(-3, 70),
    ctas=st.integers(1, 3),
)
def test_if_conditions_select_the_threads_numpy_selects(m, c, lo, hi, ctas):
    """Each thread stores 1 where ``tid % m < c & lo < tid & tid <= hi`` (plus its CTA): the stores
    equal the same predicate evaluated by numpy."""
    b = Builder("pred", grid=ctas, threads=64)
    y = b.buffer("y", "global", "s32", ctas * 64)
    one = b.tensor("y1", y, [1], "S[1:1]")
    cond = (tid % m < c) & (lo < tid) & (tid <= hi)
    with b.window(y, cta * 64 + tid, 1):
        with b.if_(cond):
            b.fill(Scope.thread(), one, 1 + 0 * c)
        with b.if_(cta > 0):
            with b.if_(cond):
                b.fill(Scope.thread(), one, 2)
    out = b.build().run({})["y"].reshape(ctas, 64)
    t = np.arange(64)
    sel = (t % m < c) & (lo < t) & (t <= hi)
    want = np.array([np.where(sel, 1 if q == 0 else 2, 0) for q in range(ctas)])
    np.testing.assert_array_equal(out, want)


def test_loops_and_lets_accumulate():
    """``for_`` and ``let``: thread t adds x[t + 8 i] for i < 4 into its own window of y."""
    b = Builder("loop", grid=1, threads=32)
    x = b.buffer("x", "global", "f32", 32)
    y = b.buffer("y", "global", "f32", 8)
    one = "S[1:1]"
    xt, yt = b.tensor("x1", x, [1], one), b.tensor("y1", y, [1], one)
    lane = b.let(tid % 8)
    with b.if_(tid < 8):
        with b.for_(4) as i:
            with b.window(x, lane + i * 8, 1):
                with b.window(y, lane, 1):
                    b.binary(Scope.thread(), "add", yt, yt, xt)
    xs = np.arange(32, dtype=np.float32)
    out = b.build().run({"x": xs})
    np.testing.assert_array_equal(out["y"], xs.reshape(4, 8).sum(0))


# --- Expressions: the operators are C's, folded as the Rust builder folds. ---


ints = st.integers(-(2**40), 2**40)


@given(a=ints, b=ints)
def test_constant_expressions_fold_as_c_evaluates(a, b):
    def c_div(x, y):
        q = abs(x) // abs(y)
        return q if (x < 0) == (y < 0) else -q

    assert (Expr(a) + b).value == a + b
    assert (a - Expr(b)).value == a - b
    assert (Expr(a) * b).value == (a * b if -(2**63) <= a * b < 2**63 else None)  # overflow: unfolded
    assert (Expr(a) < b).value == int(a < b)
    assert (a < Expr(b)).value == int(a < b)
    assert (Expr(a) <= b).value == int(a <= b)
    assert (Expr(a) >= b).value == int(a >= b)
    assert (Expr(a) & b).value == int(a != 0 and b != 0)
    if b != 0:
        assert (Expr(a) // b).value == c_div(a, b)
        assert (Expr(a) % b).value == a - b * c_div(a, b)
    else:
        assert (Expr(a) // b).value is None  # kept as an expression: no value, no crash


def test_expressions_print_as_the_cuda_writes_them():
    assert str(tid // 128 < 1) == "((tid / 128LL) < 1LL)"
    assert str((tid < 3) & (0 < cta)) == "((tid < 3LL) && (0LL < cta))"
    assert str(tid + 0) == "tid" and str(1 * cta) == "cta"
    assert (tid + 1).value is None and Expr(3).value == 3
    with pytest.raises(axe.KernelError, match="k.if_"):
        bool(tid < 3)
    with pytest.raises(axe.KernelError, match="int or an axe.kernel.Expr"):
        tid + 1.5
    with pytest.raises(axe.KernelError, match="out of range"):
        tid + 2**70
    assert str(tid * np.int64(4)) == "(tid * 4LL)"  # numpy's integers are integers
    with pytest.raises(axe.KernelError, match="not a bool"):
        tid + True


# --- Misuse: a clear error, never a crash. ---


def small():
    b = Builder("k", grid=2, threads=128)
    g = b.buffer("g", "global", "f32", 256)
    return b, g


@pytest.mark.parametrize(
    "bad, says",
    [
        (lambda: Builder("1k", grid=1, threads=32), "C identifier"),
        (lambda: Builder("k", grid=1, threads=33), "multiple of 32"),
        (lambda: Builder("k", grid=0, threads=32), "at least 1"),
        (lambda: Builder("k", grid=3, threads=32, cluster=2), "divide"),
        (lambda: Builder("k", grid=2**40, threads=32), "2\\*\\*32"),
        (lambda: small()[0].buffer("h", "texture", "f32", 4), "unknown space"),
        (lambda: small()[0].buffer("h", ("shared", "256B"), "f32", 4), "unknown space"),
        (lambda: small()[0].buffer("h", ("global", "128B"), "f32", 4), "unknown space"),
        (lambda: small()[0].buffer("h", 3, "f32", 4), "a space is"),
        (lambda: small()[0].buffer("h", "global", "f31", 4), "unknown dtype"),
        (lambda: small()[0].buffer("h", "global", "f32", 0), "no elements"),
        (lambda: small()[0].buffer("g", "global", "f32", 4), "taken by another buffer"),
        (lambda: small()[0].buffer("tid", "global", "f32", 4), "taken in the generated code"),
        (lambda: Builder("int", grid=1, threads=32), "taken in the generated code"),
        (lambda: small()[0].buffer("h", "global", "f32", -1), "2\\*\\*64"),
        (lambda: (lambda b, g: b.tensor("t", g, [16, 17], "S[(16,17):(17,1)]"))(*small()), "outside buffer"),
        (lambda: (lambda b, g: b.tensor("t", g, [4, 4], "S[(4,4):(4@lane,1@lane)]"))(*small()), "axis lane"),
        (lambda: (lambda b, g: b.tensor("t", g, [4, 5], "S[(4,4):(4,1)]"))(*small()), "tensor t"),
        (lambda: (lambda b, g: b.tensor("t", g, [4, 4], 17))(*small()), "a layout is"),
        (lambda: (lambda b, g: b.tensor("t", g, [4], "S[(4:1]"))(*small()), "offset"),
        (lambda: (lambda b, g: b.tensor("t", g, [4], "S[4:1]").region([(2, 1)]))(*small()), "ends before"),
        (lambda: (lambda b, g: b.tensor("t", g, [4], "S[4:1]").region([(0, 5)]))(*small()), "region"),
        (lambda: Scope.warps(3, 3), "non-empty"),
        (lambda: Scope.threads(-1, 3), "2\\*\\*64"),
        (lambda: small()[0].max_registers(True, 20), "setmaxnreg"),
        (lambda: small()[0].mbar_init(small()[1], 0, 1), "another axe.kernel.Builder"),
        (lambda: (lambda b, g: b.mbar_init(g, 0, 1))(*small()), "unswizzled shared s64"),
        (lambda: (lambda b, g: b.window(g, tid, 0))(*small()), "alignment"),
    ],
)
def test_bad_descriptions_are_axe_errors(bad, says):
    with pytest.raises(axe.AxeError, match=says):
        bad()


def test_bad_calls_are_kernel_errors():
    b, g = small()
    h = b.buffer("h", "global", "f16", 256)
    t = b.tensor("t", g, [16, 16], "S[(16,16):(16,1)]")
    u = b.tensor("u", h, [16, 16], "S[(16,16):(16,1)]")
    v = b.tensor("v", g, [8, 8], "S[(8,8):(8,1)]")
    other, og = small()
    ot = other.tensor("t", og, [16, 16], "S[(16,16):(16,1)]")
    cases = [
        (lambda: b.copy(Scope.cta(), t, u), "use cast"),
        (lambda: b.copy(Scope.cta(), t, v), "shape"),
        (lambda: b.copy(Scope.warps(0, 9), t, t), "the launch has 4 warps"),
        (lambda: b.copy(Scope.warpgroups(0, 2), t, t), "warpgroup"),
        (lambda: b.copy(Scope.cta(), t, ot), "another axe.kernel.Builder"),
        (lambda: b.unary(Scope.cta(), "sqrt", t, t), "unknown unary"),
        (lambda: b.binary(Scope.cta(), "pow", t, t, t), "unknown binary"),
        (lambda: b.reduce(Scope.cta(), "prod", t, t, [1]), "unknown reduction"),
        (lambda: b.reduce(Scope.cta(), "sum", t, t, [-1]), "2\\*\\*64"),
        (lambda: b.fill(Scope.cta(), t, "1"), "int or a float"),
        (lambda: b.fill(Scope.cta(), t, True), "not a bool"),
        (lambda: b.gemm(Scope.warp(), t, t, v), "gemm"),
        (lambda: b.pack_bits(Scope.warp(), t, t), "pack_bits"),
        (lambda: b.copy_async(Scope.threads(0, 1), t, t, g, 0), "mbarrier"),
    ]
    for bad, says in cases:
        with pytest.raises(axe.AxeError, match=says):
            bad()
    # A refused call adds nothing: the kernel still builds, empty.
    assert b.build().explain("cpu") == []


def test_a_window_picks_vectors_its_base_keeps_aligned():
    # A thread's window starts at element 3·tid: 4-byte aligned only, so the copy moves one f32 at a
    # time (copy.vec4) where, without the window, 16-byte vectors would be chosen.
    b = Builder("win", grid=1, threads=32)
    a = b.buffer("a", "global", "f32", 32 * 3 + 4)
    o = b.buffer("o", "global", "f32", 32 * 4)
    ta = b.tensor("ta", a, [4], "S[4:1]")
    with b.window(o, tid * 4, 4):
        with b.window(a, tid * 3, 1):
            b.copy(Scope.thread(), b.tensor("to", o, [4], "S[4:1]"), ta)
    k = b.build()
    assert [c["variant"] for c in k.explain("cpu")] == ["copy.vec4"]
    assert any(v == "copy.vec16" and "window" in why for v, why in k.explain("cpu")[0]["declined"])
    x = np.arange(32 * 3 + 4, dtype=np.float32)
    got = k.run({"a": x})["o"].reshape(32, 4)
    np.testing.assert_array_equal(got, np.stack([x[3 * t : 3 * t + 4] for t in range(32)]))


def test_forcing_a_variant_that_does_not_apply_is_explained():
    b, g = small()
    src = b.tensor("s", g, [16, 16], "S[(16,16):(16,1)]")
    dst = b.tensor("d", b.buffer("d", "global", "f32", 256), [16, 16], "S[(16,16):(1,16)]")
    b.copy(Scope.cta(), dst, src, force="copy.vec16")
    with pytest.raises(axe.KernelError, match="copy.vec16"):
        b.build().cuda("sm_80")
    b2, g2 = small()
    s2 = b2.tensor("s", g2, [16, 16], "S[(16,16):(16,1)]")
    d2 = b2.tensor("d", b2.buffer("d", "global", "f32", 256), [16, 16], "S[(16,16):(16,1)]")
    b2.copy(Scope.cta(), d2, s2, force="copy.vec4")
    assert b2.build().explain("sm_80")[0]["variant"] == "copy.vec4"


def test_blocks_nest_and_close_once():
    b, g = small()
    blk = b.if_(tid < 1)
    with blk:
        loop = b.for_(3)
        i = loop.__enter__()
        with pytest.raises(axe.KernelError, match="still open"):
            b.build()
        with pytest.raises(axe.KernelError, match="innermost first"):
            blk.__exit__(None, None, None)
        assert isinstance(i, Expr)
        loop.__exit__(None, None, None)
        with pytest.raises(axe.KernelError, match="closes once"):
            loop.__exit__(None, None, None)
        b.for_(3)  # never entered: adds nothing
    with pytest.raises(axe.KernelError, match="entered once"):
        blk.__enter__()
    with pytest.raises(ValueError, match="boom"):
        with b.if_(tid < 2):
            raise ValueError("boom")  # an exception inside a block goes on


def test_run_checks_its_buffers():
    b = Builder("k", grid=1, threads=128)
    g = b.buffer("g", "global", "f32", 256)
    t = b.tensor("t", g, [16, 16], "S[(16,16):(16,1)]")
    b.fill(Scope.cta(), t, 2.5)
    k = b.build()
    assert k.built and k.params[0][0] == "g"
    assert np.all(k.run({})["g"] == 2.5)
    assert np.all(k.run({"g": np.zeros((16, 16), np.float32)})["g"] == 2.5)  # any shape of its size
    with pytest.raises(axe.KernelError, match="no global buffer 'h'"):
        k.run({"h": np.zeros(4)})
    with pytest.raises(axe.KernelError, match="dict"):
        k.run(np.zeros(256, np.float32))
    with pytest.raises(axe.KernelError, match="cannot hold f32"):
        k.run({"g": np.zeros(256, np.float64)})
    # The interpreter runs the program any target ships; an unknown target is an error.
    assert np.all(k.run({}, target="sm_90a")["g"] == 2.5)
    with pytest.raises(axe.KernelError, match="unknown target"):
        k.run({}, target="sm_70")
    with pytest.raises(axe.KernelError, match="sm_70"):
        k.cuda("sm_70")


# --- Properties against brute force: what the builder accepts is what fits. ---


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    dims=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    strides=st.lists(st.integers(-9, 9), min_size=3, max_size=3),
    offset=st.integers(0, 30),
    elems=st.integers(1, 120),
)
def test_a_tensor_is_accepted_exactly_when_it_stays_inside_its_buffer(dims, strides, offset, elems):
    strides = strides[: len(dims)]
    text = f"S[({','.join(map(str, dims))}):({','.join(map(str, strides))})] + {offset}"
    b = Builder("k", grid=1, threads=32)
    g = b.buffer("g", "global", "f32", elems)
    addrs = [offset + sum(i * s for i, s in zip(ix, strides)) for ix in itertools.product(*map(range, dims))]
    fits = min(addrs) >= 0 and max(addrs) < elems
    try:
        t = b.tensor("t", g, dims, text)
    except axe.AxeError as e:
        assert not fits or not isinstance(e, axe.KernelError), str(e)
        return
    assert fits
    np.testing.assert_array_equal(t.layout.map(dims).reshape(-1), addrs)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_region_is_the_parent_at_an_offset(data):
    dims = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3))
    region = [data.draw(st.tuples(st.integers(0, d + 1), st.integers(0, d + 1))) for d in dims]
    b = Builder("k", grid=1, threads=32)
    g = b.buffer("g", "global", "s32", 216)
    t = b.tensor("t", g, dims, axe.Layout.row_major(dims))
    try:
        r = t.region(region)
    except axe.AxeError:
        assert any(a > e or e > d or a == e for (a, e), d in zip(region, dims))
        return
    assert r.shape == [e - a for a, e in region]
    whole = t.layout.map(dims)
    want = whole[tuple(slice(a, e) for a, e in region)]
    np.testing.assert_array_equal(r.layout.map(r.shape), want)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    space=st.one_of(
        st.text(max_size=12),
        st.sampled_from(["global", "shared", "registers"]),
        st.tuples(st.sampled_from(["shared", "global", ""]), st.sampled_from(["128B", "64B", "32B", "16B", ""])),
        st.integers(),
        st.none(),
    ),
    dtype=st.one_of(st.sampled_from(["f32", "f16", "bf16", "f8e4m3", "s8", "s32", "s64"]), st.text(max_size=8)),
    elems=st.integers(-(2**70), 2**70),
    layout=st.one_of(st.text(max_size=20), st.sampled_from(["S[(4,4):(4,1)]", "S[(4,4):(1@reg,4@lane)]", "S[16:1] + 3"])),
)
def test_random_misuse_never_crashes(space, dtype, elems, layout):
    b = Builder("k", grid=1, threads=64)
    try:
        buf = b.buffer("x", space, dtype, elems)
        t = b.tensor("t", buf, [4, 4], layout)
        b.copy(Scope.cta(), t, t)
        b.build().cuda("sm_80")
    except axe.AxeError:
        pass


# --- The GIL is released while a built kernel is lowered, emitted and run. ---


@pytest.mark.parametrize("what", ["cuda", "explain", "run"])
def test_a_second_thread_runs_while_a_built_kernel_works(what):
    from test_gil_released import ticks_inside

    k = hopper_gemm(128, 256, 64)
    call = {
        "cuda": lambda: k.cuda("sm_90a"),
        "explain": lambda: k.explain("sm_90a"),
        "run": lambda: k.run({}),
    }[what]
    ticks, calls = ticks_inside(call)
    assert ticks > 3 * calls, (what, ticks, calls)


def test_an_extension_without_the_builder_is_refused_as_stale():
    """``axe.kernel`` imports the builder's classes from the extension: an extension built before them
    is refused on import with how to rebuild it, not half-loaded."""
    import ast
    import pathlib

    from axe import _build

    src = pathlib.Path(axe.kernel.__file__).read_text()
    imported = {
        a.name
        for node in ast.walk(ast.parse(src))
        if isinstance(node, ast.ImportFrom) and node.module == "_axe"
        for a in node.names
    }
    assert "KernelBuilder" in imported and imported <= set(_build.USED)


def kernel_samples():
    b = Builder("fz", grid=2, threads=128)
    g = b.buffer("g", "global", "f32", 256)
    bars = b.buffer("bars", "shared", "s64", 2)
    t = b.tensor("t", g, [16, 16], "S[(16,16):(16,1)]")
    r = b.tensor("r", b.buffer("r", "registers", "f32", 2), [2, 128], "S[(2,4,32):(1@reg,1@warp,1@lane)]")
    return b, [b, g, bars, t, t.region([(0, 8), (0, 16)]), r, Scope.cta(), Scope.warps(0, 2), tid, cta + 1]


@settings(max_examples=800, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_every_builder_method_with_random_arguments_never_crashes(data):
    """Random objects (the API fuzz test's, and the builder's own) to every method of a Builder, its
    blocks, tensors, scopes and expressions: each returns or raises AxeError, TypeError or ValueError."""
    from test_fuzz_api import ALLOWED, methods, values

    b, own = kernel_samples()
    args = st.one_of(values, st.sampled_from(own))
    target = data.draw(st.sampled_from(own + [Scope, Expr]))
    name, m = data.draw(st.sampled_from(sorted(methods(target), key=lambda nm: nm[0])))
    pos = data.draw(st.lists(args, max_size=6))
    try:
        out = m(*pos)
        if name in ("for_", "if_", "window"):
            with out:
                pass
    except ALLOWED:
        pass
    try:
        b.build().explain("cpu")
    except ALLOWED:
        pass


# --- The examples of docs/python.md run as written. ---


def doc_block(after: str) -> str:
    import pathlib

    doc = pathlib.Path(__file__).resolve().parents[3] / "docs" / "python.md"
    if not doc.is_file():
        pytest.skip("docs/python.md is not beside this test (an installed copy)")
    text = doc.read_text()
    at = text.index(after)
    start = text.index("```python\n", at) + len("```python\n")
    return text[start : text.index("```", start)]


def test_the_docs_hopper_gemm_is_the_rust_kernel():
    ns = {}
    exec(doc_block("<!-- hopper-gemm -->"), ns)
    for m, n, k in [(128, 256, 64), (512, 512, 192)]:
        rust = axe.kernel.gemm(m, n, k, target="sm_90a").cuda("sm_90a")
        assert ns["hopper_gemm"](m, n, k).cuda("sm_90a") == rust


def test_the_docs_row_sum_runs():
    ns = {}
    exec(doc_block("A warp per row"), ns)
    np.testing.assert_allclose(ns["out"]["s"], np.exp(ns["xs"].astype(np.float64)).sum(1), rtol=1e-5)


def test_shipped_kernels_run_by_name_too():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(4)
    a = rng.integers(-2, 3, (128, 32)).astype(np.float32)
    b = rng.integers(-2, 3, (128, 32)).astype(np.float32)
    k = axe.kernel.gemm(128, 128, 32)
    out = k.run({"a": a.astype(ml_dtypes.bfloat16), "b": b.astype(ml_dtypes.bfloat16)})
    assert list(out) == ["a", "b", "c"]
    np.testing.assert_array_equal(out["c"], a @ b.T)
    np.testing.assert_array_equal(out["c"], k.run(a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)))


def test_cp_async_tiles_land_after_the_wait_and_barrier():
    b = Builder("cp", grid=1, threads=128)
    g = b.buffer("g", "global", "f32", 64 * 32)
    o = b.buffer("o", "global", "f32", 64 * 32)
    t = b.buffer("t", ("shared", "128B"), "f32", 64 * 32)
    row = "S[(64,32):(32,1)]"
    src, tile, out = b.tensor("g", g, [64, 32], row), b.tensor("t", t, [64, 32], row), b.tensor("o", o, [64, 32], row)
    b.copy_async_group(Scope.cta(), tile, src)
    b.async_commit()
    b.async_wait(0)
    b.barrier()
    b.copy(Scope.cta(), out, tile)
    k = b.build()
    assert k.explain("sm_80")[0]["variant"] == "copy_async.cp_async"
    assert "cp.async.cg.shared.global" in k.cuda("sm_80")
    xs = np.random.default_rng(2).standard_normal((64, 32)).astype(np.float32)
    np.testing.assert_array_equal(k.run({"g": xs})["o"].reshape(64, 32), xs)
    # Without the wait, reading the tile is an error the interpreter names.
    b2 = Builder("cp2", grid=1, threads=128)
    g2, o2 = b2.buffer("g", "global", "f32", 64 * 32), b2.buffer("o", "global", "f32", 64 * 32)
    t2 = b2.buffer("t", "shared", "f32", 64 * 32)
    b2.copy_async_group(Scope.cta(), b2.tensor("t", t2, [64, 32], row), b2.tensor("g", g2, [64, 32], row))
    b2.async_commit()
    b2.copy(Scope.cta(), b2.tensor("o", o2, [64, 32], row), b2.tensor("t", t2, [64, 32], row))
    with pytest.raises(axe.KernelError, match="without waiting"):
        b2.build().run({"g": xs})


def test_trainium_gemm_emits_nki_and_runs_on_the_interpreter():
    k = axe.kernel.gemm(128, 128, 256, target="trn1")
    text = k.nki()
    assert "nc_matmul" in text
    rng = np.random.default_rng(3)
    a = rng.integers(-2, 3, (128, 256)).astype(np.float32)
    b = rng.integers(-2, 3, (128, 256)).astype(np.float32)
    bits = lambda x: (x.view(np.uint32) >> 16).astype(np.uint16)
    c = np.asarray(k.run(bits(a), bits(b), target="trn1"), dtype=np.float32).reshape(128, 128)
    np.testing.assert_array_equal(c, a @ b.T)


def test_a_shipped_kernel_is_used_only_on_the_targets_it_is_built_for():
    # As `axe kernel list` says: softmax and relayout are built for the thread model, each gemm for
    # the target it was asked for; every method that lowers says so rather than lowering something else.
    trn = axe.kernel.gemm(128, 128, 256, target="trn1")
    gpu = axe.kernel.gemm(128, 128, 256, target="sm_80")
    hopper = axe.kernel.gemm(128, 256, 64, target="sm_90a")
    for call, says in [
        (lambda: axe.kernel.softmax(4, 64).explain("trn1"), "which trn1 has not: it is built for cpu, sm_80 and sm_90a, not trn1"),
        (lambda: axe.kernel.softmax(4, 64).nki(), "not trn1"),
        (lambda: axe.kernel.relayout("f32[8,8]{1,0}", "{0,1}").explain("trn1"), "one program on one NeuronCore"),
        (lambda: trn.cuda("sm_90a"), "this gemm is trn1's"),
        (lambda: trn.run(np.zeros((128, 256), np.uint16), np.zeros((128, 256), np.uint16)), "built for trn1, not cpu"),
        (lambda: gpu.nki(), "trn1's is built with target trn1"),
        (lambda: hopper.explain("sm_80"), "built for cpu and sm_90a, not sm_80"),
    ]:
        with pytest.raises(axe.KernelError, match=re.escape(says)):
            call()
    assert [d["variant"] for d in hopper.explain("sm_90a")][0] == "copy_async.tma"
    assert gpu.explain("cpu") and trn.explain("trn1")

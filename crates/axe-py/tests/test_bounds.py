"""What the machine cannot hold or walk is refused with an exception, never a crash: destinations past
memory, interpreter runs past their limit, expressions and blocks nested too deep, thread counts; and
the dtypes each element type takes (pred only from bool; the 6- and 4-bit floats from ml_dtypes)."""

import contextlib

import numpy as np
import pytest

import axe
from axe.kernel import Builder, tid


def test_a_destination_past_memory_is_a_memory_error():
    x = np.zeros((2, 2), np.float32)
    for call in [
        lambda: axe.to_physical(x, "f32[2,2]{1,0:T(2,100000000000)}"),
        lambda: axe.relayout(x, "f32[2,2]", axe.Layout("S[(2,2):(1000000000000,1)]")),
    ]:
        with pytest.raises((MemoryError, axe.AxeError)):
            call()


def test_a_destination_past_isize_max_is_a_memory_error_not_numpys_value_error():
    # 2^63 + 8 bytes: numpy itself refuses such an array with a ValueError ("Maximum allowed
    # dimension exceeded"), which is no axe.AxeError; no machine holds it, so it is a MemoryError.
    x = np.zeros((2, 2), np.float32)
    for dst in [axe.Layout("S[(2,2):(2305843009213693952,1)]"), "S[(2,2):(2305843009213693952,1)]"]:
        with pytest.raises(MemoryError, match="9223372036854775816 bytes, past any memory"):
            axe.relayout(x, "f32[2,2]", dst)


def test_interpreter_runs_past_its_memory_are_kernel_errors():
    # 4 TB of output: numpy's MemoryError where Python cannot make the buffer, else the limit.
    with pytest.raises((MemoryError, axe.KernelError)):
        axe.kernel.relayout("f32[1000000,1000000]", "{0,1}").run({})
    with pytest.raises(axe.KernelError, match="the interpreter would hold"):
        axe.kernel.relayout("f32[16384,16384]", "{0,1}").run({})
    b = Builder("regs", grid=1, threads=32)
    b.buffer("x", "registers", "f32", 2**30)
    with pytest.raises(axe.KernelError, match="the interpreter would hold"):
        b.build().run({})


def test_expressions_and_blocks_nested_too_deep_are_refused_as_built():
    e = tid
    with pytest.raises(axe.KernelError, match="nested more than 256 deep"):
        for _ in range(300):
            e = e + 1
    b = Builder("x", grid=1, threads=32)
    b.buffer("x", "global", "f32", 32)
    with pytest.raises(axe.KernelError, match="nested more than 64 deep"):
        with contextlib.ExitStack() as st:
            for _ in range(100):
                st.enter_context(b.if_(tid < 64))


def test_thread_counts_are_bounded():
    x = np.zeros((2, 2), np.float32)
    with pytest.raises(axe.RelayoutError, match="at most 1024"):
        axe.relayout(x, "f32[2,2]", "{0,1}", threads=10000)
    for t in range(2, 12):
        assert (axe.relayout(x, "f32[2,2]", "{0,1}", threads=t) == 0).all()


def test_pred_only_from_bool():
    u = np.array([[0, 2, 255, 1]], np.uint8)
    for call in [
        lambda: axe.to_physical(u, "pred[1,4]{1,0:E(1)}"),
        lambda: axe.to_physical(u, "pred[1,4]"),
    ]:
        with pytest.raises(axe.RelayoutError, match="cannot hold pred"):
            call()
    b = u != 0
    packed = axe.to_physical(b, "pred[1,4]{1,0:E(1)}")
    assert (axe.from_physical(packed, "pred[1,4]{1,0:E(1)}") == b).all()


def test_six_and_four_bit_floats_from_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for name, xla in [
        ("float6_e2m3fn", "f6e2m3fn"),
        ("float6_e3m2fn", "f6e3m2fn"),
        ("float4_e2m1fn", "f4e2m1fn"),
        ("float8_e8m0fnu", "f8e8m0fnu"),
    ]:
        t = getattr(ml_dtypes, name, None)
        if t is None:
            continue
        x = np.arange(4).astype(np.float32).astype(t).reshape(2, 2)
        shape = f"{xla}[2,2]"
        img = axe.to_physical(x, shape + "{0,1}")
        back = axe.from_physical(img, shape + "{0,1}")
        assert back.dtype == np.dtype(t), name
        assert (back.view(np.uint8) == x.view(np.uint8)).all(), name
        raw = axe.to_physical(x.view(np.uint8), shape + "{0,1}")
        assert (raw == img).all(), name


def test_int_tuples_nested_past_the_notation_are_cute_errors():
    t = 4
    for _ in range(5000):
        t = (t,)
    for call in [
        lambda: axe.cute.Layout(t),
        lambda: axe.cute.Layout(t, t),
        lambda: axe.cute.size(t),
        lambda: axe.cute.flatten(t),
    ]:
        with pytest.raises(axe.CuteError, match="nested deeper than 64"):
            call()
    shallow = 4
    for _ in range(10):
        shallow = (shallow,)
    assert axe.cute.size(shallow) == 4 and axe.cute.flatten(shallow) == (4,)

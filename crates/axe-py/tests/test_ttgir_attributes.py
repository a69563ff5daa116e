"""TTGIR layout attributes (``#ttg.blocked<{...}>``, ``#ttg.nvidia_mma<{...}>``, ``#ttg.dot_op<{...}>``, alias
lines of a TTGIR module) are read wherever ``axe.triton`` takes Gluon text, as the Gluon constructor each
stands for; a bad attribute is an ``axe.ParseError`` whose offset is the offending byte."""

import numpy as np
import pytest

import axe
from axe import triton

BLOCKED = (
    "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
)
BLOCKED_G = (
    "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[4, 8], warps_per_cta=[4, 1], order=[1, 0])"
)
MMA = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 256, 16]}>"
MMA_G = "NVMMADistributedLayout(version=[3, 0], warps_per_cta=[8, 1], instr_shape=[16, 256, 16])"


def twins(ttgir: str, gluon: str, shape):
    """Both texts give the same linear layout, the same Axe layout, and the same hardware map."""
    a, b = triton.LinearLayout(ttgir, shape=shape), triton.LinearLayout(gluon, shape=shape)
    assert a.to_json() == b.to_json()
    assert a.in_dims == b.in_dims and a.out_dims == b.out_dims
    assert np.array_equal(a.map(), b.map())
    la, lb = triton.gluon_to_axe(ttgir, shape), triton.gluon_to_axe(gluon, shape)
    assert str(la) == str(lb)
    assert triton.hardware_map(la, shape) == triton.hardware_map(lb, shape)


@pytest.mark.parametrize("shape", [[16, 32], [32, 16], [64, 64]])
def test_a_blocked_attribute_is_its_constructor(shape):
    twins(BLOCKED, BLOCKED_G, shape)
    # the older dialect prefix too
    twins(BLOCKED.replace("#ttg.", "#triton_gpu."), BLOCKED_G, shape)


def test_the_twin_check_can_fail():
    other = BLOCKED.replace("order = [1, 0]", "order = [0, 1]")
    with pytest.raises(AssertionError):
        twins(other, BLOCKED_G, [16, 32])


def test_gluon_to_axe_lays_out_shapes_triton_cannot_from_ttgir():
    # 48 rows is not a power of two: only gluon_to_axe lays it out; both forms agree.
    assert str(triton.gluon_to_axe(BLOCKED, [48, 32])) == str(triton.gluon_to_axe(BLOCKED_G, [48, 32]))


def test_an_alias_module_resolves():
    header = (
        f"#blocked = {BLOCKED}\n"
        f"#mma = {MMA}\n"
        "#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>\n"
    )
    twins(header + "#mma", MMA_G, [128, 256])
    twins(header + "  #blocked  \n", BLOCKED_G, [16, 32])
    twins(
        header + "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>",
        f"DotOperandLayout(operand_index=0, parent={MMA_G}, k_width=2)",
        [128, 64],
    )
    twins(
        header + "#dot = #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>\n#ttg.slice<{dim = 1, parent = #dot}>",
        f"SliceLayout(dim=1, parent=DotOperandLayout(operand_index=0, parent={MMA_G}, k_width=2))",
        [128],
    )
    # Several definitions and no layout named: the error names the aliases, at the end of the text.
    with pytest.raises(axe.ParseError, match="#blocked, #mma, #shared") as e:
        triton.LinearLayout(header, shape=[16, 32])
    assert e.value.offset == len(header.rstrip())  # the text is read trimmed


@pytest.mark.parametrize(
    "text, at, says",
    [
        (BLOCKED.replace("order = [1, 0]", "order = [1, 0], vector = 4"), "vector", "has no parameter `vector`"),
        (BLOCKED.replace("sizePerThread = [1, 4]", "sizePerThread = [1, 0]"), "0]", "positive"),
        (BLOCKED.replace("order = [1, 0]", "order = [1, 1]"), "[1, 1]", "permutation"),
        ("#gpu.blocked<{}>", "gpu", "unknown dialect"),
        (f"#mma = {MMA}\n#ttg.slice<{{dim = 0, parent = #mma1}}>", "#mma1", "#mma1"),
    ],
)
def test_a_bad_attribute_is_a_parse_error_at_its_offset(text, at, says):
    for read in (
        lambda: triton.LinearLayout(text, shape=[16, 32]),
        lambda: triton.gluon_to_axe(text, [16, 32]),
        lambda: triton.padding_of(text),
    ):
        with pytest.raises(axe.ParseError, match=says) as e:
            read()
        assert e.value.offset == text.find(at), (text, str(e.value))

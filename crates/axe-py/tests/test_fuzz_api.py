"""A fuzz test of the Python API: random objects and arguments to every public function, constructor
and method (of axe, axe.cute, axe.triton, axe.torch, axe.jax, axe.hlo, axe.kernel, and axe.render) never
crash; they return or raise AxeError, TypeError or ValueError (AxeError is a ValueError): never an
OverflowError, ZeroDivisionError, AttributeError or MemoryError."""

import inspect
import os
import tempfile

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import axe

ALLOWED = (axe.AxeError, TypeError, ValueError)

LAYOUT_JSON = '{"in": {"register": [[0, 1]], "lane": [[1, 0], [2, 0]]}, "out": {"dim0": 4, "dim1": 2}}'


KERNEL = axe.kernel.softmax(4, 32)


def samples():
    return [
        axe.Layout("S[(8,2):(4@lane,1)] + R[2:4@warp]"),
        axe.Layout("S[(4,4):(4,1)]"),
        axe.Shape("bf16[8,128]{1,0:T(8,128)(2,1)}"),
        axe.Shape("f32[3,5]{0,1}"),
        axe.Shape("s4[8]{0:E(4)}"),
        axe.Mesh("x=2,y=2"),
        axe.Mesh([]),
        axe.Sharding("P('x', 'y')", shape="f32[64,128]", mesh="x=2,y=2"),
        axe.Sharding("[Partial(), Shard(0)]", shape=[4, 4], mesh="x=2,y=2"),
        axe.triton.LinearLayout(LAYOUT_JSON),
        axe.cute.Layout((4, (2, 3)), (1, (4, 8))),
        axe.cute.Layout("(6,2):(8,2)"),
        axe.cute.Swizzle(3, 4, 3),
        axe.cute.ComposedLayout(axe.cute.Swizzle(1, 0, 2), 0, axe.cute.Layout((4, 4), (4, 1))),
        KERNEL,
    ]


TEXTS = [
    "S[4:1]", "S[(2,2):(1@lane,2)]", "f32[4,4]", "f32[4,4]{0,1:T(2,2)}", "{1,0}", "{0,1:T(2,}",
    "P('x')", "P('x', 'y')", "P(('x','x'))", "[Shard(0)]", "{devices=[2]<=[2]}", "S0R", "x=2", "x=2,y=2",
    "x=0", "bf16[?]", "f32[<=4]", "#ttg.linear<{register = [[0, 1]], lane = [], warp = [], block = []}>",
    "BlockedLayout([1,1],[32,1],[4,1],[1,0])", "HloModule m\nENTRY e { ROOT p = f32[4] parameter(0) }",
    LAYOUT_JSON, "", "  ", "\x00", "{", "(", "[" * 50, "jax", "hlo", "alpa", "dtensor", "axe", "m", "lane",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.integers(-4, 70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(TEXTS),
    st.text(max_size=20),
    st.binary(max_size=8),
)
small_lists = st.lists(st.integers(-3, 9), max_size=4)
# CuTe's int tuples (shapes, strides, coordinates), None (a slice) among the leaves.
int_tuples = st.recursive(
    st.one_of(st.integers(-3, 9), st.none(), st.integers(2**40, 2**70)),
    lambda c: st.tuples(c) | st.tuples(c, c) | st.tuples(c, c, c),
    max_leaves=6,
)


def arrays():
    dtype = st.sampled_from(["f4", ">f4", "f2", "u1", "i4", "u2", "f8", "c8", "?", "i8"])
    shape = st.lists(st.integers(0, 5), max_size=3)
    return st.builds(lambda d, s: np.zeros(s, dtype=d), dtype, shape)


values = st.one_of(
    scalars,
    small_lists,
    st.lists(st.tuples(st.integers(-2, 9), st.integers(-2, 9)), max_size=3),
    st.dictionaries(st.sampled_from(["x", "y", "", "1"]), st.integers(-2, 5), max_size=3),
    st.sampled_from(samples()),
    arrays(),
    st.lists(scalars, max_size=3),
    int_tuples,
)

FUNCTIONS = {
    "Layout": axe.Layout,
    "Layout.row_major": axe.Layout.row_major,
    "Layout.column_major": axe.Layout.column_major,
    "Shape": axe.Shape,
    "Mesh": axe.Mesh,
    "Sharding": axe.Sharding,
    "relayout": axe.relayout,
    "to_physical": axe.to_physical,
    "from_physical": axe.from_physical,
    "triton.LinearLayout": axe.triton.LinearLayout,
    "triton.LinearLayout.from_axe": axe.triton.LinearLayout.from_axe,
    "triton.gluon_to_axe": axe.triton.gluon_to_axe,
    "triton.padding_of": axe.triton.padding_of,
    "triton.hardware_map": axe.triton.hardware_map,
    "torch.sharding_of": axe.torch.sharding_of,
    "torch.placement_text": axe.torch.placement_text,
    "torch.mesh_of": axe.torch.mesh_of,
    "jax.sharding_of": axe.jax.sharding_of,
    "jax.shape_of": axe.jax.shape_of,
    "jax.mesh_of": axe.jax.mesh_of,
}
for _name in axe.hlo.__all__:
    _f = getattr(axe.hlo, _name)
    if inspect.isfunction(_f):
        FUNCTIONS[f"hlo.{_name}"] = _f
for _name in axe.cute.__all__:
    FUNCTIONS[f"cute.{_name}"] = getattr(axe.cute, _name)
for _name in ["relayout", "softmax", "gemm", "gemm_reduce_scatter", "run", "wgmma_accumulator", "Builder",
              "DeviceBuilder"]:
    FUNCTIONS[f"kernel.{_name}"] = getattr(axe.kernel, _name)
FUNCTIONS["render"] = axe.render

# Methods that write files get a path in a temporary folder (or a random object that is no path).
WRITES = {"render"}
PICTURE_NAMES = st.sampled_from(["p.svg", "p.png", "p.txt", "p.jpg", "p", "", "no/p.svg"])


def methods(obj):
    for name in dir(obj):
        if name.startswith("_") and name not in ("__call__", "_repr_svg_", "__len__", "__reduce__", "__deepcopy__", "__copy__"):
            continue
        attr = getattr(type(obj), name, None)
        if isinstance(attr, property) or inspect.isdatadescriptor(attr):
            continue
        m = getattr(obj, name, None)
        if callable(m):
            yield name, m


def call(f, args, kwargs):
    try:
        f(*args, **kwargs)
    except ALLOWED:
        pass


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(FUNCTIONS)), st.lists(values, max_size=4), st.data())
def test_functions_never_crash(name, args, data):
    kwargs = {}
    if data.draw(st.booleans()):
        kw = data.draw(st.sampled_from(["shape", "mesh", "notation", "dtype", "out", "devices", "threads", "top", "tv", "target"]))
        kwargs[kw] = data.draw(values)
    with tempfile.TemporaryDirectory() as d:
        if name == "render" and len(args) >= 2 and isinstance(args[1], (str, bytes, os.PathLike)):
            # A picture goes into a temporary folder, never the working one.
            args[1] = os.path.join(d, data.draw(PICTURE_NAMES))
        call(FUNCTIONS[name], args, kwargs)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(samples()), st.data())
def test_methods_never_crash(obj, data):
    # Every attribute read (properties included) and every method called with random arguments.
    for name in dir(obj):
        if not name.startswith("_"):
            try:
                getattr(obj, name)
            except ALLOWED:
                pass
    ms = dict(methods(obj))
    name = data.draw(st.sampled_from(sorted(ms)))
    args = data.draw(st.lists(values, max_size=3))
    with tempfile.TemporaryDirectory() as d:
        if name in WRITES and (not args or isinstance(args[0], (str, bytes, os.PathLike)) or data.draw(st.booleans())):
            args = [os.path.join(d, data.draw(PICTURE_NAMES))] + args[1:]
        call(ms[name], args, {})
    for op in (hash, str, repr, bool):
        op(obj)
    for other in samples() + [None, 1, "x"]:
        assert (obj == other) in (True, False)

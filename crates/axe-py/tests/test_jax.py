"""The JAX adapters against real jax arrays on CPU (skipped where jax is not installed)."""

import os
import re

import numpy as np
import pytest

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import axe  # noqa: E402
from jax.experimental.layout import Format, Layout  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402


def test_layouts_print_as_xla_prints_them():
    for m2m, tiling, bits, dtype, shape in [
        ((1, 0), (), 0, np.float32, (3, 4)),
        ((0, 1), ((8, 128), (2, 1)), 0, np.float32, (16, 256)),
        ((0,), ((1024,),), 4, np.int8, (2048,)),
        ((2, 0, 1), ((8, 128),), 0, np.float32, (3, 5, 7)),
    ]:
        layout = Layout(major_to_minor=m2m, tiling=tiling, sub_byte_element_size_in_bits=bits)
        s = axe.jax.shape_of(layout, shape=shape, dtype=dtype)
        assert str(s).endswith(str(layout._to_xla_layout(np.dtype(dtype)))), (s, layout)


def test_a_jax_arrays_format_and_bytes():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    dev = jax.devices()[0]
    fmt = Format(Layout(major_to_minor=(1, 0)), jax.sharding.SingleDeviceSharding(dev))
    a = jax.device_put(x, fmt)
    s = axe.jax.shape_of(a)
    assert str(s) == "f32[3,4]{0,1}"
    # jax hands the buffer to numpy as it lies in memory (column-major here): its memory order is
    # the byte image axe makes of the logical array.
    held = np.asarray(a)
    assert held.flags.f_contiguous and not held.flags.c_contiguous
    with pytest.raises(axe.RelayoutError, match="C-contiguous"):
        axe.to_physical(held, s)
    assert (axe.to_physical(x, s).view(np.float32) == held.ravel(order="K")).all()
    assert str(axe.jax.shape_of(jnp.ones((8, 128), jnp.bfloat16))) == "bf16[8,128]{1,0}"


@pytest.mark.parametrize(
    "mesh_shape,names,spec,dims",
    [
        ((2, 4), ("x", "y"), P("x", "y"), (64, 128)),
        ((2, 4), ("x", "y"), P("y", None), (64, 128)),
        ((2, 4), ("x", "y"), P(None, ("x", "y")), (64, 128)),
        ((2, 4), ("x", "y"), P(("y", "x")), (64, 128)),
        ((2, 2, 2), ("a", "b", "c"), P("c", "a"), (16, 16)),
        ((8,), ("x",), P(), (8, 8)),
    ],
)
def test_named_shardings_lower_as_jax_lowers_them(mesh_shape, names, spec, dims):
    if len(jax.devices()) < 8:
        pytest.skip("needs 8 CPU devices (XLA_FLAGS set before jax was imported)")
    mesh = jax.make_mesh(mesh_shape, names)
    ns = NamedSharding(mesh, spec)
    a = jax.device_put(jnp.zeros(dims, jnp.float32), ns)
    s = axe.jax.sharding_of(a)
    assert s.to("hlo") == str(ns._to_xla_hlo_sharding(len(dims)))
    held = {d["device"]: d["region"] for d in s.devices()}
    for shard in a.addressable_shards:
        want = [(sl.start or 0, sl.stop if sl.stop is not None else n) for sl, n in zip(shard.index, dims)]
        assert held[shard.device.id] == want


@pytest.mark.parametrize("spec_args", [(("x",), {"y"}), ((), {"x", "y"}), ((None, "y"), {"x"})])
def test_unreduced_specs_are_pending_sums_as_jax_lowers_them(spec_args):
    # JAX's unreduced axes hold partial sums: XLA's unreduced subgroup, DTensor's Partial().
    if len(jax.devices()) < 4:
        pytest.skip("needs 4 CPU devices (XLA_FLAGS set before jax was imported)")
    axis_type = getattr(jax.sharding, "AxisType", None)
    if axis_type is None:
        pytest.skip("this jax has no explicit mesh axes")
    parts, unreduced = spec_args
    try:
        spec = P(*parts, unreduced=unreduced)
    except TypeError:
        pytest.skip("this jax has no unreduced specs")
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(axis_type.Explicit,) * 2)
    ns = NamedSharding(mesh, spec)
    s = axe.jax.sharding_of(ns, shape=(4, 4))
    assert s.to("hlo") == str(ns._to_xla_hlo_sharding(2))
    assert "Partial()" in s.to("dtensor")
    with pytest.raises(axe.ShardingError, match="reduced axes are not read"):
        axe.jax.sharding_of(NamedSharding(mesh, P("x", reduced={"y"})), shape=(4, 4))


def test_single_device_shardings_are_maximal():
    # jax.device_put(x, device) gives a SingleDeviceSharding: XLA's {maximal device=N}, as jax lowers it.
    dev = jax.devices()[-1]
    a = jax.device_put(jnp.zeros((4, 6), jnp.float32), dev)
    s = axe.jax.sharding_of(a)
    want = str(a.sharding._to_xla_hlo_sharding(2))
    assert want == f"{{maximal device={dev.id}}}" or want == "{replicated}"
    assert s.to("hlo") == f"{{maximal device={dev.id}}}"
    held = {d["device"]: d["region"] for d in s.devices() if d["local_shape"] != [0, 0]}
    assert held == {dev.id: [(0, 4), (0, 6)]}
    assert s.mesh.devices == sorted(d.id for d in jax.devices())
    given = axe.jax.sharding_of(jax.sharding.SingleDeviceSharding(dev), shape=(4, 6))
    assert given == s
    with pytest.raises(axe.ShardingError, match="SingleDeviceSharding needs the array's shape="):
        axe.jax.sharding_of(jax.sharding.SingleDeviceSharding(dev))
    if len(jax.devices()) >= 8:
        # Resharding onto a mesh moves it out of the one device, as jax.device_put does.
        ns = NamedSharding(jax.make_mesh((8,), ("x",)), P("x"))
        plan = s.plan(axe.jax.sharding_of(ns, shape=(4, 6)))
        assert plan["bytes"] == 4 * 6 * 4 and plan["collective"] == "scatter"


def test_shardy_text_reads_as_jax_lowers_it():
    # JAX 0.10 lowers with Shardy: the attribute its module shows reads as the NamedSharding it came from.
    if len(jax.devices()) < 8:
        pytest.skip("needs 8 CPU devices (XLA_FLAGS set before jax was imported)")
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    ns = NamedSharding(mesh, P("y", "x"))
    text = jax.jit(lambda a: a, in_shardings=ns, out_shardings=ns).lower(jnp.zeros((8, 8))).as_text()
    attr = re.search(r"sdy.sharding = (#sdy.sharding<.*?>)[,}]", text).group(1)
    assert attr == '#sdy.sharding<@mesh, [{"y"}, {"x"}]>', attr
    s = axe.Sharding(attr, shape="f32[8,8]", mesh=axe.jax.mesh_of(mesh))
    assert s == axe.jax.sharding_of(ns, shape=(8, 8))
    assert s.to("sdy") == attr
    # The module's own mesh line reads as the mesh.
    line = re.search(r"sdy.mesh @mesh = (<.*?>) ", text).group(1)
    assert axe.Mesh(line) == axe.jax.mesh_of(mesh)
    with pytest.raises(axe.AxeError, match="unknown mesh axis"):
        axe.Sharding('#sdy.sharding<@mesh, [{"q"}, {}]>', shape="f32[8,8]", mesh=line)

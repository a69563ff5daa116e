"""Names a user passes (axes, mesh axes, dtypes, ...): an unknown or misspelt one is a clear error that
says what was wrong and lists what is accepted, never a silent default or a column of zeros."""

import numpy as np
import pytest

import axe


def test_layout_map_refuses_an_axis_the_layout_does_not_have():
    l = axe.Layout("S[(2,2):(1@lane,1)]")
    with pytest.raises(axe.LayoutError, match=r'no axis "nope"; its axes are lane, m'):
        l.map(axis="nope")
    # A layout on threads alone has no memory axis either.
    with pytest.raises(axe.LayoutError, match=r'no axis "m"; its axes are lane'):
        axe.Layout("S[4:1@lane]").map(axis="m")
    with pytest.raises(axe.LayoutError, match="invalid axis name"):
        l.map(axis="9x")
    assert list(l.map(axis="m")) == [0, 1, 0, 1]
    # An axis only the offset mentions is the layout's: its column is the offset.
    assert list(axe.Layout("S[2:1] + 3@warp").map(axis="warp")) == [3, 3]


def test_layout_with_no_axis_maps_any_name_to_zero():
    l = axe.Layout("S[]")
    assert l.axes == []
    assert list(l.map()) == [0]
    assert list(l.map(axis="lane")) == [0]
    assert l.span("lane") == 1


def test_layout_span_refuses_an_axis_the_layout_does_not_have():
    l = axe.Layout("S[(2,4):(1@lane,1@warp)]")
    assert l.span("warp") == 4
    with pytest.raises(axe.LayoutError, match=r'no axis "lnae"; its axes are lane, warp'):
        l.span("lnae")


def test_kernel_accumulates_refuses_a_parameter_it_does_not_have():
    k = axe.kernel.gemm(128, 128, 32)
    assert k.accumulates("c") and not k.accumulates("a")
    with pytest.raises(axe.KernelError, match=r'no parameter "C"; its parameters are a, b, c'):
        k.accumulates("C")


def test_a_misspelt_dtype_lists_the_dtypes():
    import axe.jax

    class NamedSharding:  # what sharding_of reads of one; the dtype is refused before the mesh is read
        mesh, spec = None, ()

    with pytest.raises(axe.XlaError, match=r"dtype 'flaot32' has no XLA element type; the dtypes are .*float32.*bf16"):
        axe.jax.sharding_of(NamedSharding(), shape=(8,), dtype="flaot32")


class _Devices:
    """What `jax.sharding.Mesh.devices` offers axe: a shape and a flat list of devices with ids."""

    def __init__(self, shape):
        from types import SimpleNamespace

        self.shape = shape
        self.flat = [SimpleNamespace(id=i) for i in range(int(np.prod(shape)))]


def test_framework_meshes_that_repeat_an_axis_name_are_refused():
    from types import SimpleNamespace

    # A dict of the names would keep one `x`, of the last size, and a mesh of 2 devices for 8.
    jax_mesh = SimpleNamespace(axis_names=("x", "x"), devices=_Devices((2, 4)))
    with pytest.raises(axe.ShardingError, match=r"the jax Mesh names the axis 'x' twice"):
        axe.jax.mesh_of(jax_mesh)
    torch_mesh = SimpleNamespace(shape=(2, 4), mesh_dim_names=("dp", "dp"), mesh=np.arange(8).reshape(2, 4))
    with pytest.raises(axe.ShardingError, match=r"the DeviceMesh names the axis 'dp' twice"):
        axe.torch.mesh_of(torch_mesh)
    # Names and dims in different numbers.
    torch_mesh = SimpleNamespace(shape=(2, 4), mesh_dim_names=("dp",), mesh=np.arange(8).reshape(2, 4))
    with pytest.raises(axe.ShardingError, match=r"names 1 axes \['dp'\] for 2 dims \[2, 4\]"):
        axe.torch.mesh_of(torch_mesh)
    # Distinct names read as before.
    m = axe.jax.mesh_of(SimpleNamespace(axis_names=("x", "y"), devices=_Devices((2, 4))))
    assert axe.torch.mesh_of(
        SimpleNamespace(shape=(2, 4), mesh_dim_names=("x", "y"), mesh=np.arange(8).reshape(2, 4))
    ) == m
    assert "x" in str(m) and "y" in str(m)

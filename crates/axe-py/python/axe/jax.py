"""JAX adapters: a jax array's layout (``.format``, ``jax.experimental.layout.Layout`` / ``Format``) as an
``axe.Shape``, and ``jax.sharding.NamedSharding`` or ``SingleDeviceSharding`` as an ``axe.Sharding``.

JAX is imported only by the functions that need it; the module itself loads without JAX.
"""

from __future__ import annotations

from ._args import array_text, named_mesh
from ._axe import Mesh, Shape, Sharding, ShardingError, XlaError


def _layout_text(layout, rank: int) -> str:
    m2m = getattr(layout, "major_to_minor", None)
    if m2m is None:
        raise XlaError(f"{layout!r} has no major_to_minor: not a concrete jax Layout (AUTO?)")
    minor_to_major = list(reversed(list(m2m)))
    if len(minor_to_major) != rank:
        raise XlaError(f"the layout orders {len(minor_to_major)} dims, the array has {rank}")
    text = ",".join(str(d) for d in minor_to_major)
    extras = ""
    tiling = tuple(getattr(layout, "tiling", None) or getattr(layout, "_tiling", None) or ())
    if tiling:
        extras += "T" + "".join("(" + ",".join(str(t) for t in tile) + ")" for tile in tiling)
    bits = getattr(layout, "sub_byte_element_size_in_bits", None) or getattr(
        layout, "_sub_byte_element_size_in_bits", 0
    )
    if bits:
        extras += f"E({bits})"
    return "{" + text + (":" + extras if extras else "") + "}"


def _bare(s: Shape) -> str:
    return f"{s.dtype}[{','.join(str(d) for d in s.dims)}]"


def _own_shape(x, shape, dtype):
    """A jax array's own shape and dtype; a `shape` or `dtype` also given must agree with them (an
    ``axe.XlaError`` says where they differ), never silently replace them."""
    own = array_text(x.shape, getattr(x, "dtype", None))
    mine = Shape(own)
    if shape is not None or dtype is not None:
        if shape is None:
            shape = x.shape
        if dtype is None and not isinstance(shape, (str, Shape)):
            dtype = x.dtype  # dims alone are of the array's type
        given = Shape(array_text(shape, dtype))
        if list(given.dims) != list(mine.dims) or given.dtype != mine.dtype:
            raise XlaError(
                f"the jax array is {_bare(mine)}, but shape=/dtype= say {_bare(given)}; leave them out "
                f"(a jax array knows its own)"
            )
    return own, mine.dtype


def shape_of(x, shape=None, dtype=None) -> Shape:
    """The ``axe.Shape`` of a jax array (its dtype, shape and ``.format.layout``; a `shape` or `dtype`
    given with it must be its own), or of a ``jax.experimental.layout.Layout`` or ``Format`` given with
    `shape` and `dtype`.

    >>> axe.jax.shape_of(jnp.ones((8, 128), jnp.bfloat16))   # on CPU
    Shape("bf16[8,128]{1,0}")
    """
    layout = x
    if hasattr(x, "format") and hasattr(x, "shape") and hasattr(x, "dtype"):
        shape, dtype = _own_shape(x, shape, dtype)
        layout = x.format
    if hasattr(layout, "layout") and not hasattr(layout, "major_to_minor"):
        layout = layout.layout  # a Format
    if shape is None or dtype is None:
        raise XlaError("a jax Layout or Format needs shape= and dtype=")
    array = Shape(array_text(shape, dtype))
    dims = ",".join(str(d) for d in array.dims)
    return Shape(f"{array.dtype}[{dims}]{_layout_text(layout, array.rank)}")


def _spec_text(spec) -> str:
    def entry(e):
        if e is None:
            return "None"
        if isinstance(e, (tuple, list)):
            return "(" + ", ".join(repr(str(a)) for a in e) + ("," if len(e) == 1 else "") + ")"
        return repr(str(e))

    # JAX 0.10 refuses tuple(spec) for a spec with unreduced/reduced axes: read its parts instead.
    parts = getattr(spec, "partitions", None)
    entries = [entry(e) for e in (tuple(parts) if parts is not None else tuple(spec))]
    if getattr(spec, "reduced", None):
        raise ShardingError(f"{spec!r}: reduced axes are not read (unreduced ones are: a pending sum)")
    unreduced = getattr(spec, "unreduced", None)
    if unreduced:
        entries.append("unreduced={" + ", ".join(repr(str(a)) for a in sorted(unreduced)) + "}")
    return "P(" + ", ".join(entries) + ")"


def mesh_of(jax_mesh) -> Mesh:
    """The ``axe.Mesh`` of a ``jax.sharding.Mesh``: its axis names and sizes, and the id of the device
    at each position."""
    try:
        names = [str(n) for n in jax_mesh.axis_names]
        sizes = [int(s) for s in jax_mesh.devices.shape]
        ids = [int(d.id) for d in jax_mesh.devices.flat]
    except (AttributeError, TypeError, ValueError) as e:
        raise ShardingError(f"{type(jax_mesh).__name__} is not a jax Mesh ({e})") from None
    return named_mesh(names, sizes, ids, "the jax Mesh")


def sharding_of(x, shape=None, dtype=None) -> Sharding:
    """The ``axe.Sharding`` of a jax array's ``.sharding``, or of a ``jax.sharding.NamedSharding``
    (mesh + PartitionSpec) or ``SingleDeviceSharding`` over an array of `shape`. A SingleDeviceSharding
    (``jax.device_put(x, device)``) is XLA's maximal sharding ``{maximal device=N}``, on a mesh ``d`` of
    its platform's devices (``jax.devices(platform)``, the devices a reshard moves it among). A sharding does not know the array it
    shards, so it needs the array's ``shape=``, given as ``axe.Sharding`` takes it
    (``"f32[64,128]"``, an ``axe.Shape``, or dims ``(64, 128)`` of `dtype`, ``float32`` by default);
    with a jax array, a `shape` or `dtype` given must be the array's own. Raises ``axe.ShardingError`` (or another ``axe.AxeError``) for anything it cannot read."""
    s = x
    if hasattr(x, "sharding") and hasattr(x, "shape"):
        shape, dtype = _own_shape(x, shape, dtype)
        s = x.sharding
    single = _single_device(s)
    if single is None and not (hasattr(s, "mesh") and hasattr(s, "spec")):
        raise ShardingError(
            f"{type(s).__name__} is not a NamedSharding (mesh + PartitionSpec) or a SingleDeviceSharding"
        )
    if shape is None:
        what = "NamedSharding" if single is None else "SingleDeviceSharding"
        raise ShardingError(
            f"a {what} needs the array's shape= (e.g. shape='f32[64,128]' or shape=(64, 128))"
        )
    array = array_text(shape, dtype)
    if single is not None:
        # One device holds everything: XLA's maximal sharding, on a mesh of its platform's devices.
        device, ids = single
        mesh = named_mesh(["d"], [len(ids)], ids, "the SingleDeviceSharding's platform")
        return Sharding(f"{{maximal device={device}}}", shape=array, mesh=mesh, notation="hlo")
    return Sharding(_spec_text(s.spec), shape=array, mesh=mesh_of(s.mesh), notation="jax")


def _single_device(s):
    """For a ``jax.sharding.SingleDeviceSharding``: its device's id and the ids of its platform's devices
    (``jax.devices(platform)``, in order; its own alone where jax cannot list them). ``None`` for any
    other object."""
    if type(s).__name__ != "SingleDeviceSharding":
        return None
    try:
        (device,) = tuple(s.device_set)
        own = int(device.id)
    except (AttributeError, TypeError, ValueError) as e:
        raise ShardingError(f"{s!r} names no one device ({e})") from None
    try:
        import jax

        ids = sorted(int(d.id) for d in jax.devices(device.platform))
    except Exception:  # noqa: BLE001 - no platform list: the device alone
        ids = []
    return own, ids if own in ids else [own]


__all__ = ["mesh_of", "shape_of", "sharding_of"]

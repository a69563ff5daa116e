"""PyTorch DTensor adapters: placements (``Shard(0)``, ``Replicate()``, ``Partial()``) as
``torch.distributed.tensor`` objects, or as their text when torch is not installed, to ``axe.Sharding``.
"""

from __future__ import annotations

from ._axe import Mesh, Sharding
from ._dtypes import xla_type


def placement_text(p) -> str:
    """A placement object's DTensor text: ``Shard(0)``, ``Replicate()``, ``Partial(sum)``; text is
    returned as it is."""
    if isinstance(p, str):
        return p
    kind = type(p).__name__
    if kind.endswith("Shard") and hasattr(p, "dim"):
        return f"Shard({int(p.dim)})"
    if kind == "Replicate":
        return "Replicate()"
    if kind.endswith("Partial"):
        op = getattr(p, "reduce_op", "sum")
        return f"Partial({getattr(op, 'name', op)})".replace("Partial(sum)", "Partial()")
    raise ValueError(f"{p!r} is not a DTensor placement")


def mesh_of(device_mesh) -> Mesh:
    """The ``axe.Mesh`` of a ``torch.distributed.DeviceMesh`` (names default to ``d0``, ``d1``...)."""
    sizes = [int(s) for s in device_mesh.shape]
    names = list(getattr(device_mesh, "mesh_dim_names", None) or [f"d{i}" for i in range(len(sizes))])
    ids = [int(i) for i in device_mesh.mesh.flatten().tolist()]
    return Mesh(dict(zip(names, sizes)), devices=ids)


def sharding_of(placements, mesh, shape, dtype="float32") -> Sharding:
    """The ``axe.Sharding`` of DTensor `placements` (objects or text, one per mesh dim) on `mesh` (a
    ``DeviceMesh``, an ``axe.Mesh``, or what ``axe.Mesh()`` takes) for an array of `shape`."""
    if not isinstance(mesh, (Mesh, str, dict, list, tuple)):
        mesh = mesh_of(mesh)
    text = placements if isinstance(placements, str) else "[" + ", ".join(
        placement_text(p) for p in placements
    ) + "]"
    dims = ",".join(str(int(d)) for d in shape)
    return Sharding(text, shape=f"{xla_type(dtype)}[{dims}]", mesh=mesh, notation="dtensor")


__all__ = ["mesh_of", "placement_text", "sharding_of"]

"""Arguments the adapters share: an array's shape as ``axe.Sharding`` takes it, and a mesh's axes."""

from __future__ import annotations

from ._axe import Mesh, Shape, ShardingError, XlaError
from ._dtypes import xla_type


def array_text(shape, dtype=None) -> str:
    """The XLA text of an array given as ``axe.Sharding`` takes it: an ``axe.Shape``, its text
    (``"f32[64,128]"``), or dims (``(64, 128)``, any sequence of integers) whose element type is
    `dtype` (a numpy / JAX / torch dtype or its name; ``float32`` when not given). A `dtype` that
    disagrees with the shape's own element type is an error. Raises ``axe.XlaError`` (or
    ``axe.ParseError``) for anything else."""
    if isinstance(shape, (str, Shape)):
        s = shape if isinstance(shape, Shape) else Shape(shape)
        if dtype is not None and xla_type(dtype) != s.dtype:
            raise XlaError(f"dtype={dtype!r} disagrees with the shape {s}, of {s.dtype}")
        return str(s)
    try:
        dims = list(shape)
    except TypeError:
        raise XlaError(
            f"shape={shape!r}: give the array's shape as 'f32[64,128]', an axe.Shape, or its dims (64, 128)"
        ) from None
    out = []
    for d in dims:
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            raise XlaError(f"shape={shape!r}: the dim {d!r} is not an integer")
        out.append(str(int(d.__index__())))
    return str(Shape(f"{xla_type(dtype if dtype is not None else 'float32')}[{','.join(out)}]"))


def named_mesh(names, sizes, ids, what: str) -> Mesh:
    """The ``axe.Mesh`` of axes `names` of `sizes` (in order) over the devices `ids`, as a framework's
    mesh `what` describes them. Raises ``axe.ShardingError`` when a name repeats or the names and sizes
    differ in number, which a dict of them would hide (a repeated name would keep only its last size)."""
    names, sizes = list(names), list(sizes)
    if len(names) != len(sizes):
        raise ShardingError(f"{what} names {len(names)} axes {names} for {len(sizes)} dims {sizes}")
    seen = set()
    for n in names:
        if n in seen:
            raise ShardingError(f"{what} names the axis {n!r} twice: {names}")
        seen.add(n)
    return Mesh(dict(zip(names, sizes)), devices=ids)

"""PyTorch DTensor adapters: placements (``Shard(0)``, ``Replicate()``, ``Partial()``,
``_StridedShard(0, split_factor=2)``) as ``torch.distributed.tensor`` objects, or as their text when
torch is not installed, to ``axe.Sharding``.

Placements are recognised by their exact class name (``Shard``, ``_StridedShard``, ``Replicate``,
``Partial`` or its old name ``_Partial``); any other placement (a subclass such as ``_NormPartial``
or ``_MaskPartial`` included) is refused with ``axe.ShardingError`` rather than read as its base.

``_StridedShard(d, split_factor=f)`` on a mesh dim of `n` devices cuts the local piece of tensor dim
`d` into ``n·f`` chunks (``torch.chunk``'s) and gives mesh coordinate `i` the chunks ``i, i+n, ..., i+(f-1)·n``
(FSDP2 + TP: the later mesh dims shard first); with ``f = 1`` that is ``Shard(d)``'s cut, and it is
read as ``Shard(d)``. A placement list with strided shards is read by
following these cuts; it is accepted when every device ends up with one block and the blocks are the
mesh axes in some order (what FSDP2 + TP makes), with every cut even (uneven strided cuts, which
torch pads, are refused).
"""

from __future__ import annotations

from ._args import array_text, named_mesh
from ._axe import Mesh, Sharding, ShardingError

_SHARD = "Shard"
_STRIDED = "_StridedShard"
_KNOWN = {"Shard", "_StridedShard", "Replicate", "Partial", "_Partial"}
# Strided cuts are followed on at most this many (block, device) pairs per tensor dim.
_MAX_FOLLOWED = 1 << 22


def _kind(p) -> str:
    kind = type(p).__name__
    if kind not in _KNOWN:
        raise ShardingError(
            f"{p!r} ({type(p).__module__}.{kind}) is not a DTensor placement axe reads: "
            f"one of Shard, _StridedShard, Replicate, Partial"
        )
    return kind


def _int(value, what: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ShardingError(f"{what} is {value!r}, not an integer")
    return int(value.__index__())


def _plain(p) -> bool:
    """Whether the ``_StridedShard`` `p` cuts as ``Shard`` does: a split factor of 1 (torch chunks
    the dim into as many pieces as the mesh dim has devices, padding alike)."""
    return _int(getattr(p, "split_factor", None), "split_factor") == 1


def placement_text(p) -> str:
    """A placement object's DTensor text: ``Shard(0)``, ``Replicate()``, ``Partial(sum)``; text is
    returned as it is. A ``_StridedShard`` of split factor 1 cuts as ``Shard`` does and is its text;
    another has no text (its cuts are even only, unlike ``Shard``'s; it is read by ``sharding_of``)
    and raises ``ShardingError``, as any other class does."""
    if isinstance(p, str):
        return p
    kind = _kind(p)
    if kind == _STRIDED and not _plain(p):
        raise ShardingError(f"{p!r}: a strided shard has no DTensor text; give the placements to sharding_of")
    if kind in (_SHARD, _STRIDED):
        return f"Shard({_int(getattr(p, 'dim', None), 'Shard.dim')})"
    if kind == "Replicate":
        return "Replicate()"
    op = getattr(p, "reduce_op", "sum")
    op = getattr(op, "name", op)
    return "Partial()" if str(op).lower() == "sum" else f"Partial({op})"


def mesh_of(device_mesh) -> Mesh:
    """The ``axe.Mesh`` of a ``torch.distributed.DeviceMesh`` (names default to ``d0``, ``d1``...)."""
    try:
        sizes = [int(s) for s in device_mesh.shape]
        names = list(getattr(device_mesh, "mesh_dim_names", None) or [f"d{i}" for i in range(len(sizes))])
        ids = [int(i) for i in device_mesh.mesh.flatten().tolist()]
    except (AttributeError, TypeError, ValueError) as e:
        raise ShardingError(f"{type(device_mesh).__name__} is not a DeviceMesh ({e})") from None
    return named_mesh(names, sizes, ids, "the DeviceMesh")


def _follow(length: int, cuts: list[tuple[int, int]], what: str) -> list[int]:
    """Follows torch's cuts of a tensor dim of `length` (`cuts`: per mesh dim that cuts it, in mesh
    order, `(n, split_factor)`) and returns, for each of those mesh dims, its weight: the block of the
    device at mesh coordinates `c` is ``sum(c[k] * weight[k])`` of ``prod(n)`` equal blocks. Raises
    ``ShardingError`` when a cut is uneven or the devices' parts are not such blocks."""
    total = 1
    for n, f in cuts:
        total *= n
    if total * max(1, total) > _MAX_FOLLOWED:
        raise ShardingError(f"{what}: {total} shards are too many to follow strided cuts")
    # Each device's part as a list of (start, end) intervals of the dim, in local order.
    parts = {(): [(0, length)]}
    for n, f in cuts:
        nxt = {}
        for coords, held in parts.items():
            size = sum(e - s for s, e in held)
            if size % (n * f):
                raise ShardingError(
                    f"{what}: a piece of {size} is cut into {n}·{f} chunks unevenly (axe reads even "
                    f"strided cuts only)"
                )
            chunk = size // (n * f)
            for i in range(n):
                picked = []
                for j in range(f):
                    lo = (i + j * n) * chunk
                    picked += _sub(held, lo, lo + chunk)
                nxt[coords + (i,)] = picked
        parts = nxt
    block = length // total
    where = {}
    for coords, held in parts.items():
        merged = _merge(held)
        if len(merged) != 1 or merged[0][1] - merged[0][0] != block or merged[0][0] % max(block, 1):
            raise ShardingError(f"{what}: the strided shards give a device a part that is not one block")
        where[coords] = merged[0][0] // max(block, 1)
    m = len(cuts)
    weights = [
        where[tuple(1 if k == j else 0 for k in range(m))] if cuts[j][0] > 1 else 0 for j in range(m)
    ]
    for coords, b in where.items():
        if sum(c * w for c, w in zip(coords, weights)) != b:
            raise ShardingError(f"{what}: the strided shards are not the mesh axes in any order")
    return weights


def _sub(held, lo, hi):
    """The intervals of the concatenation `held` between local positions `lo` and `hi`."""
    out, at = [], 0
    for s, e in held:
        n = e - s
        a, b = max(lo, at), min(hi, at + n)
        if a < b:
            out.append((s + a - at, s + b - at))
        at += n
    return out


def _merge(intervals):
    out = []
    for s, e in intervals:
        if out and out[-1][1] == s:
            out[-1] = (out[-1][0], e)
        elif s < e:
            out.append((s, e))
    return out


def _strided(placements, mesh: Mesh, array: str) -> Sharding:
    """The sharding of placements some of which are strided, as a JAX PartitionSpec over `mesh`."""
    from ._axe import Shape

    dims = [int(d) for d in Shape(array).dims]
    if len(placements) != len(mesh.sizes):
        raise ShardingError(f"{len(placements)} placements for a mesh of {len(mesh.sizes)} dims")
    cuts: dict[int, list[tuple[int, int, int]]] = {}
    for k, p in enumerate(placements):
        if isinstance(p, str):
            raise ShardingError(f"{p!r}: give every placement as an object where one is a _StridedShard")
        kind = _kind(p)
        if kind in ("Partial", "_Partial"):
            raise ShardingError(f"{p!r}: strided shards with a partial placement are not supported")
        if kind in (_SHARD, _STRIDED):
            d = _int(getattr(p, "dim", None), "Shard.dim")
            if not 0 <= d < len(dims):
                raise ShardingError(f"{p!r}: dim {d} of an array of {len(dims)} dims")
            f = _int(getattr(p, "split_factor", 1), "split_factor") if kind == _STRIDED else 1
            if f < 1:
                raise ShardingError(f"{p!r}: split_factor must be 1 or more")
            cuts.setdefault(d, []).append((k, mesh.sizes[k], f))
    entries = []
    for d in range(len(dims)):
        cs = cuts.get(d, [])
        if not cs:
            entries.append("None")
            continue
        weights = _follow(dims[d], [(n, f) for _, n, f in cs], f"dim {d} of {array}")
        # Major first; an axis of one device cuts nothing and is left out.
        order = [k for w, k in sorted((-w, k) for (k, n, _), w in zip(cs, weights) if n > 1)]
        entries.append("(" + "".join(repr(mesh.names[k]) + ", " for k in order) + ")")
    return Sharding("P(" + ", ".join(entries) + ")", shape=array, mesh=mesh, notation="jax")


def sharding_of(placements, mesh, shape, dtype=None) -> Sharding:
    """The ``axe.Sharding`` of DTensor `placements` (objects or text, one per mesh dim) on `mesh` (a
    ``DeviceMesh``, an ``axe.Mesh``, or what ``axe.Mesh()`` takes) for an array of `shape`: what
    ``axe.Sharding`` takes (``"f32[64,128]"``, an ``axe.Shape``, or dims such as ``(64, 128)``, whose
    element type is `dtype`, a numpy / torch dtype, ``float32`` by default). Raises
    ``axe.ShardingError`` (or another ``axe.AxeError``) for anything it cannot read."""
    if not isinstance(mesh, (Mesh, str, dict, list, tuple)):
        mesh = mesh_of(mesh)
    array = array_text(shape, dtype)
    if isinstance(placements, str):
        return Sharding(placements, shape=array, mesh=mesh, notation="dtensor")
    try:
        placements = list(placements)
    except TypeError:
        raise ShardingError(f"placements must be a list of placements or their text, not {placements!r}") from None
    if any(not isinstance(p, str) and _kind(p) == _STRIDED and not _plain(p) for p in placements):
        return _strided(placements, mesh if isinstance(mesh, Mesh) else Mesh(mesh), array)
    text = "[" + ", ".join(placement_text(p) for p in placements) + "]"
    return Sharding(text, shape=array, mesh=mesh, notation="dtensor")


__all__ = ["mesh_of", "placement_text", "sharding_of"]

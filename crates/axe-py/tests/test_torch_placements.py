"""DTensor placements recognised exactly: Shard, Replicate, Partial and _StridedShard (with its real
semantics, against a brute-force oracle of torch's cuts); any other class refused."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import axe


class Shard:
    def __init__(self, dim):
        self.dim = dim


class _StridedShard(Shard):
    def __init__(self, dim, split_factor):
        super().__init__(dim)
        self.split_factor = split_factor


class Replicate:
    pass


class Partial:
    def __init__(self, reduce_op="sum"):
        self.reduce_op = reduce_op


def chunk(local, k, dim):
    """torch.chunk into `k` pieces padded with empty ones (DTensor's fill_empty_tensor_to_shards): each
    ceil(size / k) long but the last ones."""
    size = local.shape[dim]
    step = -(-size // k)
    return [np.take(local, range(min(i * step, size), min((i + 1) * step, size)), axis=dim) for i in range(k)]


def oracle(placements, sizes, dims):
    """Per mesh position (row-major), the set of flat indices of the array it holds, by following
    torch's left-to-right cuts on real index arrays: Shard takes piece c of torch.chunk of the local
    piece of its dim; _StridedShard(d, f) chunks it into n*f pieces and takes pieces c, c+n, ...,
    c+(f-1)*n (torch's _StridedShard._split_tensor)."""
    out = []
    full = np.arange(int(np.prod(dims))).reshape(dims)
    for coords in itertools.product(*[range(n) for n in sizes]):
        local = full
        for p, n, c in zip(placements, sizes, coords):
            if isinstance(p, _StridedShard):
                pieces = chunk(local, n * p.split_factor, p.dim)
                local = np.concatenate([pieces[c + j * n] for j in range(p.split_factor)], axis=p.dim)
            elif isinstance(p, Shard):
                local = chunk(local, n, p.dim)[c]
        out.append(set(local.reshape(-1).tolist()))
    return out


def held(s, dims):
    out = []
    full = np.arange(int(np.prod(dims))).reshape(dims)
    for d in s.devices():
        out.append(set(full[tuple(slice(a, b) for a, b in d["region"])].reshape(-1).tolist()))
    return out


def test_fsdp_plus_tp_strided_shard_gives_the_rows_torch_gives():
    # torch's docstring example: [_StridedShard(0, split_factor=2), Shard(0)] on dp=2, tp=2 of 8 rows.
    s = axe.torch.sharding_of([_StridedShard(0, 2), Shard(0)], "dp=2,tp=2", (8, 8))
    rows = [d["region"][0] for d in s.devices()]
    assert rows == [(0, 2), (4, 6), (2, 4), (6, 8)]
    assert s.to("jax") == "P(('tp', 'dp'))"
    assert held(s, (8, 8)) == oracle([_StridedShard(0, 2), Shard(0)], [2, 2], (8, 8))
    # Read as Shard(0) (what a name ending in "Shard" was taken for) devices 1 and 2 would swap rows.
    assert rows != [d["region"][0] for d in axe.torch.sharding_of([Shard(0), Shard(0)], "dp=2,tp=2", (8, 8)).devices()]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_strided_shards_match_the_oracle_or_are_refused(data):
    rank = data.draw(st.integers(1, 3))
    sizes = data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    ndims = data.draw(st.integers(1, 2))
    dims = tuple(data.draw(st.sampled_from([4, 6, 8, 12, 16, 24])) for _ in range(ndims))
    placements = []
    for _ in range(rank):
        kind = data.draw(st.sampled_from(["S", "SS", "R"]))
        d = data.draw(st.integers(0, ndims - 1))
        placements.append(
            Shard(d) if kind == "S" else _StridedShard(d, data.draw(st.integers(1, 4))) if kind == "SS" else Replicate()
        )
    mesh = ",".join(f"m{i}={n}" for i, n in enumerate(sizes))
    want = oracle(placements, sizes, dims)
    try:
        s = axe.torch.sharding_of(placements, mesh, dims)
    except axe.ShardingError:
        return  # refused: fine, never wrong
    assert held(s, dims) == want


def test_unknown_placements_are_refused_not_read_by_their_base():
    class MyShard(Shard):
        pass

    class _NormPartial(Partial):
        pass

    for p in [MyShard(0), _NormPartial(), object(), 3]:
        with pytest.raises(axe.ShardingError):
            axe.torch.sharding_of([p, Replicate()], "x=2,y=2", (8, 8))
        with pytest.raises(axe.ShardingError):
            axe.torch.placement_text(p)
    for p in [_StridedShard(0, 2), _StridedShard(1, 3)]:
        with pytest.raises(axe.ShardingError):
            axe.torch.placement_text(p)
    # A split factor of 1 cuts as Shard does (uneven cuts included): it is Shard.
    assert axe.torch.placement_text(_StridedShard(1, 1)) == "Shard(1)"
    s = axe.torch.sharding_of([_StridedShard(1, 1), Replicate(), Shard(1)], "a=4,b=1,c=4", (12, 8))
    assert held(s, (12, 8)) == oracle([_StridedShard(1, 1), Replicate(), Shard(1)], [4, 1, 4], (12, 8))
    assert axe.torch.placement_text(Partial("max")) == "Partial(max)"
    assert axe.torch.placement_text(Partial()) == "Partial()"

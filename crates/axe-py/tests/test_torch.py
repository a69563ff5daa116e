"""DTensor placements to axe shardings: as text always, as torch objects when torch is installed."""

import pytest

import axe


def test_placements_as_text():
    s = axe.torch.sharding_of("[Shard(0), Replicate()]", "x=2,y=4", (64, 128))
    assert s.to("jax") == "P('x')"
    s = axe.torch.sharding_of(["Shard(1)", "Shard(0)"], "x=2,y=4", (64, 128), dtype="bfloat16")
    assert s.to("hlo") == "{devices=[4,2]<=[2,4]T(1,0)}"
    assert str(s.shape) == "bf16[64,128]{1,0}"


def test_placement_objects_by_their_type():
    class Shard:
        def __init__(self, dim):
            self.dim = dim

    class Replicate:
        pass

    class Partial:
        reduce_op = "max"

    assert [axe.torch.placement_text(p) for p in (Shard(2), Replicate(), Partial())] == [
        "Shard(2)",
        "Replicate()",
        "Partial(max)",
    ]
    with pytest.raises(ValueError):
        axe.torch.placement_text(object())


def test_real_torch_placements():
    torch = pytest.importorskip("torch")
    tensor = pytest.importorskip("torch.distributed.tensor")
    placements = [tensor.Shard(0), tensor.Replicate()]
    s = axe.torch.sharding_of(placements, "x=2,y=2", (8, 8), dtype=torch.float32)
    assert s.to("dtensor") == "[Shard(0), Replicate()]"

"""axe.Mesh and axe.Sharding: every notation, who holds what, plans, errors."""

import pytest

import axe


def test_mesh_forms():
    for m in [axe.Mesh("x=2,y=4"), axe.Mesh({"x": 2, "y": 4})]:
        assert (m.names, m.sizes, m.devices, len(m)) == (["x", "y"], [2, 4], list(range(8)), 8)
    assert axe.Mesh([2, 4]).names == ["d0", "d1"]
    m = axe.Mesh("x=2", devices=[1, 0])
    assert m.devices == [1, 0] and eval(repr(m), {"Mesh": axe.Mesh}) == m
    for bad in ["x=0", "x=2,x=2", "x=two"]:
        with pytest.raises(axe.ShardingError):
            axe.Mesh(bad)
    with pytest.raises(axe.ShardingError):
        axe.Mesh("x=2", devices=[0, 0])


def test_every_notation_of_the_papers_fully_sharded_array():
    s = axe.Sharding("P('x', 'y')", shape="f32[64,128]", mesh="x=2,y=2")
    assert s.notations() == {
        "hlo": "{devices=[2,2]<=[4]}",
        "sdy": '#sdy.sharding<@mesh, [{"x"}, {"y"}]>',
        "jax": "P('x', 'y')",
        "dtensor": "[Shard(0), Shard(1)]",
        "alpa": "S0S1",
        "axe": "S[(2,32,2,64):(1@gpu_x,64,1@gpu_y,1)]",
    }
    assert str(s) == "{devices=[2,2]<=[4]}"
    assert s.to("alpa") == "S0S1"
    for text in s.notations().values():
        again = axe.Sharding(text, shape="f32[64,128]", mesh="x=2,y=2")
        assert again.notations() == s.notations(), text
    d = s.devices()
    assert d[1] == {
        "device": 1,
        "region": [(0, 32), (64, 128)],
        "replica_group": (1,),
        "local_shape": [32, 64],
        "padded_shape": [32, 64],
    }


def test_replication_uneven_shards_and_inexpressible_notations():
    s = axe.Sharding("P('x')", shape=[6, 4], mesh="x=4,y=2")
    d = s.devices()
    assert [x["local_shape"][0] for x in d[::2]] == [2, 2, 2, 0]  # XLA: ceil(6/4) each, the last empty
    assert d[0]["replica_group"] == (0, 1) and d[0]["replica_group"] is d[1]["replica_group"]
    s = axe.Sharding("[Partial(), Shard(0)]", shape=[4, 4], mesh="x=2,y=2")
    assert s.notations()["alpa"] is None and s.notations()["dtensor"] == "[Partial(), Shard(0)]"
    with pytest.raises(axe.ShardingError, match="alpa"):
        s.to("alpa")
    with pytest.raises(axe.ShardingError):
        s.to("nope")


def test_plans():
    m = "x=2,y=2"
    a = axe.Sharding("P('x', 'y')", shape="f32[64,128]", mesh=m)
    b = axe.Sharding("P()", shape="f32[64,128]", mesh=m)
    p = a.plan(b)
    assert p["collective"] == "all-gather"
    assert p["bytes"] == 4 * 3 * 64 * 128  # every device receives the 3 shards it lacks
    assert sum(t["bytes"] for t in p["transfers"]) == p["bytes"]
    assert a.plan(a)["bytes"] == 0
    with pytest.raises(axe.ShardingError):
        a.plan(axe.Sharding("P()", shape="f32[64,64]", mesh=m))
    # Another mesh over the same four devices: planned over device ids, the same all-gather.
    assert a.plan(axe.Sharding("P()", shape="f32[64,128]", mesh="x=4"))["bytes"] == p["bytes"]
    with pytest.raises(axe.ShardingError, match="over different devices"):
        a.plan(axe.Sharding("P()", shape="f32[64,128]", mesh="x=8"))


def test_errors_and_pictures(tmp_path):
    with pytest.raises(axe.ParseError) as e:
        axe.Sharding("P('x', ", shape=[4], mesh="x=2")
    assert e.value.offset >= 0
    with pytest.raises(axe.ParseError, match="unknown mesh axis") as e:
        axe.Sharding("P('z')", shape=[4], mesh="x=2")
    assert e.value.offset == 3
    with pytest.raises(axe.ShardingError):
        axe.Sharding("P('x')", shape=[4], mesh="x=0")
    with pytest.raises(axe.ParseError, match="negative"):
        axe.Sharding("P('x')", shape=[-4], mesh="x=2")
    s = axe.Sharding("S0R", shape=[8, 8], mesh="x=2,y=2")
    assert s._repr_svg_().startswith("<svg")
    s.render(str(tmp_path / "s.svg"))
    assert (tmp_path / "s.svg").read_text().startswith("<svg")
    assert "Sharding(" in repr(s)


def test_plans_between_hlo_shardings_over_the_same_devices_in_other_orders():
    # A collective-permute: device d holds block d on one side and the block its position names on the other.
    a = axe.Sharding("{devices=[4]0,3,1,2}", shape="f32[12]")
    b = axe.Sharding("{devices=[4]<=[4]}", shape="f32[12]")
    p = a.plan(b)
    assert p["collective"] == "collective-permute"
    assert p["bytes"] == 3 * 3 * 4  # three devices each receive one block of 3 f32
    assert len(p["transfers"]) == 3
    # Different device sets are still refused, naming both meshes.
    with pytest.raises(axe.ShardingError, match="meshes over different devices"):
        a.plan(axe.Sharding("{devices=[2]<=[2]}", shape="f32[12]"))


def _missing_bytes(a, b, itemsize):
    """Σ over devices of the elements its destination region holds that its source region lacks."""
    src = {d["device"]: d["region"] for d in a.devices()}
    total = 0
    for d in b.devices():
        want, have = d["region"], src[d["device"]]
        full = 1
        for lo, hi in want:
            full *= hi - lo
        both = 1
        for (lo, hi), (lo2, hi2) in zip(want, have):
            both *= max(0, min(hi, hi2) - max(lo, lo2))
        total += (full - both) * itemsize
    return total


@pytest.mark.parametrize("src_mesh, src_spec, dst_mesh, dst_spec", [
    ("x=2,y=4", "P('x','y')", "z=8", "P('z')"),
    ("z=8", "P(None, 'z')", "x=2,y=4", "P('y','x')"),
    (axe.Mesh("x=2,y=4"), "P('x')", axe.Mesh("x=2,y=4", devices=list(range(7, -1, -1))), "P('x')"),
])
def test_plans_between_meshes_over_the_same_devices(src_mesh, src_spec, dst_mesh, dst_spec):
    # An FSDP mesh to a TP one, or one device order to another: planned over device ids, moving what
    # each device lacks and nothing more.
    a = axe.Sharding(src_spec, shape="f32[8,8]", mesh=src_mesh)
    b = axe.Sharding(dst_spec, shape="f32[8,8]", mesh=dst_mesh)
    p = a.plan(b)
    assert p["bytes"] == _missing_bytes(a, b, 4) > 0
    assert b.plan(a)["bytes"] == _missing_bytes(b, a, 4)
    # A pending max has no HloSharding (a sum is XLA's unreduced), so no plan across meshes.
    c = axe.Sharding("[Partial(max), Shard(0)]", shape="f32[8,8]", mesh="x=2,y=4")
    with pytest.raises(axe.ShardingError, match="through device ids"):
        c.plan(axe.Sharding("P('z')", shape="f32[8,8]", mesh="z=8"))


def test_an_hlo_sharding_on_a_mesh_of_another_device_order_reads_as_that_meshs_spec():
    # Devices 1 and 2 (y = 0 on this mesh) hold the first half, 0 and 3 the second: P('y') on the
    # mesh given, which stays the mesh of the sharding (the replica groups list their members in
    # any order).
    mesh = axe.Mesh({"x": 2, "y": 2}, devices=[2, 0, 1, 3])
    s = axe.Sharding("{devices=[2,2]1,2,0,3 last_tile_dim_replicate}", shape="f32[4]", mesh=mesh)
    assert s.mesh == mesh and s.to("jax") == "P('y')"
    assert s == axe.Sharding("P('y')", shape="f32[4]", mesh=mesh)
    held = {d["device"]: d["region"] for d in s.devices()}
    assert held == {1: [(0, 2)], 2: [(0, 2)], 0: [(2, 4)], 3: [(2, 4)]}
    for notation, text in s.notations().items():
        again = axe.Sharding(text, shape="f32[4]", mesh=mesh, notation=notation)
        assert {d["device"]: d["region"] for d in again.devices()} == held, (notation, text)


def test_hlo_text_on_a_mesh_in_another_device_order_keeps_the_mesh():
    # docs/python.md, "Meshes and shardings": the mesh given is kept, so a tile order other than its own
    # has no JAX form; a mesh listing the devices in the tiles' order, or no mesh, gives one.
    text, shape = "{devices=[4]0,3,1,2}", "f32[8]"
    kept = axe.Sharding(text, shape=shape, mesh="x=4")
    assert kept.mesh == axe.Mesh("x=4")
    assert kept.to("hlo") == text
    assert kept.to("sdy") == '#sdy.sharding<mesh<["x"=4], device_ids=[0, 3, 1, 2]>, [{"x"}]>'
    assert kept.notations()["jax"] is None
    with pytest.raises(axe.ShardingError, match=r"device order \[0, 3, 1, 2\], not the mesh's.*or with no mesh"):
        kept.to("jax")
    ordered = axe.Sharding(text, shape=shape, mesh=axe.Mesh("x=4", devices=[0, 3, 1, 2]))
    assert (ordered.to("jax"), ordered.mesh) == ("P('x')", axe.Mesh("x=4", devices=[0, 3, 1, 2]))
    own = axe.Sharding(text, shape=shape)
    assert (own.to("jax"), own.mesh) == ("P('t0')", axe.Mesh("t0=4", devices=[0, 3, 1, 2]))
    # Every device holds the same part under the three readings.
    regions = lambda s: sorted((d["device"], d["region"]) for d in s.devices())
    assert regions(kept) == regions(ordered) == regions(own)


def test_hlo_text_without_a_mesh_names_no_axis_of_one_device():
    s = axe.Sharding("{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}", shape="f32[8,8]")
    assert s.mesh == axe.Mesh("t0=4,t2=2", devices=[0, 4, 1, 5, 2, 6, 3, 7])
    assert (s.to("jax"), s.to("alpa"), s.to("dtensor")) == ("P('t0')", "S0R", "[Shard(0), Replicate()]")

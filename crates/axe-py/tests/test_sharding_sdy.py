"""Shardy text from Python: open dims and priorities kept in `to("sdy")` and left out elsewhere; mesh
axes a read split print as sub-axes, axes named like pieces by their names, pickled copies alike."""

import pickle

import axe


def test_open_dims_and_priorities_print_back_in_shardy_only():
    text = '#sdy.sharding<@mesh, [{"x", ?}p1, {?}]>'
    s = axe.Sharding(text, shape="f32[8,8]", mesh="x=2,y=4")
    assert s.to("sdy") == text
    closed = axe.Sharding("P('x')", shape="f32[8,8]", mesh="x=2,y=4")
    assert s.to("jax") == "P('x')"
    assert s.notations()["hlo"] == closed.notations()["hlo"]
    assert s == closed and hash(s) == hash(closed)
    assert pickle.loads(pickle.dumps(s)).to("sdy") == text


def test_split_axes_print_as_sub_axes_and_named_axes_by_name():
    split = axe.Sharding("{devices=[2,2]<=[4]}", shape="f32[4,4]", mesh="x=4")
    assert split.mesh.names == ["x_0", "x_1"]
    assert split.to("sdy") == '#sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2}]>'
    named = axe.Sharding("{devices=[2,2]<=[4]}", shape="f32[4,4]", mesh="x_0=2,x_1=2")
    assert named.to("sdy") == '#sdy.sharding<@mesh, [{"x_0"}, {"x_1"}]>'
    # Equal meshes (the same axes and devices), and a pickled copy prints as its original.
    assert split.mesh == named.mesh
    for s in (split, named):
        assert pickle.loads(pickle.dumps(s)).to("sdy") == s.to("sdy")
        m = pickle.loads(pickle.dumps(s.mesh))
        assert m == s.mesh
        assert axe.Sharding("P('x_0', 'x_1')", shape="f32[4,4]", mesh=m).to("sdy") == s.to("sdy")

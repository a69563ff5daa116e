"""Value semantics: Layout, Shape, Mesh, Sharding and triton.LinearLayout pickle, copy and deepcopy;
equal values compare and hash equal; ``eval(repr(x)) == x`` with the names ``from axe import *`` gives."""

import copy
import pickle

import pytest

import axe

# What `from axe import *` binds: repr() is read back in these names.
NAMES = {name: getattr(axe, name) for name in axe.__all__}

LAYOUT_JSON = '{"in": {"register": [[0, 1]], "lane": [[1, 0], [2, 0]]}, "out": {"dim0": 4, "dim1": 2}}'


def values():
    return [
        axe.Layout("S[(8,2):(4@lane,1)] + R[2:4@warp]"),
        axe.Layout("S[4:1]"),
        axe.Shape("bf16[8,128]{1,0:T(8,128)(2,1)}"),
        axe.Shape("f32[3,5]"),
        axe.Mesh("x=2,y=4"),
        axe.Mesh("x=2", devices=[1, 0]),
        axe.Mesh([]),
        axe.Mesh([2, 3]),
        axe.Sharding("P('x', 'y')", shape="f32[64,128]", mesh="x=2,y=2"),
        axe.Sharding("[Partial(), Shard(0)]", shape=[4, 4], mesh="x=2,y=2"),
        axe.Sharding("{devices=[2,1]<=[2]}", shape="bf16[6,4]"),
        axe.Sharding("P('x')", shape=[5], mesh="x=2", notation="jax"),
        axe.triton.LinearLayout(LAYOUT_JSON),
    ]


@pytest.mark.parametrize("v", values(), ids=repr)
def test_pickle_copy_deepcopy_and_repr_give_equal_values(v):
    for again in [
        pickle.loads(pickle.dumps(v)),
        pickle.loads(pickle.dumps(v, protocol=0)),
        copy.copy(v),
        copy.deepcopy(v),
        eval(repr(v), NAMES),
    ]:
        assert type(again) is type(v)
        assert again == v and not (again != v), (repr(v), repr(again))
        assert hash(again) == hash(v)
        assert str(again) == str(v)


def test_equal_values_built_apart_are_equal_and_hash_equal():
    pairs = [
        (axe.Mesh("x=2,y=4"), axe.Mesh({"x": 2, "y": 4})),
        (
            axe.Sharding("P('x', 'y')", shape="f32[64,128]", mesh="x=2,y=2"),
            axe.Sharding("{devices=[2,2]<=[4]}", shape=[64, 128], mesh=axe.Mesh("x=2,y=2")),
        ),
        (axe.triton.LinearLayout(LAYOUT_JSON), axe.triton.LinearLayout(LAYOUT_JSON.replace(" ", ""))),
        (axe.Layout("S[4:1]"), axe.Layout("S[4 : 1]")),
    ]
    for a, b in pairs:
        assert a is not b and a == b and hash(a) == hash(b) and len({a, b}) == 1


def test_different_values_differ():
    m = "x=2,y=2"
    a = axe.Sharding("P('x')", shape="f32[64,128]", mesh=m)
    assert a != axe.Sharding("P('y')", shape="f32[64,128]", mesh=m)
    assert a != axe.Sharding("P('x')", shape="bf16[64,128]", mesh=m)
    assert a != axe.Sharding("P('x')", shape="f32[64,128]", mesh=axe.Mesh("x=2,y=2", devices=[3, 2, 1, 0]))
    assert axe.Mesh("x=2") != axe.Mesh("y=2") and axe.Mesh("x=2") != "x=2"
    assert a != "P('x')" and a != 1
    assert axe.triton.LinearLayout(LAYOUT_JSON) != axe.triton.LinearLayout(LAYOUT_JSON.replace("[[0, 1]]", "[[1, 1]]"))


def test_empty_mesh_round_trips():
    m = axe.Mesh([])
    assert repr(m) == "Mesh([])" and eval(repr(m), NAMES) == m and len(m) == 1
    assert pickle.loads(pickle.dumps(m)) == m

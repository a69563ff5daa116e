"""Errors in Python's terms: AxeErrors that name the Python arguments; plan's cost model and element
types; out= arrays in use; axe.render with os.PathLike and the umask's permissions; the adapters'
shape= as axe.Sharding takes it; the TPU default layout."""

import os
import pathlib
import threading
import types

import numpy as np
import pytest

import axe


def test_plan_refuses_a_cost_model_the_cli_refuses():
    a = axe.Sharding("P('x')", shape="f32[64]", mesh="x=4")
    b = axe.Sharding("P()", shape="f32[64]", mesh="x=4")
    for kw in [
        {"alpha_us": float("nan")},
        {"alpha_us": -1.0},
        {"alpha_us": float("inf")},
        {"bytes_per_us": 0.0},
        {"bytes_per_us": -5.0},
        {"bytes_per_us": float("nan")},
        {"bytes_per_us": float("inf")},
    ]:
        with pytest.raises(axe.ShardingError, match=next(iter(kw))):
            a.plan(b, **kw)
    assert a.plan(b, alpha_us=0.0, bytes_per_us=1.0)["bytes"] == 64 * 4 * 3


def test_plan_moves_one_array_its_element_type_included():
    a = axe.Sharding("P('x')", shape="f32[64]", mesh="x=4")
    with pytest.raises(axe.ShardingError, match="element type"):
        a.plan(axe.Sharding("P()", shape="bf16[64]", mesh="x=4"))


def test_messages_name_the_python_arguments():
    with pytest.raises(axe.ShardingError) as e:
        axe.Sharding("P('x')", shape="f32[4]")
    assert 'mesh="x=2,y=4"' in str(e.value) and "--" not in str(e.value), str(e.value)


def test_out_in_use_is_an_axe_error():
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    buf = axe.to_physical(x, "f32[4,4]{0,1}")
    with pytest.raises(axe.RelayoutError, match="overlaps"):
        axe.relayout(buf, "f32[4,4]{0,1}", "{0,1}", out=buf)
    # The kernel's own borrow check (the same buffer twice) is an AxeError too, not numpy's TypeError.
    with pytest.raises(axe.RelayoutError, match="in use"):
        axe._axe._relayout(buf, "f32[4,4]{0,1}", "{0,1}", buf)


def test_out_written_by_another_thread_is_an_axe_error_or_waits_its_turn():
    x = np.ones((512, 512), dtype=np.float32)
    out = np.empty(x.nbytes, np.uint8)
    errors = []
    done = threading.Event()

    def writer():
        try:
            for _ in range(20):
                try:
                    axe.relayout(x, "f32[512,512]", "{0,1}", out=out)
                except axe.RelayoutError as e:
                    errors.append(e)
        finally:
            done.set()

    t = threading.Thread(target=writer)
    t.start()
    while not done.is_set():
        try:
            axe.relayout(x, "f32[512,512]", "{0,1}", out=out)
        except axe.RelayoutError as e:
            errors.append(e)
        except Exception as e:  # numpy's "already borrowed" TypeError was raised here
            pytest.fail(f"{type(e).__name__}: {e}")
    t.join()
    assert all("in use" in str(e) for e in errors)


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_render_takes_a_path_and_leaves_the_umasks_permissions(tmp_path, umask):
    old = os.umask(umask)
    try:
        for obj, kw in [
            (axe.Layout("S[(4,4):(4,1)]"), {"shape": [4, 4]}),
            (axe.Shape("f32[4,4]{0,1:T(2,2)}"), {}),
            (axe.Sharding("P('x')", shape="f32[8]", mesh="x=2"), {}),
            (axe.cute.Layout((4, 4), (4, 1)), {}),
            (axe.cute.ComposedLayout(axe.cute.Swizzle(1, 0, 2), 0, axe.cute.Layout((4, 4), (4, 1))), {}),
            (axe.triton.LinearLayout('{"in": {"register": [[0, 1], [1, 0]]}, "out": {"dim0": 2, "dim1": 2}}'), {}),
        ]:
            p = tmp_path / f"{type(obj).__name__}.svg"
            axe.render(obj, p, **kw)
            assert p.read_text().startswith("<svg") or "<svg" in p.read_text()
            assert p.stat().st_mode & 0o777 == 0o666 & ~umask
            obj.render(pathlib.PurePath(tmp_path / "again.txt"), **kw)
            assert (tmp_path / "again.txt").stat().st_mode & 0o777 == 0o666 & ~umask
    finally:
        os.umask(old)
    kept = tmp_path / "kept.svg"
    kept.write_text("")
    kept.chmod(0o600)
    axe.render(axe.Shape("f32[4]"), kept)
    assert kept.stat().st_mode & 0o777 == 0o600
    with pytest.raises(TypeError):
        axe.render("P('x')", tmp_path / "x.svg")


def test_torch_sharding_of_takes_what_sharding_takes():
    want = axe.Sharding("[Shard(0), Replicate()]", shape="bf16[64,128]", mesh="x=2,y=4")
    for shape, dtype in [("bf16[64,128]", None), ((64, 128), "bfloat16"), ([64, 128], "bf16"),
                         (axe.Shape("bf16[64,128]"), None), (np.array([64, 128]), "bfloat16")]:
        assert axe.torch.sharding_of("[Shard(0), Replicate()]", "x=2,y=4", shape, dtype=dtype) == want
    for bad in ["abc", ("a", 2), 5, [1.5], [-1], "f32[4", None]:
        with pytest.raises(axe.AxeError):
            axe.torch.sharding_of("[Shard(0)]", "x=2", bad)
    with pytest.raises(axe.AxeError, match="disagrees"):
        axe.torch.sharding_of("[Shard(0)]", "x=2", "f32[4]", dtype="bfloat16")
    with pytest.raises(axe.AxeError):
        axe.torch.sharding_of("[Shard(0)]", "x=2", (4,), dtype="no-such-type")
    # XLA's names are XLA's types, also where numpy reads the text as a type code of its own ("u8":
    # uint64, "f16": float128); numpy's dtypes are numpy's.
    for dtype, want in [("u8", "u8"), ("f16", "f16"), ("u4", "u4"), ("u1", "u1"), (np.uint64, "u64"),
                        (np.float16, "f16"), ("uint8", "u8")]:
        s = axe.torch.sharding_of("[Shard(0)]", "x=2", (4,), dtype=dtype)
        assert s.shape.dtype == want, (dtype, s.shape)


def fake_named_sharding(names, sizes, spec):
    class Device:
        def __init__(self, i):
            self.id = i

    devices = np.array([Device(i) for i in range(int(np.prod(sizes)))], dtype=object).reshape(sizes)
    mesh = types.SimpleNamespace(axis_names=tuple(names), devices=devices)
    return types.SimpleNamespace(mesh=mesh, spec=tuple(spec))


def test_jax_sharding_of_takes_what_sharding_takes():
    ns = fake_named_sharding(["x", "y"], [2, 4], ["x", None])
    want = axe.Sharding("P('x', None)", shape="f32[64,128]", mesh="x=2,y=4")
    for shape in ["f32[64,128]", (64, 128), axe.Shape("f32[64,128]")]:
        assert axe.jax.sharding_of(ns, shape=shape) == want
    with pytest.raises(axe.ShardingError, match="shape="):
        axe.jax.sharding_of(ns)
    for bad in ["abc", ("a", 2), [None]]:
        with pytest.raises(axe.AxeError):
            axe.jax.sharding_of(ns, shape=bad)
    with pytest.raises(axe.ShardingError):
        axe.jax.sharding_of(object(), shape=(4,))
    assert "shape=" in axe.jax.sharding_of.__doc__


def test_the_tpu_default_layout_is_reachable():
    assert str(axe.Shape("bf16[256,1024]").tpu_layout()) == "bf16[256,1024]{1,0:T(8,128)(2,1)}"
    assert str(axe.Shape("f32[7,2,512]").tpu_layout()) == "f32[7,2,512]{2,1,0:T(2,128)}"
    with pytest.raises(axe.XlaError):
        axe.Shape("f32[?]").tpu_layout()


def test_out_of_range_integers_are_axe_errors():
    for call in [
        lambda: axe.Layout.row_major([-1]),
        lambda: axe.Layout.row_major([2**64]),
        lambda: axe.Shape("f32[4]").index([2**63]),
        lambda: axe.Mesh([-2]),
        lambda: axe.Mesh({"x": -2}),
        lambda: axe.Mesh("x=2", devices=[-1, 0]),
        lambda: axe.Layout("S[4:1]").apply(-1),
        lambda: axe.triton.LinearLayout('{"in": {"register": [[1]]}, "out": {"dim0": 2}}')(-1),
        lambda: axe.kernel.softmax(-1, 32),
        lambda: axe.kernel.gemm(2**64, 128, 128),
        lambda: axe.kernel.wgmma_accumulator(-8),
        lambda: axe.kernel.gemm_reduce_scatter(128, 128, 128, "f16", devices=-2),
        lambda: axe.cute.complement(axe.cute.Layout(4, 1), 2**70),
        lambda: axe.cute.Layout(4, 1).svg(shape=[-1, 4]),
        lambda: axe.cute.Layout(4, 1)._n(2**70),
        lambda: axe.kernel.DeviceBuilder("d", axe.Mesh({"x": 2})).copy(-1, 0),
        lambda: axe.kernel.DeviceBuilder("d", axe.Mesh({"x": 2})).kernel(axe.kernel.softmax(4, 32), [-1]),
    ]:
        with pytest.raises(axe.AxeError, match="out of range"):
            call()


def test_cute_int_tuples_refuse_what_is_no_int_tuple_and_zero_divisors():
    cute = axe.cute
    for call in [
        lambda: cute.crd2idx(10**12, 10**12, [(6, 6)]),  # was a list of 6·10^12 items: MemoryError
        lambda: cute.product((10**12, [1])),
        lambda: cute.inner_product(10**12, [1]),
        lambda: cute.prefix_product((2, 3), [1]),
        lambda: cute.elem_scale([1], 10**12),
        lambda: cute.shape_div(4, 0),
        lambda: cute.idx2crd(5, (2, 0)),
        lambda: cute.crd2idx(5, (0, 3)),
    ]:
        with pytest.raises(axe.CuteError):
            call()
    # A stride not congruent with the shape: it was 1 (the second mode dropped), the tuple (1, 2)
    # repeated 5 times, or a TypeError.
    for call in [
        lambda: cute.crd2idx(5, (4, 4), (1,)),
        lambda: cute.crd2idx(5, 4, (1, 2)),
        lambda: cute.crd2idx(5, (4, 4), 3),
        lambda: cute.crd2idx((1, (1, 1)), (4, (2, 2)), (1, (4,))),
        lambda: cute.idx2crd(5, (4, 4), (1,)),
        lambda: cute.idx2crd(5, 4, (1, 2)),
        lambda: cute.idx2crd(5, (4, 4), 3),
    ]:
        with pytest.raises(axe.CuteError, match="not congruent"):
            call()
    # Int tuples as pycute takes them still work, None (a slice) included.
    assert cute.crd2idx((1, None), (2, 3)) == 1 and cute.shape_div((6, 4), 3) == (2, 4)
    assert cute.idx2crd(5, (2, 3)) == (1, 2) and cute.product(()) == 1
    with pytest.raises(TypeError):
        cute.slice_and_offset((None, 1), (4, 2))


def test_a_wgmma_accumulator_is_for_the_n_wgmma_takes():
    for n in [8, 64, 256]:
        assert axe.kernel.wgmma_accumulator(n).size == 64 * n
    # 12 was the layout of [64, 8] (512 elements for 768), 2**40 one of no wgmma.
    for n in [0, 4, 12, 260, 264, 2**40]:
        with pytest.raises(axe.KernelError, match=rf"N = {n}: .* multiple of 8 from 8 to 256"):
            axe.kernel.wgmma_accumulator(n)


def test_kernel_run_of_what_is_no_kernel_is_a_type_error():
    for k in ["softmax", None, axe.Shape("f32[4]")]:
        with pytest.raises(TypeError, match="Kernel"):
            axe.kernel.run(k, np.zeros(4, np.float32))


def test_render_into_a_missing_folder_names_the_folder_not_the_temporary_file(tmp_path):
    shape = axe.Shape("f32[4,4]{0,1:T(2,2)}")
    missing = tmp_path / "no-such-folder" / "p.svg"
    with pytest.raises(axe.AxeError) as e:
        axe.render(shape, missing)
    assert "the folder" in str(e.value) and "does not exist" in str(e.value), str(e.value)
    assert ".axe-" not in str(e.value) and ".tmp" not in str(e.value), str(e.value)
    (tmp_path / "file").write_text("")
    with pytest.raises(axe.AxeError, match="is not a folder"):
        axe.cute.Layout((4, 4), (4, 1)).render(tmp_path / "file" / "p.svg")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        if os.access(locked, os.W_OK):  # root writes anywhere: no error to check
            return
        with pytest.raises(axe.AxeError) as e:
            axe.render(shape, locked / "p.png")
        assert "cannot create a file in" in str(e.value) and ".axe-" not in str(e.value), str(e.value)
    finally:
        locked.chmod(0o700)


def test_jax_adapters_refuse_a_shape_that_is_not_the_arrays_own():
    jax = pytest.importorskip("jax")
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    x = jax.device_put(jax.numpy.ones((8, 4), jax.numpy.float32), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x")))
    assert axe.jax.sharding_of(x) == axe.jax.sharding_of(x, shape="f32[8,4]") == axe.jax.sharding_of(x, shape=(8, 4))
    assert axe.jax.shape_of(x, dtype="float32") == axe.jax.shape_of(x)
    for kw in [{"shape": "f32[16,4]"}, {"shape": (4, 8)}, {"dtype": "bfloat16"}, {"shape": "bf16[8,4]"}]:
        with pytest.raises(axe.XlaError, match="f32\\[8,4\\]"):
            axe.jax.sharding_of(x, **kw)
        with pytest.raises(axe.XlaError, match="f32\\[8,4\\]"):
            axe.jax.shape_of(x, **kw)

"""Writes cases.txt: JAX matmuls (and a few elementwise products) on 8 fake CPU devices, the module before partitioning
(`lower().as_text(dialect="hlo")`, Shardy's, JAX's default) and what XLA chose for the result under
each partitioner (`compiled.output_shardings` as an HloSharding, `memory_analysis()`'s output bytes).

Usage: python gen.py [OUT]   (a Python with jax[cpu]; checked with jax/jaxlib 0.10.2)
The expectation after each name (`infers`: axe gives XLA's sharding; `nothing`: axe infers none and
counts the result whole) is axe's, checked by `propagate_dot_tests.rs`.
"""
import json, os, subprocess, sys

CASES = [
    # name, expectation, program, [(shape, mesh, spec, dtype)]
    ("rows_rep", "infers", "a @ b", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", ())]),
    ("rep_cols", "infers", "a @ b", [((32, 64), "m42", ()), ((64, 16), "m42", (None, "y"))]),
    ("rows_cols", "infers", "a @ b", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", (None, "y"))]),
    ("cols_rows_yx", "infers", "a @ b", [((32, 64), "m42", ("y", None)), ((64, 16), "m42", (None, "x"))]),
    ("rows_cols_m24", "infers", "a @ b", [((32, 64), "m24", ("y", None)), ((64, 16), "m24", (None, "x"))]),
    ("rows_cols_m222", "infers", "a @ b", [((32, 64), "m222", ("a", None)), ((64, 16), "m222", (None, ("b", "c")))]),
    ("contract_both", "infers", "a @ b", [((32, 64), "m42", ("x", "y")), ((64, 16), "m42", ("y", None))]),
    ("contract_only", "infers", "a @ b", [((32, 64), "m42", (None, "y")), ((64, 16), "m42", ("y", None))]),
    ("contract_lhs_rhs_rep", "infers", "a @ b", [((32, 64), "m42", ("x", "y")), ((64, 16), "m42", ())]),
    ("contract_rhs_only", "infers", "a @ b", [((32, 64), "m42", ()), ((64, 16), "m42", ("y", None))]),
    ("contract_mismatch", "infers", "a @ b", [((32, 64), "m42", (None, "x")), ((64, 16), "m42", ("y", None))]),
    ("both_rows", "infers", "a @ b", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", ("x", None))]),
    ("mesh_order", "infers", "a @ b", [((32, 64), "m42", ("y", "x")), ((64, 16), "m42", ())]),
    ("two_axes", "infers", "a @ b", [((32, 64), "m42", (("x", "y"), None)), ((64, 16), "m42", ())]),
    ("cols_m8", "infers", "a @ b", [((32, 64), "m8", ()), ((64, 16), "m8", (None, "d"))]),
    ("vector", "infers", "a @ b", [((32, 64), "m42", ("x", None)), ((64,), "m42", ())]),
    ("bf16", "infers", "a @ b", [((32, 64), "m8", ("d", None), "bfloat16"), ((64, 16), "m8", (), "bfloat16")]),
    ("int32", "infers", "a @ b", [((32, 64), "m8", ("d", None), "int32"), ((64, 16), "m8", (), "int32")]),
    ("nt", "infers", "einsum('mk,nk->mn', a, b)", [((32, 64), "m42", ()), ((16, 64), "m42", ("y", None))]),
    ("two_non_contracting", "infers", "einsum('pqk,kn->pqn', a, b)", [((8, 6, 16), "m42", ("x", "y", None)), ((16, 4), "m42", ())]),
    ("two_contracting", "infers", "einsum('mkl,kln->mn', a, b)", [((8, 4, 6), "m42", ("x", None, "y")), ((4, 6, 16), "m42", (None, "y", None))]),
    ("batch", "infers", "einsum('bmk,bkn->bmn', a, b)", [((4, 8, 16), "m42", ("x", None, None)), ((4, 16, 6), "m42", ("x", None, "y"))]),
    ("batch_lhs_only", "infers", "einsum('bmk,bkn->bmn', a, b)", [((4, 8, 16), "m42", ("x", "y", None)), ((4, 16, 6), "m42", ())]),
    ("batch_rhs_only", "infers", "einsum('bmk,bkn->bmn', a, b)", [((4, 8, 16), "m42", ()), ((4, 16, 32), "m42", ("x", None, "y"))]),
    ("batch_same", "infers", "einsum('bmk,bkn->bmn', a, b)", [((4, 8, 16), "m42", ("x", None, None)), ((4, 16, 32), "m42", ("x", None, "y"))]),
    ("batch_finer", "infers", "einsum('bmk,bkn->bmn', a, b)", [((8, 8, 16), "m42", ("x", None, None)), ((8, 16, 8), "m42", (("x", "y"), None, None))]),
    ("batch_m222", "infers", "einsum('bmk,bkn->bmn', a, b)", [((4, 8, 16), "m222", ("a", "b", None)), ((4, 16, 6), "m222", ("a", None, "c"))]),
    ("batch_and_contract", "infers", "einsum('bmk,bkn->bmn', a, b)", [((4, 8, 16), "m42", ("x", None, "y")), ((4, 16, 6), "m42", ("x", "y", None))]),
    ("batch_last", "infers", "einsum('mkb,bkn->bmn', a, b)", [((8, 16, 4), "m42", (None, None, "x")), ((4, 16, 6), "m42", ("x", None, "y"))]),
    ("lhs_contract_axis_in_rhs", "infers", "a @ b", [((32, 64), "m42", ("x", "y")), ((64, 16), "m42", (None, "y"))]),
    ("contract_axis_in_both", "infers", "a @ b", [((32, 64), "m42", (None, "y")), ((64, 16), "m42", (None, "y"))]),
    ("both_fully_tiled", "infers", "a @ b", [((32, 64), "m42", ("x", "y")), ((64, 16), "m42", ("x", "y"))]),
    ("rhs_contract_axis_in_lhs", "infers", "a @ b", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", ("x", "y"))]),
    ("lhs_contract_axis_in_rhs_yx", "infers", "a @ b", [((32, 64), "m42", ("y", "x")), ((64, 16), "m42", (None, "x"))]),
    ("batch_contract_axis_in_rhs", "infers", "einsum('bmk,bkn->bmn', a, b)", [((4, 8, 16), "m42", ("x", None, "y")), ((4, 16, 6), "m42", (None, None, "y"))]),
    ("contract_axis_is_batch", "infers", "einsum('bmk,bkn->bmn', a, b)", [((4, 8, 16), "m42", (None, None, "x")), ((4, 16, 6), "m42", ("x", None, None))]),
    ("tanh_of_dot", "infers", "tanh(a @ b)", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", (None, "y"))]),
    ("transpose_of_dot", "infers", "(a @ b).T", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", (None, "y"))]),
    ("dot_plus", "infers", "a @ b + c", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", ()), ((32, 16), "m42", ("x", "y"))]),
    ("tuple_out", "infers", "(a @ b, a)", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", (None, "y"))]),
    # Elementwise operands tiled compatibly merge as a dot's views do.
    ("mul_rows_cols", "infers", "a * b", [((16, 32), "m42", ("x", None)), ((16, 32), "m42", (None, "y"))]),
    ("mul_rows_full", "infers", "a * b", [((16, 32), "m42", ("x", None)), ((16, 32), "m42", ("x", "y"))]),
    ("mul_finer", "infers", "a * b", [((16, 32), "m42", ("x", None)), ((16, 32), "m42", (("x", "y"), None))]),
    ("mul_yx", "infers", "a * b", [((16, 32), "m42", ("y", None)), ((16, 32), "m42", (None, "x"))]),
    ("dot_times_cols", "infers", "(a @ b) * c", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", ()), ((32, 16), "m42", (None, "y"))]),
    # JAX writes these as `call`s of private computations: followed into the callee.
    ("floor_divide_call", "infers", "a // 3", [((16, 32), "m42", ("x", None), "int32")]),
    ("where_call", "infers", "jnp.where(a > 0, a, b)", [((16, 32), "m42", ("x", None)), ((16, 32), "m42", (None, "y"))]),
    ("clip_of_dot", "infers", "jnp.clip(a @ b, 0.0, 1.0)", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", (None, "y"))]),
    # Conflicts: both partitioners pick the larger operand's (the lhs on a tie) here, but not always
    # (batch_conflict_*, overlap_rhs_big): axe infers nothing.
    ("conflict", "nothing", "a @ b", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", (None, "x"))]),
    ("conflict_rhs_big", "nothing", "a @ b", [((32, 64), "m42", ("x", None)), ((64, 128), "m42", (None, "x"))]),
    ("conflict_equal", "nothing", "a @ b", [((32, 64), "m42", ("x", None)), ((64, 32), "m42", (None, "x"))]),
    ("conflict_contract", "nothing", "a @ b", [((32, 64), "m42", ("x", "y")), ((64, 16), "m42", (None, "x"))]),
    ("overlap", "nothing", "a @ b", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", (None, ("x", "y")))]),
    ("overlap_y", "nothing", "a @ b", [((32, 64), "m42", (("x", "y"), None)), ((64, 16), "m42", (None, "y"))]),
    ("overlap_rhs_big", "nothing", "a @ b", [((32, 64), "m42", (("x", "y"), None)), ((64, 128), "m42", (None, "y"))]),
    ("swapped_conflict", "nothing", "a @ b", [((32, 64), "m42", ("y", "x")), ((64, 16), "m42", ("x", "y"))]),
    ("mixed_meshes", "nothing", "a @ b", [((32, 64), "m42", ("x", None)), ((64, 16), "m24", (None, "x"))]),
    ("mixed_meshes_y", "nothing", "a @ b", [((32, 64), "m42", ("y", None)), ((64, 16), "m24", (None, "y"))]),
    ("a_at", "nothing", "a @ a.T", [((32, 16), "m42", ("x", None))]),
    ("batch_conflict", "nothing", "einsum('bmk,bkn->bmn', a, b)", [((4, 8, 16), "m42", ("x", None, None)), ((4, 16, 8), "m42", ("y", None, None))]),
    ("batch_conflict_big", "nothing", "einsum('bmk,bkn->bmn', a, b)", [((4, 8, 16), "m42", ("x", None, None)), ((4, 16, 32), "m42", ("y", None, None))]),
    # Not a dot: a reduce is not followed.
    ("sum_of_dot", "nothing", "sum(a @ b, axis=0)", [((32, 64), "m42", ("x", None)), ((64, 16), "m42", (None, "y"))]),
]

RUN = r'''
import os, sys, json
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import numpy as np, jax, jax.numpy as jnp
from jax.numpy import einsum, tanh, sum
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
jax.config.update("jax_use_shardy_partitioner", sys.argv[1] == "shardy")
devs = jax.devices()
M = {"m42": Mesh(np.array(devs).reshape(4, 2), ("x", "y")), "m24": Mesh(np.array(devs).reshape(2, 4), ("x", "y")),
     "m222": Mesh(np.array(devs).reshape(2, 2, 2), ("a", "b", "c")), "m8": Mesh(np.array(devs), ("d",))}
out = {}
for name, _, prog, args in json.loads(sys.stdin.read()):
    specs = [jax.ShapeDtypeStruct(tuple(a[0]), getattr(jnp, a[3] if len(a) > 3 else "float32"),
                                  sharding=NamedSharding(M[a[1]], P(*[tuple(x) if isinstance(x, list) else x for x in a[2]])))
             for a in args]
    names = "abc"[:len(args)]
    fn = eval(f"lambda {', '.join(names)}: {prog}")
    lowered = jax.jit(fn).lower(*specs)
    compiled = lowered.compile()
    shapes = jax.eval_shape(fn, *specs)
    s = compiled.output_shardings
    if isinstance(s, tuple):
        hlo = "{" + ", ".join(str(x._to_xla_hlo_sharding(len(y.shape))) for x, y in zip(s, shapes)) + "}"
    else:
        hlo = str(s._to_xla_hlo_sharding(len(shapes.shape)))
    out[name] = [lowered.as_text(dialect="hlo"), hlo, compiled.memory_analysis().output_size_in_bytes]
print(json.dumps(out))
'''


def main():
    got = {}
    for mode in ("gspmd", "shardy"):
        r = subprocess.run([sys.executable, "-c", RUN, mode], input=json.dumps(CASES), capture_output=True,
                           text=True, check=True)
        got[mode] = json.loads(r.stdout)
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "cases.txt")
    with open(path, "w") as f:
        f.write("# Written by gen.py (jax/jaxlib 0.10.2, 8 CPU devices). Per case: the name and axe's expectation,\n"
                "# the JAX program, XLA's sharding of the result and memory_analysis() output bytes under GSPMD and\n"
                "# under Shardy, then the module before partitioning (Shardy's text).\n")
        for name, expect, prog, args in CASES:
            g, s = got["gspmd"][name], got["shardy"][name]
            desc = "; ".join(f"{'abc'[i]}: {a[3] if len(a) > 3 else 'float32'}{list(a[0])} {a[1]} P{tuple(a[2])}"
                             for i, a in enumerate(args))
            f.write(f"\n=== {name} {expect}\n# {prog}; {desc}\n")
            f.write(f"gspmd: {g[2]} {g[1]}\nshardy: {s[2]} {s[1]}\n")
            f.write(s[0].rstrip("\n") + "\n")


if __name__ == "__main__":
    main()

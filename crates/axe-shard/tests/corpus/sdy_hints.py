"""Writes sdy_hints.jsonl beside it: Shardy shardings with open dims (`?`) and priorities (`p0`...), and what
jaxlib's own Shardy makes of them, one JSON object per line:
  {"mesh", "shape", "sdy", "printed", "hlo"}: a random `#sdy.sharding` (sub-axes, unreduced axes, inline
    meshes with shuffled device_ids, loose spacing), the attribute as Shardy's MLIR printer prints it after
    parsing and verifying the module, and the HloSharding XLA's Shardy export gives the parameter;
  {"mesh", "shape", "sdy", "error"}: where Shardy's verifier (or the export) refuses it;
  {"mesh", "shape", "spec", "constraint"}: `jax.lax.with_sharding_constraint(x, NamedSharding(mesh, spec))`
    with `P.UNCONSTRAINED` dims, and the `sdy.sharding_constraint` attribute jax.jit(...).lower() prints.
The test sdy_hints checks axe's reading and printing against every line.

Run with a Python that has jax 0.10.2 (e.g. the venv scripts/shard-sdy-corpus makes):
  XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu python sdy_hints.py
"""

import json
import pathlib
import random
import re

import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir
from jax._src.lib import _jax
from jax._src.lib.mlir import ir
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

rng = random.Random(11)
MESHES = [[("x", 8)], [("x", 2), ("y", 4)], [("x", 4), ("y", 2)], [("x", 2), ("y", 2), ("z", 2)]]


def mesh_lit(axes, ids=None):
    body = ", ".join(f'"{n}"={s}' for n, s in axes)
    tail = f", device_ids=[{', '.join(map(str, ids))}]" if ids is not None else ""
    return f"<[{body}]{tail}>"


def module(sdy, shape, meshdef):
    t = "x".join(map(str, shape)) + "xf32" if shape else "f32"
    return f"""module @m attributes {{mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32}} {{
  {meshdef}
  func.func public @main(%arg0: tensor<{t}> {{sdy.sharding = {sdy}}}) -> tensor<{t}> {{
    return %arg0 : tensor<{t}>
  }}
}}"""


def printed(mod):
    """The parameter's attribute as Shardy prints it, after the verifier accepts the module."""
    with mlir.make_ir_context():
        m = ir.Module.parse(mod)
        if not m.operation.verify():
            raise ValueError("verifier refuses")
        text = str(m)
    return re.search(r"sdy.sharding = (#sdy.sharding<.*?>)\}\) ->", text).group(1)


def export(mod):
    c = _jax.mlir.mlir_module_to_xla_computation(mod, use_tuple_args=False, return_tuple=False)
    m = re.search(r"parameter\(0\)(?:, sharding=(\{[^\n]*?\}))?(?:, frontend|\n)", c.as_hlo_text())
    return m.group(1) if m and m.group(1) else "{replicated}"


def pieces(size):
    out, pre = [], 1
    while pre < size:
        s = rng.choice([k for k in (2, 4, 8) if pre * k <= size])
        out.append((pre, s))
        pre *= s
    return out


def ref(name, full, pre, s):
    return f'"{name}"' if (pre, s) == (1, full) else f'"{name}":({pre}){s}'


lines = []
for _ in range(160):
    axes = rng.choice(MESHES)
    ndim = rng.choice([1, 2, 2, 3])
    shape = [rng.choice([8, 16, 5, 7]) for _ in range(ndim)]
    dims = [[] for _ in range(ndim)]
    unr = []
    for name, size in axes:
        ps = pieces(size) if rng.random() < 0.3 else [(1, size)]
        for pre, s in ps:
            r = ref(name, size, pre, s)
            k = rng.random()
            if k < 0.65:
                dims[rng.randrange(ndim)].append(r)
            elif k < 0.75:
                unr.append(r)
    sep = rng.choice([", ", ",", " , "])
    dtexts = []
    for d in dims:
        body = sep.join(d)
        if rng.random() < 0.5:
            body = body + sep + "?" if body else rng.choice(["?", " ? "])
        pr = f"p{rng.choice([0, 1, 2, 7, 12])}" if rng.random() < 0.45 else ""
        dtexts.append("{" + body + "}" + pr)
    tail = ", unreduced={" + ", ".join(unr) + "}" if unr else ""
    if rng.random() < 0.25:
        ids = list(range(8))
        rng.shuffle(ids)
        at, meshdef = "mesh" + mesh_lit(axes, ids), ""
    else:
        at, meshdef = "@mesh", f"sdy.mesh @mesh = {mesh_lit(axes)}"
    sdy = f"#sdy.sharding<{at}, [{sep.join(dtexts)}]{tail}>"
    row = {"mesh": mesh_lit(axes), "shape": shape, "sdy": sdy}
    mod = module(sdy, shape, meshdef)
    try:
        row["printed"] = printed(mod)
        row["hlo"] = export(mod)
    except Exception as e:
        row.pop("printed", None)
        why = [l.strip() for l in str(e).splitlines() if "error" in l and l.strip()]
        row["error"] = (why[-1] if why else str(e).splitlines()[0])[:200]
    lines.append(row)

# JAX's own: P.UNCONSTRAINED dims lower to open dims of sdy.sharding_constraint (on an Auto mesh).
specs = [
    P(P.UNCONSTRAINED, "x"),
    P(P.UNCONSTRAINED, None),
    P("y", P.UNCONSTRAINED),
    P(P.UNCONSTRAINED, P.UNCONSTRAINED),
    P(("x", "y"), P.UNCONSTRAINED),
]
for axes in MESHES[1:3]:
    mesh = jax.make_mesh(tuple(s for _, s in axes), tuple(n for n, _ in axes), axis_types=(AxisType.Auto,) * len(axes))
    for spec in specs:
        ns = NamedSharding(mesh, spec)
        f = jax.jit(lambda a, ns=ns: jax.lax.with_sharding_constraint(a, ns))
        text = f.lower(jax.ShapeDtypeStruct((8, 8), jnp.float32)).as_text()
        m = re.search(r"sdy.sharding_constraint %arg0 (<@mesh, .*?>) :", text)
        lines.append({"mesh": mesh_lit(axes), "shape": [8, 8], "spec": str(spec), "constraint": m.group(1)})

out = pathlib.Path(__file__).with_name("sdy_hints.jsonl")
out.write_text("".join(json.dumps(r) + "\n" for r in lines))
print(f"wrote {len(lines)} lines to {out}")

"""Writes seed inputs for the fuzz targets of fuzz/ from the test corpora and the string literals of the
crates' tests: `python3 scripts/fuzz_seeds.py OUT_DIR` makes OUT_DIR/<target>/ for each target."""
import glob
import hashlib
import json
import os
import random
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")
OUT = sys.argv[1]


def put(target, text):
    data = text.encode() if isinstance(text, str) else text
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    with open(os.path.join(OUT, target, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def files(pattern):
    return sorted(glob.glob(os.path.join(ROOT, pattern)))


def literals(paths, target, keep):
    """The Rust string literals of `paths` that `keep` accepts."""
    for path in paths:
        for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', open(path, encoding="utf-8").read()):
            lit = lit.replace('\\"', '"').replace("\\n", "\n")
            if keep(lit):
                put(target, lit)


for i, line in enumerate(open(os.path.join(ROOT, "axe-xla/tests/corpus/shapes.jsonl"))):
    if i % 7 == 0:
        put("xla_shape", json.loads(line)["input"])
for path in files("axe-xla/tests/hlo_corpus/*/*") + files("axe-xla/tests/modules/*"):
    data = open(path, "rb").read()
    if len(data) < 60000:
        put("hlo_module", data)
for line in open(os.path.join(ROOT, "axe-shard/tests/corpus/jax.jsonl")):
    d = json.loads(line)
    if len(d["mesh"]) == 2:
        put("sharding", d["spec"])
        put("sharding", d["hlo"])
for line in list(open(os.path.join(ROOT, "axe-shard/tests/corpus/xla_tiles.jsonl")))[:300]:
    put("sharding", json.loads(line)["text"])
for text in ["[Shard(0), Replicate()]", "S0R", "S1S0", "RR", "S[(2,4):(1@gpu_x,1)] + R[4:1@gpu_y]"]:
    put("sharding", text)
for line in list(open(os.path.join(ROOT, "axe-shard/tests/corpus/sdy.jsonl")))[:120]:
    put("sharding", json.loads(line)["sdy"])
literals(files("axe-layout/tests/*.rs") + files("axe-layout/src/*.rs"), "axe_layout",
         lambda s: ("S[" in s or "R[" in s or "@" in s) and len(s) < 300)
literals(files("axe-cute/tests/*.rs") + files("axe-cute/src/*.rs"), "cute_layout",
         lambda s: (":" in s and "(" in s) or "Sw<" in s)
literals(files("axe-triton/tests/*.rs") + files("axe-triton/src/*.rs"), "triton_layout",
         lambda s: any(w in s for w in ("#ttg", "blocked", "register", "sizePerThread")))
for path in files("axe-triton/tests/data/*.tsv"):
    for line in list(open(path))[:100]:
        for cell in line.rstrip("\n").split("\t"):
            if "#" in cell or "{" in cell:
                put("triton_layout", cell)
# Relayouts: pairs of layouts of one array, tiled, padded, transposed, packed.
for dims, layouts in (
    ("f32[3,5]", ["{1,0}", "{0,1}", "{1,0:T(2,2)}", "{0,1:T(8,128)}", "{1,0:T(8,128)L(1024)}"]),
    ("bf16[17,130]", ["{1,0}", "{0,1}", "{1,0:T(8,128)(2,1)}", "{0,1:T(16,128)(2,1)}"]),
    ("s8[33,40]", ["{1,0}", "{0,1}", "{1,0:T(8,128)(4,1)}", "{1,0:T(32,128)(4,1)}"]),
    ("f32[4,3,9]", ["{2,1,0}", "{0,1,2}", "{1,2,0}", "{2,1,0:T(2,8)}"]),
    ("pred[9,70]", ["{1,0}", "{0,1}", "{1,0:T(8,128)(4,1)}"]),
):
    for src in layouts:
        for dst in layouts:
            put("relayout", f"{dims}{src}|{dims}{dst}")
# The Axe forms of XLA layouts start from the shapes.
for f in sorted(os.listdir(os.path.join(OUT, "xla_shape"))):
    put("xla_axe", open(os.path.join(OUT, "xla_shape", f), "rb").read())
# Triton's algebra starts from the layouts the readers take.
for f in sorted(os.listdir(os.path.join(OUT, "triton_layout"))):
    put("triton_algebra", open(os.path.join(OUT, "triton_layout", f), "rb").read())
# Reshards: pairs of the shardings above.
shardings = [open(os.path.join(OUT, "sharding", f), encoding="utf-8").read()
             for f in sorted(os.listdir(os.path.join(OUT, "sharding")))][:120]
for i, a in enumerate(shardings):
    put("reshard_plan", a + "|" + shardings[(i * 13 + 5) % len(shardings)])
# The algebra targets take two layouts, `A;B`: pairs of the layouts above.
for single, pair in (("cute_layout", "cute_algebra"), ("axe_layout", "layout_algebra")):
    texts = [open(os.path.join(OUT, single, f), encoding="utf-8").read()
             for f in sorted(os.listdir(os.path.join(OUT, single)))][:80]
    for i, a in enumerate(texts):
        put(pair, a + ";" + texts[(i * 7 + 3) % len(texts)])
# The kernel targets read bytes: a few fixed random inputs to start from.
rng = random.Random(5)
for target in ("kernel_copy", "kernel_pointwise", "kernel_reduce"):
    for _ in range(40):
        put(target, bytes(rng.randrange(256) for _ in range(32)))
for target in sorted(os.listdir(OUT)):
    print(f"{target}: {len(os.listdir(os.path.join(OUT, target)))} seeds")

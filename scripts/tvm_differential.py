"""Compare `axe layout` with TVM's tvm.tirx.layout on random layouts (run through scripts/tvm-differential).

TVM differs from our spec on purpose in several places (spec §8), so this compares *maps*, and only in the
direction the spec promises: wherever TVM produces a layout, ours must exist and induce the same map.

* map: TVM's apply (D(x)+O) plus its replica iters, enumerated here, against `axe layout map`.
* canonicalize, group, slice, tile_of (is_tile_inner), tile_of_outer (is_tile_outer), direct_sum, and
  tile (only where the outer layout has no replica or offset, which TVM adds unscaled).
"""

import argparse
import itertools
import json
import os
import random
import subprocess
import sys

from tvm.tirx import layout as T


class _Axes:
    def __getattr__(self, name):
        return T.Axis.get(name)


ENV = {"T": T, "Axis": _Axes()}
AXES = ["m", "laneid", "warpid"]
AXE = os.environ.get("AXE_BIN", "target/release/axe")


def axe(*args):
    out = subprocess.run([AXE, "layout", *args, "--json"], capture_output=True, text=True)
    line = out.stdout.strip().splitlines()
    return json.loads(line[0]) if line else {"error": out.stderr.strip()}


def tvm_layout(text):
    return eval(text, ENV)  # our printer's TVM form (`axe` prints it; see Layout::to_tvm)


def shape_arg(shape):
    return ",".join(str(s) for s in shape)


def random_layout(rng, max_iters=4, replicas=True, offset=True, nonneg=False):
    def iters(n, max_e, strides):
        return [(rng.randint(1, max_e), rng.choice(strides), rng.choice(AXES)) for _ in range(n)]

    strides = list(range(0 if nonneg else -6, 7))
    shard = iters(rng.randint(1, max_iters), 6, strides)
    rep = iters(rng.randint(0, 2), 3, [1, 2, 4, 8] if nonneg else [-4, -2, -1, 1, 2, 4, 8]) if replicas else []
    off = [(rng.randint(-5, 5), rng.choice(AXES))] if offset and rng.random() < 0.5 else []

    def fmt(its):
        st = ", ".join(f"{s}" if a == "m" else f"{s} @ Axis.{a}" for _, s, a in its)
        return f"({', '.join(str(e) for e, _, _ in its)}):({st})"

    text = f"T.S[{fmt(shard)}]"
    if rep:
        text += f" + T.R[{fmt(rep)}]"
    for v, a in off:
        text += f" + {v}" if a == "m" else f" + {v} @ Axis.{a}"
    return f"T.TileLayout({text})"


def size_of(text):
    n = 1
    for it in tvm_layout(text).shard:
        n *= int(it.extent)
    return n


def split(rng, n, rank):
    shape = [1] * rank
    p = 2
    while n > 1:
        while n % p == 0:
            shape[rng.randrange(rank)] *= p
            n //= p
        p += 1
    return shape


def tvm_full_map(lay):
    """Every element's coordinate set from TVM: apply (D(x)+O) plus the replica iters."""
    reps = [(int(it.extent), int(it.stride), str(it.axis.name)) for it in lay.replica]
    offsets = []
    for ys in itertools.product(*[range(e) for e, _, _ in reps]):
        d = {}
        for y, (_, s, a) in zip(ys, reps):
            d[a] = d.get(a, 0) + y * s
        offsets.append(d)
    out = []
    size = 1
    for it in lay.shard:
        size *= int(it.extent)
    for x in range(size):
        base = {str(k): int(v) for k, v in lay.apply(x).items()}
        pts = set()
        for r in offsets:
            keys = set(base) | set(r)
            pts.add(tuple(sorted((k, base.get(k, 0) + r.get(k, 0)) for k in keys)))
        out.append(pts)
    return out


def our_full_map(text):
    res = axe("map", text)
    if "error" in res:
        return None
    return [{tuple(sorted((k, v) for k, v in c.items())) for c in entry} for entry in res["map"]]


def normalize(m):
    # Drop zero components so both sides compare alike.
    return [{tuple((k, v) for k, v in p if v != 0) for p in s} for s in m]


class Tally:
    def __init__(self):
        self.passed, self.failed, self.notes = 0, 0, {}

    def check(self, ok, what, detail):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}: {detail}", file=sys.stderr)

    def note(self, key):
        self.notes[key] = self.notes.get(key, 0) + 1


def tvm_try(f):
    try:
        return f()
    except Exception:  # TVM raises InternalError for layouts it cannot handle
        return None


def same(ours, theirs):
    if ours is None or theirs is None:
        return False
    return axe("equiv", ours, str(theirs)).get("equivalent") is True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    t = Tally()
    for _ in range(args.cases):
        text = random_layout(rng)
        lay = tvm_layout(text)
        size = size_of(text)
        if size > 4096:
            continue
        # map
        ours = our_full_map(text)
        t.check(ours is not None and normalize(ours) == normalize(tvm_full_map(lay)), "map", text)
        # canonicalize: TVM's canonical form must have our map
        can = tvm_try(lambda: lay.canonicalize())
        if can is not None:
            t.check(same(text, can), "canonicalize", f"{text} -> {can}")
        shape = split(rng, size, rng.randint(1, 3))
        # group
        g = tvm_try(lambda: lay.group(shape))
        ours_g = axe("group", text, "--shape", shape_arg(shape))
        if g is not None:
            t.check("grouped" in ours_g and same(ours_g["grouped"], g[0]), "group", f"{text} by {shape}")
        elif "grouped" in ours_g:
            t.note("group: ours succeeds where TVM refuses")
        # slice
        region = []
        for s in shape:
            a, b = sorted((rng.randrange(s), rng.randrange(s)))
            region.append((a, b + 1))
        sl = tvm_try(lambda: lay.slice(shape, region))
        ours_s = axe("slice", text, "--shape", shape_arg(shape), "--region", ",".join(f"{a}:{b}" for a, b in region))
        if sl is not None:
            t.check("layout" in ours_s and same(ours_s["layout"], sl), "slice", f"{text} {shape} {region}")
        elif "layout" in ours_s:
            t.note("slice: ours succeeds where TVM refuses")
        # direct sum with a second layout (no replica, no offset)
        outer = random_layout(rng, max_iters=3, replicas=False, offset=False)
        olay = tvm_layout(outer)
        oshape = split(rng, size_of(outer), len(shape))
        ds = tvm_try(lambda: olay.direct_sum(lay, shape, oshape))
        if ds is not None:
            ours_d = axe("sum", text, outer, "--a-shape", shape_arg(shape), "--b-shape", shape_arg(oshape))
            t.check("layout" in ours_d and same(ours_d["layout"], ds), "direct_sum", f"{text} + {outer}")
        # tile, tile_of, tile_of_outer. TVM's span is 1 + Σ(e−1)·s over the shard only (no |s|, no replicas)
        # plus the offset, and its tile adds the outer R and O unscaled, so only inner layouts with
        # non-negative strides and neither replica nor offset, and outer layouts with neither replica nor
        # offset, mean the same thing on both sides.
        text = random_layout(rng, max_iters=3, replicas=False, offset=False, nonneg=True)
        lay = tvm_layout(text)
        if size_of(text) > 256:
            continue
        shape = split(rng, size_of(text), len(oshape))
        tiled = tvm_try(lambda: lay.tile(olay, oshape, shape))
        ours_t = axe("tile", text, outer, "--inner-shape", shape_arg(shape), "--outer-shape", shape_arg(oshape))
        if tiled is not None:
            t.check("layout" in ours_t and same(ours_t["layout"], tiled), "tile", f"{text} in {outer}")
            tshape = [a * b for a, b in zip(shape, oshape)]
            b_found = tvm_try(lambda: lay.is_tile_inner(tiled, tshape, shape))
            ours_b = axe("tile-of", str(tiled), text, "--tiled-shape", shape_arg(tshape), "--inner-shape", shape_arg(shape))
            if b_found is not None:
                t.check("outer" in ours_b, "tile_of", f"{tiled} / {text}")
            elif "outer" in ours_b:
                t.note("tile_of: ours succeeds where TVM refuses")
            a_found = tvm_try(lambda: olay.is_tile_outer(tiled, tshape, oshape))
            ours_a = axe("tile-of", str(tiled), outer, "--tiled-shape", shape_arg(tshape), "--outer", "--outer-shape", shape_arg(oshape))
            if a_found is not None:
                t.check("inner" in ours_a, "tile_of_outer", f"{tiled} / {outer}")
            elif "inner" in ours_a:
                t.note("tile_of_outer: ours succeeds where TVM refuses")
    for k, v in sorted(t.notes.items()):
        print(f"note: {k}: {v} cases")
    print(f"{t.passed} passed, {t.failed} failed")
    sys.exit(1 if t.failed else 0)


if __name__ == "__main__":
    main()

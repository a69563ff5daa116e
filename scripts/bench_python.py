"""Speed of the axe Python package, against peers measured in the same run (run by scripts/bench-python).

1. Per-call latency through Python of parse / canonicalize / group / tile / slice, against Apache TVM's
   tvm.tirx.layout Python API on the same layouts (goal: axe at least 5x faster per call).
2. axe.to_physical / from_physical / relayout against numpy's pad / reshape / transpose recipes on the
   standard relayout cases (goal: at least 5x), each result checked equal to numpy's.

Figures are medians over --rounds rounds; each round takes the best of a few runs.
"""

import argparse
import statistics
import sys
import time

import numpy as np

import axe
from numpy_recipes import tile2, tile_sub, untile2


def per_call_ns(f, n):
    s = time.perf_counter_ns()
    for _ in range(n):
        f()
    return (time.perf_counter_ns() - s) / n


def median_ns(f, n, rounds):
    f()
    return statistics.median(per_call_ns(f, n) for _ in range(rounds))


def best_s(f, runs=3):
    t = float("inf")
    for _ in range(runs):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t


# (name, layout text, group/slice shape, slice region, tile: (inner shape, outer layout, outer shape))
LAYOUTS = [
    ("row-major 64x64", "S[(64,64):(64,1)]", [64, 64], [(8, 40), (0, 32)], ([8, 8], "S[(8,8):(8,1)]", [8, 8])),
    ("TPU tile 8x128", "S[(4,8,2,128):(2048,128,1024,1)]", [32, 256], [(0, 8), (0, 128)],
     ([8, 128], "S[(4,2):(2,1)]", [4, 2])),
    ("threads + replica", "S[(8,2,4):(4@laneid,2,1)] + R[2:4@warpid]", [8, 8], [(0, 4), (2, 6)],
     ([8, 8], "S[(2,2):(2,1)]", [2, 2])),
]


def latency(rounds, tvm_python):
    try:
        from tvm.tirx import layout as T
    except ImportError:
        T = None
        print(f"(TVM not importable in {sys.executable}: axe figures alone; scripts/bench-python installs it)")

    class Axes:
        def __getattr__(self, name):
            return T.Axis.get(name)

    env = {"T": T, "Axis": Axes()}
    rows = []
    for name, text, shape, region, (ishape, outer, oshape) in LAYOUTS:
        a = axe.Layout(text)
        o = axe.Layout(outer)
        # TVM's tile wants a layout without replicas and with non-negative strides on both sides.
        inner = axe.Layout.row_major(ishape)
        ops = {
            "parse": (lambda: axe.Layout(text), None),
            "canonicalize": (lambda: a.canonicalize(), None),
            "group": (lambda: a.group(shape), None),
            "slice": (lambda: a.slice(shape, region), None),
            "tile": (lambda: inner.tile(o, ishape, oshape), None),
        }
        if T is not None:
            tvm_text = a.to_tvm()
            ta = eval(tvm_text, env)
            ti, to = eval(inner.to_tvm(), env), eval(o.to_tvm(), env)
            ops["parse"] = (ops["parse"][0], lambda: eval(tvm_text, env))
            ops["canonicalize"] = (ops["canonicalize"][0], lambda: ta.canonicalize())
            ops["group"] = (ops["group"][0], lambda: ta.group(shape))
            ops["slice"] = (ops["slice"][0], lambda: ta.slice(shape, region))
            ops["tile"] = (ops["tile"][0], lambda: ti.tile(to, oshape, ishape))
        for op, (ours, theirs) in ops.items():
            n = 2000
            ns = median_ns(ours, n, rounds)
            tns = median_ns(theirs, max(1, n // 20), rounds) if theirs else None
            rows.append((name, op, ns, tns))
    print(f"\n{'layout':<20} {'op':<13} {'axe ns':>10} {'TVM ns':>11} {'TVM/axe':>8}")
    ratios = []
    for name, op, ns, tns in rows:
        r = tns / ns if tns else None
        if r:
            ratios.append(r)
        print(f"{name:<20} {op:<13} {ns:>10.0f} {tns or float('nan'):>11.0f} {r or float('nan'):>7.1f}x")
    if ratios:
        g = statistics.geometric_mean(ratios)
        print(f"geometric mean: axe {g:.1f}x faster per call (lowest {min(ratios):.1f}x)")


def relayouts(rounds, n):
    f32 = np.arange(n * n, dtype=np.float32).reshape(n, n)
    bf16 = (np.arange(n * n, dtype=np.uint32) & 0xFFFF).astype(np.uint16).reshape(n, n)
    pred = (np.arange(n * n) % 3 == 0).reshape(n, n)
    odd = np.arange((n - 192) * (n - 192), dtype=np.float32).reshape(n - 192, n - 192)
    t = f"{n},{n}"
    tiled = tile2(f32, 8, 128)
    cases = [
        ("f32 -> T(8,128)", lambda: tile2(f32, 8, 128),
         lambda: axe.to_physical(f32, f"f32[{t}]{{1,0:T(8,128)}}").view(np.float32)),
        ("f32 T(8,128) -> row-major", lambda: untile2(tiled, n, n, 8, 128),
         lambda: axe.from_physical(tiled.view(np.uint8), f"f32[{t}]{{1,0:T(8,128)}}")),
        ("bf16 -> T(8,128)(2,1)", lambda: tile_sub(bf16, 8, 128, 2),
         lambda: axe.to_physical(bf16, f"bf16[{t}]{{1,0:T(8,128)(2,1)}}").view(np.uint16)),
        ("pred -> T(32,128)(32,1)E(1)",
         lambda: np.packbits(tile_sub(pred, 32, 128, 32), bitorder="little"),
         lambda: axe.to_physical(pred, f"pred[{t}]{{1,0:T(32,128)(32,1)E(1)}}")),
        ("f32 transpose {1,0}->{0,1}", lambda: np.ascontiguousarray(f32.T).reshape(-1),
         lambda: axe.relayout(f32, f"f32[{t}]", "{0,1}").view(np.float32)),
        (f"f32[{n - 192}]^2 -> T(8,128) (padding)", lambda: tile2(odd, 8, 128),
         lambda: axe.to_physical(odd, f"f32[{n - 192},{n - 192}]{{1,0:T(8,128)}}").view(np.float32)),
    ]
    print(f"\n{'relayout (' + str(n) + 'x' + str(n) + ')':<36} {'numpy ms':>9} {'axe ms':>8} {'numpy/axe':>9}")
    ratios = []
    for name, numpy_way, axe_way in cases:
        want, got = numpy_way(), axe_way()
        same = want.shape == got.shape and np.array_equal(want, got)
        tn = statistics.median(best_s(numpy_way) for _ in range(rounds))
        ta = statistics.median(best_s(axe_way) for _ in range(rounds))
        ratios.append(tn / ta)
        print(f"{name:<36} {tn * 1e3:>9.1f} {ta * 1e3:>8.1f} {tn / ta:>8.1f}x{'' if same else '  RESULTS DIFFER'}")
    print(f"geometric mean: axe {statistics.geometric_mean(ratios):.1f}x faster than numpy's recipes")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, default=4096, help="relayout arrays are n x n")
    ap.add_argument("--skip-relayout", action="store_true")
    args = ap.parse_args()
    print(f"axe {axe.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    latency(args.rounds, None)
    if not args.skip_relayout:
        relayouts(args.rounds, args.n)


if __name__ == "__main__":
    main()

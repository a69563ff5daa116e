"""Compare axe-triton with Triton on random linear layouts and Gluon layouts.

Triton aborts the process on inputs that break its preconditions (non-surjective targets, non-invertible
layouts, non-power-of-two sizes), so it is only asked where axe-triton answered; where axe-triton refused,
the refusal is confirmed here by enumeration. `--golden FILE` writes Triton's answers for the Gluon cases
as checked-in expected data (one `text<TAB>shape<TAB>json` per line).
"""
import argparse
import json
import os
import random
import subprocess
import sys

from triton._C.libtriton import ir, gluon_ir
from triton._C.libtriton.linear_layout import LinearLayout as LL
from triton.experimental.gluon import language as gl

IN_NAMES = ["register", "lane", "warp", "block"]


class Oracle:
    def __init__(self, path):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, *parts):
        self.p.stdin.write("\t".join(parts) + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().rstrip("\n")


def rand_ll(rng, out_names, in_names):
    sizes = [1 << rng.randrange(0, 4) for _ in out_names]
    ins = [(n, [[rng.randrange(s) for s in sizes] for _ in range(rng.randrange(0, 4))]) for n in in_names]
    return ins, list(zip(out_names, sizes))


def to_json(ins, outs):
    return json.dumps({"in": dict(ins), "out": dict(outs)})


def triton_ll(ins, outs):
    return LL.from_bases(ins, [n for n, _ in outs], [s for _, s in outs], False)


def from_triton(t):
    return {"in": {n: [list(b) for b in bs] for n, bs in t.bases}, "out": dict(t.out_dims)}


def flat_apply(ins, outs, x):
    acc = [0] * len(outs)
    for _, bs in ins:
        for b in bs:
            if x & 1:
                acc = [a ^ v for a, v in zip(acc, b)]
            x >>= 1
    return acc


def in_bits(ins):
    return sum(len(bs) for _, bs in ins)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--golden")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    axe = Oracle(os.environ["AXE_TRITON_ORACLE"])
    stats = {"agree": 0, "refused_confirmed": 0}
    fails = []

    def check(label, ours, theirs):
        if not ours.startswith("error") and json.loads(ours) == theirs:
            stats["agree"] += 1
        else:
            fails.append((label, ours, theirs))

    for _ in range(a.cases):
        rank = rng.randrange(1, 3)
        outs_n = [f"dim{i}" for i in range(rank)]
        ins, outs = rand_ll(rng, outs_n, IN_NAMES[: rng.randrange(1, 5)])
        j = to_json(ins, outs)
        t = triton_ll(ins, outs)
        # map, injective, surjective
        ours = json.loads(axe.ask("map", j))
        theirs_map = [list(flat_apply(ins, outs, x)) for x in range(1 << in_bits(ins))]
        for x in range(1 << in_bits(ins)):
            inputs, rest = {}, x
            for n, bs in ins:
                inputs[n] = rest & ((1 << len(bs)) - 1)
                rest >>= len(bs)
            got = t.apply(inputs)
            assert [got[n] for n in outs_n] == theirs_map[x]
        check("map", json.dumps(ours["map"]), theirs_map)
        check("injective", json.dumps(ours["injective"]), t.is_injective())
        check("surjective", json.dumps(ours["surjective"]), t.is_surjective())
        # invert / pseudoinvert
        for op in ["invert", "pseudoinvert"]:
            r = axe.ask(op, j)
            if r.startswith("error"):
                ok = (not t.is_surjective()) or (op == "invert" and not t.is_injective())
                stats["refused_confirmed" if ok else "agree"] += 0
                if ok:
                    stats["refused_confirmed"] += 1
                else:
                    fails.append((op, r, "should succeed"))
            else:
                check(op, r, from_triton(getattr(t, op)()))
        # invert_and_compose with B over the same out-dims
        bins, _ = rand_ll(rng, outs_n, ["offset", "block"])
        bins = [(n, [[v % s for v, (_, s) in zip(b, outs)] for b in bs]) for n, bs in bins]
        bj = to_json(bins, outs)
        tb = triton_ll(bins, outs)
        r = axe.ask("invert_and_compose", j, bj)
        if r.startswith("error"):
            if tb.is_surjective():
                fails.append(("invert_and_compose", r, "should succeed"))
            else:
                stats["refused_confirmed"] += 1
        else:
            check("invert_and_compose " + j + " " + bj, r, from_triton(t.invert_and_compose(tb)))
        # compose: A's out-dims feed C's in-dims
        cins = [(n, [[rng.randrange(8), rng.randrange(2)] for _ in range(s.bit_length() - 1)]) for n, s in outs]
        cj = to_json(cins, [("x", 8), ("y", 2)])
        r = axe.ask("compose", j, cj)
        check("compose", r, from_triton(t.compose(triton_ll(cins, [("x", 8), ("y", 2)]))))

    # Gluon layouts.
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    golden = []
    for _ in range(max(1, a.cases // 5)):
        rank = rng.randrange(1, 4)
        p = lambda hi: [1 << rng.randrange(0, hi) for _ in range(rank)]
        order = list(range(rank))
        rng.shuffle(order)
        lay = gl.BlockedLayout(size_per_thread=p(3), threads_per_warp=p(3), warps_per_cta=p(2), order=order)
        shape = p(6)
        if rank > 1 and rng.random() < 0.4:
            d = rng.randrange(rank)
            lay = gl.SliceLayout(d, lay)
            shape = shape[:d] + shape[d + 1:]
        if rng.random() < 0.3:
            wpc = [1 << rng.randrange(0, 3), 1 << rng.randrange(0, 3)]
            if rng.random() < 0.5:
                lay = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=wpc, instr_shape=[16, 8])
            else:
                wpc[0] = 4 * (1 << rng.randrange(0, 2))
                n = 8 << rng.randrange(0, 6)
                lay = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=wpc, instr_shape=[16, n, 16])
            shape = [16 << rng.randrange(0, 4), 8 << rng.randrange(0, 6)]
            if lay.version[0] == 3:
                shape = [64 << rng.randrange(0, 2), lay.instr_shape[1] << rng.randrange(0, 2)]
        if rng.random() < 0.25:
            rank = rng.randrange(1, 4)
            order = list(range(rank))
            rng.shuffle(order)
            lay = gl.SwizzledSharedLayout(vec=1 << rng.randrange(0, 4), per_phase=1 << rng.randrange(0, 3),
                                          max_phase=1 << rng.randrange(0, 4), order=order)
            shape = [1 << rng.randrange(1, 6) for _ in range(rank)]
        text = repr(lay)
        dl = builder.to_linear_layout(lay._to_ir(builder), shape)
        if hasattr(dl, "offset_bases"):
            ins = {"offset": dl.offset_bases, "block": dl.block_bases}
        else:
            ins = {"register": dl.reg_bases, "lane": dl.lane_bases, "warp": dl.warp_bases, "block": dl.block_bases}
        theirs = {"in": ins, "out": {f"dim{i}": s for i, s in enumerate(shape)}}
        theirs = json.loads(json.dumps(theirs))
        shape_s = ",".join(map(str, shape))
        check("gluon " + text + " " + shape_s, axe.ask("gluon", text, shape_s), theirs)
        golden.append(f"{text}\t{shape_s}\t{json.dumps(theirs)}")
    if a.golden:
        with open(a.golden, "w") as f:
            f.write("\n".join(golden) + "\n")
    print(json.dumps(stats))
    for f in fails[:20]:
        print("DISAGREE", *f, sep="\n  ")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()

"""Compare axe-triton's reading of the older `#ttg.amd_wmma` printing (`warpsPerCTA`, before
`ctaLayout`) with the Triton that printed it (3.6, whose Gluon `AMDWMMALayout` takes `warps_per_cta`):
random WMMA accumulators (every version and instruction, rank 2 and 3, over CTAs) and their dot operands
are printed by that Triton as TTGIR attributes, read by axe-triton, and laid out by both. Where
`tilesPerWarp` is not all ones axe-triton refuses the text (counted apart); over CTAs that Triton lays
WMMA layouts out otherwise than 3.9 does (counted apart: axe-triton follows 3.9); elsewhere both answer
alike or both refuse. Run by `scripts/triton-differential` when `AXE_TRITON_OLDER` names that Triton.
"""
import argparse
import json
import os
import random
import sys

from triton._C.libtriton import ir, gluon_ir
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language import amd

from triton_differential import Oracle, triton_forked
from triton_differential_cases import rand_cga, rand_shape

INSTR = {1: [[16, 16, 16]], 2: [[16, 16, 16], [16, 16, 32]],
         3: [[16, 16, 4], [16, 16, 32], [16, 16, 64], [32, 16, 64], [32, 16, 128]]}
K_WIDTH = {1: [8, 16], 2: [4, 8, 16], 3: [1, 2, 4, 8, 16]}


def attr_text(builder, lay, shape):
    """The layout attribute Triton prints in the tensor type of `lay` over `shape`."""
    text = str(builder.get_distributed_ty(builder.get_float_ty(), shape, lay._to_ir(builder)))
    return text[text.index("#"):-1]


def rand_case(rng):
    rank = 3 if rng.random() < 0.3 else 2
    version = rng.randrange(1, 4)
    tiles = [1 << rng.randrange(0, 2) for _ in range(rank)] if rng.random() < 0.15 else None
    lay = amd.AMDWMMALayout(version=version, transposed=rng.random() < 0.5,
                            warps_per_cta=[1 << rng.randrange(0, 3) for _ in range(rank)],
                            instr_shape=rng.choice(INSTR[version]), tiles_per_warp=tiles,
                            cga_layout=rand_cga(rng, rank) if rng.random() < 0.3 else [])
    shape = rand_shape(rng, rank, 8 if rank == 2 else 6)
    if rng.random() < 0.5:
        lay = gl.DotOperandLayout(operand_index=rng.randrange(2), parent=lay,
                                  k_width=rng.choice(K_WIDTH[version]))
    else:
        # That Triton lays an accumulator out only over whole tiles (3.9 over any shape).
        shape[-2:] = [max(s, 32) for s in shape[-2:]]
    return lay, shape


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=10)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    axe = Oracle(os.environ["AXE_TRITON_ORACLE"])
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    stats = {"agree": 0, "dot_agree": 0, "rank3_agree": 0, "cga_agree": 0, "both_refused": 0,
             "tiles_per_warp_refused": 0}
    fails = []
    for _ in range(a.cases):
        lay, shape = rand_case(rng)
        shape_s = ",".join(map(str, shape))
        attr = triton_forked(builder, lay, shape, lambda b, l, s: attr_text(b, l, s))
        theirs = triton_forked(builder, lay, shape)
        if attr is None:
            stats["both_refused"] += 1  # Triton refuses to build the layout: nothing to read
            continue
        ours = axe.ask("gluon", attr, shape_s)
        if theirs is None:
            if ours.startswith("error"):
                stats["both_refused"] += 1
            else:
                fails.append((attr + " " + shape_s, ours, "Triton refuses"))
            continue
        if not ours.startswith("error") and json.loads(ours) == theirs:
            stats["agree"] += 1
            stats["dot_agree"] += attr.startswith("#ttg.dot_op")
            stats["rank3_agree"] += len(shape) == 3
            stats["cga_agree"] += "CGALayout" in attr or "CTAsPerCGA" in attr
        elif ours.startswith("error") and "tilesPerWarp" in attr:
            stats["tiles_per_warp_refused"] += 1
        elif "CGALayout" in attr or "CTAsPerCGA" in attr:
            # Over CTAs that Triton lays WMMA layouts out otherwise than 3.9, which axe-triton follows:
            # accumulator registers counted over the whole tensor, dot operands split along K too.
            stats["cga_differs_from_3_9"] = stats.get("cga_differs_from_3_9", 0) + 1
        else:
            fails.append((attr + " " + shape_s, ours, theirs))
    print(json.dumps(stats))
    for f in fails[:a.show]:
        print("DISAGREE", *f, sep="\n  ")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()

"""Compare axe-triton with Triton on random linear layouts and Gluon layouts: blocked, slice, NVMMA (batched
too), dot operand, swizzled and NVMMA shared layouts, over one CTA and several; AMD MFMA and WMMA
accumulators with every parameter Triton takes (rank 3 and multi-CTA among them) and their dot operands;
linear Gluon layouts; padded shared layouts, through the `#ttg.padded_shared` attribute Triton prints (it
has no linear layout for them). The layouts are drawn by `triton_differential_cases.py`.

Triton aborts the process on inputs that break its preconditions (non-surjective targets, non-invertible
layouts, non-power-of-two sizes), so it is only asked where axe-triton answered; where axe-triton refused,
the refusal is confirmed here by enumeration. Dot operand and NVMMA shared layouts are asked of Triton in a
forked child, so that a case Triton aborts on counts as Triton's refusal: both must answer alike or both
refuse. `--golden FILE` writes Triton's answers for the random Gluon cases as checked-in expected data (one
`text<TAB>shape<TAB>json` per line); `--named FILE` writes them for a fixed list of hand-picked cases.
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

from triton_differential_cases import (named_cases, rand_amd_case, rand_amd_dot_case, rand_nvmma_instr_case,
                                       rand_batched_nvmma_case, rand_linear_gluon_case, rand_mma_case,
                                       rand_more_cta_case, rand_multi_cta_case, rand_padded_case,
                                       rand_wmma_dot_case)

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


def triton_bases(dl, shape):
    if hasattr(dl, "offset_bases"):
        ins = {"offset": dl.offset_bases, "block": dl.block_bases}
    else:
        ins = {"register": dl.reg_bases, "lane": dl.lane_bases, "warp": dl.warp_bases, "block": dl.block_bases}
    return json.loads(json.dumps({"in": ins, "out": {f"dim{i}": s for i, s in enumerate(shape)}}))


def triton_forked(builder, lay, shape, ask=None):
    """Triton's linear layout of `lay` over `shape` (or what `ask(builder, lay, shape)` answers), or None
    where Triton raises or aborts the process."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        try:
            if ask is None:
                out = json.dumps(triton_bases(builder.to_linear_layout(lay._to_ir(builder), shape), shape))
            else:
                out = json.dumps(ask(builder, lay, shape))
            with os.fdopen(w, "w") as f:
                f.write(out)
            os._exit(0)
        except BaseException:
            os._exit(3)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    return json.loads(data) if status == 0 else None


def triton_padded_attr(builder, lay, shape):
    """The `#ttg.padded_shared<...>` attribute Triton prints for `lay` (from a memdesc type), or None
    where Triton refuses."""
    ty = builder.get_shared_mem_desc_ty(builder.get_float_ty(), shape, lay._to_ir(builder), shape)
    text = str(ty)
    start = text.index("#ttg.padded_shared<")
    depth = 0
    for i in range(text.index("<", start), len(text)):
        depth += {"<": 1, ">": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i + 1]
    raise ValueError(text)


def padded_attr_bases(attr, shape):
    """The linear component the attribute text states: its offset and block bases, or the identity
    along `order` (the short form Triton prints for one CTA and offsets in order), over `shape`."""
    body = attr[attr.index("{"):attr.rindex("}") + 1]
    for key in ["offset", "block", "order", "shape"]:
        body = body.replace(key + " =", f'"{key}":')
    ins = json.loads(body)
    if "order" in ins:
        offs = []
        for d in ins["order"]:
            offs += [[1 << k if i == d else 0 for i in range(len(shape))] for k in range(shape[d].bit_length() - 1)]
        ins = {"offset": offs, "block": []}
    return {"in": {"offset": ins["offset"], "block": ins["block"]}, "out": {f"dim{i}": s for i, s in enumerate(shape)}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--golden")
    ap.add_argument("--named")
    ap.add_argument("--show", type=int, default=20, help="how many disagreements to print")
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
        theirs = triton_bases(builder.to_linear_layout(lay._to_ir(builder), shape), shape)
        shape_s = ",".join(map(str, shape))
        check("gluon " + text + " " + shape_s, axe.ask("gluon", text, shape_s), theirs)
        golden.append(f"{text}\t{shape_s}\t{json.dumps(theirs)}")
    def distributed_attr(builder, lay, shape):
        """The layout attribute Triton prints in the tensor type of `lay` over `shape`."""
        text = str(builder.get_distributed_ty(builder.get_float_ty(), shape, lay._to_ir(builder)))
        return text[text.index("#"):-1]

    def check_attr(counts, text, lay, shape, theirs):
        """Asks axe to read the TTGIR attribute Triton prints for `lay` and checks it lays out as
        `theirs` (Triton's answer for the Gluon form) and reads as the same layout."""
        attr = triton_forked(builder, lay, shape, distributed_attr)
        shape_s = ",".join(map(str, shape))
        if attr is None:
            fails.append(("ttg of " + text, "Triton prints no attribute", "an attribute"))
            return
        if "ctaLayout = {}" in attr and "CGALayout" not in attr and len(shape) == 3:
            # A WMMA attribute with no bases does not say its rank (TTGIR takes it from the tensor
            # type); axe-triton reads it as rank 2.
            bump(counts, "attr_rank_unsaid", 1)
            return
        before = stats["agree"]
        check("ttg " + attr + " " + shape_s, axe.ask("gluon", attr, shape_s), theirs)
        bump(counts, "attr_agree", stats["agree"] - before)
        golden.append(f"{attr}\t{shape_s}\t{json.dumps(theirs)}")
        same = axe.ask("same", text, attr)
        if same != "same":
            fails.append(("same " + text + " " + attr, same, "same"))

    def forked(gen, count, counts, tally=None, keep=True, attr=False):
        """Draws `count` cases from `gen`, asks axe and (in a fork, so that an abort is a refusal)
        Triton, and counts in `counts` the shared refusals and, under "agree" where it has one, the
        agreements; `tally(counts, text, lay, shape, ok)` adds the family's own counts, and `keep`
        puts Triton's answers in the golden file."""
        for _ in range(max(1, count)):
            lay, shape = gen(rng)
            text = repr(lay)
            shape_s = ",".join(map(str, shape))
            ours = axe.ask("gluon", text, shape_s)
            theirs = triton_forked(builder, lay, shape)
            if theirs is None:
                if ours.startswith("error"):
                    counts["both_refused"] += 1
                    stats["refused_confirmed"] += 1
                else:
                    fails.append(("gluon " + text + " " + shape_s, ours, "Triton refuses"))
                continue
            before = stats["agree"]
            check("gluon " + text + " " + shape_s, ours, theirs)
            ok = stats["agree"] - before
            if "agree" in counts:
                counts["agree"] += ok
            if tally:
                tally(counts, text, lay, shape, ok)
            if attr:
                check_attr(counts, text, lay, shape, theirs)
            if keep:
                golden.append(f"{text}\t{shape_s}\t{json.dumps(theirs)}")
        return counts

    def bump(counts, key, ok):
        counts[key] = counts.get(key, 0) + ok

    # Dot operands, accumulators over small shapes and NVMMA shared layouts.
    stats["mma_and_nvmma_shared"] = forked(rand_mma_case, a.cases // 2, {"agree": 0, "both_refused": 0})

    # AMD MFMA accumulators, multi-CTA Blocked and NVMMA shared layouts.
    def multi_tally(c, text, lay, shape, ok):
        c["amd_mfma_agree"] += ok if text.startswith("AMDMFMALayout") else 0
        c["amd_wmma_agree"] += ok if text.startswith("AMDWMMALayout") else 0

    stats["multi_cta_and_amd"] = forked(
        rand_multi_cta_case, a.cases // 2,
        {"agree": 0, "both_refused": 0, "amd_mfma_agree": 0, "amd_wmma_agree": 0}, multi_tally, keep=False)

    # AMD accumulators with every parameter.
    def amd_tally(c, text, lay, shape, ok):
        kind = "mfma" if text.startswith("AMDMFMA") else "wmma"
        c[kind + "_agree"] += ok
        c[kind + "_cga_agree"] += ok if lay.cga_layout else 0
        c["rank3_agree"] += ok if len(shape) == 3 else 0

    stats["amd"] = forked(rand_amd_case, a.cases // 2,
                          {"mfma_agree": 0, "wmma_agree": 0, "mfma_cga_agree": 0, "wmma_cga_agree": 0,
                           "rank3_agree": 0, "both_refused": 0}, amd_tally)

    # NVMMA accumulators, swizzled shared layouts and dot operands over CTAs.
    def more_tally(c, text, lay, shape, ok):
        if text.startswith("NVMMADistributedLayout") and len(shape) == 3:
            bump(c, "batched_nvmma_agree", ok)

    stats["nvmma_swizzled_dot_multi_cta"] = forked(
        rand_more_cta_case, a.cases // 4, {"agree": 0, "both_refused": 0}, more_tally)

    # Linear Gluon layouts.
    def lin_tally(c, text, lay, shape, ok):
        c["shared_agree" if text.startswith("Shared") else "distributed_agree"] += ok

    stats["linear_gluon"] = forked(rand_linear_gluon_case, a.cases // 4,
                                   {"distributed_agree": 0, "shared_agree": 0, "both_refused": 0}, lin_tally)

    # Operands of AMD mfma and wmma dots.
    def adot_tally(c, text, lay, shape, ok):
        if "AMDWMMALayout" in text:
            bump(c, "wmma_agree", ok)

    stats["amd_dot_operands"] = forked(rand_amd_dot_case, a.cases // 4, {"agree": 0, "both_refused": 0}, adot_tally)
    # Operands of batched NVMMA dots (Ampere A and B, Hopper A) and rank-3 Hopper accumulators.
    def batched_tally(c, text, lay, shape, ok):
        kind = "hopper" if "version=[3, 0]" in text else "ampere"
        bump(c, kind + ("_accumulator" if text.startswith("NVMMA") else "_dot") + "_agree", ok)
        if "cga_layout=[[" in text:
            bump(c, "cga_agree", ok)

    stats["batched_nvmma_dot"] = forked(rand_batched_nvmma_case, a.cases // 4, {"agree": 0, "both_refused": 0},
                                        batched_tally, attr=True)

    # NVMMA accumulators and operands with random instruction shapes.
    def instr_tally(c, text, lay, shape, ok):
        kind = "hopper" if "version=[3, 0]" in text else "ampere"
        bump(c, kind + ("_dot" if text.startswith("Dot") else "_accumulator") + "_agree", ok)

    stats["nvmma_instr_shapes"] = forked(rand_nvmma_instr_case, a.cases // 4, {"agree": 0, "both_refused": 0},
                                         instr_tally, keep=False)

    # Operands of wmma dots whose parent has register bases, rank 3 or CTAs.
    def wmma_dot_tally(c, text, lay, shape, ok):
        p = lay.parent
        bump(c, "reg_bases_agree", ok if p.reg_bases else 0)
        bump(c, "rank3_agree", ok if len(shape) == 3 else 0)
        bump(c, "cga_agree", ok if p.cga_layout else 0)

    stats["wmma_dot_more"] = forked(rand_wmma_dot_case, a.cases // 4, {"agree": 0, "both_refused": 0},
                                    wmma_dot_tally, attr=True)
    # PaddedSharedLayout: Triton's attribute text gives its linear component; axe reads both the Gluon
    # form and that attribute.
    pad = {"agree": 0, "attr_agree": 0, "cga_agree": 0, "both_refused": 0}
    for _ in range(max(1, a.cases // 4)):
        lay, shape = rand_padded_case(rng)
        text = repr(lay)
        shape_s = ",".join(map(str, shape))
        ours = axe.ask("gluon", text, shape_s)
        attr = triton_forked(builder, lay, shape, triton_padded_attr)
        if attr is None:
            if ours.startswith("error"):
                pad["both_refused"] += 1
                stats["refused_confirmed"] += 1
            else:
                fails.append(("gluon " + text + " " + shape_s, ours, "Triton refuses"))
            continue
        theirs = padded_attr_bases(attr, shape)
        before = stats["agree"]
        check("gluon " + text + " " + shape_s, ours, theirs)
        ok = stats["agree"] - before
        pad["agree"] += ok
        pad["cga_agree"] += ok if lay.cga_layout else 0
        pad["cga_copies_agree"] = pad.get("cga_copies_agree", 0) + (ok if [0] * len(shape) in lay.cga_layout else 0)
        before = stats["agree"]
        check("ttg " + attr + " " + shape_s, axe.ask("gluon", attr, shape_s), theirs)
        pad["attr_agree"] += stats["agree"] - before
        same = axe.ask("same", text, attr)
        if same == "same":
            pad["gluon_is_attr"] = pad.get("gluon_is_attr", 0) + 1
        else:
            fails.append(("same " + text + " " + attr, same, "same"))
        golden.append(f"{text}\t{shape_s}\t{json.dumps(theirs)}")
        golden.append(f"{attr}\t{shape_s}\t{json.dumps(theirs)}")
    stats["padded_shared"] = pad
    if a.named:
        lines = []
        for lay, shape in named_cases():
            text, shape_s = repr(lay), ",".join(map(str, shape))
            theirs = triton_bases(builder.to_linear_layout(lay._to_ir(builder), shape), shape)
            check("named " + text + " " + shape_s, axe.ask("gluon", text, shape_s), theirs)
            lines.append(f"{text}\t{shape_s}\t{json.dumps(theirs)}")
        with open(a.named, "w") as f:
            f.write("\n".join(lines) + "\n")
    if a.golden:
        with open(a.golden, "w") as f:
            f.write("\n".join(golden) + "\n")
    print(json.dumps(stats))
    if fails:
        print(len(fails), "disagreements")
    for f in fails[:a.show]:
        print("DISAGREE", *f, sep="\n  ")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()

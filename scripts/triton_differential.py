"""Compare axe-triton with Triton on random linear layouts and Gluon layouts: blocked, slice, NVMMA, dot
operand, swizzled and NVMMA shared layouts, over one CTA and several; AMD MFMA and WMMA accumulators with
every parameter Triton takes (rank 3 and multi-CTA among them); padded shared layouts, through the
`#ttg.padded_shared` attribute Triton prints (it has no linear layout for them).

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
from triton.experimental.gluon.language import amd

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


def rand_shape(rng, rank, hi, bits=14):
    """Power-of-two sizes up to 2^hi each and 2^bits in all (so the golden tests enumerate them quickly)."""
    e = [rng.randrange(0, hi + 1) for _ in range(rank)]
    while sum(e) > bits:
        e[e.index(max(e))] -= 1
    return [1 << x for x in e]


def rand_mma_case(rng):
    """A dot operand (NVMMA or blocked parent), an accumulator over a small shape, or an NVMMA shared layout."""
    amp = lambda: gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1 << rng.randrange(0, 3),
                                                                          1 << rng.randrange(0, 3)],
                                            instr_shape=[16, 8])
    hop = lambda: gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4 << rng.randrange(0, 2),
                                                                          1 << rng.randrange(0, 2)],
                                            instr_shape=[16, 8 << rng.randrange(0, 6), 16])
    kind = rng.random()
    if kind < 0.55:
        r = rng.random()
        if r < 0.45:
            parent, op, kw = amp(), rng.randrange(2), 1 << rng.randrange(0, 5)
        elif r < 0.75:
            parent, op, kw = hop(), (1 if rng.random() < 0.1 else 0), 1 << rng.randrange(0, 4)
        else:
            rank = rng.randrange(2, 4)
            p = lambda hi: [1 << rng.randrange(0, hi) for _ in range(rank)]
            order = list(range(rank))
            rng.shuffle(order)
            parent = gl.BlockedLayout(size_per_thread=p(3), threads_per_warp=p(3), warps_per_cta=p(2), order=order)
            op, kw = rng.randrange(2), 0
        if rng.random() < 0.05:
            kw = 3
        lay = gl.DotOperandLayout(operand_index=op, parent=parent, k_width=kw)
        shape = rand_shape(rng, lay.rank, 8)
        if rng.random() < 0.2:
            d = rng.randrange(lay.rank)
            lay = gl.SliceLayout(d, lay)
            shape = shape[:d] + shape[d + 1:]
        return lay, shape
    if kind < 0.65:
        return (amp() if rng.random() < 0.5 else hop()), rand_shape(rng, 2, 8)
    swizzle = rng.choice([0, 32, 64, 128])
    bits = rng.choice([8, 16, 32, 64])
    fp4 = swizzle == 128 and bits == 8 and rng.random() < 0.3
    rank = rng.choice([1, 2, 2, 2, 3])
    transposed = rng.random() < 0.4
    lay = gl.NVMMASharedLayout(swizzle_byte_width=swizzle, element_bitwidth=bits, rank=rank, transposed=transposed,
                               fp4_padded=fp4)
    shape = rand_shape(rng, rank, 9)
    if swizzle and rng.random() < 0.8:
        # Mostly shapes Triton accepts: one swizzle row along the contiguous dim, 8 rows.
        contig = 0 if transposed else rank - 1
        shape[contig] = max(shape[contig], 8 * swizzle // bits // (2 if fp4 else 1))
        other = rank - 1 if transposed else 0
        shape[other] = max(shape[other], 8)
    if shape == [1] * rank:
        # Triton's Python binding cannot return a shared layout without offset bases.
        shape[-1] = 2
    return lay, shape


def rand_cga(rng, rank):
    """A CGA encoding over `rank` dims: each CTA bit a unit vector (the next power of two along its dim)
    or, now and then, zeros (CTAs holding copies); rarely a base Triton rejects."""
    nxt = [1] * rank
    bases = []
    for _ in range(rng.randrange(1, 4)):
        if rng.random() < 0.15:
            bases.append([0] * rank)
            continue
        d = rng.randrange(rank)
        b = [0] * rank
        b[d] = nxt[d]
        nxt[d] *= 2
        bases.append(b)
    rng.shuffle(bases)
    if rng.random() < 0.05:
        bases.append([1] * rank)  # not a permutation: both refuse
    return bases


def rand_multi_cta_case(rng):
    """An AMD WMMA or MFMA accumulator, or a multi-CTA BlockedLayout or NVMMASharedLayout, over a power-of-two shape."""
    if rng.random() < 0.2:
        # AMD's WMMA accumulator (RDNA3 and RDNA4; warp bases in tiles, each a CTA-like permutation bit).
        nxt, warps = [1, 1], []
        for _ in range(rng.randrange(0, 4)):
            d = rng.randrange(2)
            w = [0, 0]
            w[d] = nxt[d]
            nxt[d] *= 2
            warps.append(w)
        rng.shuffle(warps)
        lay = amd.AMDWMMALayout(version=rng.randrange(1, 3), transposed=rng.random() < 0.5, warp_bases=warps)
        return lay, rand_shape(rng, 2, 8)
    if rng.random() < 0.3:
        # AMD's MFMA accumulator (one CTA; 16×16 and 32×32 tiles).
        m = rng.choice([16, 32])
        version = rng.randrange(1, 5)
        k = rng.choice([8, 16]) if m == 32 else rng.choice([16, 32])
        lay = amd.AMDMFMALayout(version=version, instr_shape=[m, m, k], transposed=rng.random() < 0.5,
                                warps_per_cta=[1 << rng.randrange(0, 3), 1 << rng.randrange(0, 3)])
        return lay, rand_shape(rng, 2, 8)
    if rng.random() < 0.6:
        rank = rng.randrange(1, 4)
        p = lambda hi: [1 << rng.randrange(0, hi) for _ in range(rank)]
        order = list(range(rank))
        rng.shuffle(order)
        lay = gl.BlockedLayout(size_per_thread=p(3), threads_per_warp=p(3), warps_per_cta=p(2), order=order,
                               cga_layout=rand_cga(rng, rank))
        return lay, p(7)
    swizzle = rng.choice([0, 32, 64, 128])
    bits = rng.choice([8, 16, 32])
    rank = rng.choice([2, 2, 3])
    transposed = rng.random() < 0.3
    lay = gl.NVMMASharedLayout(swizzle_byte_width=swizzle, element_bitwidth=bits, rank=rank, transposed=transposed,
                               cga_layout=rand_cga(rng, rank))
    shape = rand_shape(rng, rank, 9)
    contig = 0 if transposed else rank - 1
    shape[contig] = max(shape[contig], 4 * 8 * max(swizzle, 16) // bits)
    shape[rank - 1 if transposed else 0] = max(shape[rank - 1 if transposed else 0], 32)
    return lay, shape


def rand_tile_bases(rng, rank, count, zero=0.1, skew=0.1):
    """`count` bases over `rank` dims, mostly the next power of two along one dim; now and then zeros
    (copies) or a base moving two dims (both allowed for WMMA warps and registers)."""
    nxt, out = [1] * rank, []
    for _ in range(count):
        r = rng.random()
        if r < zero:
            out.append([0] * rank)
        elif r < zero + skew and rank > 1:
            out.append([rng.randrange(0, 3) for _ in range(rank)])
        else:
            d = rng.randrange(rank)
            b = [0] * rank
            b[d] = nxt[d]
            nxt[d] *= 2
            out.append(b)
    rng.shuffle(out)
    return out


def rand_amd_case(rng):
    """AMD's MFMA and WMMA accumulators with every parameter Triton 3.9 takes: all versions, tile shapes
    (4×4 through the builder, which Gluon's Python class does not offer), element widths, tiles per warp,
    transposition, register bases, rank 3 (batched) and `cga_layout`."""
    rank = 3 if rng.random() < 0.25 else 2
    cga = rand_cga(rng, rank) if rng.random() < 0.4 else []
    if rng.random() < 0.5:
        m = rng.choice([[32, 32], [16, 16], [64, 4], [4, 64], [4, 4]])
        k = rng.choice([4, 8, 16, 32])
        p = lambda hi: [1 << rng.randrange(0, hi) for _ in range(rank)]
        lay = amd.AMDMFMALayout(version=rng.randrange(1, 5), instr_shape=[16, 16, k],
                                transposed=rng.random() < 0.5, warps_per_cta=p(3),
                                element_bitwidth=rng.choice([32, 64]),
                                tiles_per_warp=p(3) if rng.random() < 0.4 else None, cga_layout=cga)
        object.__setattr__(lay, "instr_shape", m + [k])  # 4×4 bypasses the Python check only
    else:
        version = rng.randrange(1, 4)
        instr = [32, 16, 16] if version >= 2 and rng.random() < 0.3 else [16, 16, rng.choice([16, 32])]
        if rng.random() < 0.05:
            instr = [32, 16, 16]  # version 1 has none: both refuse
        lay = amd.AMDWMMALayout(version=version, transposed=rng.random() < 0.5,
                                warp_bases=rand_tile_bases(rng, rank, rng.randrange(0, 4)),
                                reg_bases=rand_tile_bases(rng, rank, rng.randrange(0, 3)) if rng.random() < 0.4
                                else None, instr_shape=instr, cga_layout=cga, rank=rank)
    return lay, rand_shape(rng, rank, 8 if rank == 2 else 6)


def rand_more_cta_case(rng):
    """An NVMMA accumulator (Ampere or Hopper) or a SwizzledSharedLayout over CTAs, a batched Ampere
    accumulator, or a dot operand of a multi-CTA parent."""
    r = rng.random()
    if r < 0.15:
        # A batched Ampere accumulator (rank 3), now and then over CTAs.
        lay = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1 << rng.randrange(0, 3) for _ in range(3)],
                                        instr_shape=[1, 16, 8],
                                        cga_layout=rand_cga(rng, 3) if rng.random() < 0.3 else [])
        return lay, rand_shape(rng, 3, 7)
    if r < 0.4:
        wpc = [1 << rng.randrange(0, 3), 1 << rng.randrange(0, 3)]
        if rng.random() < 0.5:
            lay = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=wpc, instr_shape=[16, 8],
                                            cga_layout=rand_cga(rng, 2))
        else:
            wpc[0] = 4 << rng.randrange(0, 2)
            lay = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=wpc,
                                            instr_shape=[16, 8 << rng.randrange(0, 6), 16],
                                            cga_layout=rand_cga(rng, 2))
        return lay, rand_shape(rng, 2, 9)
    if r < 0.7:
        rank = rng.randrange(1, 4)
        order = list(range(rank))
        rng.shuffle(order)
        cga = rand_cga(rng, rank)
        shape = [1 << rng.randrange(1, 6) for _ in range(rank)]
        splits = [sum(1 for b in cga if b[d]) for d in range(rank)]
        if all(s <= k for s, k in zip(shape, [1 << k for k in splits])):
            # Triton's Python binding cannot return a shared layout without offset bases.
            shape[0] = 2 << splits[0]
        lay = gl.SwizzledSharedLayout(vec=1 << rng.randrange(0, 4), per_phase=1 << rng.randrange(0, 3),
                                      max_phase=1 << rng.randrange(0, 4), order=order, cga_layout=cga)
        return lay, shape
    r = rng.random()
    if r < 0.5:
        parent = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1 << rng.randrange(0, 3),
                                                                          1 << rng.randrange(0, 3)],
                                           instr_shape=[16, 8], cga_layout=rand_cga(rng, 2))
        op, kw = rng.randrange(2), 1 << rng.randrange(0, 4)
    elif r < 0.75:
        parent = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4 << rng.randrange(0, 2), 1],
                                           instr_shape=[16, 8 << rng.randrange(0, 4), 16],
                                           cga_layout=rand_cga(rng, 2))
        op, kw = 0, 1 << rng.randrange(0, 3)
    else:
        rank = rng.randrange(2, 4)
        p = lambda hi: [1 << rng.randrange(0, hi) for _ in range(rank)]
        order = list(range(rank))
        rng.shuffle(order)
        parent = gl.BlockedLayout(size_per_thread=p(3), threads_per_warp=p(3), warps_per_cta=p(2), order=order,
                                  cga_layout=rand_cga(rng, rank))
        op, kw = rng.randrange(2), 0
    lay = gl.DotOperandLayout(operand_index=op, parent=parent, k_width=kw)
    return lay, rand_shape(rng, lay.rank, 8)


def rand_linear_gluon_case(rng):
    """A DistributedLinearLayout (the unit bits of a random shape dealt to registers, lanes, warps and
    CTAs in a random order, now and then a zero or two-dim base) over its shape or another, or a
    SharedLinearLayout (random bases, XOR swizzles among them) over its own."""
    rank = rng.randrange(1, 4)
    own = rand_shape(rng, rank, 4, bits=9)
    units = [[1 << k if i == d else 0 for i in range(rank)] for d in range(rank) for k in range(own[d].bit_length() - 1)]
    rng.shuffle(units)
    if rng.random() < 0.6:
        levels = [[], [], [], []]
        for u in units:
            levels[rng.choice([0, 0, 1, 1, 2, 3])].append(u)
        for lv in levels:
            if rng.random() < 0.15:
                lv.insert(rng.randrange(len(lv) + 1), [0] * rank)
        if units and rng.random() < 0.05:
            levels[0].append([1] * rank)
        lay = gl.DistributedLinearLayout(reg_bases=levels[0], lane_bases=levels[1], warp_bases=levels[2],
                                         block_bases=levels[3], shape=own)
        shape = own if rng.random() < 0.4 else rand_shape(rng, rank, 5, bits=10)
        return lay, shape
    offs = [list(u) for u in units]
    for b in offs:
        if rng.random() < 0.3:
            other = rng.choice(units) if units else b
            b[:] = [x ^ y for x, y in zip(b, other)] if other != b else b
    if not offs:
        offs = [[0] * (rank - 1) + [1]]
        own[-1] = max(own[-1], 2)
    lay = gl.SharedLinearLayout(offset_bases=offs, block_bases=[])
    return lay, [max(1 << max(b[d] for b in offs).bit_length(), 1) for d in range(rank)]


def rand_amd_dot_case(rng):
    """An operand of an mfma dot (every tile shape, operand, k_width, tiles per warp, rank 3, over CTAs)
    or of a wmma dot (every version and instruction, warp bases, one CTA)."""
    rank = 3 if rng.random() < 0.2 else 2
    p = lambda hi: [1 << rng.randrange(0, hi) for _ in range(rank)]
    m = rng.choice([[32, 32], [16, 16], [64, 4], [4, 64]])
    parent = amd.AMDMFMALayout(version=rng.randrange(1, 5), instr_shape=m + [rng.choice([8, 16, 32])],
                               transposed=m == [64, 4] or rng.random() < 0.5, warps_per_cta=p(3),
                               tiles_per_warp=p(3) if rng.random() < 0.3 else None,
                               cga_layout=rand_cga(rng, rank) if rng.random() < 0.2 else [])
    if rng.random() < 0.35:
        # A WMMA parent: one CTA, warp bases only.
        version = rng.randrange(1, 4)
        instr = {1: [[16, 16, 16]], 2: [[16, 16, 16], [16, 16, 32]],
                 3: [[16, 16, 4], [16, 16, 32], [16, 16, 64], [32, 16, 64], [32, 16, 128]]}[version]
        parent = amd.AMDWMMALayout(version=version, transposed=rng.random() < 0.5,
                                   warp_bases=rand_tile_bases(rng, 2, rng.randrange(0, 3), zero=0.1, skew=0.0),
                                   instr_shape=rng.choice(instr))
        rank = 2
    lay = gl.DotOperandLayout(operand_index=rng.randrange(2), parent=parent, k_width=1 << rng.randrange(0, 5))
    return lay, rand_shape(rng, rank, 8 if rank == 2 else 6)


def rand_padded_case(rng):
    """A PaddedSharedLayout: random power-of-two intervals and paddings, offset bases a random order of
    the unit bits of one CTA's part (rarely a zero or two-dim base, which both refuse), a CGA encoding in
    units of the part (now and then a zero base: CTAs holding copies)."""
    rank = rng.randrange(1, 4)
    shape = rand_shape(rng, rank, 5, bits=10)
    cga, split = [], [1] * rank
    for _ in range(rng.randrange(0, 3) if rng.random() < 0.4 else 0):
        d = rng.randrange(rank)
        if rng.random() < 0.15:
            cga.append([0] * rank)  # CTAs holding copies
        elif shape[d] // split[d] >= 2:
            b = [0] * rank
            b[d] = split[d]
            split[d] *= 2
            cga.append(b)
    rng.shuffle(cga)
    part = [s // c for s, c in zip(shape, split)]
    offs = []
    for d in range(rank):
        v = 1
        while v < part[d]:
            offs.append([v if i == d else 0 for i in range(rank)])
            v *= 2
    rng.shuffle(offs)
    if offs and rng.random() < 0.05:
        offs[0] = [0] * rank if rng.random() < 0.5 else [1] * rank
    intervals = rng.sample([1, 2, 4, 8, 16, 32, 64], rng.randrange(1, 4))
    pairs = [[i, 1 << rng.randrange(0, 4)] for i in intervals]
    return gl.PaddedSharedLayout(pairs, offs, cga, shape), shape


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


# Hand-picked cases for --named: kWidth variants, both operands, Ampere, Hopper and blocked parents, every
# swizzle width, transposed, FP4 padding, a rank-3 shared buffer.
def named_cases():
    amp = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2], instr_shape=[16, 8])
    hop = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
    blk = gl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])
    dot = gl.DotOperandLayout
    sh = gl.NVMMASharedLayout
    return [
        (dot(0, amp, 2), [64, 32]), (dot(1, amp, 2), [32, 64]), (dot(0, amp, 1), [32, 16]),
        (dot(0, amp, 4), [32, 64]), (dot(1, amp, 4), [64, 32]), (dot(0, amp, 8), [16, 64]),
        (dot(1, amp, 8), [128, 16]), (dot(1, amp, 4), [16, 8]), (dot(0, hop, 2), [128, 64]),
        (dot(0, hop, 4), [64, 64]), (gl.SliceLayout(1, dot(0, amp, 2)), [64]),
        (dot(0, blk, 0), [32, 8]), (dot(1, blk, 0), [16, 32]),
        (sh(128, 16), [64, 128]), (sh(64, 16), [32, 64]), (sh(32, 16), [16, 32]), (sh(128, 8), [16, 256]),
        (sh(128, 16, transposed=True), [128, 64]), (sh(64, 32, transposed=True), [16, 32]),
        (sh(32, 8, transposed=True), [32, 16]), (sh(0, 16), [32, 32]), (sh(128, 8, fp4_padded=True), [16, 64]),
        (sh(64, 16, rank=3), [2, 8, 32]), (sh(128, 16), [512, 128]),
    ]


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
    # Dot operands, accumulators over small shapes and NVMMA shared layouts, Triton asked in a fork.
    mma = {"agree": 0, "both_refused": 0}
    for _ in range(max(1, a.cases // 2)):
        lay, shape = rand_mma_case(rng)
        text = repr(lay)
        shape_s = ",".join(map(str, shape))
        ours = axe.ask("gluon", text, shape_s)
        theirs = triton_forked(builder, lay, shape)
        if theirs is None:
            if ours.startswith("error"):
                mma["both_refused"] += 1
                stats["refused_confirmed"] += 1
            else:
                fails.append(("gluon " + text + " " + shape_s, ours, "Triton refuses"))
            continue
        before = stats["agree"]
        check("gluon " + text + " " + shape_s, ours, theirs)
        mma["agree"] += stats["agree"] - before
        golden.append(f"{text}\t{shape_s}\t{json.dumps(theirs)}")
    stats["mma_and_nvmma_shared"] = mma
    # AMD MFMA accumulators, multi-CTA Blocked and NVMMA shared layouts, Triton asked in a fork.
    multi = {"agree": 0, "both_refused": 0, "amd_mfma_agree": 0, "amd_wmma_agree": 0}
    for _ in range(max(1, a.cases // 2)):
        lay, shape = rand_multi_cta_case(rng)
        text = repr(lay)
        shape_s = ",".join(map(str, shape))
        ours = axe.ask("gluon", text, shape_s)
        theirs = triton_forked(builder, lay, shape)
        if theirs is None:
            if ours.startswith("error"):
                multi["both_refused"] += 1
                stats["refused_confirmed"] += 1
            else:
                fails.append(("gluon " + text + " " + shape_s, ours, "Triton refuses"))
            continue
        before = stats["agree"]
        check("gluon " + text + " " + shape_s, ours, theirs)
        multi["agree"] += stats["agree"] - before
        if text.startswith("AMDMFMALayout"):
            multi["amd_mfma_agree"] += stats["agree"] - before
        if text.startswith("AMDWMMALayout"):
            multi["amd_wmma_agree"] += stats["agree"] - before
    stats["multi_cta_and_amd"] = multi
    # AMD accumulators with every parameter, Triton asked in a fork.
    amd_stats = {"mfma_agree": 0, "wmma_agree": 0, "mfma_cga_agree": 0, "wmma_cga_agree": 0,
                 "rank3_agree": 0, "both_refused": 0}
    for _ in range(max(1, a.cases // 2)):
        lay, shape = rand_amd_case(rng)
        text = repr(lay)
        shape_s = ",".join(map(str, shape))
        ours = axe.ask("gluon", text, shape_s)
        theirs = triton_forked(builder, lay, shape)
        if theirs is None:
            if ours.startswith("error"):
                amd_stats["both_refused"] += 1
                stats["refused_confirmed"] += 1
            else:
                fails.append(("gluon " + text + " " + shape_s, ours, "Triton refuses"))
            continue
        before = stats["agree"]
        check("gluon " + text + " " + shape_s, ours, theirs)
        ok = stats["agree"] - before
        kind = "mfma" if text.startswith("AMDMFMA") else "wmma"
        amd_stats[kind + "_agree"] += ok
        amd_stats[kind + "_cga_agree"] += ok if lay.cga_layout else 0
        amd_stats["rank3_agree"] += ok if len(shape) == 3 else 0
        golden.append(f"{text}\t{shape_s}\t{json.dumps(theirs)}")
    stats["amd"] = amd_stats
    # NVMMA accumulators, swizzled shared layouts and dot operands over CTAs, Triton asked in a fork.
    more = {"agree": 0, "both_refused": 0}
    for _ in range(max(1, a.cases // 4)):
        lay, shape = rand_more_cta_case(rng)
        text = repr(lay)
        shape_s = ",".join(map(str, shape))
        ours = axe.ask("gluon", text, shape_s)
        theirs = triton_forked(builder, lay, shape)
        if theirs is None:
            if ours.startswith("error"):
                more["both_refused"] += 1
                stats["refused_confirmed"] += 1
            else:
                fails.append(("gluon " + text + " " + shape_s, ours, "Triton refuses"))
            continue
        before = stats["agree"]
        check("gluon " + text + " " + shape_s, ours, theirs)
        more["agree"] += stats["agree"] - before
        if text.startswith("NVMMADistributedLayout") and len(shape) == 3:
            more["batched_nvmma_agree"] = more.get("batched_nvmma_agree", 0) + stats["agree"] - before
        golden.append(f"{text}\t{shape_s}\t{json.dumps(theirs)}")
    stats["nvmma_swizzled_dot_multi_cta"] = more
    # Linear Gluon layouts, Triton asked in a fork.
    lin = {"distributed_agree": 0, "shared_agree": 0, "both_refused": 0}
    for _ in range(max(1, a.cases // 4)):
        lay, shape = rand_linear_gluon_case(rng)
        text = repr(lay)
        shape_s = ",".join(map(str, shape))
        ours = axe.ask("gluon", text, shape_s)
        theirs = triton_forked(builder, lay, shape)
        if theirs is None:
            if ours.startswith("error"):
                lin["both_refused"] += 1
                stats["refused_confirmed"] += 1
            else:
                fails.append(("gluon " + text + " " + shape_s, ours, "Triton refuses"))
            continue
        before = stats["agree"]
        check("gluon " + text + " " + shape_s, ours, theirs)
        lin["shared_agree" if text.startswith("Shared") else "distributed_agree"] += stats["agree"] - before
        golden.append(f"{text}\t{shape_s}\t{json.dumps(theirs)}")
    stats["linear_gluon"] = lin
    # Operands of AMD mfma and wmma dots, Triton asked in a fork.
    adot = {"agree": 0, "both_refused": 0}
    for _ in range(max(1, a.cases // 4)):
        lay, shape = rand_amd_dot_case(rng)
        text = repr(lay)
        shape_s = ",".join(map(str, shape))
        ours = axe.ask("gluon", text, shape_s)
        theirs = triton_forked(builder, lay, shape)
        if theirs is None:
            if ours.startswith("error"):
                adot["both_refused"] += 1
                stats["refused_confirmed"] += 1
            else:
                fails.append(("gluon " + text + " " + shape_s, ours, "Triton refuses"))
            continue
        before = stats["agree"]
        check("gluon " + text + " " + shape_s, ours, theirs)
        adot["agree"] += stats["agree"] - before
        if "AMDWMMALayout" in text:
            adot["wmma_agree"] = adot.get("wmma_agree", 0) + stats["agree"] - before
        golden.append(f"{text}\t{shape_s}\t{json.dumps(theirs)}")
    stats["amd_dot_operands"] = adot
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

"""Random and hand-picked Gluon layouts for `triton_differential.py`: each generator returns a layout
object of Triton's Gluon package and a tensor shape to lay it over."""
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language import amd


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


def rand_batched_nvmma_case(rng):
    """An operand of a batched (rank-3) NVMMA dot: Ampere (`instr_shape=[1, 16, 8]`, operands A and B) or
    Hopper (`[16, n, 16]`, operand A; B both refuse), now and then over CTAs; or a rank-3 Hopper
    accumulator, which Triton 3.9 cannot lay out (both refuse)."""
    wpc = [1 << rng.randrange(0, 3) for _ in range(3)]
    cga = rand_cga(rng, 3) if rng.random() < 0.3 else []
    hopper = rng.random() < 0.4
    if hopper:
        parent = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=wpc,
                                           instr_shape=[16, 8 << rng.randrange(0, 4), 16], cga_layout=cga)
        if rng.random() < 0.15:
            return parent, rand_shape(rng, 3, 7, bits=11)
        op = 1 if rng.random() < 0.1 else 0
    else:
        parent = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=wpc, instr_shape=[1, 16, 8],
                                           cga_layout=cga)
        op = rng.randrange(2)
    lay = gl.DotOperandLayout(operand_index=op, parent=parent, k_width=1 << rng.randrange(0, 4))
    shape = rand_shape(rng, 3, 7, bits=11)
    if rng.random() < 0.15:
        d = rng.randrange(3)
        lay = gl.SliceLayout(d, lay)
        shape = shape[:d] + shape[d + 1:]
    return lay, shape


def rand_wmma_dot_case(rng):
    """An operand of a wmma dot whose parent has what the plain family leaves out: register bases,
    rank 3 (batched) or a `cga_layout`, with every version, instruction, `k_width` (some Triton refuses)
    and transposition, and random bases (copies, bases moving two dims among them)."""
    rank = 3 if rng.random() < 0.35 else 2
    version = rng.randrange(1, 4)
    instr = {1: [[16, 16, 16]], 2: [[16, 16, 16], [16, 16, 32]],
             3: [[16, 16, 4], [16, 16, 32], [16, 16, 64], [32, 16, 64], [32, 16, 128]]}[version]
    cga = rand_cga(rng, rank) if rng.random() < 0.35 else []
    reg = rand_tile_bases(rng, rank, rng.randrange(0, 3)) if rng.random() < 0.7 else None
    parent = amd.AMDWMMALayout(version=version, transposed=rng.random() < 0.5,
                               warp_bases=rand_tile_bases(rng, rank, rng.randrange(0, 4)), reg_bases=reg,
                               instr_shape=rng.choice(instr), cga_layout=cga, rank=rank)
    lay = gl.DotOperandLayout(operand_index=rng.randrange(2), parent=parent, k_width=1 << rng.randrange(1, 5))
    return lay, rand_shape(rng, rank, 8 if rank == 2 else 6, bits=11)


def rand_nvmma_instr_case(rng):
    """An NVMMA accumulator or dot operand with a random `instr_shape` (two or three entries, the usual
    [16, 8] and [16, n, 16] among them) over rank 2 or 3 (Ampere) or 2 (Hopper): Triton takes the tile
    from it as it stands (Ampere: one entry per tensor dim for the accumulator; Hopper: [M, N]; an
    operand's M at `rank - 2`) and refuses what is no tile."""
    hopper = rng.random() < 0.35
    rank = 2 if hopper else rng.choice([2, 2, 3])
    sizes = [8, 16, 32, 64] if hopper else [4, 8, 16, 16, 32, 64]
    instr = [rng.choice(sizes) for _ in range(rng.choice([2, 2, 3]))]
    if hopper:
        instr[1] = rng.choice([8, 12, 16, 64, 256])
    if rng.random() < 0.2:
        instr = [16, 8 << rng.randrange(0, 5), 16] if hopper else [1, 16, 8] if rank == 3 else [16, 8]
    wpc = [1 << rng.randrange(0, 3) for _ in range(rank)]
    if hopper:
        wpc[0] = 4 << rng.randrange(0, 2)
    lay = gl.NVMMADistributedLayout(version=[3 if hopper else 2, 0], warps_per_cta=wpc, instr_shape=instr,
                                    cga_layout=rand_cga(rng, rank) if rng.random() < 0.2 else [])
    if rng.random() < 0.5:
        op = 0 if hopper else rng.randrange(2)
        lay = gl.DotOperandLayout(operand_index=op, parent=lay, k_width=1 << rng.randrange(0, 4))
    return lay, rand_shape(rng, rank, 8, bits=12)

"""Kernels written in Python with ``axe.kernel.Builder``, statement for statement as their Rust twins
write them (``crates/axe-kernel/src/gemm_hopper.rs``, ``relayout.rs``): the tests check each emits the
same CUDA as the shipped kernel."""

import axe.kernel
from axe.kernel import Builder, Scope, cta, tid

TILE_M, TILE_N, TILE_K, STAGES, GROUP = 128, 256, 64, 4, 16


def mem(shape, strides):
    """A tile on memory: ``S[(d0,d1):(s0,s1)]``."""
    return f"S[({','.join(map(str, shape))}):({','.join(map(str, strides))})]"


def hopper_gemm(m, n, k, dtype="bf16"):
    """``C[m, n] (f32) = A[m, k]·B`` with B given as ``[n, k]``: the copy engine fills a ring of shared
    stages, two consumer warpgroups multiply out of them with wgmma."""
    tiles_m, tiles_n = m // TILE_M, n // TILE_N
    kb = Builder("gemm_sm90", grid=tiles_m * tiles_n, threads=384)
    kb.min_ctas_per_sm(1)
    ga = kb.buffer("a", "global", dtype, m * k)
    gb = kb.buffer("b", "global", dtype, n * k)
    gc = kb.buffer("c", "global", "f32", m * n)
    sw = ("shared", "128B")
    full = kb.buffer("full", "shared", "s64", STAGES)
    empty = kb.buffer("empty", "shared", "s64", STAGES)
    acc_buf = kb.buffer("acc", "registers", "f32", TILE_N // 2)
    am, bm = [TILE_M, TILE_K], [TILE_N, TILE_K]
    a_g = kb.tensor("A", ga, am, mem(am, [k, 1]))
    bt_g = kb.tensor("Bt", gb, bm, mem(bm, [k, 1]))
    a_s, bt_s, b_s = [], [], []
    for p in range(STAGES):
        sa = kb.buffer(f"sa{p}", sw, dtype, TILE_M * TILE_K)
        sb = kb.buffer(f"sb{p}", sw, dtype, TILE_N * TILE_K)
        a_s.append(kb.tensor("A_s", sa, am, mem(am, [TILE_K, 1])))
        bt_s.append(kb.tensor("Bt_s", sb, bm, mem(bm, [TILE_K, 1])))
        kn = [TILE_K, TILE_N]
        b_s.append(kb.tensor("B_s", sb, kn, mem(kn, [1, TILE_K])))
    acc = kb.tensor("acc", acc_buf, [64, TILE_N], axe.kernel.wgmma_accumulator(TILE_N))
    cn = [64, TILE_N]
    c_g = kb.tensor("C", gc, cn, mem(cn, [n, 1]))
    # CTA q -> tile (row, column): groups of g tile rows, column-major inside a group.
    g = next(g for g in range(min(GROUP, tiles_m), 0, -1) if tiles_m % g == 0)
    row = kb.let(cta // (g * tiles_n) * g + cta % g)
    col = kb.let(cta // g % tiles_n)
    wg = kb.let(tid // 128)
    with kb.if_(tid < 1):
        for p in range(STAGES):
            kb.mbar_init(full, p, 2)  # the two copies of a step arrive once each
            kb.mbar_init(empty, p, 2 * 128)
        kb.mbar_fence_init()
    kb.barrier()
    steps = k // TILE_K
    rounds = -(-steps // STAGES)

    def is_(w):
        return (wg < w + 1) & (w - 1 < wg)

    # The producer.
    with kb.if_(is_(0)):
        kb.max_registers(False, 40)
        with kb.if_(tid < 1):
            with kb.for_(rounds) as r:
                for p in range(STAGES):
                    s = r * STAGES + p
                    with kb.if_(s < steps):
                        with kb.if_(0 < r):
                            kb.mbar_wait(empty, p, (r + 1) % 2)
                        kofs = s * TILE_K
                        a_base = row * (TILE_M * k) + kofs
                        b_base = col * (TILE_N * k) + kofs
                        with kb.window(ga, a_base, TILE_K):
                            kb.copy_async(Scope.threads(0, 1), a_s[p], a_g, full, p)
                        with kb.window(gb, b_base, TILE_K):
                            kb.copy_async(Scope.threads(0, 1), bt_s[p], bt_g, full, p)
    # The consumers.
    with kb.if_(0 < wg):
        kb.max_registers(True, 232)
        both = Scope.warpgroups(1, 3)
        kb.fill(both, acc, 0.0)
        with kb.for_(rounds) as r:
            for p in range(STAGES):
                s = r * STAGES + p
                with kb.if_(s < steps):
                    kb.mbar_wait(full, p, r % 2)
                    for c in range(2):
                        a = a_s[p].region([(c * 64, c * 64 + 64), (0, TILE_K)])
                        with kb.if_(is_(c + 1)):
                            kb.gemm(Scope.warpgroups(c + 1, c + 2), acc, a, b_s[p])
                    kb.mbar_arrive(empty, p)
        c_base = row * (TILE_M * n) + col * TILE_N + (wg + -1) * (64 * n)
        with kb.window(gc, c_base, TILE_N):
            kb.copy(both, c_g, acc)
    return kb.build()


def transpose_relayout(rows, cols, dtype="f32"):
    """The relayout of ``dtype[rows, cols]{1,0}`` into ``{0,1}``: one kernel-scope copy of the whole
    box (the shipped relayout kernel cuts no other piece and pads nothing for it)."""
    total = rows * cols
    grid = max(1, min(-(-total // (256 * 4)), 4096))
    k = Builder("relayout", grid=grid, threads=256)
    sb = k.buffer("src", "global", dtype, total)
    db = k.buffer("dst", "global", dtype, total)
    st = k.tensor("src", sb, [rows, cols], axe.Shape(f"{dtype}[{rows},{cols}]{{1,0}}").to_axe())
    dt = k.tensor("dst", db, [rows, cols], axe.Shape(f"{dtype}[{rows},{cols}]{{0,1}}").to_axe())
    box = [(0, rows), (0, cols)]
    k.copy(Scope.kernel(), dt.region(box), st.region(box))
    return k.build()

"""Random layouts through every operator of axe-cute and of pycute; maps compared, never printed forms.

Each case ends in one of:
  agree          both answer and the maps (values at every index, sizes of the top-level modes) match,
                 or both refuse;
  peer-refuses   pycute raises (or returns nothing) where axe-cute answers; axe-cute's answer is checked
                 against the operator's law (CuTe's postconditions) here, independently;
  peer-wrong     both answer, the maps differ, and pycute's answer breaks the law (the law is named);
  axe-refuses    axe-cute errs where pycute answers: expected only where pycute's answer breaks the law
                 (then counted as peer-wrong) or the error is `Unsupported` (a documented gap);
  MISMATCH       anything else: a failure of this script (exit status 1).
"""

import argparse
import os
import random
import subprocess
import sys
from collections import Counter

import pycute as cute


def rand_mode(rng, max_extent, strides):
    def leaf():
        return rng.randint(1, max_extent), rng.choice(strides)
    if rng.random() < 0.5:
        return leaf()
    v = [leaf() for _ in range(rng.randint(1, 3))]
    return tuple(s for s, _ in v), tuple(d for _, d in v)


def rand_layout(rng, max_extent=5, strides=None, max_size=96):
    strides = strides or [0, 1, 1, 2, 3, 4, 5, 6, 8, 12]
    while True:
        if rng.random() < 0.3:
            s, d = rand_mode(rng, max_extent, strides)
        else:
            modes = [rand_mode(rng, max_extent, strides) for _ in range(rng.randint(1, 3))]
            s, d = tuple(m[0] for m in modes), tuple(m[1] for m in modes)
        layout = cute.Layout(s, d)
        if cute.size(layout) <= max_size:
            return layout


def text(x):
    """CuTe's notation for an int tuple, a layout, or a by-mode tiler."""
    if isinstance(x, cute.Layout):
        return f"{text(x.shape)}:{text(x.stride)}"
    if isinstance(x, tuple) and x and all(isinstance(e, cute.Layout) for e in x):
        return "<" + ",".join(text(e) for e in x) + ">"
    if isinstance(x, tuple):
        return "(" + ",".join(text(e) for e in x) + ")"
    return str(x)


def parse_tuple(s, i=0):
    """An int tuple from CuTe's notation, keeping 1-tuples: returns (value, next position)."""
    if s[i] == "(":
        items, i = [], i + 1
        while True:
            v, i = parse_tuple(s, i)
            items.append(v)
            if s[i] == ")":
                return tuple(items), i + 1
            i += 1  # ','
    j = i + 1
    while j < len(s) and s[j] not in ",)":
        j += 1
    return int(s[i:j].lstrip("_")), j


def parse(s):
    shape, stride = s.replace(" ", "").split(":")
    return cute.Layout(parse_tuple(shape)[0], parse_tuple(stride)[0])


def values(layout):
    return [layout(i) for i in range(cute.size(layout))]


def mode_sizes(layout):
    if isinstance(layout.shape, tuple):
        return [cute.size(layout[i]) for i in range(len(layout))]
    return [cute.size(layout)]


def extended(a, x):
    """A(x) for any x >= 0 as CuTe evaluates it: the last leaf runs on (pycute's A(x) does the same)."""
    return a(x)


def injective(vals):
    return len(set(vals)) == len(vals)


def law(op, a, b, r):
    """None when r obeys op's law on (a, b); else the law it breaks."""
    rv = values(r)
    if op == "coalesce":
        return None if rv == values(a) else "coalesce(L)(i) = L(i)"
    if op == "composition" and isinstance(b, tuple):
        for i in range(len(a)):
            broken = law(op, a[i], b[i], r[i]) if i < len(b) else (
                None if values(r[i]) == values(a[i]) else "modes past the tiler are kept")
            if broken:
                return f"mode {i}: {broken}"
        return None
    if op == "composition":
        bv = values(b)
        if len(rv) != len(bv):
            return f"size(A o B) = size(B) = {len(bv)}, got {len(rv)}"
        bad = [i for i, y in enumerate(bv) if rv[i] != extended(a, y)]
        return None if not bad else f"(A o B)(i) = A(B(i)) fails at i = {bad[0]}"
    if op == "complement":
        # CuTe's postconditions: R increasing, R(i) outside A's image for i >= 1,
        # size(R) >= M / size(filter(A)), and cosize((A, R)) >= M.
        av = set(values(a))
        if not rv:
            return "every extent is at least 1 (CuTe: non-injective layout)"
        if any(x >= y for x, y in zip(rv, rv[1:])):
            return "R is strictly increasing"
        if any(v in av for v in rv[1:]):
            return "R(i) is not a value of A for i >= 1"
        if len(rv) < b // cute.size(cute.filter(a)):
            return "size(R) >= M / size(filter(A))"
        if cute.cosize(a) + rv[-1] < b:
            return "cosize((A, R)) >= M"
        return None
    if op == "filter":
        return None if rv == [x for x in _filter_brute(a)] else "filter(L) = the nonzero-stride values"
    if op == "coalesce_by":
        if rv != values(a) or mode_sizes(r) != mode_sizes(a):
            return "coalesce(L, profile) keeps the map and the mode sizes"
        return None
    if op == "right_inverse":
        av = values(a)
        bad = [i for i, x in enumerate(rv) if x >= len(av) or av[x] != i]
        return None if not bad else f"L(R(i)) = i fails at i = {bad[0]}"
    if op == "left_inverse":
        av = values(a)
        if injective(av):
            bad = [i for i, x in enumerate(av) if x >= len(rv) or rv[x] != i]
            return None if not bad else f"R(L(i)) = i fails at i = {bad[0]}"
        # Not injective: a generalised inverse, L(R(L(i))) = L(i) with R(L(i)) an index of L.
        bad = [i for i, x in enumerate(av)
               if x >= len(rv) or not 0 <= rv[x] < len(av) or av[rv[x]] != x]
        return None if not bad else f"L(R(L(i))) = L(i) fails at i = {bad[0]}"
    return None  # compound operators: compared by map only


def _filter_brute(a):
    """The values of A at the indices whose stride-0 digits are 0, in order (filter's definition)."""
    sh, sd = cute.flatten(a.shape), cute.flatten(a.stride)
    out = []
    for i in range(cute.size(a)):
        rest, ok = i, True
        for s, d in zip(sh, sd):
            if d == 0 and rest % s:
                ok = False
            rest //= s
        if ok:
            out.append(a(i))
    return out


def inner_broken(op, a, b):
    """For a divide or product that axe-cute refuses: the law that pycute's inner complement or
    composition breaks (mode by mode for a tuple tiler), or None."""
    if isinstance(b, tuple):
        for i in range(len(b)):
            broken = inner_broken(op, a[i], b[i])
            if broken:
                return f"mode {i}: {broken}"
        return None
    try:
        if "divide" in op:
            bound = cute.size(a)
            c = cute.complement(b, bound)
            broken = law("complement", b, bound, c)
            if broken:
                return f"complement({text(b)}, {bound}) = {text(c)} breaks {broken}"
            bb = cute.make_layout(b, c)
            r = cute.composition(a, bb)
            broken = law("composition", a, bb, r)
            return broken and f"{text(a)} o {text(bb)} = {text(r)} breaks {broken}"
        bound = cute.size(a) * cute.cosize(b)
        c = cute.complement(a, bound)
        broken = law("complement", a, bound, c)
        if broken:
            return f"complement({text(a)}, {bound}) = {text(c)} breaks {broken}"
        r = cute.composition(c, b)
        broken = law("composition", c, b, r)
        return broken and f"{text(c)} o {text(b)} = {text(r)} breaks {broken}"
    except Exception as e:  # pycute asserts on an inner step
        return f"an inner step raises {type(e).__name__}"


def pycute_op(op, a, b):
    if op == "coalesce":
        return cute.coalesce(a)
    if op == "composition":
        return cute.composition(a, b)
    if op == "complement":
        return cute.complement(a, b)
    if op == "right_inverse":
        return cute.right_inverse(a)
    if op == "left_inverse":
        return cute.left_inverse(a)
    if op == "filter":
        return cute.filter(a)
    if op == "coalesce_by":
        return cute.coalesce(a, b)
    return getattr(cute, op)(a, b)


OPS = ["coalesce", "composition", "complement", "right_inverse", "left_inverse", "logical_divide",
       "zipped_divide", "tiled_divide", "logical_product", "zipped_product", "tiled_product", "filter",
       "coalesce_by"]


def make_case(rng, op):
    a = rand_layout(rng)
    if op == "complement":
        return a, rng.randint(1, 100)
    if op in ("coalesce", "right_inverse", "left_inverse", "filter"):
        return a, None
    if op == "coalesce_by":
        return a, tuple(1 for _ in range(len(a))) if isinstance(a.shape, tuple) else 1
    if op in ("composition", "logical_divide", "zipped_divide", "tiled_divide") and rng.random() < 0.3 \
            and isinstance(a.shape, tuple):
        k = rng.randint(1, len(a))
        return a, tuple(rand_layout(rng, 3, [0, 1, 1, 2, 3], 12) for _ in range(k))
    return a, rand_layout(rng, 4, [0, 1, 1, 2, 3, 4], 24)


def rand_swizzle(rng):
    while True:
        b, m, sh = rng.randint(0, 3), rng.randint(0, 4), rng.randint(-5, 5)
        if abs(sh) >= b:
            return b, m, sh


def peer_swizzle(b, m, sh):
    """pycute's Swizzle as a function, or None where pycute cannot apply it: its shiftr/shiftl recurse
    forever on a shift of 0 (`Sw<0,M,0>`, the identity)."""
    sw = cute.Swizzle(b, m, sh)
    try:
        sw(1)
    except RecursionError:
        return None
    return sw


def swizzle_cases(rng, n):
    """Swizzled layouts evaluated, and swizzle compositions, against pycute's Swizzle and ComposedLayout.
    Returns (oracle lines, checker per line)."""
    lines, checks = [], []
    for i in range(n):
        b, m, sh = rand_swizzle(rng)
        if i % 2 == 0:
            layout = rand_layout(rng, strides=[0, 1, 2, 3, 4, 8, 16])
            off = rng.randint(0, 40)
            sw = peer_swizzle(b, m, sh) or (lambda x: x)
            want = [sw(off + layout(j)) for j in range(cute.size(layout))]
            lines.append(f"eval\tSw<{b},{m},{sh}> o {off} o {text(layout)}\t\n")
            checks.append(("swizzle_eval", lambda f, want=want: f[0] == "ok"
                           and [int(x) for x in f[1].split(",")] == want))
        else:
            b2, m2, sh2 = rand_swizzle(rng)
            s1 = peer_swizzle(b, m, sh) or (lambda x: x)
            s2 = peer_swizzle(b2, m2, sh2) or (lambda x: x)
            want = [s1(s2(x)) for x in range(1 << 13)]

            def check(f, want=want):
                if f[0] == "ok":
                    bb, mm, ss = (int(x) for x in f[1][3:-1].split(","))
                    c = peer_swizzle(bb, mm, ss) or (lambda x: x)
                    return [c(x) for x in range(1 << 13)] == want
                # an error: no swizzle on the low 13 bits may match
                for bb in range(0, 7):
                    for mm in range(0, 13):
                        for ss in range(-12, 13):
                            if abs(ss) < bb or bb + mm + abs(ss) > 13 or ss == 0:
                                continue
                            c = cute.Swizzle(bb, mm, ss)
                            if all(c(x) == w for x, w in zip(range(1 << 13), want)):
                                return False
                return True
            lines.append(f"swizzle_compose\tSw<{b},{m},{sh}>\tSw<{b2},{m2},{sh2}>\n")
            checks.append(("swizzle_compose", check))
    return lines, checks


def bench(repeats):
    """ns per call of axe_cute::bench_cases() (the bench_cute example) beside the same calls in pycute."""
    import timeit
    exe = os.environ.get("AXE_CUTE_BENCH", "target/release/examples/bench_cute")
    a, b = cute.Layout((6, 2), (8, 2)), cute.Layout((4, 3), (3, 1))
    big = cute.Layout((9, (4, 8)), (59, (13, 1)))
    tiler = (cute.Layout(3, 3), cute.Layout((2, 4), (1, 8)))
    div, inv = cute.Layout((4, 2, 3), (2, 1, 8)), cute.Layout((4, (2, 3)), (2, (1, 8)))
    nest = cute.Layout(((2, 4), (3, 1), (1, 5)), ((1, 2), (8, 1), (0, 24)))
    blk, grid = cute.Layout((2, 5), (5, 1)), cute.Layout((3, 4), (1, 3))
    sw = cute.ComposedLayout(cute.Swizzle(3, 3, 3), 0, cute.Layout((8, 64), (64, 1)))
    peer = {
        "print": lambda: str(big), "eval": lambda: big(200), "coalesce": lambda: cute.coalesce(nest),
        "composition": lambda: cute.composition(a, b), "complement": lambda: cute.complement(div, 96),
        "right_inverse": lambda: cute.right_inverse(inv), "left_inverse": lambda: cute.left_inverse(inv),
        "logical_divide": lambda: cute.logical_divide(div, cute.Layout(4, 2)),
        "zipped_divide": lambda: cute.zipped_divide(big, tiler),
        "logical_product": lambda: cute.logical_product(blk, grid), "swizzle_eval": lambda: sw(77),
    }
    ours = {}
    for _ in range(repeats):
        for line in subprocess.run([exe], capture_output=True, text=True, check=True).stdout.splitlines():
            name, ns = line.split("\t")[:2]
            ours[name] = min(float(ns), ours.get(name, float("inf")))
    print(f"{'operator':18} {'axe-cute ns':>12} {'pycute ns':>10} {'ratio':>7}")
    for name, ns in ours.items():
        if name in peer:
            n, _ = timeit.Timer(peer[name]).autorange()
            p = min(timeit.Timer(peer[name]).repeat(repeats, n)) / n * 1e9
            print(f"{name:18} {ns:12.0f} {p:10.0f} {p / ns:6.0f}x")
        else:
            print(f"{name:18} {ns:12.0f} {'-':>10} {'-':>7}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="store_true", help="time bench_cases() beside pycute instead")
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if args.bench:
        bench(5)
        return
    rng = random.Random(args.seed)
    cases = []
    for i in range(args.cases):
        op = OPS[i % len(OPS)]
        a, b = make_case(rng, op)
        cases.append((op, a, b))
    lines = "".join(f"{op}\t{text(a)}\t{'' if b is None else text(b)}\n" for op, a, b in cases)
    oracle = os.environ.get("AXE_CUTE_ORACLE", "target/release/examples/cute_oracle")
    out = subprocess.run([oracle], input=lines, capture_output=True, text=True, check=True).stdout
    replies = out.splitlines()
    assert len(replies) == len(cases), "oracle answered a different number of lines"
    tally = Counter()
    examples = {}
    failed = False
    sw_lines, sw_checks = swizzle_cases(rng, max(40, args.cases // 20))
    sw_out = subprocess.run([oracle], input="".join(sw_lines), capture_output=True, text=True,
                            check=True).stdout.splitlines()
    for line, (name, check), reply in zip(sw_lines, sw_checks, sw_out):
        fields = reply.split("\t")
        ok = check(fields)
        verdict = ("agree" if fields[0] == "ok" else "agree-no-swizzle") if ok else "MISMATCH"
        tally[(name, verdict)] += 1
        failed |= not ok
        if not ok:
            examples.setdefault((name, verdict), f"{line.strip()}: ours {reply}")
    for (op, a, b), reply in zip(cases, replies):
        fields = reply.split("\t")
        ours = parse(fields[1]) if fields[0] == "ok" else None
        try:
            peer = pycute_op(op, a, b)
            peer_err = None
        except Exception as e:  # pycute asserts or divides by zero
            peer, peer_err = None, f"{type(e).__name__}: {e}"
        desc = f"{op} {text(a)} {'' if b is None else text(b)}"
        if ours is not None and peer is not None:
            if values(ours) == values(peer) and mode_sizes(ours) == mode_sizes(peer):
                verdict = "agree"
            else:
                broken_peer, broken_ours = law(op, a, b, peer), law(op, a, b, ours)
                if broken_ours:
                    verdict, why = "MISMATCH", f"ours {text(ours)} breaks {broken_ours}"
                elif broken_peer:
                    verdict, why = "peer-wrong", f"pycute {text(peer)} breaks {broken_peer}; ours {text(ours)}"
                elif op in ("right_inverse", "composition", "logical_divide", "zipped_divide",
                            "tiled_divide", "logical_product", "zipped_product", "tiled_product"):
                    verdict, why = "differ-valid", f"pycute {text(peer)}, ours {text(ours)}"
                else:
                    verdict, why = "MISMATCH", f"pycute {text(peer)}, ours {text(ours)}"
                examples.setdefault((op, verdict), f"{desc}: {why}")
        elif ours is not None:
            broken = law(op, a, b, ours)
            verdict = "MISMATCH" if broken else "peer-refuses"
            examples.setdefault((op, verdict), f"{desc}: pycute {peer_err}; ours {text(ours)}"
                                + (f" breaks {broken}" if broken else ""))
        elif peer is not None:
            broken = law(op, a, b, peer)
            if broken:
                verdict = "peer-wrong"
            elif fields[1] == "Unsupported":
                verdict = "axe-unsupported"
            elif op in ("logical_divide", "zipped_divide", "tiled_divide", "logical_product",
                        "zipped_product", "tiled_product") and fields[1] in ("NoLayout", "Postcondition"):
                broken = inner_broken(op, a, b)
                verdict = "peer-wrong" if broken else "MISMATCH"
            else:
                verdict = "MISMATCH"
            examples.setdefault((op, verdict), f"{desc}: pycute {text(peer)}"
                                + (f" breaks {broken}" if broken else "") + f"; ours {fields[2]}")
        else:
            verdict = "agree"
        tally[(op, verdict)] += 1
        failed |= verdict == "MISMATCH"
        if args.verbose and verdict != "agree":
            print(f"{verdict}: {desc}", file=sys.stderr)
    for op in OPS + ["swizzle_eval", "swizzle_compose"]:
        row = {v: n for (o, v), n in tally.items() if o == op}
        print(f"{op:16} " + "  ".join(f"{v} {n}" for v, n in sorted(row.items())))
    print("\nfirst example of each non-agreement:")
    for (op, verdict), ex in sorted(examples.items()):
        print(f"  [{verdict}] {ex}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

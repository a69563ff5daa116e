"""Writes the shape conformance corpus: shape strings built from the HLO grammar, each with XLA's own
answer (from ../shared/tools/xla-print, i.e. jaxlib 0.10.2) and ours.

    python3 scripts/gen_shape_corpus.py > crates/axe-xla/tests/corpus/shapes.jsonl

Each line: {"input", "xla": "ok"|"error"|"crash", "xla_printed"?, and our expectation: "printed" (we
accept and print this) or "error" (a substring of our error message)}. Where XLA accepts a single array,
"xla_array_size_bytes" is XLA's `ShapeUtil::ArraySize` of what XLA parsed: jaxlib exposes no binding for
it, so `xla_array_size` below applies the rule of xla/shape_util.cc (`ArraySize`, `ByteSizeOfElements`)
and xla/layout_util.cc (`MaxSplitSize`) to XLA's printed shape. Where XLA accepts something this
project rejects on purpose (lenient attribute bodies, wrapped literals) or prints lossy output (memory
spaces past 8 bits), the line says so in "note". The Rust test crates/axe-xla/tests/corpus.rs checks
every line against our parser and printer.
"""

import itertools
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
XLA_PRINT = os.environ.get("XLA_PRINT", os.path.join(HERE, "..", "..", "shared", "tools", "xla-print"))
AXE = os.environ.get("AXE_BIN", os.path.join(HERE, "..", "target", "debug", "axe"))

TYPES = ["pred", "s1", "s2", "s4", "s8", "s16", "s32", "s64", "u1", "u2", "u4", "u8", "u16", "u32", "u64",
         "f16", "bf16", "f32", "f64", "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e3m4", "f8e5m2fnuz",
         "f8e4m3fnuz", "f8e8m0fnu", "f4e2m1fn", "c64", "c128"]


def valid_inputs(rng):
    out = []
    # every type, a few dims, default layouts
    for t in TYPES:
        out.append(f"{t}[]")
        out.append(f"{t}[3]")
        out.append(f"{t}[2,3]")
    # orders
    for dims in ([2, 3], [4, 5, 6], [2, 1, 3, 4]):
        r = len(dims)
        perms = list(itertools.permutations(range(r)))
        rng.shuffle(perms)
        for p in perms[:6]:
            out.append(f"f32[{','.join(map(str, dims))}]{{{','.join(map(str, p))}}}")
    # tiles and attributes
    tiles = ["T(2,2)", "T(8,128)", "T(8,128)(2,1)", "T(8,128)(4,1)", "T(2,4)(2,1)", "T(1024)(128)(2,1)", "T(128)",
             "T(*,2)", "T(*,*,2,*,3)", "T(2,2)(2,1)(1,1)", "T(64,128)(8,1)", "T(32,128)(32,1)", "T()", "T(2,0)"]
    attrs = ["", "L(2)", "L(1024)", "#(u16)", "*(u32)", "E(4)", "E(1)", "E(0)", "S(1)", "S(5)", "S(0)", "SC(0:30)",
             "SC(0:)", "SC(0:30)(1:40,130)", "M(8)", "M(0)", "M(-3)", "L(1)", "D(C)", "D(C,D+)"]
    shapes = ["f32[3,5]{1,0", "bf16[8,1,1280,16384]{3,2,0,1", "bf16[32,32,4096]{2,1,0", "u8[3,5]{1,0",
              "s4[9216,6144]{1,0", "f32[2,7,8,11,10]{4,3,2,1,0", "pred[64,256]{1,0", "f32[]{", "f32[7]{0"]
    for s in shapes:
        for t in tiles:
            out.append(f"{s}:{t}}}")
    for s in shapes[:4]:
        for a in attrs:
            out.append(f"{s}:{a}}}")
        for a, b in itertools.combinations(["T(8,128)", "L(2)", "#(u8)", "*(u16)", "E(8)", "S(1)", "SC(1:2)",
                                            "M(4)"], 2):
            out.append(f"{s}:{a}{b}}}")
    # the legacy dim level types D(...): what XLA's parser accepts (and drops)
    out += ["f32[3,5]{1,0:D()}", "f32[3,5]{1,0:D(D)}", "f32[3,5]{1,0:D(S)}", "f32[3,5]{1,0:D(H)}",
            "f32[3,5]{1,0:D(C+)}", "f32[3,5]{1,0:D(C~)}", "f32[3,5]{1,0:D(C+~)}", "f32[3,5]{1,0:D(C,D,S)}",
            "f32[3,5]{1,0:D(C,D,S,H,D)}", "f32[3,5]{1,0:D( C , D )}", "f32[3,5]{1,0:D(D+~,C~,S+)}",
            "f32[3,5]{1,0:D(C)L(2)}", "f32[3,5]{1,0:D(C)S(1)}", "f32[]{:D(C)}", "f32[3,5]{1,0:D(C)#(u32)}",
            "f32[3,5]{1,0:D(C)E(4)}", "f32[3,5]{1,0:D(C)M(2)}", "f32[3,5]{1,0:D(C)SC(0:1)}",
            "f32[3,5]{1,0:D(C/*x*/)}", "f32[3,5]{1,0:D(C+ ~)}", "f32[3,5]{1,0:D (C)}",
            "f32[3,5]{1,0:D(C)T(2,2)L(3)}"]
    # tail padding and split configs, with and without tiles (XLA's ArraySize differs between them)
    out += ["f32[3,5]{1,0:L(7)}", "f32[3,5]{0,1:L(7)}", "s4[3]{0:L(8)E(4)}", "u8[5]{0:L(3)}", "f32[]{:L(4)}",
            "pred[10]{0:L(16)E(1)}", "bf16[7,3]{1,0:L(64)S(1)}", "f32[3,5]{1,0:T(2,2)L(7)}",
            "f32[3,5]{1,0:T(8,128)L(1000)}", "s4[9,7]{1,0:T(8,8)L(3)E(4)}", "f32[<=9,5]{1,0:L(4)}",
            "f32[10,128]{1,0:SC(0:5)}", "f32[10,128]{1,0:T(8,128)SC(0:5)}", "f32[10,128]{1,0:T(8,128)SC(0:3,7)}",
            "f32[8,40]{0,1:T(8,8)SC(0:30)}", "f32[10,128]{1,0:T(8,128)SC(0:5)(0:1)}",
            "f32[10,300]{1,0:T(8,128)SC(1:100)}", "f32[10,128]{1,0:T(8,128)L(5)SC(0:5)}"]
    out += [
        "f32[4]{0:T(2)L(2)#(u16)*(u32)E(8)S(1)SC(0:1)M(4)}", "f32[]{:T(128)}", "u32[]{:S(2)}", "s32[]{:T(*)}",
        "f32[3]{0:T(4)L(8)E(16)S(3)}", "u4[5]{0:T(8)E(4)}", "pred[4]{0:T(32)E(1)}", "f4e2m1fn[4]{0:E(4)}",
        "f32[<=4,?]", "f32[<=4,?]{0,1}", "f32[?]", "s32[<=10]{0:T(128)}", "f32[0]", "f32[0,3]{0,1}",
        "f32[9223372036854775807]", "f32[4]{1}", "f32[4,4]{0,0}", "f32[2]{0:SC(0:1)(0:2)}", "f32[2]{0:E(-1)}",
        "f32[2]{0:S(-1)}", "f32[4]{0:D(C)T(2)}", "f32[2]{0:}", "s64[2]{0:#(s32)}",
        "f32 [ 4 ] { 0 }", "f32[2]{ 0 : T ( 2 ) }", "f32[4]/*c*/{0}", "/* lead */ f32[2]", "f32[2]{/*x*/0}",
        "token[]", "opaque[]", "()", "(f32[])", "(f32[2], s32[])", "((f32[1], s32[]), token[])",
        "(f32[], f32[], f32[], f32[], f32[], f32[], f32[2]{0})",
        "(f32[], f32[], f32[], f32[], f32[], f32[], f32[], f32[], f32[], f32[], f32[])",
        "(f32[2]{0:S(1)}, (f32[3], f32[4]), opaque[])", "b(f32[4])", "b(f32[4]{0:T(2)S(1)})", "(b(s8[2]), f32[])",
        "f32[4]{0:P(f32[4])}",
    ]
    for i in range(60):
        rank = rng.randint(0, 4)
        dims = [rng.choice([1, 2, 3, 5, 8, 128, 1000]) for _ in range(rank)]
        m2m = list(range(rank))
        rng.shuffle(m2m)
        t = rng.choice(TYPES)
        tile = ""
        if rank and rng.random() < 0.7:
            k = rng.randint(1, rank + 1)
            tile = "T(" + ",".join(str(rng.choice([1, 2, 4, 8, 128])) for _ in range(k)) + ")"
            if rng.random() < 0.4:
                tile += rng.choice(["(2,1)", "(4,1)", "(8,1)", "(128)"])
        extra = rng.choice(["", "S(1)", "L(4)", "E(4)", "M(16)"])
        body = tile + extra
        lay = "{" + ",".join(map(str, m2m)) + (":" + body if body else "") + "}"
        out.append(f"{t}[{','.join(map(str, dims))}]{lay}")
    return out


INVALID = [
    "s32[]{}", "f32[4]{0:L(0)}", "f32[4]{0:L(-2)}", "f32[4]{0:T(-2)}", "f32[4]{0:T(2,}", "f32[4]{0:T(2}",
    "f32[4]{0:T(9223372036854775808)}", "f32[9223372036854775808]", "f32[-1]", "f32[2]{:T(2)}", "f32[<=?]",
    "f32[4]{0:T(2)T(4)}", "f32[4]{0:S(1)L(2)}", "f32[2]{0:T(2)E(4)L(4)}", "f32[2]{0:SC(0:1,)}", "b((f32[2], s32[]))",
    "f32[2]{0:T(2):T(2)}", "f32[2]{0,}", "f32[2]{,0}", "token[]{}", "token[]{:S(1)}", "opaque[]{:T(2)}", "token[2]",
    "F32[4]", "f33[4]", "f32", "f32[", "f32[2", "f32[2]{", "f32[2]{0", "f32[2]{0:", "(f32[2]", "(f32[2],)", "",
    "   ", "f32[2]{0:#(f32)}", "f32[2]{0:E(1)E(2)}", "f32[2]{0:S(256)}", "f32[2]{0:S(200)}", "f32[2] junk",
    "f32[2]{0:X(1)}", "f32[2]{0:SC}", "f32[2]{0:T}", "f32[2]{0:L()}", "f32[2]{0:P(f32[2]}", "f32[2]/* open",
    "f32[2,3]{1,0,2}", "f32[2]{0:D(C)D(C)}", "f32[2]{0:M(1)T(2)}", "f32[1,2]{0:T(2)}", "b(token[])",
    "f32[2]{0:E(99999999999999999999)}", "f32[2]{0:#()}", "f32[2]{0:SC(:1)}", "pred[2]{0:T(*,)}",
    # D(...) letters and forms XLA rejects (and two it accepts leniently: D alone, an unclosed list)
    "f32[3,5]{1,0:D(U)}", "f32[3,5]{1,0:D(X)}", "f32[3,5]{1,0:D(c)}", "f32[3,5]{1,0:D(C~+)}",
    "f32[3,5]{1,0:D(C++)}", "f32[3,5]{1,0:D(CD)}", "f32[3,5]{1,0:D(C D)}", "f32[3,5]{1,0:D(C,)}",
    "f32[3,5]{1,0:D(,C)}", "f32[3,5]{1,0:D(,)}", "f32[3,5]{1,0:D(1)}", "f32[3,5]{1,0:T(2,2)D(C)}",
    "f32[3,5]{1,0:D(C_)}", "f32[3,5]{1,0:D(C.)}", "f32[3,5]{1,0:D(C-)}", "f32[3,5]{1,0:D(+)}",
    "f32[3,5]{1,0:D(~)}", "f32[3,5]{1,0:D(U+)}", "f32[3,5]{1,0:D(DENSE)}", "f32[3,5]{1,0:D}",
    "f32[3,5]{1,0:D(C}",
]

BYTE_WIDTH = {"pred": 1, "s1": 1, "s2": 1, "s4": 1, "s8": 1, "s16": 2, "s32": 4, "s64": 8, "u1": 1, "u2": 1,
              "u4": 1, "u8": 1, "u16": 2, "u32": 4, "u64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8,
              "c64": 8, "c128": 16}


def byte_width(t):
    return BYTE_WIDTH.get(t, 1)  # every f8, f6 and f4 type is one byte wide


def round_up(n, m):
    return -(-n // m) * m


def xla_array_size(printed):
    """XLA's ShapeUtil::ArraySize of a printed single array, or None (tuples, '?', combined tiles)."""
    import re
    m = re.fullmatch(r"([a-z0-9]+)\[([^\]]*)\](?:\{([^:}]*)(?::(.*))?\})?", printed)
    if not m or m.group(1) in ("token", "opaque"):
        return None
    ty, dims_s, m2m_s, attrs = m.group(1), m.group(2), m.group(3), m.group(4) or ""
    dims = []
    for d in filter(None, dims_s.split(",")):
        if d == "?":
            return None
        dims.append(int(d[2:]) if d.startswith("<=") else int(d))
    rank = len(dims)
    m2m = [int(x) for x in m2m_s.split(",")] if m2m_s else list(range(rank - 1, -1, -1))
    tiles, tail, bits, splits, sparse = [], 1, 0, [], False
    pos = 0
    while pos < len(attrs):
        key = "SC" if attrs.startswith("SC", pos) else attrs[pos]
        pos += len(key)
        groups = []
        while pos < len(attrs) and attrs[pos] == "(":
            depth, end = 0, pos
            while True:
                depth += {"(": 1, ")": -1}.get(attrs[end], 0)
                if depth == 0:
                    break
                end += 1
            groups.append(attrs[pos + 1:end])
            pos = end + 1
            if key not in ("T", "SC"):
                break
        if key == "T":
            tiles = [[x for x in g.split(",") if x] for g in groups]
        elif key == "L":
            tail = int(groups[0])
        elif key == "E":
            bits = int(groups[0])
        elif key in ("#", "*", "P"):
            sparse = True
        elif key == "SC":
            for g in groups:
                dim, idx = g.split(":")
                splits.append((int(dim), [int(x) for x in idx.split(",") if x]))

    if (sorted(m2m) != list(range(rank)) or bits < 0 or tail < 1 or sparse
            or any(not t or any(x != "*" and int(x) <= 0 for x in t) for t in tiles)
            or any(not 0 <= d < max(rank, 1) for d, _ in splits)):
        return None  # a layout XLA's validation rejects: ArraySize has no meaning for it

    def size_of(n):
        size = -(-n * bits // 8) if bits else n * byte_width(ty)
        return size if size < 2 ** 63 else None  # past int64, XLA's arithmetic wraps

    if not tiles:  # ByteSizeOfElements: no L
        n = 1
        for d in dims:
            n *= d
        return size_of(n)
    tile = tiles[0]
    if "*" in tile:
        return None
    tile = [int(x) for x in tile]

    def max_split_size(dim):  # LayoutUtil::MaxSplitSize; a config names a physical dimension
        for physical, indices in splits:
            if m2m[rank - 1 - physical] == dim:
                largest, last = 0, 0
                for i in indices:
                    largest, last = max(largest, i - last), i
                return max(largest, dims[dim] - last)
        return dims[dim]

    n, j = 1, 0
    for j in range(len(tile)):
        d = max_split_size(m2m[j]) if j < rank else 1
        n *= round_up(d, tile[len(tile) - j - 1])
    for j in range(len(tile), rank):
        n *= max_split_size(m2m[j])
    if tail != 1:
        n = round_up(n, tail)
    return size_of(n)


def xla(inputs):
    p = subprocess.run([XLA_PRINT], input="\n".join(inputs) + "\n", capture_output=True, text=True, check=True)
    res = {}
    for line in p.stdout.splitlines():
        d = json.loads(line)
        res[d["input"]] = d
    return res


def ours(inputs):
    res = {}
    for s in inputs:
        p = subprocess.run([AXE, "xla", "parse", "--json", s], capture_output=True, text=True)
        res[s] = json.loads(p.stdout.strip().splitlines()[0]) if p.stdout.strip() else {"error": p.stderr}
    return res


def main():
    rng = random.Random(7)
    inputs = list(dict.fromkeys(valid_inputs(rng) + INVALID))
    inputs = [s for s in inputs if s.strip() and "\n" not in s] + [""]
    x = xla([s for s in inputs if s.strip()])
    o = ours(inputs)
    for s in inputs:
        xs = x.get(s, {"status": "error"})
        rec = {"input": s, "xla": xs["status"]}
        if xs["status"] == "ok":
            rec["xla_printed"] = xs["printed"]
            size = xla_array_size(xs["printed"])
            if size is not None:
                rec["xla_array_size_bytes"] = size
        mine = o[s]
        if "printed" in mine:
            rec["printed"] = mine["printed"]
            if xs["status"] == "ok" and xs["printed"] != mine["printed"]:
                rec["note"] = "XLA stores memory spaces in 8 bits; we keep the full integer"
            elif xs["status"] != "ok":
                rec["note"] = "XLA's harness rejects this"
        else:
            err = mine.get("error", "")
            rec["error"] = err.split("\n")[0]
            if xs["status"] == "ok":
                rec["note"] = "XLA accepts this leniently; we reject it"
            elif xs["status"] == "crash":
                rec["note"] = "XLA aborts the process on this"
        print(json.dumps(rec))


if __name__ == "__main__":
    main()

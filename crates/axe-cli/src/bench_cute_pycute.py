"""pycute's side of `axe bench cute` (the binary runs this text with `python -c`).

Reads one JSON object on stdin:
  {"cases": [{"name": "composition", "args": ["(6,2):(8,2)", "(4,3):(3,1)"]}, ...],
   "batch_ms": 10, "batches": 5}
and prints one JSON object:
  {"python": "3.11.7 ...", "version": "4.2.0.0" or null,
   "cases": {NAME: {"ns": ns per call (median of the batches), "result": str(pycute's answer)}
                 | {"error": "AssertionError: ..."}     pycute raises on this input
                 | {"missing": "why"}}}                 pycute has no such operation
Standalone: python bench_cute_pycute.py < cases.json
"""

import json
import statistics
import sys
import timeit

import pycute as cute


def parse_tuple(s, i=0):
    """An int tuple in CuTe's notation from position i: (value, next position); `_8` is 8."""
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


def layout(s):
    s = s.replace(" ", "")
    if ":" not in s:
        return cute.Layout(parse_tuple(s)[0])
    shape, stride = s.split(":")
    return cute.Layout(parse_tuple(shape)[0], parse_tuple(stride)[0])


def split_top(s):
    """Split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(s):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(s[start:k])
            start = k + 1
    return parts + [s[start:]]


def tiler(s):
    """A layout, or `<A,B,...>` (CuTe's Tile) as pycute's tuple of layouts."""
    s = s.replace(" ", "")
    if s.startswith("<") and s.endswith(">"):
        return tuple(layout(p) for p in split_top(s[1:-1]))
    return layout(s)


def swizzled(s):
    """`Sw<B,M,S> o OFFSET o LAYOUT` as pycute's ComposedLayout."""
    sw, off, lay = (p.strip() for p in s.split(" o "))
    b, m, sh = (int(x) for x in sw[3:-1].split(","))
    return cute.ComposedLayout(cute.Swizzle(b, m, sh), int(off), layout(lay))


BINARY = ["composition", "logical_divide", "zipped_divide", "tiled_divide", "logical_product",
          "zipped_product", "tiled_product"]
MISSING = {
    "parse": "pycute has no parser",
    "blocked_product": "pycute has no blocked_product",
    "raked_product": "pycute has no raked_product",
    "swizzle_compose": "pycute does not compose swizzles",
    "to_axe": "Axe layouts are axe's own",
    "tv_to_axe": "Axe layouts are axe's own",
    "clone (reference)": "axe's reference, not an operator",
}


def call(name, args):
    """The zero-argument call that does case `name` in pycute, or a string saying why there is none."""
    if name in MISSING:
        return MISSING[name]
    if name == "print":
        x = layout(args[0])
        return lambda: str(x)
    if name == "eval":
        x, i = layout(args[0]), int(args[1])
        return lambda: x(i)
    if name == "swizzle_eval":
        x, i = swizzled(args[0]), int(args[1])
        return lambda: x(i)
    if name in ("coalesce", "right_inverse", "left_inverse"):
        f, x = getattr(cute, name), layout(args[0])
        return lambda: f(x)
    if name == "complement":
        x, n = layout(args[0]), int(args[1])
        return lambda: cute.complement(x, n)
    if name in BINARY:
        f, x, y = getattr(cute, name), layout(args[0]), tiler(args[1])
        return lambda: f(x, y)
    return "not a case this script knows"


def per_call_ns(f, batch_s, batches):
    timer = timeit.Timer(f)
    n = 1
    while n < 1 << 24 and timer.timeit(n) < batch_s:
        n *= 2
    return statistics.median(timer.timeit(n) / n * 1e9 for _ in range(batches))


def main():
    req = json.load(sys.stdin)
    batch_s = float(req.get("batch_ms", 10)) / 1e3
    batches = max(1, int(req.get("batches", 5)))
    out = {}
    for c in req["cases"]:
        name = c["name"]
        try:
            f = call(name, c["args"])
        except Exception as e:  # an input this script cannot read
            out[name] = {"missing": f"cannot read the inputs: {type(e).__name__}: {e}"}
            continue
        if isinstance(f, str):
            out[name] = {"missing": f}
            continue
        try:
            result = f()
        except Exception as e:  # pycute asserts, divides by zero, or recurses forever
            out[name] = {"error": f"{type(e).__name__}: {e}"}
            continue
        out[name] = {"ns": per_call_ns(f, batch_s, batches), "result": str(result)}
    try:
        from importlib.metadata import version
        ver = version("nvidia-cutlass")
    except Exception:  # pycute from elsewhere
        ver = None
    json.dump({"python": sys.version.split()[0], "version": ver, "cases": out}, sys.stdout)
    print()


if __name__ == "__main__":
    main()

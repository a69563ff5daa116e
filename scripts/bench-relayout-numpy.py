"""numpy's way of doing the relayout bench's cases (pad / reshape / transpose / ascontiguousarray), timed
beside a numpy memcpy (np.copyto) of the same bytes in the same run.

    python3 scripts/bench-relayout-numpy.py [--axe target/release/axe]

needs numpy; single-threaded like numpy itself. With an `axe` binary (the default path if it exists),
it also runs `axe bench relayout --json --threads 1` on the same machine and prints axe's GB/s and
how many times faster than numpy it is, case by case.
"""

import argparse
import json
import os
import subprocess
import time

import numpy as np

from numpy_recipes import tile2, tile_sub, untile2, untile_sub


def best(f, runs=3):
    t = float("inf")
    for _ in range(runs + 1):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t


def axe_speeds(binary):
    """GB/s per case from `axe bench relayout --json` (empty if there is no binary)."""
    if not binary or not os.path.exists(binary):
        return {}
    out = subprocess.run([binary, "bench", "relayout", "--json", "--threads", "1"], check=True,
                         capture_output=True, text=True).stdout
    return {r["case"]: r["gb_per_second"] for r in map(json.loads, out.splitlines()) if r}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--axe", default="target/release/axe", help="axe binary to compare with ('' for none)")
    args = ap.parse_args()
    axe = axe_speeds(args.axe)
    n = 8192
    f32 = np.arange(n * n, dtype=np.float32).reshape(n, n)
    bf16 = (np.arange(n * n, dtype=np.uint32) & 0xFFFF).astype(np.uint16).reshape(n, n)
    s8 = (np.arange(n * n) % 251).astype(np.int8).reshape(n, n)
    pred = (np.arange(n * n) % 3 == 0).reshape(n, n)
    packed = np.packbits(tile_sub(pred, 32, 128, 32), bitorder="little")
    cases = [
        ("f32 -> T(8,128)", f32, lambda: tile2(f32, 8, 128)),
        ("f32 T(8,128) -> row-major", f32, lambda t=tile2(f32, 8, 128): untile2(t, n, n, 8, 128)),
        ("bf16 -> T(8,128)(2,1)", bf16, lambda: tile_sub(bf16, 8, 128, 2)),
        ("bf16 T(8,128)(2,1) -> row-major", bf16, lambda t=tile_sub(bf16, 8, 128, 2): untile_sub(t, n, n, 8, 128, 2)),
        ("s8 -> T(8,128)(4,1)", s8, lambda: tile_sub(s8, 8, 128, 4)),
        ("pred -> T(32,128)(32,1)E(1)", pred, lambda: np.packbits(tile_sub(pred, 32, 128, 32), bitorder="little")),
        ("pred T(32,128)(32,1)E(1) -> bytes", packed,
         lambda: untile_sub(np.unpackbits(packed, bitorder="little").view(np.bool_), n, n, 32, 128, 32)),
        ("f32 transpose {1,0}->{0,1}", f32, lambda: np.ascontiguousarray(f32.T)),
    ]
    a4 = np.arange(64 * 512 * 32 * 128, dtype=np.float32).reshape(64, 512, 32, 128)
    cases.append(("f32[64,512,32,128] {3,2,1,0}->{3,1,2,0}", a4, lambda: np.ascontiguousarray(a4.transpose(0, 2, 1, 3))))
    a3 = np.arange(256 ** 3, dtype=np.float32).reshape(256, 256, 256)
    cases.append(("f32[256]^3 {2,1,0}->{0,1,2}", a3, lambda: np.ascontiguousarray(a3.transpose(2, 1, 0))))
    p = np.arange(8000 * 8000, dtype=np.float32).reshape(8000, 8000)
    cases.append(("f32[8000,8000] -> T(8,128) (padding)", p, lambda: tile2(p, 8, 128)))
    head = f"{'case':<42} {'GB/s':>9} {'memcpy':>9} {'ratio':>8}"
    print(head + (f" {'axe GB/s':>9} {'axe/numpy':>9}" if axe else ""))
    for name, src, f in cases:
        out = f()
        t = best(f)
        ref = src if src.nbytes >= out.nbytes else out  # memcpy of the larger buffer, as axe's bench
        dst = np.empty_like(ref)
        m = best(lambda: np.copyto(dst, ref))
        moved = src.nbytes + out.nbytes
        line = f"{name:<42} {moved / t / 1e9:9.2f} {2 * ref.nbytes / m / 1e9:9.2f} {(moved / t) / (2 * ref.nbytes / m):8.2f}"
        if name in axe:
            line += f" {axe[name]:9.2f} {axe[name] / (moved / t / 1e9):9.1f}"
        print(line)


if __name__ == "__main__":
    main()

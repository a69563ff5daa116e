"""numpy's pad / reshape / transpose recipes for the standard relayout cases (shared by the benches)."""

import numpy as np


def tile2(x, t0, t1):
    """Row-major (R, C) -> T(t0,t1) tiled memory order, padding with zeros."""
    r, c = x.shape
    pr, pc = -r % t0, -c % t1
    if pr or pc:
        x = np.pad(x, ((0, pr), (0, pc)))
    R, C = x.shape
    return np.ascontiguousarray(x.reshape(R // t0, t0, C // t1, t1).transpose(0, 2, 1, 3)).reshape(-1)


def untile2(flat, r, c, t0, t1):
    return np.ascontiguousarray(flat.reshape(r // t0, c // t1, t0, t1).transpose(0, 2, 1, 3)).reshape(r, c)


def tile_sub(x, t0, t1, s0):
    """T(t0,t1)(s0,1): tiles, then pack s0 rows of each tile together."""
    r, c = x.shape
    y = x.reshape(r // t0, t0, c // t1, t1).transpose(0, 2, 1, 3)  # tiles
    y = y.reshape(r // t0, c // t1, t0 // s0, s0, t1).transpose(0, 1, 2, 4, 3)
    return np.ascontiguousarray(y).reshape(-1)


def untile_sub(flat, r, c, t0, t1, s0):
    y = flat.reshape(r // t0, c // t1, t0 // s0, t1, s0).transpose(0, 1, 2, 4, 3)
    return np.ascontiguousarray(y.reshape(r // t0, c // t1, t0, t1).transpose(0, 2, 1, 3)).reshape(r, c)

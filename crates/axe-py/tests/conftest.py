"""Shared helpers: numpy's own pad / reshape / transpose rendering of XLA tiled layouts."""

import numpy as np


def xla_tiled_bytes(x: np.ndarray, minor_to_major, tiles) -> np.ndarray:
    """The memory image of logical array `x` under an XLA layout, numpy's way: transpose into physical
    order (major to minor), then for each tile pad the last k dims to multiples of it, split each into
    (count, tile) and move the tile dims innermost; the result is read row-major."""
    a = np.transpose(x, tuple(reversed(minor_to_major)))
    for tile in tiles:
        k = len(tile)
        lead = a.shape[:-k]
        pad = [(0, 0)] * len(lead) + [(0, (-d) % t) for d, t in zip(a.shape[-k:], tile)]
        a = np.pad(a, pad)
        split = list(lead)
        for d, t in zip(a.shape[-k:], tile):
            split += [d // t, t]
        a = a.reshape(split)
        n = len(lead)
        order = list(range(n)) + [n + 2 * i for i in range(k)] + [n + 2 * i + 1 for i in range(k)]
        a = np.transpose(a, order)
    return np.ascontiguousarray(a).reshape(-1)


def layout_text(minor_to_major, tiles, extra="") -> str:
    m2m = ",".join(str(d) for d in minor_to_major)
    t = "".join("(" + ",".join(str(s) for s in tile) + ")" for tile in tiles)
    return "{" + m2m + (":T" + t if tiles else "") + extra + "}"

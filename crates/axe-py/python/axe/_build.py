"""The check that the native extension ``axe._axe`` was built from these sources.

The extension exports ``_build_id``: an FNV-1a 64-bit hash of the Rust sources it was built from
(``crates/axe-py/src/*.rs``), made by ``build.rs``. Importing ``axe`` refuses, saying how to build it,
an extension that is missing, that lacks what the package uses (``_build_id`` and the names the
modules import: one built before them), or, when ``axe`` runs from the source tree, that was built from
other Rust sources than those beside it (stale).
"""

from __future__ import annotations

import os

HOW_TO_BUILD = (
    "build it from the repository root with `scripts/python-test` (a release wheel into .venv), "
    "`pip install ./crates/axe-py`, or `cd crates/axe-py && maturin develop` inside a virtual environment"
)


# What the Python modules take from the extension.
USED = (
    "AxeError", "CuteError", "CuteLayout", "Layout", "LayoutError", "LinearLayout", "Mesh", "ParseError",
    "RelayoutError", "Shape", "Sharding", "ShardingError", "TritonError", "XlaError", "__version__",
    "_hlo_format", "_hlo_stats", "_relayout", "_relayout_target", "gluon_to_axe", "hardware_map_of",
    "padding_of",
    "Kernel", "KernelBlock", "KernelBuffer", "KernelBuilder", "KernelError", "KernelExpr", "KernelScope",
    "KernelTensor", "_kernel_cta", "_kernel_gemm", "_kernel_relayout", "_kernel_softmax", "_kernel_tid",
    "_kernel_wgmma_accumulator", "DeviceBuilder", "DeviceKernel", "_kernel_gemm_reduce_scatter",
)


def fnv(folder: str, ext: str) -> str:
    """The hash ``build.rs`` makes of the files of `folder` whose names end in `ext`."""
    h = 0xCBF29CE484222325
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(ext))
    except OSError:
        names = []
    for name in names:
        try:
            with open(os.path.join(folder, name), "rb") as f:
                content = f.read()
        except OSError:
            continue
        for b in name.encode() + b"\0" + content + b"\0":
            h ^= b
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def check(extension) -> None:
    """Raises ``ImportError`` when the module `extension` (``axe._axe``) was not built from these
    sources."""
    here = os.path.dirname(os.path.abspath(__file__))
    build_id = getattr(extension, "_build_id", None)
    stale = build_id is None or any(not hasattr(extension, n) for n in USED)
    src = os.path.join(here, os.pardir, os.pardir, "src")
    if not stale and os.path.isfile(os.path.join(src, "lib.rs")):
        stale = fnv(src, ".rs") != build_id
    if stale:
        raise ImportError(
            f"the native extension axe._axe in {here} was built from other sources than this "
            f"package (stale); {HOW_TO_BUILD}"
        )

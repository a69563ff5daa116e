"""axe: tensor layouts you can read, compute with and move data through.

Axe layouts (shard / replica / offset over named axes), XLA shapes with tiled layouts, HLO module
reports, device meshes and shardings in every notation, CuTe and Triton layouts, and numpy relayout
through the Rust kernels. Every error is a ``ValueError`` subclass (``axe.AxeError``); text that does not
parse raises ``axe.ParseError`` with ``.offset``.
"""

from . import _build

try:
    from . import _axe
except ImportError as e:
    raise ImportError(
        f"the native extension axe._axe is missing or cannot be loaded ({e}); {_build.HOW_TO_BUILD}"
    ) from e
_build.check(_axe)

from ._axe import (
    AxeError,
    CuteError,
    KernelError,
    Layout,
    LayoutError,
    Mesh,
    ParseError,
    RelayoutError,
    Shape,
    Sharding,
    ShardingError,
    TritonError,
    XlaError,
    __version__,
    xla_size,
)
from . import cute, hlo, jax, torch, triton
from . import kernel
from ._numpy import from_physical, relayout, to_physical
from ._render import render

__all__ = [
    "AxeError",
    "CuteError",
    "KernelError",
    "Layout",
    "LayoutError",
    "Mesh",
    "ParseError",
    "RelayoutError",
    "Shape",
    "Sharding",
    "ShardingError",
    "TritonError",
    "XlaError",
    "__version__",
    "cute",
    "from_physical",
    "hlo",
    "jax",
    "kernel",
    "relayout",
    "render",
    "to_physical",
    "torch",
    "triton",
    "xla_size",
]

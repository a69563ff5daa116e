"""numpy / JAX / PyTorch dtype names as XLA element types."""

from __future__ import annotations

from ._axe import XlaError

_XLA = {
    "bool": "pred",
    "int8": "s8",
    "int16": "s16",
    "int32": "s32",
    "int64": "s64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "f32",
    "float64": "f64",
    "complex64": "c64",
    "complex128": "c128",
    "int4": "s4",
    "uint4": "u4",
    "int2": "s2",
    "uint2": "u2",
    "float8_e4m3fn": "f8e4m3fn",
    "float8_e5m2": "f8e5m2",
    "float8_e4m3b11fnuz": "f8e4m3b11fnuz",
    "float8_e4m3fnuz": "f8e4m3fnuz",
    "float8_e5m2fnuz": "f8e5m2fnuz",
    "float8_e4m3": "f8e4m3",
    "float8_e3m4": "f8e3m4",
    "float4_e2m1fn": "f4e2m1fn",
    "float8_e8m0fnu": "f8e8m0fnu",
    "float6_e2m3fn": "f6e2m3fn",
    "float6_e3m2fn": "f6e3m2fn",
}


# XLA's own names; several are numpy type codes too ("u8" is numpy's uint64, "f16" its float128).
_XLA_NAMES = frozenset(_XLA.values()) | {"s1", "u1"}


def xla_type(dtype) -> str:
    """The XLA element type of a numpy, JAX or torch dtype (`float32` → `f32`, `torch.bfloat16` →
    `bf16`); raises ``axe.XlaError`` (a ``ValueError``) for a dtype XLA has no type for, or a name
    that is no dtype (``"flaot32"``), listing the names it takes."""
    if isinstance(dtype, str) and dtype in _XLA_NAMES:
        return dtype  # an XLA element type's own name, as axe.Shape spells it ("bf16", "u8", "f16")
    try:
        import numpy as np

        name = np.dtype(dtype).name
    except Exception:  # numpy refuses what it does not know in several ways (TypeError, ...)
        name = str(getattr(dtype, "name", None) or dtype).removeprefix("torch.")
    if name in _XLA.values():
        return name  # an XLA element type's own name, as axe.Shape spells it ("bf16", "s32")
    try:
        return _XLA[name]
    except KeyError:
        raise XlaError(
            f"dtype {name!r} has no XLA element type; the dtypes are {', '.join(_XLA)}, "
            f"or XLA's own names {', '.join(sorted(_XLA_NAMES))}"
        ) from None

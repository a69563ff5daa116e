"""numpy arrays moved between layouts by the Rust kernels, on the arrays' own memory.

The kernels run with the GIL released. Inputs must be C-contiguous (a strided view raises; pass
``numpy.ascontiguousarray(a)``, which copies) and typed as the shape says: every array's dtype, byte
order and element width are checked against the shape's element type. A big-endian input (``'>f4'``)
is read in its own byte order (converted to the machine's, a copy); a dtype of another type of the same
width (``float16`` for ``bf16``, ``int32`` for ``f32``) is refused, as a raw-bits unsigned or signed
integer of the element's width is accepted for the types numpy lacks (``uint16`` for ``bf16``).
"""

from __future__ import annotations

import operator

import numpy as np

from ._axe import Layout, RelayoutError, Shape, _relayout, _relayout_target
from ._dtypes import xla_type

# The numpy dtype of each element type, where numpy has one of its own.
_NATURAL = {
    "pred": np.bool_,
    "s8": np.int8,
    "u8": np.uint8,
    "s16": np.int16,
    "u16": np.uint16,
    "s32": np.int32,
    "u32": np.uint32,
    "s64": np.int64,
    "u64": np.uint64,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "c64": np.complex64,
    "c128": np.complex128,
}
# Element types numpy lacks, by the ml_dtypes name that has them.
_ML_DTYPES = {
    "bf16": "bfloat16",
    "s4": "int4",
    "u4": "uint4",
    "s2": "int2",
    "u2": "uint2",
    "f8e4m3fn": "float8_e4m3fn",
    "f8e5m2": "float8_e5m2",
    "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz",
    "f8e4m3": "float8_e4m3",
    "f8e3m4": "float8_e3m4",
    "f8e8m0fnu": "float8_e8m0fnu",
    "f6e2m3fn": "float6_e2m3fn",
    "f6e3m2fn": "float6_e3m2fn",
    "f4e2m1fn": "float4_e2m1fn",
}


# Element types narrower than the byte each takes unpacked: their own bits, and whether they are signed
# integers (two's complement in the low bits; XLA and ml_dtypes read an unpacked element from its low
# bits and write the rest zero).
_SUB_BYTE = {
    "s1": (1, True),
    "s2": (2, True),
    "s4": (4, True),
    "u1": (1, False),
    "u2": (2, False),
    "u4": (4, False),
    "f4e2m1fn": (4, False),
    "f6e2m3fn": (6, False),
    "f6e3m2fn": (6, False),
}

# The most worker threads a relayout takes (axe_relayout::MAX_THREADS).
_MAX_THREADS = 1024


def _shape(s) -> Shape:
    return s if isinstance(s, Shape) else Shape(s)


def natural_dtype(dtype_name: str) -> np.dtype:
    """The numpy dtype an element type comes back as: numpy's own, else ml_dtypes' (bf16 as
    ``ml_dtypes.bfloat16``) when installed, else an unsigned integer of the element's byte width."""
    if dtype_name in _NATURAL:
        return np.dtype(_NATURAL[dtype_name])
    name = _ML_DTYPES.get(dtype_name)
    if name is not None:
        try:
            import ml_dtypes

            return np.dtype(getattr(ml_dtypes, name))
        except (ImportError, AttributeError):
            pass
    width = max(1, Shape(f"{dtype_name}[1]").element_bits // 8)
    return np.dtype(f"u{width}")


def _accepts(dtype: np.dtype, element: str, bits: int) -> bool:
    """Whether numpy `dtype` (in the machine's byte order) may hold elements of `element` (`bits` wide
    each, unpacked): its own type, an integer of the same width for an integer type (either
    signedness), or for a type numpy lacks (bf16, 8-, 6- and 4-bit floats, sub-byte integers) an
    integer carrying its raw bits. ``pred`` only from ``bool``, whose bytes numpy keeps at 0 or 1 (an
    integer array would bring other bytes into it). A float or complex dtype of another type is
    refused (``float16`` is not ``bf16``)."""
    if dtype.itemsize * 8 != bits or not dtype.isnative:
        return False
    try:
        own = xla_type(dtype)
    except ValueError:
        own = None
    if own == element:
        return True
    if element == "pred":
        return False
    if element in _ML_DTYPES or element.startswith(("f8e", "f6e", "f4e")):  # not f64
        return dtype.kind in "ui"
    return element[0] in "su" and dtype.kind in "iu"


def _carried(dtype: np.dtype, element: str):
    """For a sub-byte `element` held one per byte in the integer `dtype` (not ml_dtypes' own type): the
    range of values that dtype may hold (a signed integer dtype holds a signed type's values; any
    other holds the raw bits) and the element's bits; ``None`` where `dtype` holds it some other way."""
    if element not in _SUB_BYTE or dtype.kind not in "iu" or dtype.itemsize != 1:
        return None
    bits, signed = _SUB_BYTE[element]
    if signed and dtype.kind == "i":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1, bits
    return 0, (1 << bits) - 1, bits


def _sub_byte_in(array: np.ndarray, element: str) -> np.ndarray:
    """`array` (a logical array of an integer dtype carrying a sub-byte `element`) as the canonical
    bytes of the unpacked layout: each element's low bits, the rest zero, whatever the dtype (an int8
    -1 for s4 is the byte 0x0f, as ml_dtypes.int4 and XLA write it). A value outside what the dtype may
    carry (s4 from int8: -8..7; from uint8, or u4 from either: 0..15) raises ``RelayoutError`` naming
    the first and its index, rather than being wrapped. Law: ``_sub_byte_out`` of the result is
    `array`. Arrays of other dtypes and elements are returned as they are."""
    carried = _carried(array.dtype, element)
    if carried is None or array.size == 0:
        return array
    lo, hi, bits = carried
    low, high = int(array.min()), int(array.max())
    if low < lo or high > hi:
        at = int(np.flatnonzero((array < lo) | (array > hi))[0])
        index = tuple(int(i) for i in np.unravel_index(at, array.shape))
        raise RelayoutError(
            f"{element} elements held in {array.dtype} take values {lo}..{hi}; element "
            f"{index} is {array.reshape(-1)[at]} (values are range-checked, never wrapped)"
        )
    if low >= 0:
        return array  # its bytes are already the low bits, the rest zero
    return np.bitwise_and(array.view(np.uint8), (1 << bits) - 1)


def _sub_byte_out(out: np.ndarray, element: str) -> np.ndarray:
    """`out`, a logical array of `element` just written as the canonical unpacked bytes (low bits, the
    rest zero), with each value sign-extended in place where `out`'s dtype is a signed integer carrying
    a signed sub-byte type (s4's 0x0f becomes int8 -1). Law: inverts ``_sub_byte_in``."""
    carried = _carried(out.dtype, element)
    if carried is not None and carried[0] < 0:
        shift = 8 - carried[2]
        flat = out.reshape(-1)
        np.left_shift(flat, shift, out=flat)
        np.right_shift(flat, shift, out=flat)  # arithmetic: the sign bit fills the high bits
    return out


def _threads(threads) -> int:
    """`threads` as a worker count, checked: an integer from 0 (all the machine's cores for large
    tensors) to 1024, else ``RelayoutError`` (``TypeError`` for a non-integer)."""
    try:
        n = operator.index(threads)
    except TypeError:
        raise TypeError(f"threads must be an int, not {type(threads).__name__}") from None
    if not 0 <= n <= _MAX_THREADS:
        raise RelayoutError(
            f"threads={n}: a relayout takes from 0 (all cores for large tensors) to at most "
            f"{_MAX_THREADS} worker threads"
        )
    return n


def _native(array: np.ndarray) -> np.ndarray:
    """`array` in the machine's byte order (a converted copy when it is not)."""
    if array.dtype.isnative:
        return array
    return array.astype(array.dtype.newbyteorder("="))


def _is_dense_row_major(s: Shape) -> bool:
    return (
        not s.tiles
        and list(s.minor_to_major) == list(range(s.rank - 1, -1, -1))
        and s.physical_bytes == s.logical_bytes
        and s.element_bits % 8 == 0
    )


def _row_major(s: Shape) -> Shape:
    """`s`'s array in the default row-major layout: the same dims, dynamic ones (``<=4``, ``?``)
    included, so that a relayout between the two keeps the tensor."""
    dims = ",".join(
        "?" if d is None else ("<=" if dyn else "") + str(d) for d, dyn in zip(s.dims, s.dynamic)
    )
    return Shape(f"{s.dtype}[{dims}]")


def _is_logical(array: np.ndarray, src: Shape) -> bool:
    """Whether `array` (C-contiguous, native byte order) is taken as the logical array of `src`
    rather than its byte image. An array that can be both (a 1-D ``uint8`` array of the shape's dims
    and of its physical size: a zero-size 1-D array, or 8-bit elements) is the byte image unless its
    dtype holds the element type, so the byte image of ``f32[0]`` is read as such."""
    if tuple(array.shape) != tuple(src.dims) or not _is_dense_row_major(src):
        return False
    image = array.ndim == 1 and array.dtype == np.uint8 and array.size == src.physical_bytes
    return not image or _accepts(array.dtype, src.dtype, src.element_bits)


def _source_bytes(array, src: Shape) -> np.ndarray:
    """A uint8 view of `array`'s memory, checked against `src`."""
    if not isinstance(array, np.ndarray):
        raise RelayoutError(
            f"expected a numpy array, got {type(array).__name__}; pass numpy.asarray(x)"
        )
    if not array.flags.c_contiguous:
        raise RelayoutError(
            "the array is not C-contiguous (a strided view); pass numpy.ascontiguousarray(a), "
            "which copies it"
        )
    array = _native(array)
    image = array.ndim == 1 and array.dtype == np.uint8
    holds = _accepts(array.dtype, src.dtype, src.element_bits)
    # An array that can be both the logical array and the byte image is the logical one where its
    # dtype holds the element type (as `_is_logical` reads it): uint8 for u4 carries values, checked.
    if (
        tuple(array.shape) == tuple(src.dims)
        and _is_dense_row_major(src)
        and (holds or not (image and array.size == src.physical_bytes))
    ):
        if not holds:
            raise RelayoutError(
                f"a {array.dtype} array cannot hold {src.dtype} elements ({src.element_bits} bits "
                f"each); convert it first"
            )
        array = _sub_byte_in(array, src.dtype)
    elif image:
        if array.size != src.physical_bytes:
            raise RelayoutError(
                f"the byte image has {array.size} bytes, {src} takes {src.physical_bytes}"
            )
    else:
        raise RelayoutError(
            f"an array of shape {tuple(array.shape)} and dtype {array.dtype} is neither the logical "
            f"array of {src} (shape {tuple(src.dims)}, row-major) nor its byte image (1-D uint8 of "
            f"{src.physical_bytes} bytes)"
        )
    return array.reshape(-1).view(np.uint8)


def _check_out(out, data: np.ndarray, src: Shape, dst) -> np.ndarray:
    """`out` as the uint8 view the kernels write, checked: a writeable C-contiguous array in the
    machine's byte order apart from the input, either the destination's byte image (1-D ``uint8``) or
    its logical array (the destination dense row-major, same dims, a dtype holding its type)."""
    if not isinstance(out, np.ndarray) or not out.flags.c_contiguous or not out.flags.writeable:
        raise RelayoutError("out must be a writeable C-contiguous numpy array")
    if np.may_share_memory(out, data):
        raise RelayoutError("out overlaps the input array; give a separate buffer")
    if not (out.ndim == 1 and out.dtype == np.uint8):
        d = _relayout_target(src, dst)
        if d is None or not _is_dense_row_major(d):
            raise RelayoutError(
                f"out is a {out.dtype} array of shape {tuple(out.shape)}; the destination is a byte "
                f"image, so out must be 1-D uint8"
            )
        if tuple(out.shape) != tuple(d.dims) or not _accepts(out.dtype, d.dtype, d.element_bits):
            raise RelayoutError(
                f"out is a {out.dtype} array of shape {tuple(out.shape)}; {d} needs shape "
                f"{tuple(d.dims)} of a dtype holding {d.dtype} in the machine's byte order (or the 1-D "
                f"uint8 byte image)"
            )
    return out.reshape(-1).view(np.uint8)


def relayout(array, src, dst, out=None, *, threads: int = 0) -> np.ndarray:
    """Writes the tensor `array` holds in layout `src` into layout `dst`.

    `src` is an ``axe.Shape`` (or its text) describing `array`: its logical array when row-major
    (shape and dtype must fit), else its byte image (1-D ``uint8`` of ``src.physical_bytes``). `dst` is
    a ``Shape`` of the same tensor, an XLA layout ``"{1,0:T(8,128)}"``, or an ``axe.Layout`` on memory.
    Returns the logical array when `dst` is dense row-major (dtype: the input's, in the machine's byte
    order, when it was logical), else the byte image with its padding zeroed. With `out`, writes into
    that buffer instead and returns it: a writeable C-contiguous array not overlapping `array`, either
    the 1-D ``uint8`` byte image of exactly the destination's size or, for a dense row-major `dst`, its
    logical array (dims and dtype checked). The copy runs without the GIL, on `threads` workers (0:
    all the machine's cores for large tensors, the calling thread for small ones; at most 1024; others
    raise ``RelayoutError``). Sub-byte integers in ``int8`` are values (s4: -8..7), in ``uint8`` raw
    bits, range-checked; pred and unpacked sub-byte bytes past their bits are refused with the offset.

    Law: ``from_physical(relayout(x, row_major, dst), dst) == x`` for every `x`.
    """
    src = _shape(src)
    threads = _threads(threads)
    data = _source_bytes(array, src)
    if isinstance(array, np.ndarray):
        array = _native(array)
    if out is not None:
        _relayout(data, src, dst, _check_out(out, data, src, dst), threads)
        if not (out.ndim == 1 and out.dtype == np.uint8):
            _sub_byte_out(out, src.dtype)
        return out
    buf, d = _relayout(data, src, dst, None, threads)
    if d is not None and _is_dense_row_major(d):
        dtype = array.dtype if _is_logical(array, src) else natural_dtype(d.dtype)
        return _sub_byte_out(buf.view(dtype).reshape(tuple(d.dims)), d.dtype)
    return buf


def to_physical(array, shape) -> np.ndarray:
    """The byte image of the row-major `array` in `shape`'s layout (``"f32[...]{...:T(8,128)}"``): a 1-D
    ``uint8`` array of ``shape.physical_bytes`` bytes, padding zeroed. Replaces numpy's
    pad / reshape / transpose recipes (``Shape.numpy_program()``)."""
    s = _shape(shape)
    src = _row_major(s)
    return _relayout(_source_bytes(array, src), src, s)[0]


def from_physical(buf, shape, dtype=None) -> np.ndarray:
    """The logical (row-major) array whose byte image in `shape`'s layout is `buf` (any C-contiguous
    array of ``shape.physical_bytes`` bytes). The dtype is `dtype` if given (same width), else the
    element type's own (bf16: ``ml_dtypes.bfloat16`` when installed, else ``uint16``; pred: bool).
    A `dtype` must hold the element type (its own type, or an integer carrying the bits of a type numpy
    lacks); a non-native byte order (``'>f4'``) gives the values in that byte order."""
    s = _shape(shape)
    if not isinstance(buf, np.ndarray) or not buf.flags.c_contiguous:
        raise RelayoutError("buf must be a C-contiguous numpy array (numpy.ascontiguousarray copies)")
    if not buf.dtype.isnative:
        raise RelayoutError(
            f"buf is a {buf.dtype} array, not in the machine's byte order: its bytes are not the layout's "
            f"image; pass buf.astype(buf.dtype.newbyteorder('='))"
        )
    if buf.nbytes != s.physical_bytes:
        raise RelayoutError(f"buf has {buf.nbytes} bytes, {s} takes {s.physical_bytes}")
    dst = _row_major(s)
    try:
        asked = np.dtype(dtype) if dtype is not None else natural_dtype(s.dtype)
    except TypeError as e:
        raise RelayoutError(f"dtype={dtype!r} is not a numpy dtype ({e})") from None
    dt = asked.newbyteorder("=") if not asked.isnative else asked
    if dt.itemsize * 8 != dst.element_bits:
        raise RelayoutError(f"{dt} is {dt.itemsize * 8} bits, {s.dtype} elements are {dst.element_bits}")
    if not _accepts(dt, s.dtype, dst.element_bits):
        raise RelayoutError(f"a {asked} array cannot hold {s.dtype} elements; give a dtype of that type")
    out = np.empty(tuple(dst.dims), dtype=dt)
    _relayout(buf.reshape(-1).view(np.uint8), s, dst, out.reshape(-1).view(np.uint8))
    _sub_byte_out(out, s.dtype)
    return out if asked is dt else out.astype(asked)


__all__ = ["from_physical", "natural_dtype", "relayout", "to_physical"]
_ = Layout  # an axe.Layout is a valid `dst`
